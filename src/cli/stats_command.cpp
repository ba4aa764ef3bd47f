// ngfail stats FILE.jsonl [--json]
#include "args.hpp"
#include "tree.hpp"

#include <ngfail/json.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <map>
#include <vector>
#include <ostream>

namespace ngfail::cli {
namespace {

const arg_spec spec{.flags = {"json"}, .max_positionals = 1};
constexpr std::size_t shown_chains = 10;
constexpr std::size_t shown_invalid = 5;

using counts = std::map<std::string, std::size_t>;
using chain_counts = std::map<std::vector<std::string>, std::size_t>;  // kinds, outermost first

struct tally {
    std::size_t rows = 0;
    std::size_t successes = 0;
    std::size_t failures = 0;
    std::size_t invalid = 0;
    std::size_t observed_events = 0;
    counts by_kind, by_boundary, by_stage;
    counts by_root_cause;  // the deepest classified cause's kind: what an agent_run_error wraps
    chain_counts chains;
    std::vector<std::string> invalid_samples;

    void add(const failure_report& report) {
        ++rows;
        observed_events += report.events.size();
        if (!report.failure_id) {
            ++successes;
            return;
        }
        ++failures;
        const auto chain = chains_of(report).front().levels;
        const event_record& own = *chain.front();
        observed_events -= chain.size();
        ++by_kind[own.kind];
        // A foreign exception at the end of a chain is `undetermined`: the root cause is the
        // deepest level that says what went wrong.
        const auto classified = std::find_if(chain.rbegin(), chain.rend(),
                                             [](const event_record* r) { return r->kind != name(kind::undetermined); });
        ++by_root_cause[classified == chain.rend() ? std::string(name(kind::undetermined)) : (*classified)->kind];
        ++by_boundary[own.boundary ? std::string(name(*own.boundary)) : "-"];
        ++by_stage[own.stage ? std::string(name(*own.stage)) : "-"];
        std::vector<std::string> path;
        for (const event_record* r : chain) path.push_back(r->kind);
        ++chains[path];
    }

