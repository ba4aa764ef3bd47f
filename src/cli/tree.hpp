// Failure chains as indented trees, for people.
#pragma once

#include "style.hpp"

#include <ngfail/report.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::cli {

// The last 12 hex digits of an id: enough to tell events of one report apart.
[[nodiscard]] std::string short_id(const event_id& id);

// `text` as one line that is safe on a terminal: every control character (C0, DEL and the
// C1 controls U+0080–U+009F, which some terminals obey) is shown as an escape, other
// UTF-8 kept. Every field from a report goes through it before it is printed.
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_bytes = 200);

// One chain of a report, outermost first. An observed chain that leads into an event
// already shown (the failure's chain, usually) stops there and names it in `joins`.
struct report_chain {
    std::vector<const event_record*> levels;
    std::optional<event_id> joins;
};

// The chains of a report, the reply's own failure first; each event appears in one chain.
[[nodiscard]] std::vector<report_chain> chains_of(const failure_report& report);

// Prints every chain as a tree: kind, boundary, stage, HTTP status, reason, short ids.
void print_report_tree(std::ostream& out, const failure_report& report, const style& s);

}  // namespace ngfail::cli
