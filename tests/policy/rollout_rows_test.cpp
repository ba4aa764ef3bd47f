// Decisions saved in rows, and the recovery view of a run: every state, both scores.
#include <ngfail/json.hpp>
#include <ngfail/policy/policy_file.hpp>
#include <ngfail/policy/rollout_rows.hpp>

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace {

using namespace ngfail::policy;
using ngfail::kind;

boost::json::object failed_row(std::string task, int rollout, kind k, std::optional<int> status = {}) {
    boost::json::object row{{"task_id", std::move(task)}, {"rollout", rollout}};
    ngfail::set_rollout_report(
        row, ngfail::report_for(ngfail::failure(ngfail::event_info{.kind = make_error_code(k), .http_status = status})));
    return row;
}

boost::json::object scored_row(std::string task, int rollout, double reward) {
    return {{"task_id", std::move(task)}, {"rollout", rollout}, {"reward", reward}};
}

TEST(rollout_rows, a_saved_decision_reads_back) {
    const auto& p = outcome_policy::defaults();
    auto row = failed_row("t", 0, kind::agent_timeout);
    const auto d = choose_action(p, failure_evidence{.kind = make_error_code(kind::agent_timeout)});
    save_decision(row, d, p);
    EXPECT_EQ(row.at(failure_class_key), "agent_timeout");
    EXPECT_EQ(row.at(failure_terminal_key), true);
    EXPECT_TRUE(is_counted_zero(row));
    EXPECT_FALSE(is_counted_zero(scored_row("t", 1, 0.0)));
    row[failure_counts_as_zero_key] = "yes";
    EXPECT_FALSE(is_counted_zero(row)) << "only a JSON true is a saved zero";
}

// A new user's harness made 7 retries and `stats --policy` reported 13: the rows saved that a
// retry was refused (replay_unsafe), and the view re-decided them as retries.
TEST(rollout_rows, a_saved_action_and_its_refusal_win_over_what_the_policy_says_now) {
    const auto& p = outcome_policy::defaults();
    auto row = failed_row("t", 0, kind::transport_peer_drop);
    const auto d = choose_action(p,
                                 failure_evidence{.kind = make_error_code(kind::transport_peer_drop),
                                                  .delivery = ngfail::delivery::possibly_delivered},
                                 {.replay = ngfail::replay_policy::before_delivery});
    ASSERT_EQ(d.action, outcome_action::fail);
    save_decision(row, d, p);
    EXPECT_EQ(row.at(failure_action_key), "fail");
    EXPECT_EQ(row.at(failure_refused_key), "replay_unsafe");
    recovery_view view(p);
    ASSERT_TRUE(view.add(row));
    EXPECT_EQ(view.rollouts().begin()->second.action, outcome_action::fail);
    EXPECT_EQ(view.rollouts().begin()->second.refused, refusal::replay_unsafe);
    EXPECT_EQ(view.failures_by_action().count("retry"), 0u);
    EXPECT_EQ(view.failures_by_action().at("fail"), 1);

    // A row saved before actions were (no `_ng_failure_action`) is decided as before.
    auto older = failed_row("t", 1, kind::transport_peer_drop);
    ASSERT_TRUE(view.add(older));
    EXPECT_EQ(view.failures_by_action().at("retry"), 1);
    // Saving again without a refusal leaves none behind.
    save_decision(row, choose_action(p, failure_evidence{.kind = make_error_code(kind::transport_peer_drop)}), p);
    EXPECT_FALSE(row.contains(failure_refused_key));
}

// A saved key that cannot be read was re-decided by the policy, silently: the row is refused,
// naming the key and its value, as a row whose report cannot be read is.
TEST(rollout_rows, an_unreadable_saved_decision_makes_the_row_invalid) {
    const auto& p = outcome_policy::defaults();
    const auto refused = [&](std::string_view key, boost::json::value v) {
        auto row = failed_row("t", 0, kind::transport_peer_drop);
        row[key] = std::move(v);
        recovery_view view(p);
        const auto added = view.add(row);
        return added ? std::string("accepted") : std::string(added.error().reason());
    };
    for (const boost::json::value& bad : {boost::json::value("FAIL"), boost::json::value(""), boost::json::value(5),
                                         boost::json::value(nullptr), boost::json::value(boost::json::object{})}) {
        EXPECT_THAT(refused(failure_action_key, bad),
                    testing::HasSubstr("_ng_failure_action: " + boost::json::serialize(bad) +
                                       " is not an action (retry, fail, count_as_zero, verify)"));
    }
    EXPECT_THAT(refused(failure_refused_key, "replay-unsafe"),
                testing::HasSubstr("_ng_failure_refused: \"replay-unsafe\" is not a refusal"));
    EXPECT_THAT(refused(failure_terminal_key, "false"), testing::HasSubstr("_ng_failure_terminal: \"false\" is not true or false"));
    EXPECT_THAT(refused(failure_counts_as_zero_key, 0), testing::HasSubstr("_ng_failure_counts_as_zero: 0 is not true or false"));
    EXPECT_THAT(refused(failure_class_key, 7), testing::HasSubstr("_ng_failure_class: 7 is not a class name"));
    EXPECT_THAT(refused(failure_action_key, "\x1b[2J"), testing::HasSubstr(R"("\u001b[2J")")) << "quoted on one line";
    EXPECT_EQ(refused(failure_action_key, "fail"), "accepted");
    EXPECT_EQ(refused(failure_refused_key, "none"), "accepted");
}

// choose_action never decides these; a row that says so was written by hand or broken.
TEST(rollout_rows, a_contradictory_saved_decision_makes_the_row_invalid) {
    const auto& p = outcome_policy::defaults();
    const auto refused = [&](std::initializer_list<std::pair<std::string_view, boost::json::value>> saved) {
        auto row = failed_row("t", 0, kind::transport_peer_drop);
        for (const auto& [key, v] : saved) row[key] = v;
        recovery_view view(p);
        const auto added = view.add(row);
        return added ? std::string("accepted") : std::string(added.error().reason());
    };
    EXPECT_THAT(refused({{failure_action_key, "retry"}, {failure_refused_key, "replay_unsafe"}}),
                testing::HasSubstr("the saved decision refused an action but did not fail"));
    EXPECT_THAT(refused({{failure_action_key, "count_as_zero"}, {failure_counts_as_zero_key, false}}),
                testing::HasSubstr("is \"count_as_zero\" but _ng_failure_counts_as_zero is false"));
    EXPECT_THAT(refused({{failure_action_key, "fail"}, {failure_counts_as_zero_key, true}}),
                testing::HasSubstr("is \"fail\" but _ng_failure_counts_as_zero is true"));
    EXPECT_THAT(refused({{failure_counts_as_zero_key, true}, {failure_terminal_key, false}}),
                testing::HasSubstr("counts as zero but _ng_failure_terminal is false"));
    EXPECT_THAT(refused({{failure_action_key, "retry"}, {failure_terminal_key, true}}),
                testing::HasSubstr("is a terminal \"retry\"; only a fail or a count_as_zero is terminal"));
    EXPECT_THAT(refused({{failure_action_key, "verify"}, {failure_terminal_key, true}}),
                testing::HasSubstr("is a terminal \"verify\""));
    EXPECT_THAT(refused({{failure_action_key, "fail"}, {failure_refused_key, "replay_unsafe"}, {failure_terminal_key, true}}),
                testing::HasSubstr("refused an action, so it neither ends the rollout nor counts it as zero"));
    EXPECT_THAT(refused({{failure_refused_key, "replay_unsafe"}}),
                testing::HasSubstr("has _ng_failure_refused but no _ng_failure_action"));
    EXPECT_THAT(refused({{failure_class_key, ""}}), testing::HasSubstr(R"(_ng_failure_class: "" is not a class name)"));
    EXPECT_EQ(refused({{failure_action_key, "fail"}, {failure_refused_key, "replay_unsafe"}, {failure_terminal_key, false}}),
              "accepted");
    EXPECT_EQ(refused({{failure_action_key, "count_as_zero"}, {failure_counts_as_zero_key, true}, {failure_terminal_key, true}}),
              "accepted");
}

// A refused row changes nothing: not the rollout's attempts, not its reward, not whether it
// is missing; and a result row's saved keys are checked as a failure's are.
TEST(rollout_rows, a_refused_row_changes_nothing) {
    const auto& p = outcome_policy::defaults();
    recovery_view view(p, 2);
    ASSERT_TRUE(view.add(scored_row("t", 0, 1.0)));
    auto later = failed_row("t", 0, kind::transport_peer_drop);
    later[failure_action_key] = "FAIL";
    EXPECT_FALSE(view.add(later));
    auto other = failed_row("t", 1, kind::transport_peer_drop);
    other[failure_action_key] = "FAIL";
    EXPECT_FALSE(view.add(other));
    const auto& first = view.rollouts().at(rollout_key{"t", "0"});
    EXPECT_EQ(first.attempts, 1);
    EXPECT_EQ(first.state, recovery_state::scored);
    EXPECT_EQ(first.reward, 1.0);
    EXPECT_EQ(view.rollouts().at(rollout_key{"t", "1"}).attempts, 0) << "still missing, with no attempt";
    EXPECT_DOUBLE_EQ(view.score_excluding_failures().mean, 1.0);

    auto result = scored_row("t", 1, 0.5);
    result[failure_counts_as_zero_key] = "true";
    EXPECT_FALSE(view.add(result)) << "a typo on a result row would change its score";
    result[failure_counts_as_zero_key] = true;
    result[failure_terminal_key] = false;
    EXPECT_FALSE(view.add(result));
    auto omitted = failed_row("t", 1, kind::transport_peer_drop);
    omitted["_ng_omitted_rollout"] = true;
    omitted[failure_action_key] = "FAIL";
    EXPECT_FALSE(view.add(omitted));
}

// Every decision choose_action makes, saved, reads back as itself.
TEST(rollout_rows, every_decision_saved_reads_back_unchanged) {
    const auto& p = outcome_policy::defaults();
    for (const kind k : {kind::transport_peer_drop, kind::agent_timeout, kind::judge_failed, kind::provider_sandbox_lost,
                         kind::provider_credentials_rejected}) {
        for (const auto replay : {ngfail::replay_policy::before_delivery, ngfail::replay_policy::idempotent, ngfail::replay_policy::never}) {
            const auto d = choose_action(p,
                                         failure_evidence{.kind = make_error_code(k),
                                                          .delivery = ngfail::delivery::possibly_delivered},
                                         {.replay = replay});
            auto row = failed_row("t", 0, k);
            save_decision(row, d, p);
            recovery_view view(p);
            const auto added = view.add(row);
            ASSERT_TRUE(added) << added.error().reason();
            const auto& status = view.rollouts().begin()->second;
            EXPECT_EQ(status.action, d.action) << ngfail::name(k);
            EXPECT_EQ(status.refused, d.refused) << ngfail::name(k);
            EXPECT_EQ(status.state == recovery_state::terminal || status.state == recovery_state::counted_zero, d.terminal)
                << ngfail::name(k);
        }
    }
}

TEST(rollout_rows, attempts_decide_between_retryable_and_exhausted) {
    outcome_policy p = outcome_policy::defaults();
    p.max_rollout_attempts = 2;
    recovery_view view(p);
    ASSERT_TRUE(view.add(failed_row("t", 0, kind::transport_peer_drop)));
    EXPECT_EQ(view.rollouts().begin()->second.state, recovery_state::retryable);
    ASSERT_TRUE(view.add(failed_row("t", 0, kind::transport_peer_drop)));
    EXPECT_EQ(view.rollouts().begin()->second.state, recovery_state::exhausted);
    EXPECT_EQ(view.rollouts().begin()->second.attempts, 2);
    ASSERT_TRUE(view.add(scored_row("t", 0, 1.0)));
    EXPECT_EQ(view.rollouts().begin()->second.state, recovery_state::scored) << "the last row decides";
}

TEST(rollout_rows, a_row_without_identity_or_with_a_broken_report_is_refused) {
    recovery_view view(outcome_policy::defaults());
    EXPECT_FALSE(view.add(boost::json::object{{"reward", 1.0}}));
    EXPECT_FALSE(view.add(boost::json::object{{"task_id", "t"}, {"rollout", 0}, {"_ng_failure_id", "nope"}}));
    EXPECT_TRUE(view.add(boost::json::object{{"_ng_task_index", 3}, {"_ng_rollout_index", 1}}));
    EXPECT_EQ(view.rollouts().begin()->first, (rollout_key{"3", "1"}));
}

TEST(rollout_rows, expected_rollouts_without_rows_are_missing) {
    outcome_policy p = outcome_policy::defaults();
    p.count_missing_as_zero = true;
    recovery_view view(p, 3);
    ASSERT_TRUE(view.add(scored_row("t", 0, 1.0)));
    ASSERT_TRUE(view.add(scored_row("t", 2, 1.0)));
    const auto states = view.by_state();
    EXPECT_EQ(states[static_cast<std::size_t>(recovery_state::missing)], 1U);
    EXPECT_DOUBLE_EQ(view.score_excluding_failures().mean, 1.0);
    EXPECT_NEAR(view.score_with_counted_zeros().mean, 2.0 / 3.0, 1e-12);
}

TEST(rollout_rows, the_example_run_has_every_state_and_both_scores) {
    const auto policy = load_outcome_policy(NGFAIL_EXAMPLES_DATA "/outcome_policy.yaml");
    ASSERT_TRUE(policy) << policy.error().reason();
    recovery_view view(policy.value());
    std::ifstream in(NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl");
    std::string line;
    while (std::getline(in, line)) {
        const auto added = view.add(boost::json::parse(line).as_object());
        ASSERT_TRUE(added) << added.error().reason();
    }
    const auto states = view.by_state();
    for (std::size_t s = 0; s < recovery_state_count; ++s) {
        EXPECT_GT(states[s], 0U) << name(static_cast<recovery_state>(s));
    }
    const auto state_of = [&](std::string task, std::string index) {
        return view.rollouts().at(rollout_key{std::move(task), std::move(index)});
    };
    EXPECT_EQ(state_of("task-2", "0").state, recovery_state::exhausted);
    EXPECT_EQ(state_of("task-2", "0").attempts, 3);
    EXPECT_EQ(state_of("task-2", "1").state, recovery_state::terminal);
    EXPECT_EQ(state_of("task-5", "0").state, recovery_state::counted_zero) << "decided by the file's kind rule";
    EXPECT_EQ(state_of("task-5", "1").action, outcome_action::verify) << "the row kept its response";
    EXPECT_EQ(state_of("task-4", "1").attempts, 2);
    EXPECT_EQ(state_of("task-4", "0").failure_class, "agent_run_error");

    // Scored: 1, 0, 1 and two counted zeros → 2 / 5; the agent_run_error rollout as a zero → 2 / 6.
    EXPECT_EQ(view.score_excluding_failures().rollouts, 5U);
    EXPECT_DOUBLE_EQ(view.score_excluding_failures().mean, 0.4);
    EXPECT_EQ(view.score_with_counted_zeros().rollouts, 6U);
    EXPECT_DOUBLE_EQ(view.score_with_counted_zeros().mean, 2.0 / 6.0);
}

}  // namespace
