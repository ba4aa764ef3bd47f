// Reads Google Benchmark JSON files and prints the performance table: each row a metric,
// ngfail's number, its baseline from the same run, the ratio, the target and whether it
// was met. Writes every raw result, merged, to the first argument.
// Usage: see main.
#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;

// A benchmark's runs, in the order they were reported: each repetition's time in
// nanoseconds, and its items per second where it counts items.
struct measured {
    std::vector<double> ns;
    std::vector<double> items_per_second;
};

// value_at_most: a count or a size, its unit in the label.
enum class goal { ratio_at_most, ratio_at_least, ns_at_most, value_at_most, info };

struct metric {
    const char* label;
    const char* ngfail;    // benchmark name
    const char* baseline;  // benchmark name, or "" for an absolute target
    goal kind;
    double target;
    bool throughput = false;  // compare items_per_second (higher is better) instead of time
    const char* unit = nullptr;  // the figures' unit when they are neither times nor rates
};

// The targets, one row each; then rows that only inform.
constexpr metric table[] = {
    {"success, 10 frames: result<int> vs int", "success_ngfail_result/10", "success_plain_int/10", goal::ratio_at_most, 1.25},
    {"success, 10 frames: result<int> vs Outcome std_result<int>", "success_ngfail_result/10",
     "success_outcome_std_result/10", goal::ratio_at_most, 1.05},
    {"kind-only failure, 10 frames vs std::error_code return", "failure_ngfail_kind_only/10", "failure_error_code/10",
     goal::ratio_at_most, 1.2},
    {"kind-only failure vs throwing failure_event, 10 frames (x faster)", "failure_throw_failure_event/10",
     "failure_ngfail_kind_only/10", goal::ratio_at_least, 100},
    {"creating a sandbox_failure (3 strings) vs std::system_error", "create_sandbox_failure", "create_system_error",
     goal::ratio_at_most, 1.5},
    {"classify, full observation (ns) vs a message regex", "classify_full_observation", "classify_by_message_regex",
     goal::ns_at_most, 50},
    {"event id (ns) vs Boost.UUID random_generator", "generate_event_id", "generate_boost_uuid", goal::ns_at_most, 25},
    {"header encode+decode, 3 events vs Boost.JSON serialize+parse", "header_encode_decode",
     "plain_boost_json_serialize_parse", goal::ratio_at_most, 1.0},
    {"encode_header, 10,000 observed events (ns)", "encode_header_observed/10000", "", goal::ns_at_most, 50e6},
    {"encode_header, 10,000 vs 1,000 observed events (linear: 10x)", "encode_header_observed/10000",
     "encode_header_observed/1000", goal::ratio_at_most, 12},
    {"result path throughput, 1 -> 2 threads", "result_path_threads/real_time/threads:2",
     "result_path_threads/real_time/threads:1", goal::ratio_at_least, 1.8, true},
    {"choose_action (ns) vs rules in string-keyed maps", "choose_action_defaults", "choose_action_string_maps",
     goal::ns_at_most, 30},
    {"loading a 1,000-rule policy file (ns)", "load_policy_1000_rules", "", goal::ns_at_most, 250e6},
    {"ngfail stats over 100,000 rows (ns)", "ngfail_stats_100k_rows", "", goal::ns_at_most, 2e9},
    {"ngfail stats, peak resident: 8 shards vs 1 (constant memory)", "stats_8_shards_peak_kib",
     "stats_1_shard_peak_kib", goal::ratio_at_most, 1.1, false, " KiB"},
    // The client against `ngfail serve`, beside the official TypeScript SDK on the same server.
    {"exec one at a time: TS SDK vs client (x faster)", "sdk_exec_one_at_a_time", "client_exec_one_at_a_time",
     goal::ratio_at_least, 2},
    {"exec one at a time: client vs bare Beast, same bytes, same io_context (the floor)", "client_exec_one_at_a_time",
     "floor_exec_one_at_a_time", goal::ratio_at_most, 1.3},
    {"256 execs at once: TS SDK vs client (x faster)", "sdk_exec_256_at_once", "client_exec_256_at_once",
     goal::ratio_at_least, 2},
    {"a 1-second command: detached vs streamed (wall time)", "client_exec_1s_command_detached",
     "client_exec_1s_command_streamed", goal::ratio_at_most, 1.10},
    {"exec one at a time: instrumented (OpenTelemetry SDK, no-op exporters) vs not", "client_instrumented_exec_one_at_a_time",
     "client_exec_one_at_a_time", goal::ratio_at_most, 1.05},
    {"exec one at a time: the same SDK's least for a call (its span and its attempt's, bare) vs not",
     "client_sdk_least_exec_one_at_a_time", "client_exec_one_at_a_time", goal::info, 0},
    {"exec one at a time: instrumented vs the SDK's least (ngfail's own share)", "client_instrumented_exec_one_at_a_time",
     "client_sdk_least_exec_one_at_a_time", goal::info, 0},
    {"ngfail serve's CPU per exec, one at a time (ns)", "server_cpu_per_exec_one_at_a_time", "", goal::ns_at_most,
     50e3},
    // The official Go SDK on the same workload and server (benchmarks/go_sdk; measured only
    // when NGFAIL_OPENSANDBOX_SRC names an OpenSandbox checkout).
    {"exec one at a time: Go SDK vs client's async face (x faster)", "go_sdk_exec_one_at_a_time",
     "client_exec_one_at_a_time", goal::ratio_at_least, 2},
    {"exec one at a time: Go SDK vs client's blocking face (x faster)", "go_sdk_exec_one_at_a_time",
     "client_blocking_exec_one_at_a_time", goal::ratio_at_least, 1.8},
    {"256 execs at once: Go SDK vs client (x faster)", "go_sdk_exec_256_at_once", "client_exec_256_at_once",
     goal::ratio_at_least, 2},
    {"memory per exec in flight: client (allocated) vs Go SDK (heap)", "client_kib_per_exec_in_flight",
     "go_sdk_kib_per_exec_in_flight", goal::ratio_at_most, 0.5, false, " KiB"},
    {"memory per exec in flight (KiB allocated)", "client_kib_per_exec_in_flight", "", goal::value_at_most, 64},
    {"exec of `true` in a process sandbox, one at a time (ns, median)", "process_exec_true_one_at_a_time", "",
     goal::ns_at_most, 3e6},
    {"exec of `true` in a process sandbox vs a bare `bash -c true` spawn", "process_exec_true_one_at_a_time",
     "bare_bash_c_true_spawn", goal::info, 0},
    {"100 idle process sandboxes, resident in all (MiB)", "process_100_idle_sandboxes_resident_mib", "",
     goal::value_at_most, 150},
    {"threads added by 256 execs at once", "client_threads_added", "", goal::value_at_most, 0},
    {"5% faulted: execs neither succeeded nor the injected failure", "client_faults_unaccounted", "",
     goal::value_at_most, 0},
    // informational
    {"success, 100 frames: result<int> vs int", "success_ngfail_result/100", "success_plain_int/100", goal::info, 0},
    {"success, 10 frames: result<int> vs Boost.LEAF", "success_ngfail_result/10", "success_leaf_result/10", goal::info, 0},
    {"success, 10 frames: result<int> vs std::expected", "success_ngfail_result/10", "success_std_expected/10", goal::info, 0},
    {"failure, 10 frames: kind-only vs Boost.LEAF", "failure_ngfail_kind_only/10", "failure_leaf/10", goal::info, 0},
    {"failure, 10 frames: kind-only vs std::expected", "failure_ngfail_kind_only/10", "failure_std_expected/10", goal::info, 0},
    {"throwing failure_event vs std::system_error, 1 frame", "failure_throw_failure_event/1", "failure_throw_system_error/1",
     goal::info, 0},
    {"throwing failure_event, 1 frame (ns)", "failure_throw_failure_event/1", "", goal::info, 0},
    {"throwing failure_event, 10 frames (ns)", "failure_throw_failure_event/10", "", goal::info, 0},
    {"throwing failure_event, 100 frames (ns)", "failure_throw_failure_event/100", "", goal::info, 0},
    {"plain int path throughput, 1 -> 2 threads (the machine's scaling)", "plain_path_threads/real_time/threads:2",
     "plain_path_threads/real_time/threads:1", goal::info, 0, true},

    {"exec one at a time: client vs bare Beast with blocking reads", "client_exec_one_at_a_time",
     "blocking_floor_exec_one_at_a_time", goal::info, 0},
    {"memory per exec in flight (KiB resident, page-granular)", "client_rss_kib_per_exec_in_flight", "", goal::info,
     0, false, ""},
    {"256 execs at once with 5% faulted (ns per exec)", "client_exec_256_at_once_with_5pct_faults", "", goal::info, 0},
    {"full failure (with record) throughput, 1 -> 2 threads", "full_failure_threads/real_time/threads:2",
     "full_failure_threads/real_time/threads:1", goal::info, 0, true},
};

