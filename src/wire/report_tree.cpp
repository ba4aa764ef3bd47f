#include <ngfail/report_tree.hpp>

#include <ngfail/kind.hpp>
#include <ngfail/sandbox.hpp>

#include <ostream>
#include <set>

namespace ngfail {
namespace {

report_chain chain_from(const failure_report& report, const event_id& start, std::set<event_id>& shown) {
    report_chain chain;
    for (auto it = report.events.find(start); it != report.events.end();) {
        if (!shown.insert(it->first).second) {
            chain.joins = it->first;
            break;
        }
        chain.levels.push_back(&it->second);
        if (!it->second.cause_id) break;
        it = report.events.find(*it->second.cause_id);
    }
    return chain;
}

std::string facts(const event_record& r) {
    std::string out;
    const auto add = [&](std::string_view label, std::string_view value) {
        out += out.empty() ? "[" : ", ";
        out += label;
        out += ' ';
        out += one_line(value, 64);
    };
    if (r.boundary) add("boundary", name(*r.boundary));
    if (r.stage) add("stage", name(*r.stage));
    if (r.http_status) add("http", std::to_string(*r.http_status));
    if (const auto* sandbox = std::get_if<sandbox_details>(&r.details)) {
        add("op", sandbox->operation);
        if (sandbox->delivery) add("delivery", name(*sandbox->delivery));
    } else if (const auto* sdk = std::get_if<sdk_error_details>(&r.details)) {
        add("from", sdk->error_type);
    } else if (const auto* model = std::get_if<model_details>(&r.details)) {
        if (model->model) add("model", *model->model);
    }
    return out.empty() ? out : out + "]";
}

// The last 12 hex digits of an id: enough to tell events of one report apart.
std::string short_id(const event_id& id) { return to_string(id).substr(24); }

// ANSI styles when asked for, plain text otherwise.
struct painter {
    bool on;
    [[nodiscard]] std::string paint(std::string_view code, std::string_view text) const {
        if (!on) return std::string(text);
        return std::string(code) + std::string(text) + "\x1b[0m";
    }
    [[nodiscard]] std::string kind(std::string_view t) const { return paint("\x1b[1;31m", t); }
    [[nodiscard]] std::string good(std::string_view t) const { return paint("\x1b[32m", t); }
    [[nodiscard]] std::string dim(std::string_view t) const { return paint("\x1b[2m", t); }
    [[nodiscard]] std::string bold(std::string_view t) const { return paint("\x1b[1m", t); }
};

}  // namespace

std::vector<report_chain> chains_of(const failure_report& report) {
    std::vector<report_chain> chains;
    std::set<event_id> shown;
    if (report.failure_id) chains.push_back(chain_from(report, *report.failure_id, shown));
    std::set<event_id> causes;
    for (const auto& [id, r] : report.events) {
        if (r.cause_id) causes.insert(*r.cause_id);
    }
    for (const auto& [id, r] : report.events) {
        if (shown.contains(id) || causes.contains(id)) continue;
        chains.push_back(chain_from(report, id, shown));
    }
    return chains;
}

void print_tree(std::ostream& out, const failure_report& report, const tree_options& options) {
    const painter s{options.color};
    const auto chains = chains_of(report);
    if (chains.empty()) out << s.good("success") << ": no failures\n";
    for (const auto& chain : chains) {
        const bool own = report.failure_id && !chain.levels.empty() && chain.levels.front()->id == *report.failure_id;
        out << s.bold(own ? "failure" : "observed (recovered)") << '\n';
        const auto indent = [&](std::size_t depth) {
            return "  " + std::string(depth == 0 ? 0 : 3 * (depth - 1), ' ') + (depth == 0 ? "" : "└─ ");
        };
        for (std::size_t depth = 0; depth < chain.levels.size(); ++depth) {
            const event_record& r = *chain.levels[depth];
            out << indent(depth) << s.dim(short_id(r.id)) << "  " << s.kind(one_line(r.kind, 64)) << "  " << facts(r);
            if (!r.reason.empty()) out << "  " << one_line(r.reason, options.max_reason_bytes);
            out << '\n';
        }
        if (chain.joins) {
            out << indent(chain.levels.size()) << s.dim("(caused by " + short_id(*chain.joins) + ", shown above)") << '\n';
        }
    }
    if (report.dropped_events != 0) out << s.dim(std::to_string(report.dropped_events) + " event(s) dropped by the sender") << '\n';
}

void print_tree(std::ostream& out, const failure& f, const tree_options& options) {
    print_tree(out, report_for(f), options);
}

}  // namespace ngfail
