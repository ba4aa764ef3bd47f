#include "failure_summary.hpp"

#include <ngfail/kind.hpp>
#include <ngfail/one_line.hpp>
#include <ngfail/sandbox.hpp>

#include <algorithm>
#include <ostream>
#include <string_view>

namespace ngfail::cli {

void print_failure_summary(std::ostream& out, const failure& f, const style& s) {
    const auto dom = is_kind(f.code()) && f.code().category() == kind_category()
                         ? domain_of(static_cast<kind>(f.code().value()))
                         : std::nullopt;
    out << "kind      " << s.kind(f.kind_name()) << (dom ? "  (domain " + std::string(name(*dom)) + ")" : "") << '\n';
    const auto d = delivery_of(f);
    out << "delivery  " << (d ? std::string(name(*d)) : std::string("not established")) << '\n';
    const auto* details = std::get_if<sandbox_details>(&f.details());
    if (!details) return;
    if (details->retry_after) out << "retry     after " << details->retry_after->count() << " s\n";
    if (const auto& row = details->evidence_row) {
        out << "rule      " << one_line(*row, 64)
            << (*row == "nothing_matched" ? "  (no row of the evidence table holds: docs/opensandbox.md)" : "") << '\n';
    }
    // The server's own words, for people (never evidence), a line each, escaped.
    if (const auto& text = details->diagnostics; text && !text->empty()) {
        out << "diagnostics\n";
        for (std::string_view rest = *text; !rest.empty();) {
            const std::size_t end = std::min(rest.find('\n'), rest.size());
            if (end > 0) out << "  " << one_line(rest.substr(0, end), end);
            out << '\n';
            rest.remove_prefix(std::min(end + 1, rest.size()));
        }
    }
}

}  // namespace ngfail::cli