double to_ns(double value, std::string_view unit) {
    if (unit == "us") return value * 1e3;
    if (unit == "ms") return value * 1e6;
    if (unit == "s") return value * 1e9;
    return value;
}

// Collects every benchmark's runs. Aggregates are skipped (the report takes its own medians
// and spreads), except a median reported alone, which counts as one run.
void collect(const json::value& doc, std::map<std::string, measured>& out, json::array& raw) {
    std::map<std::string, measured> medians;
    for (const auto& b : doc.at("benchmarks").as_array()) {
        raw.push_back(b);
        const auto& o = b.as_object();
        const bool aggregate = o.contains("aggregate_name");
        if (aggregate && o.at("aggregate_name").as_string() != "median") continue;
        const std::string name(o.at(aggregate ? "run_name" : "name").as_string());
        measured& m = (aggregate ? medians : out)[name];
        m.ns.push_back(to_ns(o.at("real_time").to_number<double>(), o.at("time_unit").as_string()));
        if (const auto* ips = o.if_contains("items_per_second")) m.items_per_second.push_back(ips->to_number<double>());
    }
    for (auto& [name, m] : medians) out.try_emplace(name, std::move(m));
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.2f", v);
    return buf;
}

using results = std::map<std::string, measured>;

// Reads every benchmark JSON file; a file that is not one is named and skipped.
results load(const std::vector<std::string>& files, json::array& raw) {
    results found;
    for (const std::string& file : files) {
        std::ifstream in(file);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        json::error_code ec;
        const auto doc = json::parse(text, ec);
        if (ec || !doc.is_object() || !doc.as_object().contains("benchmarks")) {
            std::cerr << "benchmark_report: skipping " << file << ": not benchmark JSON\n";
            continue;
        }
        collect(doc, found, raw);
    }
    return found;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// One row's figures: the medians, and the number its target is about (the ratio, or the
// value itself) with its spread over the repetitions.
struct figures {
    double mine = 0;
    double base = 0;
    double judged = 0;
    double low = 0;
    double high = 0;
    bool spread = false;  // more than one repetition (of each side, paired in run order)
};

bool judged_by_value(const metric& m) { return m.kind == goal::ns_at_most || m.kind == goal::value_at_most; }

std::optional<figures> measure(const metric& m, const results& r) {
    const auto a = r.find(m.ngfail);
    const auto b = *m.baseline ? r.find(m.baseline) : r.end();
    if (a == r.end() || (*m.baseline && b == r.end())) return std::nullopt;
    const auto runs = [&](const measured& x) { return m.throughput ? x.items_per_second : x.ns; };
    const std::vector<double> mine = runs(a->second);
    const std::vector<double> base = b == r.end() ? std::vector<double>{} : runs(b->second);
    figures f{.mine = median(mine), .base = median(base)};
    std::vector<double> values = mine;
    if (!judged_by_value(m) && *m.baseline) {
        values.clear();
        // Repetitions interleaved in one run are paired in order: each ratio compares two
        // measurements taken close together, so the machine's drift falls on both.
        if (mine.size() == base.size()) {
            for (std::size_t i = 0; i < mine.size(); ++i) {
                if (base[i] > 0) values.push_back(mine[i] / base[i]);
            }
        } else if (f.base > 0) {
            values.push_back(f.mine / f.base);
        }
    }
    if (values.empty()) return f;
    f.judged = median(values);
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    f.low = *low;
    f.high = *high;
    f.spread = values.size() > 1;
    return f;
}

bool meets(const metric& m, double value) {
    switch (m.kind) {
        case goal::ratio_at_most:
        case goal::ns_at_most:
        case goal::value_at_most: return value <= m.target;
        case goal::ratio_at_least: return value >= m.target;
        case goal::info: return true;
    }
    return true;
}

}  // namespace

