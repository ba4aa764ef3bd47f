// <ngfail/otel/policy_decisions.hpp> — counts the outcome policy's decisions in
// `ngfail.policy.decisions` (target ngfail::otel; your code links ngfail::policy already).
//
//   ngfail::otel::decision_counter decisions;
//   const auto d = ngfail::policy::choose_action(policy, f, context);
//   ngfail::otel::record(decisions, d, policy);   // ngfail.action=retry, ngfail.failure_class=…
#pragma once

#include <ngfail/otel/client_instrumentation.hpp>
#include <ngfail/policy/choose_action.hpp>

namespace ngfail::otel {

// The action the boundary takes (not the one its rule selected, when that was refused) and
// the class the policy gave the failure.
inline void record(decision_counter& counter, const policy::outcome_decision& d,
                   const policy::outcome_policy& p) noexcept {
    counter.record(name(d.action), class_name(d, p));
}

}  // namespace ngfail::otel
