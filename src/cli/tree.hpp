// Failure chains as indented trees, for people.
#pragma once

#include "style.hpp"

#include <ngfail/report.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::cli {

// The last 12 hex digits of an id: enough to tell events of one report apart.
[[nodiscard]] std::string short_id(const event_id& id);

// `text` on one line: control characters shown as escapes, UTF-8 kept.
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_bytes = 200);

// The chains of a report, the reply's own failure first, each outermost first.
[[nodiscard]] std::vector<std::vector<const event_record*>> chains_of(const failure_report& report);

// Prints every chain as a tree: kind, boundary, stage, HTTP status, reason, short ids.
void print_report_tree(std::ostream& out, const failure_report& report, const style& s);

}  // namespace ngfail::cli
