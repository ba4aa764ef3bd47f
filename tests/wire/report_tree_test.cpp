#include <ngfail/report_tree.hpp>
#include <ngfail/sandbox.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace {

using ngfail::kind;
using testing::HasSubstr;
using testing::Not;

std::string tree_of(const ngfail::failure_report& report, ngfail::tree_options options = {}) {
    std::ostringstream out;
    ngfail::print_tree(out, report, options);
    return out.str();
}

// An agent failure caused by an exec the provider OOM-killed, caused by a foreign exception.
ngfail::failure_report three_levels() {
    try {
        try {
            try {
                throw std::runtime_error("sdk: connection reset");
            } catch (...) {
                std::throw_with_nested(ngfail::sandbox_failure({.operation = "exec",
                                                                .kind = kind::provider_oom_killed,
                                                                .sandbox_id = "sbx-1",
                                                                .reason = "exec failed",
                                                                .delivery = ngfail::delivery::delivered}));
            }
        } catch (...) {
            std::throw_with_nested(ngfail::failure_event({.kind = kind::agent_run_error,
                                                          .reason = "agent failed",
                                                          .boundary = ngfail::boundary::agent,
                                                          .http_status = 500}));
        }
    } catch (...) {
        return ngfail::report_for(std::current_exception());
    }
    return {};
}

TEST(print_tree, indents_each_cause_under_its_effect_with_the_facts_that_place_it) {
    const std::string tree = tree_of(three_levels());
    EXPECT_THAT(tree, testing::StartsWith("failure\n  "));
    EXPECT_THAT(tree, HasSubstr("agent_run_error  [boundary agent, http 500]  agent failed\n"));
    EXPECT_THAT(tree, HasSubstr("  └─ "));
    EXPECT_THAT(tree, HasSubstr("provider_oom_killed  [op exec, delivery delivered]  exec failed\n"));
    EXPECT_THAT(tree, HasSubstr("     └─ "));
    EXPECT_THAT(tree, HasSubstr("[from std::runtime_error]  sdk: connection reset"))
        << "a foreign cause shows its original type, not only `undetermined`";
    EXPECT_THAT(tree, Not(HasSubstr("\x1b["))) << "no colour unless asked";
}

TEST(print_tree, a_failure_prints_as_its_report_does) {
    const ngfail::failure f = ngfail::make_sandbox_failure(
        {.operation = "get", .kind = kind::provider_sandbox_lost, .reason = "gone"});
    std::ostringstream out;
    ngfail::print_tree(out, f);
    EXPECT_EQ(out.str(), tree_of(ngfail::report_for(f)));
    EXPECT_THAT(out.str(), HasSubstr("provider_sandbox_lost  [op get]  gone"));
}

TEST(print_tree, colour_is_ansi_only_when_asked_for) {
    EXPECT_THAT(tree_of(three_levels(), {.color = true}), HasSubstr("\x1b[1;31magent_run_error\x1b[0m"));
}

TEST(print_tree, text_from_a_report_cannot_drive_the_terminal) {
    const ngfail::failure f = ngfail::make_sandbox_failure(
        {.operation = "exec\x1b]0;pwned\x07", .kind = kind::provider_unavailable, .reason = "line\nbreak\x1b[2J\xc2\x9b"});
    const std::string tree = tree_of(ngfail::report_for(f));
    EXPECT_THAT(tree, Not(HasSubstr("\x1b"))) << tree;
    EXPECT_THAT(tree, HasSubstr("line\\nbreak\\x1b[2J\\u009b"));
    EXPECT_EQ(std::count(tree.begin(), tree.end(), '\n'), 2) << "a heading and one line";
}

TEST(print_tree, long_reasons_are_cut_where_the_options_say) {
    const ngfail::failure f = ngfail::make_sandbox_failure(
        {.operation = "exec", .kind = kind::provider_unavailable, .reason = std::string(500, 'r')});
    const std::string tree = tree_of(ngfail::report_for(f), {.max_reason_bytes = 10});
    EXPECT_THAT(tree, HasSubstr(" rrrrrrrrrr...\n"));
}

TEST(print_tree, a_success_says_so_and_dropped_events_are_counted) {
    EXPECT_EQ(tree_of({}), "success: no failures\n");
    ngfail::failure_report report = three_levels();
    report.dropped_events = 3;
    EXPECT_THAT(tree_of(report), HasSubstr("3 event(s) dropped by the sender\n"));
}

TEST(chains_of, the_failure_s_own_chain_comes_first_and_observed_ones_join_it) {
    const ngfail::failure_report report = three_levels();
    const auto chains = ngfail::chains_of(report);
    ASSERT_EQ(chains.size(), 1u);
    ASSERT_EQ(chains.front().levels.size(), 3u);
    EXPECT_EQ(chains.front().levels.front()->id, *report.failure_id);
    EXPECT_FALSE(chains.front().joins);
}

}  // namespace