    void reject(std::size_t line, std::string_view why) {
        ++rows;
        ++invalid;
        if (invalid_samples.size() < shown_invalid) {
            invalid_samples.push_back("line " + std::to_string(line) + ": " + one_line(why, 300));
        }
    }
};

// Splits a stream into lines, never holding more than `max_line` bytes of one.
template <class OnLine>
void for_each_line(std::istream& in, std::size_t max_line, OnLine&& on_line) {
    std::string line;
    bool oversized = false;
    std::size_t number = 0;
    std::array<char, 1 << 16> block{};
    const auto finish = [&] {
        ++number;
        on_line(number, oversized ? std::optional<std::string_view>() : std::optional<std::string_view>(line));
        line.clear();
        oversized = false;
    };
    while (in.read(block.data(), block.size()) || in.gcount() > 0) {
        std::string_view data(block.data(), static_cast<std::size_t>(in.gcount()));
        while (!data.empty()) {
            const auto newline = data.find('\n');
            const auto piece = data.substr(0, newline);
            if (!oversized && line.size() + piece.size() > max_line) {
                oversized = true;
                line.clear();
            }
            if (!oversized) line.append(piece);
            if (newline == std::string_view::npos) break;
            finish();
            data.remove_prefix(newline + 1);
        }
    }
    if (!line.empty() || oversized) finish();
}

void read_rows(std::istream& in, tally& t) {
    const limits lim;
    for_each_line(in, lim.max_json_bytes, [&](std::size_t number, std::optional<std::string_view> line) {
        if (!line) return t.reject(number, "the row is over " + std::to_string(lim.max_json_bytes) + " bytes");
        if (line->find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank
        const auto value = parse_json(*line, lim);
        if (!value) return t.reject(number, value.error().reason());
        if (!value.value().is_object()) return t.reject(number, "the row is not a JSON object");
        const auto report = rollout_report(value.value().as_object(), lim);
        if (!report) return t.reject(number, report.error().reason());
        t.add(report.value());
    });
}

template <class Counts>
std::vector<std::pair<typename Counts::key_type, std::size_t>> by_count(const Counts& c, std::size_t most = SIZE_MAX) {
    std::vector<std::pair<typename Counts::key_type, std::size_t>> sorted(c.begin(), c.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (sorted.size() > most) sorted.resize(most);
    return sorted;
}

void print_bars(std::ostream& out, std::string_view title, const counts& c, const style& s) {
    out << '\n' << s.bold(title) << '\n';
    const auto sorted = by_count(c);
    const std::size_t top = sorted.empty() ? 1 : sorted.front().second;
    for (const auto& [label, n] : sorted) {
        std::string bar;
        for (std::size_t i = 0, width = (n * 30 + top - 1) / top; i < width; ++i) bar += "█";
        out << "  " << std::left << std::setw(32) << one_line(label, 64) << std::right << std::setw(7) << n << "  " << s.dim(bar) << '\n';
    }
}

void print_text(std::ostream& out, const tally& t) {
    const style s = style::for_stdout();
    out << "rows " << t.rows << ": " << s.good(std::to_string(t.successes) + " succeeded") << ", "
        << s.kind(std::to_string(t.failures) + " failed") << ", " << t.invalid << " invalid; " << t.observed_events
        << " observed (recovered) events\n";
    print_bars(out, "failures by kind", t.by_kind, s);
    print_bars(out, "failures by root cause (the deepest classified cause)", t.by_root_cause, s);
    print_bars(out, "failures by boundary", t.by_boundary, s);
    print_bars(out, "failures by stage", t.by_stage, s);
    out << '\n' << s.bold("most common chains") << '\n';
    for (const auto& [chain, n] : by_count(t.chains, shown_chains)) {
        std::string path;
        for (const std::string& kind : chain) path += (path.empty() ? "" : " → ") + one_line(kind, 64);
        out << "  " << std::setw(7) << n << "  " << path << '\n';
    }
}

boost::json::object as_json(const counts& c) {
    boost::json::object o;
    for (const auto& [k, n] : c) o[k] = n;
    return o;
}

void print_json(std::ostream& out, const tally& t) {
    boost::json::array top;
    for (const auto& [chain, n] : by_count(t.chains, shown_chains)) {
        boost::json::array kinds(chain.begin(), chain.end());
        top.push_back(boost::json::object{{"chain", std::move(kinds)}, {"count", n}});
    }
    out << boost::json::serialize(boost::json::object{{"rows", t.rows},
                                                      {"successes", t.successes},
                                                      {"failures", t.failures},
                                                      {"invalid_rows", t.invalid},
                                                      {"observed_events", t.observed_events},
                                                      {"by_kind", as_json(t.by_kind)},
                                                      {"by_root_cause", as_json(t.by_root_cause)},
                                                      {"by_boundary", as_json(t.by_boundary)},
                                                      {"by_stage", as_json(t.by_stage)},
                                                      {"top_chains", std::move(top)}})
        << '\n';
}

}  // namespace

int run_stats(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("stats", args, spec, io);
    if (!parsed) return exit_bad_input;
    const parsed_args& a = *parsed;
    if (a.positionals.empty()) {
        io.err << "ngfail stats: give a FILE.jsonl (see 'ngfail stats --help')\n";
        return exit_bad_input;
    }
    std::ifstream in(a.positionals.front(), std::ios::binary);
    if (!in) {
        io.err << "ngfail stats: cannot open '" << a.positionals.front() << "'\n";
        return exit_bad_input;
    }
    tally t;
    read_rows(in, t);
    for (const auto& sample : t.invalid_samples) io.err << "ngfail stats: invalid row, " << sample << '\n';
    a.has("json") ? print_json(io.out, t) : print_text(io.out, t);
    return exit_ok;
}

std::string stats_usage() {
    return "usage: ngfail stats FILE.jsonl [--json]\n"
           "\n"
           "Aggregates rollout rows (one JSON object per line, with _ng_failure_id and\n"
           "_ng_failure_events as NeMo Gym's collection writes them): counts of failures by kind,\n"
           "by root cause (the deepest classified kind of its cause chain: what an agent_run_error\n"
           "hides), boundary and stage with bar charts, and the most common cause chains. Rows without a\n"
           "failure count as successes; invalid rows are counted and the first few named on stderr.\n";
}

}  // namespace ngfail::cli
