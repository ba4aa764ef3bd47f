#include <ngfail/opensandbox/classify.hpp>
#include <ngfail/opensandbox/operation.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using ngfail::replay_policy;
using ngfail::opensandbox::operation;
using ngfail::opensandbox::parse_operation;
using ngfail::opensandbox::traits;

TEST(operation, every_operation_has_one_distinct_name_that_parses_back) {
    std::set<std::string_view> names;
    for (const operation op : ngfail::opensandbox::all_operations()) {
        const auto n = ngfail::opensandbox::name(op);
        EXPECT_FALSE(n.empty());
        EXPECT_TRUE(names.insert(n).second) << n << " twice";
        EXPECT_EQ(parse_operation(n), op) << n;
    }
    EXPECT_EQ(names.size(), ngfail::opensandbox::operation_count) << "the OpenSandbox API's 47, and no other";
    static_assert(ngfail::opensandbox::operation_count == 47);  // execd and lifecycle 45, diagnostics 2
    EXPECT_FALSE(parse_operation("Exec"));
    EXPECT_FALSE(parse_operation(""));
    // Near misses of every name (a byte short, a byte more, the name with its NUL) parse
    // to nothing, or to the operation that has exactly that name.
    const auto parses_only_exactly = [](std::string_view text) {
        const auto op = parse_operation(text);
        return !op || ngfail::opensandbox::name(*op) == text;
    };
    for (const operation op : ngfail::opensandbox::all_operations()) {
        const std::string n(ngfail::opensandbox::name(op));
        EXPECT_TRUE(parses_only_exactly(n.substr(0, n.size() - 1))) << n;
        EXPECT_TRUE(parses_only_exactly(n + "s")) << n;
        EXPECT_FALSE(parse_operation(std::string_view(n.c_str(), n.size() + 1))) << n;
    }
}

TEST(operation, reads_are_idempotent_and_what_starts_or_changes_something_is_not) {
    for (const operation op : {operation::get, operation::list, operation::endpoint, operation::ping,
                               operation::exec_status, operation::exec_logs, operation::download,
                               operation::file_info, operation::list_directory, operation::delete_files,
                               operation::create_directories, operation::delete_directories,
                               operation::set_permissions, operation::search_files, operation::get_code_context,
                               operation::list_code_contexts, operation::terminal_status, operation::kill}) {
        EXPECT_EQ(traits(op).replay, replay_policy::idempotent) << traits(op).name;
    }
    for (const operation op : {operation::create, operation::exec, operation::renew,
                               operation::pause, operation::resume, operation::interrupt, operation::upload,
                               operation::create_session, operation::run_in_session, operation::delete_session,
                               operation::move_files, operation::replace_contents, operation::create_code_context,
                               operation::delete_code_context, operation::delete_code_contexts, operation::run_code,
                               operation::interrupt_code, operation::create_terminal, operation::delete_terminal,
                               operation::attach_terminal}) {
        EXPECT_EQ(traits(op).replay, replay_policy::before_delivery) << traits(op).name;
    }
}

TEST(operation, the_table_decides_which_evidence_rules_apply) {
    using ngfail::opensandbox::classify;
    const auto signal = [](operation op) {
        return classify({.operation = std::string(ngfail::opensandbox::name(op)), .exit_code = -1}).kind;
    };
    EXPECT_EQ(signal(operation::exec), ngfail::kind::provider_command_terminated);
    EXPECT_EQ(signal(operation::exec_status), ngfail::kind::provider_command_terminated);
    EXPECT_EQ(signal(operation::run_in_session), ngfail::kind::provider_command_terminated);
    EXPECT_EQ(signal(operation::run_code), ngfail::kind::provider_command_terminated);
    EXPECT_EQ(signal(operation::get), ngfail::kind::undetermined);
    EXPECT_EQ(classify({.operation = "run_in_my_own_sdk", .exit_code = -1}).kind, ngfail::kind::undetermined)
        << "an operation the table does not know has no exec rules";
    EXPECT_EQ(classify({.operation = "create", .transport_error = ngfail::opensandbox::errc::readiness_timeout}).kind,
              ngfail::kind::provider_start_failed);
    const auto taken_over = [](operation op) {
        return classify({.operation = std::string(ngfail::opensandbox::name(op)), .close_code = 4001}).kind;
    };
    EXPECT_EQ(taken_over(operation::attach_terminal), ngfail::kind::provider_state_conflict);
    EXPECT_EQ(taken_over(operation::exec), ngfail::kind::undetermined) << "only a terminal's failures read close codes";
}

}  // namespace
