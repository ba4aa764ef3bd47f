// <ngfail/report_tree.hpp> — a failure and its causes as an indented tree, for people
// (target ngfail::wire). What `ngfail decode` prints:
//
//   ngfail::print_tree(std::cerr, r.error());                 // a failure from try_*
//   ngfail::print_tree(std::cerr, ngfail::report_for(std::current_exception()));
//
//   failure
//     2b8f6c0d4e17  agent_run_error  [boundary agent, stage agent, http 500]  agent failed
//     └─ 2b8f6c0d4e18  provider_oom_killed  [op exec, delivery delivered]  exec failed …
//
// Each line: the id's last 12 hex digits, the kind, the facts that say where it happened
// (boundary, stage, HTTP status, the sandbox operation and delivery, a foreign exception's
// type, the model), and the reason. Chains the report observed but recovered from follow
// as "observed (recovered)". Every text from a report is printed on one line with control
// characters escaped, so a report from a stranger cannot drive the terminal.
#pragma once

#include <ngfail/one_line.hpp>  // the escaping of every text printed
#include <ngfail/report.hpp>

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail {

struct tree_options {
    bool color = false;                  // ANSI colours (for a terminal)
    std::size_t max_reason_bytes = 200;  // each reason is cut here, with "..."
};

// Prints every chain of `report`, the failure's own first.
void print_tree(std::ostream& out, const failure_report& report, const tree_options& options = {});

// The same for a failure (its report, `report_for(f)`).
void print_tree(std::ostream& out, const failure& f, const tree_options& options = {});

// One chain of a report, outermost first. An observed chain that leads into an event
// already shown (the failure's chain, usually) stops there and names it in `joins`.
struct report_chain {
    std::vector<const event_record*> levels;
    std::optional<event_id> joins;
};

// The chains of a report, the failure's own first; each event appears in one chain. The
// pointers are into `report`.
[[nodiscard]] std::vector<report_chain> chains_of(const failure_report& report);

}  // namespace ngfail
