// The simulated terminal behind `ngfail serve`'s PTY sessions: its bounded output history
// (execd's replay buffer), its one holder, and the shell that runs typed lines.
#include "opensandbox/emulator/terminal.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using namespace ngfail::opensandbox::testing::detail;
using namespace std::chrono_literals;
using testing::HasSubstr;

TEST(output_history, keeps_the_newest_bytes_and_clamps_older_offsets_as_execd_does) {
    output_history h(8);
    h.append("abcdef", terminal_channel::stdout_bytes);
    EXPECT_EQ(h.since(0).bytes, "abcdef");
    EXPECT_EQ(h.since(4).bytes, "ef");
    h.append("ghijk", terminal_channel::stdout_bytes);  // wraps: 11 written, 8 kept
    EXPECT_EQ(h.end(), 11);
    EXPECT_EQ(h.oldest(), 3);
    const auto all = h.since(0);
    EXPECT_EQ(all.offset, 3) << "an evicted offset is clamped to the oldest kept";
    EXPECT_EQ(all.bytes, "defghijk");
    EXPECT_EQ(h.since(9).bytes, "jk");
    EXPECT_TRUE(h.since(11).bytes.empty()) << "caught up";
    EXPECT_TRUE(h.since(99).bytes.empty());
}

TEST(output_history, one_write_larger_than_the_history_keeps_its_tail) {
    output_history h(4);
    h.append("xy", terminal_channel::stdout_bytes);
    h.append("0123456789", terminal_channel::stdout_bytes);
    EXPECT_EQ(h.end(), 12);
    EXPECT_EQ(h.since(0).bytes, "6789");
    EXPECT_EQ(h.since(0).offset, 8);
}

TEST(output_history, pieces_end_where_the_channel_changes) {
    output_history h(64);
    h.append("out1", terminal_channel::stdout_bytes);
    h.append("err", terminal_channel::stderr_bytes);
    h.append("out2", terminal_channel::stdout_bytes);
    auto p = h.next(0, 100);
    EXPECT_EQ(p.bytes, "out1");
    EXPECT_EQ(p.channel, terminal_channel::stdout_bytes);
    p = h.next(4, 100);
    EXPECT_EQ(p.bytes, "err");
    EXPECT_EQ(p.channel, terminal_channel::stderr_bytes);
    p = h.next(7, 2);
    EXPECT_EQ(p.bytes, "ou") << "at most `most` bytes";
    EXPECT_TRUE(h.next(11, 100).bytes.empty());
}

TEST(simulated_terminal, one_holder_at_a_time_unless_another_takes_over) {
    simulated_terminal t("", "");
    const auto first = t.attach(false);
    ASSERT_TRUE(first);
    EXPECT_FALSE(t.attach(false)) << "held";
    const auto second = t.attach(true);
    ASSERT_TRUE(second);
    EXPECT_FALSE(t.held_by(*first)) << "the first has lost it";
    t.release(*first);
    EXPECT_TRUE(t.held_by(*second)) << "a former holder's release changes nothing";
    t.release(*second);
    EXPECT_FALSE(t.held());
}

TEST(simulated_terminal, a_terminal_echoes_runs_lines_and_prompts) {
    file_tree files;
    simulated_terminal t("/tmp", "");
    const auto now = mono_clock::now();
    t.start(false, now, files);
    EXPECT_EQ(t.output().since(0).bytes, "$ ");
    t.type("echo hi\r", now, files);
    EXPECT_EQ(t.output().since(0).bytes, "$ echo hi\r\nhi\r\n$ ");
    t.type("pwd\n", now, files);
    EXPECT_THAT(t.output().since(0).bytes, HasSubstr("pwd\r\n/tmp\r\n$ "));
    t.resize(120, 40);
    t.type("stty size\n", now, files);
    EXPECT_THAT(t.output().since(0).bytes, HasSubstr("40 120\r\n"));
}

TEST(simulated_terminal, a_pipe_splits_stderr_and_echoes_nothing) {
    file_tree files;
    simulated_terminal t("", "");
    const auto now = mono_clock::now();
    t.start(true, now, files);
    t.type("cat /missing\n", now, files);
    const auto first = t.output().next(0, 1024);
    EXPECT_EQ(first.channel, terminal_channel::stderr_bytes);
    EXPECT_THAT(first.bytes, HasSubstr("/missing"));
    EXPECT_THAT(t.output().since(0).bytes, testing::Not(HasSubstr("cat /missing")));
}

TEST(simulated_terminal, a_slow_line_writes_when_done_and_an_interrupt_ends_it) {
    file_tree files;
    simulated_terminal t("", "");
    const auto now = mono_clock::now();
    t.start(false, now, files);
    t.type("sleep 5\necho after\n", now, files);
    t.advance(now + 1s, files);
    EXPECT_THAT(t.output().since(0).bytes, testing::Not(HasSubstr("after\r\n$")));
    t.signal("SIGINT", now + 1s, files);
    t.type("echo next\n", now + 1s, files);
    EXPECT_THAT(t.output().since(0).bytes, HasSubstr("next\r\n$ "));
    EXPECT_TRUE(t.running()) << "an interactive shell outlives its job's SIGINT";
    t.type("\x03", now + 1s, files);
    EXPECT_THAT(t.output().since(0).bytes, testing::EndsWith("^C\r\n$ "));
}

TEST(simulated_terminal, exit_ends_the_shell_with_its_code_and_an_attach_starts_another) {
    file_tree files;
    simulated_terminal t("", "");
    const auto now = mono_clock::now();
    t.start(false, now, files);
    const auto first_run = t.run_number();
    t.type("exit 3\n", now, files);
    EXPECT_FALSE(t.running());
    EXPECT_EQ(t.exit_code(), 3);
    t.type("echo lost\n", now, files);
    EXPECT_THAT(t.output().since(0).bytes, testing::Not(HasSubstr("lost")));
    t.start(false, now, files);
    EXPECT_TRUE(t.running());
    EXPECT_NE(t.run_number(), first_run);
    t.kill();
    EXPECT_EQ(t.exit_code(), -1);
}

TEST(simulated_terminal, a_command_runs_once_and_the_shell_exits_with_it) {
    file_tree files;
    simulated_terminal t("", "exit 4");
    t.start(false, mono_clock::now(), files);
    EXPECT_FALSE(t.running());
    EXPECT_EQ(t.exit_code(), 4);
    simulated_terminal echo("", "echo once");
    echo.start(true, mono_clock::now(), files);
    EXPECT_FALSE(echo.running());
    EXPECT_EQ(echo.exit_code(), 0);
    EXPECT_EQ(echo.output().since(0).bytes, "once\n");
}

TEST(simulated_terminal, input_typed_ahead_is_bounded) {
    file_tree files;
    simulated_terminal t("", "");
    const auto now = mono_clock::now();
    t.start(true, now, files);
    t.type("sleep 60\n", now, files);
    const std::string flood(256 * 1024, 'x');
    for (int i = 0; i < 8; ++i) t.type(flood, now, files);
    t.signal("SIGINT", now, files);  // drops what was typed ahead
    t.type("echo ok\n", now, files);
    EXPECT_THAT(t.output().since(0).bytes, HasSubstr("ok"));
    EXPECT_LE(t.output().end(), 64) << "the flood was neither echoed in a pipe nor run";
}

}  // namespace
