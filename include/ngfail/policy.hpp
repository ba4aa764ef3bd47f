// <ngfail/policy.hpp> — the outcome policy (target ngfail::policy): every header of it.
//
// Start with <ngfail/policy/choose_action.hpp>: a failure and a policy in, the action this
// boundary takes (and the rule that chose it) out. docs/policy.md walks through it.
#pragma once

#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/outcome_action.hpp>
#include <ngfail/policy/outcome_policy.hpp>
#include <ngfail/policy/policy_file.hpp>
#include <ngfail/policy/retry_allowance.hpp>
#include <ngfail/policy/rollout_rows.hpp>
