#include <ngfail/policy/rollout_rows.hpp>

#include <ngfail/json.hpp>
#include <ngfail/one_line.hpp>
#include <ngfail/sandbox.hpp>

#include <boost/json/serialize.hpp>

#include <algorithm>

namespace ngfail::policy {
namespace {

constexpr std::string_view omitted_key = "_ng_omitted_rollout";
constexpr std::string_view masked_key = "mask_sample";

std::optional<bool> bool_at(const boost::json::object& row, std::string_view key) noexcept {
    const auto* v = row.if_contains(key);
    return v && v->is_bool() ? std::optional<bool>(v->get_bool()) : std::nullopt;
}

std::optional<std::string> identity_part(const boost::json::object& row, std::string_view gym_key,
                                         std::string_view plain_key) {
    const auto* v = row.if_contains(gym_key);
    if (!v) v = row.if_contains(plain_key);
    if (!v || v->is_null() || v->is_object() || v->is_array()) return std::nullopt;
    return v->is_string() ? std::string(v->get_string()) : boost::json::serialize(*v);
}

std::optional<double> reward_of(const boost::json::object& row) noexcept {
    const auto* v = row.if_contains("reward");
    if (!v || !v->is_number()) return std::nullopt;
    return v->to_number<double>();
}

std::optional<refusal> parse_refusal(std::string_view text) noexcept {
    for (const refusal r : {refusal::none, refusal::unsupported, refusal::replay_unsafe, refusal::allowance_spent,
                            refusal::no_saved_answer}) {
        if (name(r) == text) return r;
    }
    return std::nullopt;
}

// What a row saved of its boundary's decision. A key that is there but unreadable, or that
// contradicts another, makes the row invalid: re-deciding it would count what the boundary
// never did.
struct saved_decision {
    std::optional<std::string_view> failure_class;
    std::optional<outcome_action> action;
    std::optional<refusal> refused;
    std::optional<bool> terminal;
    std::optional<bool> counts_as_zero;
};

failure bad_saved(std::string_view key, const boost::json::value& v, std::string_view expected) {
    return failure(kind::protocol_violation, std::string(key) + ": " + one_line(boost::json::serialize(v), 64) +
                                                 " is not " + std::string(expected));
}

result<saved_decision> saved_decision_of(const boost::json::object& row) {
    saved_decision saved;
    const auto text = [&](std::string_view key, auto parse, auto& into, std::string_view expected) -> result<void> {
        const auto* v = row.if_contains(key);
        if (!v) return boost::outcome_v2::success();
        if (v->is_string()) into = parse(v->get_string());
        if (!into) return bad_saved(key, *v, expected);
        return boost::outcome_v2::success();
    };
    const auto flag = [&](std::string_view key, std::optional<bool>& into) -> result<void> {
        const auto* v = row.if_contains(key);
        if (!v) return boost::outcome_v2::success();
        if (!v->is_bool()) return bad_saved(key, *v, "true or false");
        into = v->get_bool();
        return boost::outcome_v2::success();
    };
    const auto class_name = [](std::string_view t) {
        return t.empty() ? std::nullopt : std::optional<std::string_view>(t);
    };
    BOOST_OUTCOME_TRY(text(failure_class_key, class_name, saved.failure_class, "a class name"));
    BOOST_OUTCOME_TRY(text(failure_action_key, parse_outcome_action, saved.action,
                           "an action (retry, fail, count_as_zero, verify)"));
    BOOST_OUTCOME_TRY(text(failure_refused_key, parse_refusal, saved.refused,
                           "a refusal (none, unsupported, replay_unsafe, allowance_spent, no_saved_answer)"));
    BOOST_OUTCOME_TRY(flag(failure_terminal_key, saved.terminal));
    BOOST_OUTCOME_TRY(flag(failure_counts_as_zero_key, saved.counts_as_zero));
    // What choose_action can decide: a refused action is a fail, not terminal, no zero; a
    // count-as-zero, and only it, counts as zero, and is terminal; only a fail or a zero is
    // terminal.
    const auto contradiction = [](std::string why) { return failure(kind::protocol_violation, "the saved decision " + why); };
    const auto action_text = [&] { return "\"" + std::string(name(*saved.action)) + "\""; };
    const bool refused = saved.refused && *saved.refused != refusal::none;
    if (refused && !saved.action) {
        return contradiction("has " + std::string(failure_refused_key) + " but no " + std::string(failure_action_key));
    }
    if (refused && *saved.action != outcome_action::fail) {
        return contradiction("refused an action but did not fail (" + std::string(failure_action_key) + " " +
                             action_text() + " with " + std::string(failure_refused_key) + " \"" +
                             std::string(name(*saved.refused)) + "\")");
    }
    if (saved.action && saved.counts_as_zero &&
        (*saved.action == outcome_action::count_as_zero) != *saved.counts_as_zero) {
        return contradiction("is " + action_text() + " but " + std::string(failure_counts_as_zero_key) + " is " +
                             (*saved.counts_as_zero ? "true" : "false"));
    }
    const bool zero = saved.counts_as_zero.value_or(saved.action == outcome_action::count_as_zero);
    if (zero && saved.terminal == false) {
        return contradiction("counts as zero but " + std::string(failure_terminal_key) + " is false");
    }
    if (saved.terminal == true && saved.action && *saved.action != outcome_action::fail &&
        *saved.action != outcome_action::count_as_zero) {
        return contradiction("is a terminal " + action_text() + "; only a fail or a count_as_zero is terminal");
    }
    if (refused && (saved.terminal == true || zero)) {
        return contradiction("refused an action, so it neither ends the rollout nor counts it as zero");
    }
    return saved;
}

bool failed_state(recovery_state s) noexcept {
    return s == recovery_state::retryable || s == recovery_state::exhausted || s == recovery_state::terminal;
}

}  // namespace

void save_decision(boost::json::object& row, const outcome_decision& d, const outcome_policy& policy) {
    row[failure_class_key] = class_name(d, policy);
    row[failure_action_key] = name(d.action);
    if (d.refused != refusal::none) {
        row[failure_refused_key] = name(d.refused);
    } else {
        row.erase(failure_refused_key);
    }
    row[failure_terminal_key] = d.terminal;
    row[failure_counts_as_zero_key] = d.counts_as_zero;
}

bool is_counted_zero(const boost::json::object& row) noexcept {
    return bool_at(row, failure_counts_as_zero_key).value_or(false);
}

std::string_view name(recovery_state s) noexcept {
    static constexpr auto names = std::to_array<std::string_view>(
        {"scored", "counted_zero", "retryable", "exhausted", "terminal", "masked", "missing"});
    static_assert(names.size() == recovery_state_count, "a name for every state");
    return names[static_cast<std::size_t>(s)];
}

recovery_view::recovery_view(const outcome_policy& policy, std::optional<int> rollouts_per_task)
    : policy_(&policy), rollouts_per_task_(rollouts_per_task) {}

result<void> recovery_view::add(const boost::json::object& row) {
    auto task = identity_part(row, "_ng_task_index", "task_id");
    auto index = identity_part(row, "_ng_rollout_index", "rollout");
    if (!task || !index) {
        return failure(kind::protocol_violation, "the row names no rollout (_ng_task_index and _ng_rollout_index, "
                                                 "or task_id and rollout)");
    }
    auto report = rollout_report(row);
    if (!report) return report.error();
    // Checked on every row before it counts for anything: a row refused here changes nothing.
    BOOST_OUTCOME_TRY(const saved_decision saved, saved_decision_of(row));
    // A task seen for the first time brings its expected rollouts, missing until a row comes.
    if (rollouts_per_task_) {
        const auto first = rollouts_.lower_bound(rollout_key{*task, {}});
        if (first == rollouts_.end() || first->first.task != *task) {
            for (int i = 0; i < *rollouts_per_task_; ++i) rollouts_.try_emplace(rollout_key{*task, std::to_string(i)});
        }
    }
    rollout_status& status = rollouts_[rollout_key{std::move(*task), std::move(*index)}];
    if (bool_at(row, omitted_key).value_or(false)) return boost::outcome_v2::success();  // neither a failure nor an attempt

    ++status.attempts;
    status.reward = reward_of(row);
    status.failure_class.clear();
    const bool counted_zero = saved.counts_as_zero.value_or(false);
    if (!report.value().failure_id) {
        status.state = counted_zero                                 ? recovery_state::counted_zero
                       : bool_at(row, masked_key).value_or(false) ? recovery_state::masked
                                                                   : recovery_state::scored;
        return boost::outcome_v2::success();
    }

    const event_record& own = report.value().events.at(*report.value().failure_id);
    // A row that kept the model's response can be re-graded.
    const outcome_decision d = choose_action(*policy_, evidence_of(own), {.saved_answer = row.contains("response")});
    // What the boundary saved at the time wins over what this policy would say now.
    status.failure_class = saved.failure_class ? std::string(*saved.failure_class) : std::string(class_name(d, *policy_));
    const bool zero = saved.counts_as_zero.value_or(saved.action ? *saved.action == outcome_action::count_as_zero
                                                                 : d.counts_as_zero);
    // (a saved retry or verify was no terminal failure, whatever this policy says now)
    const bool terminal = saved.terminal.value_or(
        zero || ((!saved.action || *saved.action == outcome_action::fail) && d.terminal));
    status.action = saved.action ? *saved.action
                    : zero       ? outcome_action::count_as_zero
                    : terminal && d.action == outcome_action::retry ? outcome_action::fail
                                                                     : d.action;
    status.refused = saved.refused ? *saved.refused : saved.action ? refusal::none : d.refused;
    status.state = zero       ? recovery_state::counted_zero
                   : terminal ? recovery_state::terminal
                   : status.attempts < policy_->max_rollout_attempts ? recovery_state::retryable
                                                                      : recovery_state::exhausted;
    ++by_class_[status.failure_class];
    ++by_action_[std::string(name(status.action))];
    return boost::outcome_v2::success();
}

std::array<std::size_t, recovery_state_count> recovery_view::by_state() const {
    std::array<std::size_t, recovery_state_count> counts{};
    for (const auto& [key, status] : rollouts()) ++counts[static_cast<std::size_t>(status.state)];
    return counts;
}

recovery_view::score recovery_view::score_excluding_failures() const {
    score s;
    double total = 0;
    for (const auto& [key, status] : rollouts()) {
        if (status.state == recovery_state::scored) {
            total += status.reward.value_or(0);
            ++s.rollouts;
        } else if (status.state == recovery_state::counted_zero) {
            ++s.rollouts;
        }
    }
    s.mean = s.rollouts ? total / static_cast<double>(s.rollouts) : 0;
    return s;
}

recovery_view::score recovery_view::score_with_counted_zeros() const {
    score s = score_excluding_failures();
    const double total = s.mean * static_cast<double>(s.rollouts);
    for (const auto& entry : rollouts()) {
        const rollout_status& status = entry.second;
        const bool counted_class =
            failed_state(status.state) &&
            std::any_of(policy_->count_as_zero_classes.begin(), policy_->count_as_zero_classes.end(),
                        [&](class_id c) { return policy_->class_name(c) == status.failure_class; });
        const bool counted_missing = status.state == recovery_state::missing && policy_->count_missing_as_zero;
        if (counted_class || counted_missing) ++s.rollouts;
    }
    s.mean = s.rollouts ? total / static_cast<double>(s.rollouts) : 0;
    return s;
}

}  // namespace ngfail::policy
