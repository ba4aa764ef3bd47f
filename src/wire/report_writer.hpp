// The report's JSON as written, for writers that have already made it valid
// (`truncate_to_limits`): `to_json` without its validation pass; and its size.
#pragma once

#include <ngfail/report.hpp>

#include <string>

namespace ngfail::wire::detail {

[[nodiscard]] std::string write_report(const failure_report& report);

// What `write_report` writes, counted by the writer without writing: the whole report, and
// one event as a member of "events" (`"<id>":{…}`, no comma).
[[nodiscard]] std::size_t written_size(const failure_report& report);
[[nodiscard]] std::size_t written_event_size(const event_record& record);

}  // namespace ngfail::wire::detail
