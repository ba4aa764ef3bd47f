// What the wire needs of core's records beyond the public API, and nothing else of them: a
// record made again from a report (its id and its kind's text as they were sent) and the
// count of events its sender dropped, which the record carries to the next hop's report.
// The one core header another part includes; the record's layout (event_state.hpp) stays
// core's own.
#pragma once

#include <ngfail/details.hpp>
#include <ngfail/event_id.hpp>
#include <ngfail/failure.hpp>

#include <cstddef>
#include <string_view>

namespace ngfail::detail {

// A new record with `id` (a fresh one when nil); throws std::bad_alloc when memory runs out.
// `kind_text` is the kind's wire name as received, kept verbatim (default: the code's name);
// `dropped_events` what the report it is the failure of says its sender dropped.
[[nodiscard]] failure rebuilt_record(event_info&& info, event_details&& details, const event_id& id,
                                     std::string_view kind_text, std::size_t dropped_events);

// The events the sender of a rebuilt report had dropped (0 for a record made here).
[[nodiscard]] std::size_t dropped_events(const failure& f) noexcept;

}  // namespace ngfail::detail
