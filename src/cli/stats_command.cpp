// ngfail stats FILE.jsonl|'GLOB'... [--policy FILE [--rollouts-per-task N]] [--json]
#include "args.hpp"
#include "policy_view.hpp"
#include "tree.hpp"

#include <ngfail/json.hpp>
#include <ngfail/policy/rollout_rows.hpp>

#include <boost/json.hpp>

#include <glob.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <map>
#include <variant>
#include <vector>
#include <ostream>

namespace ngfail::cli {
namespace {

const arg_spec spec{.with_value = {"policy", "rollouts-per-task"}, .flags = {"json"}, .max_positionals = 4096};
constexpr std::size_t shown_rollouts = 20;
constexpr std::size_t shown_chains = 10;
constexpr std::size_t shown_invalid = 5;

using counts = std::map<std::string, std::int64_t>;
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

    std::string file;  // the file being read, when there are several: where a rejected row is

    void reject(std::size_t line, std::string_view why) {
        ++rows;
        ++invalid;
        if (invalid_samples.size() < shown_invalid) {
            invalid_samples.push_back((file.empty() ? "" : file + " ") + "line " + std::to_string(line) + ": " +
                                      one_line(why, 300));
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

void read_rows(std::istream& in, tally& t, policy::recovery_view* view) {
    const limits lim;
    for_each_line(in, lim.max_json_bytes, [&](std::size_t number, std::optional<std::string_view> line) {
        if (!line) return t.reject(number, "the row is over " + std::to_string(lim.max_json_bytes) + " bytes");
        if (line->find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank
        const auto value = parse_json(*line, lim);
        if (!value) return t.reject(number, value.error().reason());
        if (!value.value().is_object()) return t.reject(number, "the row is not a JSON object");
        const auto report = rollout_report(value.value().as_object(), lim);
        if (!report) return t.reject(number, report.error().reason());
        // Under a policy, a row it cannot place (no rollout identity, a saved decision that
        // cannot be read) is invalid in every count, not left out of the policy's alone.
        if (view) {
            if (auto placed = view->add(value.value().as_object()); !placed) return t.reject(number, placed.error().reason());
        }
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

std::string rollout_name(const policy::rollout_key& key) { return key.task + " #" + key.index; }

void print_policy(std::ostream& out, const policy::recovery_view& view) {
    const style s = style::for_stdout();
    print_bars(out, "failures by class (the policy's)", view.failures_by_class(), s);
    print_bars(out, "failures by action", view.failures_by_action(), s);
    counts states;
    const auto by_state = view.by_state();
    for (std::size_t i = 0; i < by_state.size(); ++i) {
        if (by_state[i] > 0) states[std::string(policy::name(static_cast<policy::recovery_state>(i)))] = by_state[i];
    }
    print_bars(out, "rollouts by recovery state", states, s);
    out << '\n' << s.bold("rollouts not scored (attempts, state, last class)") << '\n';
    std::size_t shown = 0;
    for (const auto& [key, status] : view.rollouts()) {
        if (status.state == policy::recovery_state::scored) continue;
        if (++shown > shown_rollouts) {
            out << "  …\n";
            break;
        }
        out << "  " << std::left << std::setw(24) << one_line(rollout_name(key), 64) << std::right << std::setw(3)
            << status.attempts << "  " << std::left << std::setw(13) << policy::name(status.state) << std::right << ' '
            << one_line(status.failure_class, 64) << '\n';
    }
    const auto excluded = view.score_excluding_failures();
    const auto zeros = view.score_with_counted_zeros();
    out << '\n' << s.bold("score") << '\n'
        << "  failures excluded           " << std::fixed << std::setprecision(4) << excluded.mean << " over "
        << excluded.rollouts << " rollouts\n"
        << "  counted classes as zero     " << zeros.mean << " over " << zeros.rollouts
        << " rollouts (metrics only: no row changed)\n";
    out.unsetf(std::ios::floatfield);
}

boost::json::object as_json(const counts& c) {
    boost::json::object o;
    for (const auto& [k, n] : c) o[k] = n;
    return o;
}

boost::json::object policy_json(const policy::recovery_view& view) {
    boost::json::object states;
    const auto by_state = view.by_state();
    for (std::size_t i = 0; i < by_state.size(); ++i) {
        states[policy::name(static_cast<policy::recovery_state>(i))] = by_state[i];
    }
    boost::json::array rollouts;
    for (const auto& [key, status] : view.rollouts()) {
        boost::json::object r{{"task", key.task}, {"rollout", key.index}, {"attempts", status.attempts},
                              {"state", policy::name(status.state)}};
        if (!status.failure_class.empty()) {
            r["class"] = status.failure_class;
            r["action"] = policy::name(status.action);
        }
        rollouts.push_back(std::move(r));
    }
    const auto score = [](const policy::recovery_view::score& s) {
        return boost::json::object{{"mean", s.mean}, {"rollouts", s.rollouts}};
    };
    return {{"by_class", as_json(view.failures_by_class())},
            {"by_action", as_json(view.failures_by_action())},
            {"by_recovery_state", std::move(states)},
            {"rollouts", std::move(rollouts)},
            {"score_failures_excluded", score(view.score_excluding_failures())},
            {"score_counted_zeros", score(view.score_with_counted_zeros())}};
}

void print_json(std::ostream& out, const tally& t, const policy::recovery_view* view) {
    boost::json::array top;
    for (const auto& [chain, n] : by_count(t.chains, shown_chains)) {
        boost::json::array kinds(chain.begin(), chain.end());
        top.push_back(boost::json::object{{"chain", std::move(kinds)}, {"count", n}});
    }
    boost::json::object document{{"rows", t.rows},
                                                      {"successes", t.successes},
                                                      {"failures", t.failures},
                                                      {"invalid_rows", t.invalid},
                                                      {"observed_events", t.observed_events},
                                                      {"by_kind", as_json(t.by_kind)},
                                                      {"by_root_cause", as_json(t.by_root_cause)},
                                                      {"by_boundary", as_json(t.by_boundary)},
                                                      {"by_stage", as_json(t.by_stage)},
                                                      {"top_chains", std::move(top)}};
    if (view) document["policy"] = policy_json(*view);
    out << serialize_ascii(document) << '\n';  // names from rows and the policy file, escaped
}

}  // namespace

// The files the arguments name, in order: a name as it is, a pattern (`*`, `?`, `[`) as
// the files it matches, sorted (a shell that did not expand it, or a quoted one, as NeMo
// Gym's `input_glob`). Why not, when a pattern matches nothing.
std::variant<std::vector<std::string>, std::string> files_named(const std::vector<std::string>& arguments) {
    std::vector<std::string> files;
    for (const std::string& argument : arguments) {
        if (argument.find_first_of("*?[") == std::string::npos) {
            files.push_back(argument);
            continue;
        }
        glob_t found{};
        const int status = ::glob(argument.c_str(), GLOB_ERR, nullptr, &found);
        for (std::size_t i = 0; status == 0 && i < found.gl_pathc; ++i) files.emplace_back(found.gl_pathv[i]);
        ::globfree(&found);
        if (status != 0) return "'" + argument + "' matches no file";
    }
    return files;
}

int run_stats(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("stats", args, spec, io);
    if (!parsed) return exit_bad_input;
    const parsed_args& a = *parsed;
    if (a.positionals.empty()) {
        io.err << "ngfail stats: give a FILE.jsonl (see 'ngfail stats --help')\n";
        return exit_bad_input;
    }
    auto named = files_named(a.positionals);
    if (const auto* why = std::get_if<std::string>(&named)) {
        io.err << "ngfail stats: " << *why << '\n';
        return exit_bad_input;
    }
    const std::vector<std::string>& files = std::get<std::vector<std::string>>(named);
    // Every shard opens before any is read: a missing one is found before minutes of reading.
    for (const std::string& file : files) {
        if (!std::ifstream(file, std::ios::binary)) {
            io.err << "ngfail stats: cannot open '" << file << "'\n";
            return exit_bad_input;
        }
    }
    std::optional<policy::outcome_policy> chosen;
    std::optional<policy::recovery_view> view;
    if (const auto path = a.value("policy")) {
        chosen = load_policy_or_complain("stats", *path, io);
        if (!chosen) return exit_bad_input;
        std::optional<int> per_task;
        if (const auto n = a.value("rollouts-per-task")) {
            per_task = to_int(*n);
            if (!per_task || *per_task < 1 || *per_task > 1'000'000) {
                io.err << "ngfail stats: --rollouts-per-task '" << *n << "' is not a number from 1 to 1000000\n";
                return exit_bad_input;
            }
        }
        view.emplace(*chosen, per_task);
    } else if (a.value("rollouts-per-task")) {
        io.err << "ngfail stats: --rollouts-per-task needs --policy\n";
        return exit_bad_input;
    }
    tally t;
    for (const std::string& file : files) {  // one run: every shard's rows in one tally
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            io.err << "ngfail stats: cannot open '" << file << "'\n";
            return exit_bad_input;
        }
        if (files.size() > 1) t.file = file;
        read_rows(in, t, view ? &*view : nullptr);
    }
    for (const auto& sample : t.invalid_samples) io.err << "ngfail stats: invalid row, " << sample << '\n';
    if (a.has("json")) {
        print_json(io.out, t, view ? &*view : nullptr);
    } else {
        print_text(io.out, t);
        if (view) print_policy(io.out, *view);
    }
    return exit_ok;
}

std::string stats_usage() {
    return "usage: ngfail stats FILE.jsonl|'GLOB'... [--policy FILE [--rollouts-per-task N]] [--json]\n"
           "\n"
           "Aggregates rollout rows (one JSON object per line, with _ng_failure_id and\n"
           "_ng_failure_events as NeMo Gym's collection writes them) from one file or many, as one\n"
           "run: shards of a multi-node run by name or by a quoted pattern ('run/*_failures.jsonl',\n"
           "sorted), read one row at a time. Counts of failures by kind,\n"
           "by root cause (the deepest classified kind of its cause chain: what an agent_run_error\n"
           "hides), boundary and stage with bar charts, and the most common cause chains. Rows without a\n"
           "failure count as successes; invalid rows are counted and the first few named on stderr.\n"
           "\n"
           "With --policy FILE (an outcome policy, see 'ngfail policy --help'): failures by class and\n"
           "by action, each rollout's attempts and recovery state (scored, counted_zero, retryable,\n"
           "exhausted, terminal, masked, missing), and two scores: with failures left out, and with\n"
           "the policy's count_failure_classes_as_zero classes scored zero (metrics only). A rollout\n"
           "is task_id + rollout (or _ng_task_index + _ng_rollout_index); rows are attempts in file\n"
           "order. --rollouts-per-task N expects rollouts 0..N-1 of every task: absent ones are missing.\n";
}

}  // namespace ngfail::cli
