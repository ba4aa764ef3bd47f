// The policy alone (ngfail::policy), as a harness's boundary uses it: a policy file read,
// and the decision it makes for a failure.
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/policy_file.hpp>

#include <cstdio>

int main() {
    const auto policy = ngfail::policy::parse_outcome_policy("actions:\n  kind: {provider_oom_killed: count_as_zero}\n", "inline");
    const bool loaded = policy.has_value();
    const auto d = loaded ? ngfail::policy::choose_action(policy.value(), ngfail::failure(ngfail::kind::provider_oom_killed))
                          : ngfail::policy::outcome_decision{};
    const bool ok = loaded && d.action == ngfail::policy::outcome_action::count_as_zero;
    std::printf("policy alone: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