// Usage: benchmark_report OUT.json IN.json...
// A row is judged on its median; a row whose spread (the lowest to the highest repetition)
// lies on both sides of its target gets no verdict, since one more run could go either way.
int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: benchmark_report OUT.json IN.json...\n";
        return 2;
    }
    json::array raw;
    const results r = load(std::vector<std::string>(argv + 2, argv + argc), raw);
    std::ofstream(argv[1]) << json::serialize(json::object{{"benchmarks", raw}}) << '\n';

    std::printf("| metric | ngfail | baseline | ratio (spread) | target | |\n|---|---:|---:|---:|---|---|\n");
    int missed = 0;
    int undecided = 0;
    for (const metric& m : table) {
        const auto f = measure(m, r);
        if (!f) {
            std::printf("| %s | - | - | - | | not measured |\n", m.label);
            continue;
        }
        const bool plain_value = m.kind == goal::value_at_most;
        const std::string unit = m.unit ? m.unit : plain_value ? "" : m.throughput ? "/s" : " ns";
        const char* op = m.kind == goal::ratio_at_least ? ">=" : "<=";
        const std::string target = m.kind == goal::info ? ""
                                   : std::string(op) + " " + number(m.target) +
                                         (m.kind == goal::ns_at_most ? " ns" : plain_value ? "" : "x");
        const std::string spread = f->spread ? " (" + number(f->low) + "-" + number(f->high) + ")" : "";
        const bool crosses = m.kind != goal::info && f->spread && meets(m, f->low) != meets(m, f->high);
        const bool met = meets(m, f->judged);
        const char* verdict = m.kind == goal::info ? "info" : crosses ? "spread crosses the target" : met ? "met" : "MISSED";
        std::printf("| %s | %s%s | %s | %s | %s | %s |\n", m.label, number(f->mine).c_str(),
                    judged_by_value(m) ? (unit + spread).c_str() : unit.c_str(),
                    *m.baseline ? (number(f->base) + unit).c_str() : "-",
                    *m.baseline && !judged_by_value(m) ? (number(f->judged) + "x" + spread).c_str() : "-",
                    target.c_str(), verdict);
        missed += crosses || met ? 0 : 1;
        undecided += crosses ? 1 : 0;
    }
    std::printf("\n%d target(s) missed, %d undecided (their spread crosses the target)\n", missed, undecided);
    return 0;
}
