// The outcome policy: choose_action on the defaults (a table lookup, no allocation), beside
// the obvious alternative (rules keyed by kind name in a std::map<std::string, …>), and
// loading a policy file of 1,000 rules.
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/policy_file.hpp>

#include <benchmark/benchmark.h>

#include <map>
#include <string>

namespace {

using namespace ngfail::policy;

// A failure whose decision falls through status, kind and domain to the default: every
// dimension is tried.
const failure_evidence deepest{.kind = make_error_code(ngfail::kind::provider_oom_killed),
                               .http_status = 409,
                               .stage = ngfail::stage::agent,
                               .delivery = ngfail::delivery::possibly_delivered};

void choose_action_defaults(benchmark::State& state) {
    const auto& policy = outcome_policy::defaults();
    for (auto _ : state) {
        benchmark::DoNotOptimize(choose_action(policy, deepest, {.replay = ngfail::replay_policy::before_delivery}));
    }
}

// The peer: the same four lookups as strings in ordered maps, as a config-driven table
// written the obvious way would do them.
void choose_action_string_maps(benchmark::State& state) {
    std::map<std::string, outcome_action, std::less<>> by_status, by_kind, by_domain;
    for (const auto& [key, outcome] : outcome_policy::defaults().shared.rules()) {
        const auto text = describe(chosen_rule{.key = key}, outcome_policy::defaults());
        (key.dimension == rule_dimension::kind ? by_kind : key.dimension == rule_dimension::domain ? by_domain : by_status)
            [text.substr(text.find(' ') + 1)] = outcome.action;
    }
    for (auto _ : state) {
        outcome_action action = outcome_action::fail;
        if (auto it = by_status.find(std::to_string(*deepest.http_status)); it != by_status.end()) {
            action = it->second;
        } else if (auto k = by_kind.find(ngfail::kind_name(deepest.kind)); k != by_kind.end()) {
            action = k->second;
        } else if (auto d = by_domain.find("provider"); d != by_domain.end()) {
            action = d->second;
        }
        benchmark::DoNotOptimize(action);
    }
}

std::string thousand_rule_file() {
    std::string text = "classes:\n";
    for (int i = 0; i < 400; ++i) {
        text += "  - {class: class_" + std::to_string(i) + ", status: " + std::to_string(400 + i % 200) + ", stage: agent}\n";
    }
    text += "actions:\n  status:\n";
    for (int s = 400; s < 600; ++s) text += "    " + std::to_string(s) + ": retry\n";
    text += "  class:\n";
    for (int i = 0; i < 400; ++i) text += "    class_" + std::to_string(i) + ": {action: fail, terminal: true}\n";
    return text;
}

void load_policy_1000_rules(benchmark::State& state) {
    const std::string text = thousand_rule_file();
    for (auto _ : state) {
        auto p = parse_outcome_policy(text);
        if (!p) state.SkipWithError("the policy did not parse");
        benchmark::DoNotOptimize(p);
    }
}

}  // namespace

BENCHMARK(choose_action_defaults);
BENCHMARK(choose_action_string_maps);
BENCHMARK(load_policy_1000_rules)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
