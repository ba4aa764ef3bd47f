// <ngfail/policy/policy_file.hpp> — outcome policies from YAML or JSON files.
//
//   auto p = ngfail::policy::load_outcome_policy("policy.yaml");
//   if (!p) { std::cerr << p.error().reason() << '\n'; return 2; }   // "policy.yaml:7: actions.kind.…"
//
// One schema for both (JSON is read as the YAML it is a subset of). A file overrides
// `outcome_policy::defaults()` key by key: a rule it names replaces that rule only.
//
//   classes:                        # classification; first match wins, else the kind's name
//     - {class: sandbox_infrastructure, domain: provider}
//     - {class: judge_failed, stage: verification, status: 5xx}
//   actions:                        # the shared table
//     status: {429: retry, 404: {action: fail, terminal: true}, 5xx: retry}
//     kind: {provider_oom_killed: count_as_zero}
//     domain: {transport: retry}
//     class: {judge_failed: verify}
//     default: fail
//   stages:                         # per-stage tables, the same shape, tried first
//     verification: {class: {judge_failed: verify}}
//   supported: [retry, fail, count_as_zero, verify]
//   allowance: {attempts: 3, elapsed_ms: 60000, base_delay_ms: 100, max_delay_ms: 5000}
//   max_rollout_attempts: 3
//   count_failure_classes_as_zero: [agent_run_error]
//   count_missing_rollouts_as_zero: false
//
// Errors are one `protocol_violation` failure whose reason names the file, the line and
// the key: an unknown key, kind, action, stage or domain, a wrong type, a duplicate key, a
// YAML syntax error, a file past one of the bounds below (the error names it). A kind must
// be core or a registered extension kind.
#pragma once

#include <ngfail/policy/outcome_policy.hpp>
#include <ngfail/result.hpp>

#include <filesystem>
#include <string_view>

namespace ngfail::policy {

// The largest policy file read, in bytes.
inline constexpr std::size_t max_policy_file_bytes = std::size_t{4} << 20;
// The most nodes read, an alias counting its target's nodes again at every use.
inline constexpr int max_policy_nodes = 1'000'000;
// The most bytes of scalars (keys and values) read, an alias counting its target's bytes
// again at every use: what a policy holds and prints stays near the size of its text.
inline constexpr std::size_t max_policy_expanded_bytes = std::size_t{4} << 20;

// Reads a policy from text; `source` names it in errors ("policy.yaml", "<inline>").
[[nodiscard]] result<outcome_policy> parse_outcome_policy(std::string_view text,
                                                          std::string_view source = "<policy>") noexcept;

[[nodiscard]] result<outcome_policy> load_outcome_policy(const std::filesystem::path& path) noexcept;

}  // namespace ngfail::policy
