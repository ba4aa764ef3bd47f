// <ngfail/policy/rollout_rows.hpp> — decisions saved in rollout rows, and what a run's rows add up to.
//
// A rollout row (one JSON object per line, as NeMo Gym's collection writes it) already
// carries its failure report (<ngfail/json.hpp>). A boundary saves its decision beside it:
//
//   ngfail::policy::save_decision(row, decision, policy);
//   // {"_ng_failure_class": "judge_failed", "_ng_failure_action": "fail",
//   //  "_ng_failure_refused": "replay_unsafe", "_ng_failure_terminal": false,
//   //  "_ng_failure_counts_as_zero": false, …}
//   ngfail::policy::is_counted_zero(row);   // a saved explicit zero, whatever else the row says
//
// `recovery_view` reads a run's rows (in the order they were written: a rollout's later row
// is a later attempt) and says, per rollout, its attempts and its recovery state, counts by
// class and action, and two scores: with failures left out, and with the policy's
// `count_failure_classes_as_zero` classes scored zero "for the metrics only" (no row changes).
//
// A rollout is identified by `_ng_task_index` and `_ng_rollout_index` when a row has them,
// else by `task_id` and `rollout`. A row marked `_ng_omitted_rollout` is neither a failure
// nor an attempt. A row with `mask_sample: true` is kept but not measured. A failed row is
// decided by the policy (a row with a `response` has a saved answer to verify), except for
// what the row saved itself (`_ng_failure_class`, `_ng_failure_action`, `_ng_failure_refused`,
// `_ng_failure_terminal`, `_ng_failure_counts_as_zero`), which wins: it is what the boundary
// decided and did at the time (a retry it refused is counted as the `fail` it did).
#pragma once

#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/outcome_policy.hpp>
#include <ngfail/result.hpp>

#include <boost/json/object.hpp>

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::policy {

inline constexpr std::string_view failure_class_key = "_ng_failure_class";
inline constexpr std::string_view failure_terminal_key = "_ng_failure_terminal";
inline constexpr std::string_view failure_counts_as_zero_key = "_ng_failure_counts_as_zero";
inline constexpr std::string_view failure_action_key = "_ng_failure_action";
inline constexpr std::string_view failure_refused_key = "_ng_failure_refused";

// Writes the decision's class, action, refusal (when a selected action was refused),
// `terminal` and `counts_as_zero` into the row.
void save_decision(boost::json::object& row, const outcome_decision& d, const outcome_policy& policy);

// True when the row carries a saved explicit-zero decision (`_ng_failure_counts_as_zero`).
[[nodiscard]] bool is_counted_zero(const boost::json::object& row) noexcept;

// Where a rollout stands, from its rows alone.
enum class recovery_state : std::uint8_t {
    scored,        // its last row is a result; never re-run
    counted_zero,  // the model's own terminal failure: a scored zero no retry replaces
    retryable,     // its last row failed, not terminally, under the attempt cap
    exhausted,     // likewise, at the cap: only a resubmission gives it a fresh budget
    terminal,      // its last row failed terminally: excluded, the run cannot complete
    masked,        // a result the producer masked: kept, not measured
    missing,       // no row (or only omitted rows): a resume starts it
};
inline constexpr std::size_t recovery_state_count = static_cast<std::size_t>(recovery_state::missing) + 1;

[[nodiscard]] std::string_view name(recovery_state s) noexcept;

struct rollout_key {
    std::string task;
    std::string index;
    friend auto operator<=>(const rollout_key&, const rollout_key&) = default;
};

struct rollout_status {
    int attempts = 0;  // rows that are not omitted
    recovery_state state = recovery_state::missing;
    std::optional<double> reward{};  // of the last row, when it has one
    std::string failure_class{};     // of the last row, when it failed
    outcome_action action = outcome_action::fail;  // saved with the row, else decided now
    refusal refused = refusal::none;               // likewise
};

class recovery_view {
public:
    // `rollouts_per_task`, when given, makes rollouts 0…N-1 of every task seen expected, so
    // those without a row are `missing`.
    explicit recovery_view(const outcome_policy& policy, std::optional<int> rollouts_per_task = std::nullopt);

    // Adds one row. A row whose report cannot be read, or with no identity, is refused.
    [[nodiscard]] result<void> add(const boost::json::object& row);

    [[nodiscard]] const std::map<rollout_key, rollout_status>& rollouts() const noexcept { return rollouts_; }
    [[nodiscard]] std::array<std::size_t, recovery_state_count> by_state() const;
    [[nodiscard]] const std::map<std::string, std::int64_t>& failures_by_class() const noexcept { return by_class_; }
    [[nodiscard]] const std::map<std::string, std::int64_t>& failures_by_action() const noexcept {
        return by_action_;
    }

    struct score {
        double mean = 0;
        std::size_t rollouts = 0;  // in the denominator
    };
    // Mean reward of scored rollouts (counted zeros as 0); failures and masked rows left out.
    [[nodiscard]] score score_excluding_failures() const;
    // The same, plus failed rollouts of the policy's counted classes (and, if configured,
    // missing rollouts) as 0: a metrics view, no row changed.
    [[nodiscard]] score score_with_counted_zeros() const;

private:
    const outcome_policy* policy_;
    std::optional<int> rollouts_per_task_;
    std::map<rollout_key, rollout_status> rollouts_;
    std::map<std::string, std::int64_t> by_class_;
    std::map<std::string, std::int64_t> by_action_;
};

}  // namespace ngfail::policy
