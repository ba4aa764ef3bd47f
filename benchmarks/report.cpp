// Reads Google Benchmark JSON files and prints the performance table: each row a metric,
// ngfail's number, its baseline from the same run, the ratio, the target and whether it
// was met. Writes every raw result, merged, to the first argument.
// Usage: see main.
#include <boost/json.hpp>

#include <cmath>

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

// A benchmark's time in nanoseconds (the median when repeated), or its items per second.
struct measured {
    double ns = 0;
    double items_per_second = 0;
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
    {"result path throughput, 1 -> 2 threads", "result_path_threads/real_time/threads:2",
     "result_path_threads/real_time/threads:1", goal::ratio_at_least, 1.8, true},
    {"choose_action (ns) vs rules in string-keyed maps", "choose_action_defaults", "choose_action_string_maps",
     goal::ns_at_most, 30},
    {"loading a 1,000-rule policy file (ns)", "load_policy_1000_rules", "", goal::ns_at_most, 250e6},
    {"ngfail stats over 100,000 rows (ns)", "ngfail_stats_100k_rows", "", goal::ns_at_most, 2e9},
    // The client against `ngfail serve`, beside the official TypeScript SDK on the same server.
    {"exec one at a time: TS SDK vs client (x faster)", "sdk_exec_one_at_a_time", "client_exec_one_at_a_time",
     goal::ratio_at_least, 2},
    {"exec one at a time: client vs bare Beast, same bytes, same io_context (the floor)", "client_exec_one_at_a_time",
     "floor_exec_one_at_a_time", goal::ratio_at_most, 1.3},
    {"256 execs at once: TS SDK vs client (x faster)", "sdk_exec_256_at_once", "client_exec_256_at_once",
     goal::ratio_at_least, 2},
    {"memory per exec in flight (KiB)", "client_kib_per_exec_in_flight", "", goal::value_at_most, 64},
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
    {"encode_header, 10,000 vs 1,000 observed events (linear: about 10x)", "encode_header_observed/10000",
     "encode_header_observed/1000", goal::info, 0},
    {"exec one at a time: client vs bare Beast with blocking reads", "client_exec_one_at_a_time",
     "blocking_floor_exec_one_at_a_time", goal::info, 0},
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

// Collects every benchmark: a median aggregate wins over single runs of the same name.
void collect(const json::value& doc, std::map<std::string, measured>& out, json::array& raw) {
    for (const auto& b : doc.at("benchmarks").as_array()) {
        raw.push_back(b);
        const auto& o = b.as_object();
        std::string name(o.at("name").as_string());
        const bool aggregate = o.contains("aggregate_name");
        if (aggregate && o.at("aggregate_name").as_string() != "median") continue;
        if (aggregate) name = std::string(o.at("run_name").as_string());
        if (!aggregate && out.contains(name)) continue;
        measured m{to_ns(o.at("real_time").to_number<double>(), o.at("time_unit").as_string())};
        if (const auto* ips = o.if_contains("items_per_second")) m.items_per_second = ips->to_number<double>();
        out[name] = m;
    }
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

// One row's figures from one set of results.
struct figures {
    double mine = 0;
    double base = 0;
    double ratio = 0;
};

std::optional<figures> measure(const metric& m, const results& r) {
    const auto a = r.find(m.ngfail);
    const auto b = *m.baseline ? r.find(m.baseline) : r.end();
    if (a == r.end() || (*m.baseline && b == r.end())) return std::nullopt;
    const auto pick = [&](const measured& x) { return m.throughput ? x.items_per_second : x.ns; };
    figures f{pick(a->second), b == r.end() ? 0 : pick(b->second)};
    f.ratio = f.base > 0 ? f.mine / f.base : 0;
    return f;
}

// The number a row's target is about: the ratio, or the value itself.
double judged(const metric& m, const figures& f) {
    return m.kind == goal::ns_at_most || m.kind == goal::value_at_most ? f.mine : f.ratio;
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

// Within 10% of its target either way: one run's noise could put it on either side.
bool noise_close(const metric& m, double value) {
    return m.kind != goal::info && m.target > 0 && std::abs(value / m.target - 1) <= 0.10;
}

// --close: the benchmarks of every noise-close row, one name per line, for benchmarks/run to
// measure again.
int list_close(const results& r) {
    for (const metric& m : table) {
        const auto f = measure(m, r);
        if (!f || !noise_close(m, judged(m, *f))) continue;
        std::printf("%s\n", m.ngfail);
        if (*m.baseline) std::printf("%s\n", m.baseline);
    }
    return 0;
}

}  // namespace

// Usage: benchmark_report OUT.json IN.json... [--again AGAIN.json...]
//        benchmark_report --close IN.json...
// A row measured again (its benchmarks are in the AGAIN files) shows both figures and is
// judged on their mean.
int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: benchmark_report OUT.json IN.json... [--again AGAIN.json...] | --close IN.json...\n";
        return 2;
    }
    const std::string first = argv[1];
    std::vector<std::string> inputs;
    std::vector<std::string> again_inputs;
    bool again_part = false;
    for (int i = 2; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--again") {
            again_part = true;
            continue;
        }
        (again_part ? again_inputs : inputs).emplace_back(argv[i]);
    }
    json::array raw;
    if (first == "--close") return list_close(load(inputs, raw));
    const results r = load(inputs, raw);
    const results again = load(again_inputs, raw);
    std::ofstream(first) << json::serialize(json::object{{"benchmarks", raw}}) << '\n';

    std::printf("| metric | ngfail | baseline | ratio | target | |\n|---|---:|---:|---:|---|---|\n");
    int missed = 0;
    for (const metric& m : table) {
        const auto f = measure(m, r);
        if (!f) {
            std::printf("| %s | - | - | - | | not measured |\n", m.label);
            continue;
        }
        const auto second = measure(m, again);
        const double value = second ? (judged(m, *f) + judged(m, *second)) / 2 : judged(m, *f);
        const bool met = meets(m, value);
        const char* op = m.kind == goal::ratio_at_least ? ">=" : "<=";
        const bool plain_value = m.kind == goal::value_at_most;
        const std::string unit = plain_value ? "" : m.throughput ? "/s" : " ns";
        const auto shown = [&](double x, double y, const std::string& suffix) {
            return second ? number(x) + suffix + ", again " + number(y) + suffix : number(x) + suffix;
        };
        const std::string target = m.kind == goal::info ? ""
                                   : std::string(op) + " " + number(m.target) +
                                         (m.kind == goal::ns_at_most ? " ns" : plain_value ? "" : "x");
        std::printf("| %s | %s | %s | %s | %s | %s |\n", m.label,
                    shown(f->mine, second ? second->mine : 0, unit).c_str(),
                    *m.baseline ? shown(f->base, second ? second->base : 0, unit).c_str() : "-",
                    *m.baseline ? shown(f->ratio, second ? second->ratio : 0, "x").c_str() : "-", target.c_str(),
                    m.kind == goal::info ? "info" : met ? (second ? "met (mean of both)" : "met")
                                                        : (second ? "MISSED (mean of both)" : "MISSED"));
        missed += met ? 0 : 1;
    }
    std::printf("\n%d target(s) missed\n", missed);
    return 0;
}
