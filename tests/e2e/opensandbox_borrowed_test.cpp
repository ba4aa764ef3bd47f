// The borrowed requests every face takes (<ngfail/opensandbox/borrowed.hpp>): what they
// copy, and the natural `co_await` form they make safe. Built with AddressSanitizer by every
// compiler (tests/CMakeLists.txt), g++ 12 included, whose double destruction of an owning
// aggregate made inside a `co_await` expression is the bug this guards against.
#include <ngfail/opensandbox/borrowed.hpp>
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include "support/member_count.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace ngfail::opensandbox;
using ngfail_test::member_count;

// Each owning request and its view have the same members (their conversions name each one,
// so a member renamed or moved in one of them fails to compile there).
static_assert(member_count<create_request>() == member_count<create_request_ref>());
static_assert(member_count<command>() == member_count<command_ref>());
static_assert(member_count<code_run>() == member_count<code_run_ref>());
static_assert(member_count<list_request>() == member_count<list_request_ref>());
static_assert(member_count<snapshot_list_request>() == member_count<snapshot_list_request_ref>());
static_assert(member_count<terminal_request>() == member_count<terminal_request_ref>());

TEST(callback_ref, copies_the_callable_it_refers_to) {
    std::string seen;
    output_callback copy;
    {
        const auto append = [&seen](std::string_view s) { seen += s; };
        copy = callback_ref(append).copy();
    }
    ASSERT_TRUE(copy);
    copy("kept");
    EXPECT_EQ(seen, "kept");
    EXPECT_FALSE(callback_ref().copy());
    EXPECT_FALSE(callback_ref(output_callback()).copy()) << "an empty std::function stays empty";
}

TEST(strings_and_maps, copy_what_they_refer_to) {
    const std::vector<std::string> list{"a", "b"};
    EXPECT_EQ(strings_ref(list).copy(), list);
    EXPECT_EQ(strings_ref(default_entrypoint).copy(), (std::vector<std::string>{"tail", "-f", "/dev/null"}));
    EXPECT_TRUE(strings_ref().copy().empty());
    const std::map<std::string, std::string> map{{"k", "v"}};
    EXPECT_EQ(string_map_ref(map).copy(), map);
    EXPECT_TRUE(string_map_ref().copy().empty());
}

TEST(borrowed_requests, have_the_owning_requests_defaults_and_convert_from_them) {
    const create_request owned{};
    const create_request copied = create_request_ref{}.copy();
    EXPECT_EQ(copied.image, owned.image);
    EXPECT_EQ(copied.entrypoint, owned.entrypoint);
    EXPECT_EQ(copied.resource_limits, owned.resource_limits);
    EXPECT_EQ(copied.ready_timeout, owned.ready_timeout);
    EXPECT_EQ(command_ref{}.copy().idle_timeout, command{}.idle_timeout);
    EXPECT_EQ(list_request_ref{}.copy().page_size, list_request{}.page_size);

    const command cmd{.command = "make", .cwd = "/src", .envs = {{"A", "1"}}, .background = true};
    const command back = command_ref(cmd).copy();
    EXPECT_EQ(back.command, "make");
    EXPECT_EQ(back.cwd, "/src");
    EXPECT_EQ(back.envs, cmd.envs);
    EXPECT_TRUE(back.background);
    const list_request filter{.states = {"Running"}, .metadata = {{"team", "a"}}, .page = 2};
    const list_request filter_back = list_request_ref(filter).copy();
    EXPECT_EQ(filter_back.states, filter.states);
    EXPECT_EQ(filter_back.metadata, filter.metadata);
    EXPECT_EQ(filter_back.page, 2);
    const snapshot_list_request snapshots{.sandbox_id = "sbx-1", .states = {"Ready"}, .page_size = 5};
    const snapshot_list_request snapshots_back = snapshot_list_request_ref(snapshots).copy();
    EXPECT_EQ(snapshots_back.sandbox_id, "sbx-1");
    EXPECT_EQ(snapshots_back.states, snapshots.states);
    EXPECT_EQ(snapshots_back.page_size, 5);
    const terminal_request terminal{.cwd = "/work"};
    const terminal_request terminal_back = terminal_request_ref(terminal).copy();
    EXPECT_EQ(terminal_back.cwd, "/work");
    EXPECT_EQ(terminal_back.command, std::nullopt);
}

