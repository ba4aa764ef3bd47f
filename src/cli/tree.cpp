#include "tree.hpp"

#include <ngfail/kind.hpp>

#include <ostream>
#include <set>

namespace ngfail::cli {
namespace {

std::vector<const event_record*> chain_from(const failure_report& report, const event_id& start) {
    std::vector<const event_record*> chain;
    std::set<event_id> seen;
    for (auto it = report.events.find(start); it != report.events.end() && seen.insert(it->first).second;) {
        chain.push_back(&it->second);
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
        out += value;
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

}  // namespace

std::string short_id(const event_id& id) { return to_string(id).substr(24); }

std::string one_line(std::string_view text, std::size_t max_bytes) {
    std::string out;
    for (const char c : text.substr(0, max_bytes)) {
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                    out += '?';
                } else {
                    out += c;
                }
        }
    }
    if (text.size() > max_bytes) out += "...";
    return out;
}

std::vector<std::vector<const event_record*>> chains_of(const failure_report& report) {
    std::vector<std::vector<const event_record*>> chains;
    std::set<event_id> covered;
    if (report.failure_id) {
        chains.push_back(chain_from(report, *report.failure_id));
        for (const auto* r : chains.back()) covered.insert(r->id);
    }
    std::set<event_id> causes;
    for (const auto& [id, r] : report.events) {
        if (r.cause_id) causes.insert(*r.cause_id);
    }
    for (const auto& [id, r] : report.events) {
        if (covered.contains(id) || causes.contains(id)) continue;
        chains.push_back(chain_from(report, id));
    }
    return chains;
}

void print_report_tree(std::ostream& out, const failure_report& report, const style& s) {
    const auto chains = chains_of(report);
    if (chains.empty()) out << s.good("success") << ": no failures\n";
    for (const auto& chain : chains) {
        const bool own = report.failure_id && !chain.empty() && chain.front()->id == *report.failure_id;
        out << s.bold(own ? "failure" : "observed (recovered)") << '\n';
        for (std::size_t depth = 0; depth < chain.size(); ++depth) {
            const event_record& r = *chain[depth];
            out << "  " << std::string(depth == 0 ? 0 : 3 * (depth - 1), ' ') << (depth == 0 ? "" : "└─ ")
                << s.dim(short_id(r.id)) << "  " << s.kind(r.kind) << "  " << facts(r);
            if (!r.reason.empty()) out << "  " << one_line(r.reason);
            out << '\n';
        }
    }
    if (report.dropped_events != 0) out << s.dim(std::to_string(report.dropped_events) + " event(s) dropped by the sender") << '\n';
}

}  // namespace ngfail::cli
