// choose_action: the selection order, every default, and the prerequisites a boundary checks.
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/retry_allowance.hpp>
#include <ngfail/sandbox.hpp>

#include <gtest/gtest.h>

namespace {

using namespace ngfail::policy;
using ngfail::domain;
using ngfail::kind;
using ngfail::stage;

failure_evidence evidence(kind k, std::optional<int> status = {}, std::optional<stage> s = {},
                          std::optional<ngfail::delivery> d = {}) {
    return {.kind = make_error_code(k), .http_status = status, .stage = s, .delivery = d};
}

rule_outcome does(outcome_action a) { return {.action = a}; }

// A policy whose every dimension has a rule for provider_unavailable with status 503 at the
// agent stage, each choosing a different action, so that which one won is visible.
outcome_policy layered() {
    outcome_policy p;
    const auto cls = p.intern_class("sandbox_infrastructure");
    p.classification.push_back({.target = cls, .domain = domain::provider});
    p.shared.set(rule_key::status(503), does(outcome_action::fail));
    p.shared.set(rule_key::status_class(5), does(outcome_action::verify));
    p.shared.set(rule_key::of(kind::provider_unavailable), does(outcome_action::count_as_zero));
    p.shared.set(rule_key::of(domain::provider), does(outcome_action::retry));
    p.shared.set(rule_key::of_class(cls), does(outcome_action::verify));
    p.shared.set(rule_key::fallback(), does(outcome_action::count_as_zero));
    return p;
}

struct order_case {
    const char* name;
    std::optional<int> status;
    kind k;
    rule_dimension expected_dimension;
    outcome_action expected;
};

TEST(choose_action, selects_by_status_then_kind_then_domain_then_class_then_default) {
    // Each case removes the evidence (or uses a kind) that the previous rule needed.
    const order_case cases[] = {
        {"exact status beats 5xx", 503, kind::provider_unavailable, rule_dimension::status, outcome_action::fail},
        {"5xx beats the kind", 502, kind::provider_unavailable, rule_dimension::status_class, outcome_action::verify},
        {"the kind beats its domain", std::nullopt, kind::provider_unavailable, rule_dimension::kind,
         outcome_action::count_as_zero},
        {"the domain beats the class", std::nullopt, kind::provider_oom_killed, rule_dimension::domain,
         outcome_action::retry},
    };
    const outcome_policy p = layered();
    for (const auto& c : cases) {
        const auto d = choose_action(p, evidence(c.k, c.status), {.saved_answer = true});
        EXPECT_EQ(d.rule.key.dimension, c.expected_dimension) << c.name;
        EXPECT_EQ(d.action, c.expected) << c.name;
    }
}

TEST(choose_action, a_class_rule_beats_the_default_and_the_default_applies_last) {
    outcome_policy p;
    const auto cls = p.intern_class("judging");
    p.classification.push_back({.target = cls, .stage = stage::verification});
    p.shared.set(rule_key::of_class(cls), does(outcome_action::verify));
    p.shared.set(rule_key::fallback(), does(outcome_action::retry));

    const auto by_class = choose_action(p, evidence(kind::agent_run_error, {}, stage::verification), {.saved_answer = true});
    EXPECT_EQ(by_class.rule.key, rule_key::of_class(cls));
    EXPECT_EQ(by_class.action, outcome_action::verify);
    EXPECT_EQ(class_name(by_class, p), "judging");

    const auto by_default = choose_action(p, evidence(kind::agent_run_error, {}, stage::agent));
    EXPECT_EQ(by_default.rule.key, rule_key::fallback());
    EXPECT_EQ(by_default.action, outcome_action::retry);
    EXPECT_EQ(class_name(by_default, p), "agent_run_error") << "no rule: the class is the kind's name";
}

TEST(choose_action, a_stage_table_beats_the_shared_one_and_falls_through_when_silent) {
    outcome_policy p = layered();
    p.stages[static_cast<std::size_t>(stage::verification)].emplace().set(rule_key::of(kind::judge_failed),
                                                                          does(outcome_action::verify));
    p.stages[static_cast<std::size_t>(stage::agent)].emplace().set(rule_key::fallback(), does(outcome_action::retry));

    // The agent stage's default beats even the shared exact status rule.
    const auto agent = choose_action(p, evidence(kind::provider_unavailable, 503, stage::agent));
    EXPECT_EQ(agent.action, outcome_action::retry);
    EXPECT_EQ(agent.rule.table, stage::agent);
    // The verification table has nothing for this failure: the shared table decides.
    const auto verification = choose_action(p, evidence(kind::provider_unavailable, 503, stage::verification));
    EXPECT_EQ(verification.action, outcome_action::fail);
    EXPECT_FALSE(verification.rule.table);
    // The boundary's stage stands in for a failure that names none.
    const auto from_context = choose_action(p, evidence(kind::provider_unavailable, 503), {.stage = stage::agent});
    EXPECT_EQ(from_context.action, outcome_action::retry);
    EXPECT_EQ(from_context.stage, stage::agent);
}

struct default_case {
    kind k;
    std::optional<int> status;
    outcome_action action;
    bool terminal;
};

TEST(choose_action, the_defaults_are_the_documented_table) {
    const default_case cases[] = {
        {kind::provider_request_rejected, 400, outcome_action::fail, true},
        {kind::provider_credentials_rejected, 401, outcome_action::fail, true},
        {kind::provider_credentials_rejected, 403, outcome_action::fail, true},
        {kind::provider_sandbox_lost, 404, outcome_action::fail, true},
        {kind::provider_request_rejected, 422, outcome_action::fail, true},
        {kind::transport_timeout, 408, outcome_action::retry, false},
        {kind::provider_quota_exhausted, 429, outcome_action::retry, false},
        {kind::provider_unavailable, 503, outcome_action::retry, false},
        {kind::agent_run_error, 500, outcome_action::retry, false},
        {kind::agent_run_error, 409, outcome_action::fail, false},
        {kind::transport_peer_drop, {}, outcome_action::retry, false},
        {kind::transport_unreachable, {}, outcome_action::retry, false},
        {kind::provider_unavailable, {}, outcome_action::retry, false},
        {kind::provider_quota_exhausted, {}, outcome_action::retry, false},
        {kind::provider_sandbox_lost, {}, outcome_action::retry, false},
        {kind::provider_start_failed, {}, outcome_action::retry, false},
        {kind::session_lost, {}, outcome_action::retry, false},
        {kind::session_expired, {}, outcome_action::retry, false},
        {kind::environment_server_failed, {}, outcome_action::retry, false},
        {kind::kill_shaped, {}, outcome_action::retry, false},
        {kind::persistence_failed, {}, outcome_action::retry, false},
        {kind::provider_credentials_rejected, {}, outcome_action::fail, true},
        {kind::provider_request_rejected, {}, outcome_action::fail, true},
        {kind::protocol_violation, {}, outcome_action::fail, false},
        {kind::cancelled, {}, outcome_action::fail, false},
        {kind::shutdown, {}, outcome_action::fail, false},
        {kind::undetermined, {}, outcome_action::fail, false},
        {kind::agent_no_generation, {}, outcome_action::count_as_zero, true},
        {kind::agent_timeout, {}, outcome_action::count_as_zero, true},
        {kind::judge_unparseable, {}, outcome_action::count_as_zero, true},
        {kind::judge_failed, {}, outcome_action::verify, false},
        {kind::verifier_error, {}, outcome_action::verify, false},
        {kind::provider_oom_killed, {}, outcome_action::fail, false},
        {kind::provider_command_terminated, {}, outcome_action::fail, false},
        {kind::agent_run_error, {}, outcome_action::fail, false},
    };
    const auto& p = outcome_policy::defaults();
    for (const auto& c : cases) {
        const auto d = choose_action(p, evidence(c.k, c.status), {.saved_answer = true});
        const std::string label = std::string(name(c.k)) + " " + (c.status ? std::to_string(*c.status) : "-");
        EXPECT_EQ(d.action, c.action) << label << ": " << describe(d, p);
        EXPECT_EQ(d.terminal, c.terminal) << label;
        EXPECT_EQ(d.counts_as_zero, c.action == outcome_action::count_as_zero) << label;
        EXPECT_EQ(d.refused, refusal::none) << label;
    }
}

TEST(choose_action, a_retry_that_would_replay_a_possibly_delivered_request_becomes_fail) {
    const auto& p = outcome_policy::defaults();
    for (auto d : {ngfail::delivery::possibly_delivered, ngfail::delivery::delivered}) {
        const auto decision = choose_action(p, evidence(kind::transport_peer_drop, {}, {}, d),
                                            {.replay = ngfail::replay_policy::before_delivery});
        EXPECT_EQ(decision.selected, outcome_action::retry);
        EXPECT_EQ(decision.action, outcome_action::fail);
        EXPECT_EQ(decision.refused, refusal::replay_unsafe);
        EXPECT_FALSE(decision.terminal) << "a later attempt of the rollout may still run";
        EXPECT_NE(describe(decision, p).find("retry refused (replay_unsafe)"), std::string::npos);
    }
    const auto not_sent = choose_action(p, evidence(kind::transport_unreachable, {}, {}, ngfail::delivery::not_sent),
                                        {.replay = ngfail::replay_policy::before_delivery});
    EXPECT_EQ(not_sent.action, outcome_action::retry);
    const auto idempotent = choose_action(p, evidence(kind::transport_peer_drop, {}, {}, ngfail::delivery::delivered),
                                          {.replay = ngfail::replay_policy::idempotent});
    EXPECT_EQ(idempotent.action, outcome_action::retry);
}

TEST(choose_action, refused_actions_fall_back_to_fail_with_the_reason) {
    const auto& p = outcome_policy::defaults();
    retry_allowance spent({.attempts = 1});
    const auto no_budget = choose_action(p, evidence(kind::provider_unavailable), {.allowance = &spent});
    EXPECT_EQ(no_budget.action, outcome_action::fail);
    EXPECT_EQ(no_budget.refused, refusal::allowance_spent);

    const auto unsupported = choose_action(p, evidence(kind::provider_unavailable),
                                           {.supported = {outcome_action::fail, outcome_action::verify}});
    EXPECT_EQ(unsupported.refused, refusal::unsupported);

    const auto no_answer = choose_action(p, evidence(kind::judge_failed));
    EXPECT_EQ(no_answer.selected, outcome_action::verify);
    EXPECT_EQ(no_answer.action, outcome_action::fail);
    EXPECT_EQ(no_answer.refused, refusal::no_saved_answer);

    outcome_policy narrow = p;
    narrow.supported = {outcome_action::fail};
    EXPECT_EQ(choose_action(narrow, evidence(kind::judge_unparseable)).refused, refusal::unsupported)
        << "the policy's own supported list narrows the boundary's";
}

TEST(choose_action, reads_the_failures_own_evidence_never_its_causes) {
    const auto& p = outcome_policy::defaults();
    // A wrapper whose cause is a terminal 401: the wrapper's own evidence decides.
    const ngfail::failure cause(ngfail::event_info{.kind = make_error_code(kind::provider_credentials_rejected),
                                                   .http_status = 401});
    const ngfail::failure wrapper(ngfail::event_info{.kind = make_error_code(kind::environment_server_failed),
                                                     .stage = stage::agent, .cause = cause});
    const auto d = choose_action(p, wrapper);
    EXPECT_EQ(d.action, outcome_action::retry);
    EXPECT_EQ(d.rule.key, rule_key::of(kind::environment_server_failed));
    EXPECT_EQ(d.failure_id, wrapper.id());
    EXPECT_EQ(d.stage, stage::agent);

    // Delivery comes from the failure's sandbox details.
    const auto sandbox = ngfail::make_sandbox_failure({.operation = "exec",
                                                       .kind = kind::transport_peer_drop,
                                                       .delivery = ngfail::delivery::possibly_delivered});
    EXPECT_EQ(evidence_of(sandbox).delivery, ngfail::delivery::possibly_delivered);
    EXPECT_EQ(choose_action(p, sandbox, {.replay = ngfail::replay_policy::before_delivery}).refused,
              refusal::replay_unsafe);
}

TEST(choose_action, describes_the_rule_that_chose) {
    const auto& p = outcome_policy::defaults();
    EXPECT_EQ(describe(choose_action(p, evidence(kind::provider_quota_exhausted, 429)), p),
              "retry: status 429, shared table");
    EXPECT_EQ(describe(choose_action(p, evidence(kind::agent_run_error, 502)), p), "retry: status 5xx, shared table");
    EXPECT_EQ(describe(choose_action(p, evidence(kind::transport_timeout)), p), "retry: domain transport, shared table");
    EXPECT_EQ(describe(choose_action(p, evidence(kind::provider_sandbox_lost, 404)), p),
              "fail (terminal): status 404, shared table");
    EXPECT_EQ(describe(choose_action(p, evidence(kind::provider_oom_killed)), p), "fail: default, shared table");
}

}  // namespace
