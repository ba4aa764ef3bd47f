// The policy's tables: keys, replacement, classification order and kind-named classes.
#include <ngfail/policy/outcome_policy.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace {

using namespace ngfail::policy;
using ngfail::domain;
using ngfail::kind;
using ngfail::stage;

TEST(action_table, a_rule_replaces_the_one_with_its_key_and_lists_in_dimension_order) {
    action_table t;
    t.set(rule_key::fallback(), {.action = outcome_action::fail});
    t.set(rule_key::of(domain::transport), {.action = outcome_action::retry});
    t.set(rule_key::status(429), {.action = outcome_action::retry});
    t.set(rule_key::status(429), {.action = outcome_action::fail, .terminal = true, .line = 9});
    ASSERT_NE(t.find(rule_key::status(429)), nullptr);
    EXPECT_EQ(t.find(rule_key::status(429))->line, 9);
    EXPECT_EQ(t.find(rule_key::status(430)), nullptr);
    EXPECT_EQ(t.find(rule_key::status(200)), nullptr) << "not a failure status: no rule, no crash";
    const auto rules = t.rules();
    ASSERT_EQ(rules.size(), 3U);
    EXPECT_EQ(rules[0].first, rule_key::status(429));
    EXPECT_EQ(rules[1].first, rule_key::of(domain::transport));
    EXPECT_EQ(rules[2].first, rule_key::fallback());
}

TEST(action_table, refuses_keys_no_failure_can_have) {
    action_table t;
    EXPECT_THROW(t.set(rule_key::status(200), {}), std::invalid_argument);
    EXPECT_THROW(t.set(rule_key::status_class(3), {}), std::invalid_argument);
    EXPECT_THROW(t.set(rule_key::of_class(no_class), {}), std::invalid_argument);
    EXPECT_THROW(t.set(rule_key::of(std::error_code(5, std::generic_category())), {}), std::invalid_argument);
}

TEST(action_table, extension_and_unknown_kinds_have_rules_too) {
    action_table t;
    const auto unknown = ngfail::kind_from_name("peer:thing");
    t.set(rule_key::of(unknown), {.action = outcome_action::verify});
    ASSERT_NE(t.find(rule_key::of(unknown)), nullptr);
    EXPECT_EQ(t.find(rule_key::of(unknown))->action, outcome_action::verify);
    EXPECT_EQ(t.find(rule_key::of(ngfail::kind_from_name("peer:other"))), nullptr);
}

TEST(outcome_policy, classifies_by_the_first_matching_rule_then_by_the_kinds_name) {
    outcome_policy p;
    const auto gateway = p.intern_class("gateway");
    const auto infra = p.intern_class("infrastructure");
    const auto named = p.intern_class("agent_run_error");
    p.classification.push_back({.target = gateway, .status_class = 5, .kind = make_error_code(kind::agent_request_failed)});
    p.classification.push_back({.target = infra, .stage = stage::agent, .domain = domain::provider});

    const auto code = [](kind k) { return make_error_code(k); };
    EXPECT_EQ(p.classify(code(kind::agent_request_failed), 502, {}), gateway);
    EXPECT_EQ(p.classify(code(kind::agent_request_failed), 429, {}), no_class);
    EXPECT_EQ(p.classify(code(kind::provider_oom_killed), {}, stage::agent), infra);
    EXPECT_EQ(p.classify(code(kind::provider_oom_killed), {}, stage::seed), no_class);
    EXPECT_EQ(p.classify(code(kind::agent_run_error), {}, {}), named) << "a class named like the kind";
    EXPECT_EQ(p.intern_class("gateway"), gateway) << "interning is idempotent";
    EXPECT_EQ(p.class_name(infra), "infrastructure");
    EXPECT_EQ(p.class_name(no_class), "");
}

// A policy file may name hundreds of thousands of classes: interning each must not scan the
// ones before it (100,000 names took seconds when it did; an index takes milliseconds).
TEST(outcome_policy, interning_many_classes_takes_linear_time) {
    outcome_policy p;
    constexpr int count = 100'000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) ASSERT_EQ(p.intern_class("class_" + std::to_string(i)), i);
    for (int i = 0; i < count; i += 997) EXPECT_EQ(p.find_class("class_" + std::to_string(i)), i);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ(p.class_count(), std::size_t{count});
    EXPECT_EQ(p.find_class("class_100000"), std::nullopt);

    const outcome_policy copy = p;  // the index travels with the names
    EXPECT_EQ(copy.find_class("class_99999"), count - 1);
    EXPECT_EQ(copy.class_name(42), "class_42");
}

}  // namespace
