#include <ngfail/policy/choose_action.hpp>

#include <ngfail/one_line.hpp>
#include <ngfail/sandbox.hpp>

#include <array>

namespace ngfail::policy {
namespace {

const rule_outcome* find_in(const action_table& table, const failure_evidence& e, class_id cls,
                            rule_key& matched) noexcept {
    const auto attempt = [&](const rule_key& key) {
        const rule_outcome* outcome = table.find(key);
        if (outcome) matched = key;
        return outcome;
    };
    const rule_outcome* outcome = nullptr;
    if (e.http_status) outcome = attempt(rule_key::status(*e.http_status));
    if (!outcome && e.http_status) outcome = attempt(rule_key::status_class(*e.http_status / 100));
    if (!outcome) outcome = attempt(rule_key::of(e.kind));
    if (!outcome && e.kind.category() == kind_category()) {
        if (const auto d = domain_of(static_cast<kind>(e.kind.value()))) outcome = attempt(rule_key::of(*d));
    }
    if (!outcome && cls != no_class) outcome = attempt(rule_key::of_class(cls));
    if (!outcome) outcome = attempt(rule_key::fallback());
    return outcome;
}

refusal check_prerequisites(outcome_action action, const outcome_policy& policy, const failure_evidence& e,
                            const decision_context& context) noexcept {
    if (action == outcome_action::fail) return refusal::none;  // always possible
    if (!(context.supported & policy.supported).contains(action)) return refusal::unsupported;
    switch (action) {
        case outcome_action::retry:
            if (context.replay && !replay_allowed(*context.replay, e.delivery)) return refusal::replay_unsafe;
            if (context.allowance && context.allowance->spent()) return refusal::allowance_spent;
            return refusal::none;
        case outcome_action::verify: return context.saved_answer ? refusal::none : refusal::no_saved_answer;
        case outcome_action::fail:
        case outcome_action::count_as_zero: return refusal::none;
    }
    return refusal::none;
}

}  // namespace

failure_evidence evidence_of(const failure& f) noexcept {
    return {.kind = f.code(), .http_status = f.http_status(), .stage = f.stage(), .delivery = delivery_of(f), .id = f.id()};
}

failure_evidence evidence_of(const event_record& r) noexcept {
    return {.kind = r.code, .http_status = r.http_status, .stage = r.stage, .delivery = delivery_of(r.details), .id = r.id};
}

std::string_view name(refusal r) noexcept {
    static_assert(static_cast<std::size_t>(refusal::no_saved_answer) + 1 == 5, "a name for every refusal");
    static constexpr std::array<std::string_view, 5> names{"none", "unsupported", "replay_unsafe", "allowance_spent",
                                                           "no_saved_answer"};
    return names[static_cast<std::size_t>(r)];
}

outcome_decision choose_action(const outcome_policy& policy, const failure_evidence& evidence,
                               const decision_context& context) noexcept {
    outcome_decision d;
    d.stage = evidence.stage ? evidence.stage : context.stage;
    d.failure_id = evidence.id;
    d.kind = evidence.kind;
    d.failure_class = policy.classify(evidence.kind, evidence.http_status, d.stage);

    const rule_outcome* outcome = nullptr;
    if (d.stage) {
        if (const auto& table = policy.stages[static_cast<std::size_t>(*d.stage)]) {
            outcome = find_in(*table, evidence, d.failure_class, d.rule.key);
            if (outcome) d.rule.table = d.stage;
        }
    }
    if (!outcome) outcome = find_in(policy.shared, evidence, d.failure_class, d.rule.key);
    const rule_outcome chosen = outcome ? *outcome : rule_outcome{};
    d.rule.line = chosen.line;

    d.selected = chosen.action;
    d.refused = check_prerequisites(chosen.action, policy, evidence, context);
    d.action = d.refused == refusal::none ? chosen.action : outcome_action::fail;
    d.counts_as_zero = d.action == outcome_action::count_as_zero;
    d.terminal = d.counts_as_zero || (d.refused == refusal::none && d.action == outcome_action::fail && chosen.terminal);
    return d;
}

std::string_view class_name(const outcome_decision& d, const outcome_policy& policy) noexcept {
    const auto named = policy.class_name(d.failure_class);
    return named.empty() ? kind_name(d.kind) : named;
}

std::string describe(const chosen_rule& rule, const outcome_policy& policy) {
    const rule_key& key = rule.key;
    switch (key.dimension) {
        case rule_dimension::status: return "status " + std::to_string(key.value);
        case rule_dimension::status_class: return "status " + std::to_string(key.value) + "xx";
        case rule_dimension::kind: return "kind " + std::string(kind_name(key.kind));
        case rule_dimension::domain: return "domain " + std::string(name(static_cast<domain>(key.value)));
        case rule_dimension::failure_class: return "class " + one_line(policy.class_name(key.value));
        case rule_dimension::fallback: return "default";
    }
    return "default";
}

std::string describe(const outcome_decision& d, const outcome_policy& policy) {
    std::string text(name(d.action));
    if (d.terminal && !d.counts_as_zero) text += " (terminal)";
    text += ": " + describe(d.rule, policy) + ", " + (d.rule.table ? std::string(name(*d.rule.table)) + " stage table" : "shared table");
    if (d.rule.line > 0) text += ", line " + std::to_string(d.rule.line);
    if (d.refused != refusal::none) {
        text += "; " + std::string(name(d.selected)) + " refused (" + std::string(name(d.refused)) + ")";
    }
    return text;
}

}  // namespace ngfail::policy
