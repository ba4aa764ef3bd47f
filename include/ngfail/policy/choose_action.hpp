// <ngfail/policy/choose_action.hpp> — from one failure to what this boundary does.
//
//   const auto& p = ngfail::policy::outcome_policy::defaults();
//   auto d = ngfail::policy::choose_action(p, f, {.replay = ngfail::replay_policy::before_delivery,
//                                                 .allowance = &allowance});
//   switch (d.action) { case outcome_action::retry: …; case outcome_action::fail: … }
//   log << describe(d, p);   // "retry (status 503, shared table)" or why a retry was refused
//
// `choose_action` reads only this failure's own evidence (kind, HTTP status, stage,
// delivery, id), never its causes: a wrapper's failure is decided as the wrapper's. Order:
// the stage's table, then the shared one; in each, exact status, `4xx`/`5xx`, exact kind,
// its domain, the failure's class, the default. The boundary then checks the action's
// prerequisites (`decision_context`); one it cannot meet falls back to `fail`, and the
// decision says why. It is a table lookup: no allocation, no string comparison.
#pragma once

#include <ngfail/event_id.hpp>
#include <ngfail/failure.hpp>
#include <ngfail/kind.hpp>
#include <ngfail/policy/outcome_policy.hpp>
#include <ngfail/replay.hpp>
#include <ngfail/report.hpp>

#include <optional>
#include <string>
#include <system_error>

namespace ngfail::policy {

// The evidence a decision reads. `evidence_of` takes it from a failure; build it yourself
// from any other record (a rollout row's report, say).
struct failure_evidence {
    std::error_code kind{};
    std::optional<int> http_status{};
    std::optional<ngfail::stage> stage{};
    std::optional<ngfail::delivery> delivery{};
    event_id id{};
};

[[nodiscard]] failure_evidence evidence_of(const failure& f) noexcept;
// The same from a report's record of the failure (a header's, a rollout row's).
[[nodiscard]] failure_evidence evidence_of(const event_record& r) noexcept;

// What the boundary can do now.
struct decision_context {
    std::optional<ngfail::stage> stage{};       // the boundary's stage, for a failure that names none
    action_set supported = action_set::all();   // narrowed further by the policy's `supported`
    bool saved_answer = false;                  // `verify` needs one
    std::optional<replay_policy> replay{};      // `retry` needs a replay this allows
    const retry_allowance* allowance = nullptr;  // `retry` needs an attempt left in it
};

// Why the selected action was not taken (then the action is `fail`).
enum class refusal : std::uint8_t {
    none,
    unsupported,      // the boundary (or the policy's `supported`) does not offer it
    replay_unsafe,    // retry: the delivery does not allow a replay under the replay policy
    allowance_spent,  // retry: no attempt or time left
    no_saved_answer,  // verify: nothing to re-grade
};

[[nodiscard]] std::string_view name(refusal r) noexcept;

// The rule that chose an action: its table (a stage's, or the shared one when `table` is
// empty), its dimension and key, and where it was written.
struct chosen_rule {
    std::optional<ngfail::stage> table{};
    rule_key key{};
    int line = 0;
};

struct outcome_decision {
    outcome_action action = outcome_action::fail;    // what the boundary does
    outcome_action selected = outcome_action::fail;  // what the rule chose
    refusal refused = refusal::none;                 // why `selected` was not taken
    chosen_rule rule{};
    std::optional<ngfail::stage> stage{};
    class_id failure_class = no_class;  // `class_name(d, policy)` names it
    event_id failure_id{};
    std::error_code kind{};
    bool terminal = false;        // no later attempt of the rollout repeats it
    bool counts_as_zero = false;  // a scored zero that no infrastructure retry replaces
};

[[nodiscard]] outcome_decision choose_action(const outcome_policy& policy, const failure_evidence& evidence,
                                             const decision_context& context = {}) noexcept;

[[nodiscard]] inline outcome_decision choose_action(const outcome_policy& policy, const failure& f,
                                                    const decision_context& context = {}) noexcept {
    return choose_action(policy, evidence_of(f), context);
}

// The decision's class: the policy's name for it, else the kind's name.
[[nodiscard]] std::string_view class_name(const outcome_decision& d, const outcome_policy& policy) noexcept;

// "status 429", "kind provider_oom_killed", "domain transport", "class judge_failed", "default".
// A class name (from a policy file: anyone's text) is shown as `one_line` shows it.
[[nodiscard]] std::string describe(const chosen_rule& rule, const outcome_policy& policy);

// One line: the action, the rule and table that chose it, and any refusal with what replaced it.
[[nodiscard]] std::string describe(const outcome_decision& d, const outcome_policy& policy);

}  // namespace ngfail::policy