// A blocking call takes the same borrowed request, braced lists inside it included.
TEST(borrowed_requests, written_inline_in_a_blocking_call_with_braced_lists) {
    embedded_server server;
    client c({.port = server.port()});
    const std::string word = "a word long enough to be allocated on the heap";
    const std::string team = "team-a-long-enough-for-the-heap";
    const auto box = c.create({.entrypoint = {"tail", "-f", "/dev/null"}, .metadata = {{"team", team}}});
    EXPECT_EQ(c.get(box.id).metadata.at("team"), team);
    const auto ran = c.exec(box.id, {.command = "echo $A $B", .envs = {{"A", word}, {"B", "b"}}});
    EXPECT_EQ(ran.stdout_text, word + " b\n");
    const std::string terminal = c.create_terminal(box.id, {.cwd = "/tmp/" + word.substr(0, 6)});
    EXPECT_FALSE(c.terminal_status(box.id, terminal).running);
}

// The natural form, every request braced inside its co_await, with values long enough to
// live on the heap: g++ 12 destroys an owning aggregate made there twice, which ASan (the
// asan preset runs this test) reports as a double free. The requests are borrowed instead.
TEST(borrowed_requests, written_inline_inside_co_await_are_safe) {
    embedded_server server;
    asio::io_context io(1);
    client c(io.get_executor(), {.port = server.port()});
    const std::string word = "a word long enough to be allocated on the heap";
    const std::map<std::string, std::string> env{{"GREETING_WITH_A_LONG_NAME", "hello from a long environment value"}};
    const std::vector<std::string> states{"Running", "Pending"};
    const std::map<std::string, std::string> team{{"team", "a-team-name-long-enough-for-the-heap"}};
    std::string streamed, listed, in_session, later, made_terminal;
    std::size_t snapshots_listed = 99;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
        const auto box = co_await c.async_create({.image = "registry.example.com/python:3.12-long-tag", .metadata = team});
        if (!box) co_return;
        const std::string id = box.value().id;
        const auto ran = co_await c.async_exec(id, {.command = "echo " + word + " $GREETING_WITH_A_LONG_NAME",
                                                    .cwd = "/tmp/" + word.substr(0, 6),
                                                    .envs = env,
                                                    .on_stdout = [&](std::string_view s) { streamed += s; }});
        if (ran) in_session = ran.value().stdout_text;
        const auto found = co_await c.async_list({.states = states, .metadata = team});
        if (found) listed = std::to_string(found.value().size());
        const auto everyone = co_await c.async_list();
        if (!everyone || everyone.value().empty()) listed += " but not without a filter";
        const auto session = co_await c.async_create_session(id, "/tmp");
        if (!session) co_return;
        const auto run = co_await c.async_run_in_session(id, session.value(), {.command = "echo " + word});
        if (run) in_session += run.value().stdout_text;
        // Made now with an inline callback, awaited after that callback's temporary is gone:
        // the operation holds its own copy.
        auto stored = c.async_exec(id, {.command = "echo " + word, .on_stdout = [&later](std::string_view s) { later += s; }});
        (void)co_await std::move(stored);
        // The terminal's and the snapshots' requests, owning strings until they were borrowed.
        const auto terminal = co_await c.async_create_terminal(id, {.cwd = "/tmp/" + word.substr(0, 6)});
        if (terminal) made_terminal = terminal.value();
        const auto snapshots = co_await c.async_list_snapshots({.sandbox_id = id + ""});
        if (snapshots) snapshots_listed = snapshots.value().size();
    }, asio::detached);
    io.run();
    const std::string expected = word + " hello from a long environment value\n";
    EXPECT_EQ(streamed, expected);
    EXPECT_EQ(listed, "1");
    EXPECT_EQ(in_session, expected + word + "\n");
    EXPECT_EQ(later, word + "\n");
    EXPECT_FALSE(made_terminal.empty());
    EXPECT_EQ(snapshots_listed, 0u);
}

}  // namespace
