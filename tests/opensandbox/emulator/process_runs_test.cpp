// How the process runtime turns a command's output into execd's events, and a bash session's
// run into its next state. The session scripts run in the host's own bash: what is tested is
// the script and the reading of its output, not the sandbox.
#include "opensandbox/emulator/process/process_runs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using ngfail::opensandbox::testing::detail::output_lines;
using ngfail::opensandbox::testing::detail::session_run;
using ngfail::opensandbox::testing::detail::shell_state;
using testing::AnyOf;
using testing::Contains;
using testing::ElementsAre;
using testing::EndsWith;
using testing::HasSubstr;
using testing::Not;

std::vector<std::string> events_of(std::initializer_list<std::string_view> pieces) {
    output_lines lines;
    std::vector<std::string> events;
    for (const std::string_view piece : pieces) {
        for (std::string& e : lines.add(piece)) events.push_back(std::move(e));
    }
    if (auto rest = lines.finish()) events.push_back(std::move(*rest));
    return events;
}

TEST(output_lines, a_line_is_an_event_whatever_pieces_it_came_in) {
    EXPECT_THAT(events_of({"one\ntw", "o\r\nthree"}), ElementsAre("one", "two", "three"));
    EXPECT_THAT(events_of({"a\n\nb\r\r\n"}), ElementsAre("a", "\n", "b", "\n")) << "a blank line is an event of its own";
}

TEST(output_lines, a_line_past_its_bound_is_cut_between_characters) {
    const std::string line = std::string(output_lines::max_line - 1, 'x') + "\xc3\xa9" + "end";
    const auto events = events_of({line});
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0], std::string(output_lines::max_line - 1, 'x')) << "no piece holds half of \u00e9";
    EXPECT_EQ(events[1], "\xc3\xa9" "end");
}

// Runs `script` as the sandbox does, from a file given to the host's bash (the script
// removes it); its output, cut into events as a run's are.
std::vector<std::string> run_in_bash(const session_run& run, int* exit_code) {
    const std::string path = testing::TempDir() + run.script_path().substr(run.script_path().rfind('/') + 1);  // unique
    const std::string& script = run.script();
    std::ofstream(path) << script;
    std::array<int, 2> out{};
    if (::pipe(out.data()) != 0) return {};
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(out[1], 1);
        ::close(out[0]);
        ::close(out[1]);
        ::execlp("bash", "bash", "--noprofile", "--norc", path.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(out[1]);
    std::string bytes;
    std::array<char, 4096> chunk{};
    for (ssize_t n; (n = ::read(out[0], chunk.data(), chunk.size())) > 0;) bytes.append(chunk.data(), static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    *exit_code = WEXITSTATUS(status);
    EXPECT_FALSE(std::ifstream(path)) << "the script removes itself";
    output_lines lines;
    std::vector<std::string> events = lines.add(bytes);
    if (auto rest = lines.finish()) events.push_back(std::move(*rest));
    return events;
}

// One run of `command` in the session `shell`: what the client is sent, and the session after.
struct session_step {
    std::vector<std::string> sent;
    shell_state after;
    int exit_code = -1;
};
session_step step(const shell_state& shell, const std::string& command) {
    session_run run(shell, command);
    session_step s;
    for (std::string& event : run_in_bash(run, &s.exit_code)) {
        for (std::string& own : run.command_output(std::move(event))) s.sent.push_back(std::move(own));
    }
    for (std::string& own : run.finish()) s.sent.push_back(std::move(own));
    s.after = run.after(shell);
    return s;
}

TEST(session_run, what_a_run_leaves_is_the_next_runs_start_and_no_marker_is_sent) {
    shell_state start;
    start.cwd = "/tmp";
    const auto first = step(start, "export A='x y' B=\"it's \\\"q\\\" \\\\ \\$ `echo`\"; cd /; printf 'no end'");
    EXPECT_THAT(first.sent, ElementsAre("no end")) << "a last line without its end arrives alone";
    EXPECT_EQ(first.after.cwd, "/");
    EXPECT_EQ(first.after.env().at("A"), "x y");
    EXPECT_EQ(first.after.env().at("B"), "it's \"q\" \\ $ ");
    const auto second = step(first.after, "echo \"$A|$B\" $(pwd); echo err >&2");
    EXPECT_THAT(second.sent, ElementsAre("x y|it's \"q\" \\ $  /", "err")) << "stderr joins stdout";
    EXPECT_EQ(second.exit_code, 0);
}

TEST(session_run, a_run_that_ends_its_shell_leaves_the_session_as_it_was) {
    shell_state start;
    start.cwd = "/tmp";
    (void)start.set("KEEP", "1");
    const auto ended = step(start, "cd /; export NEW=1; exit 7");
    EXPECT_EQ(ended.exit_code, 7);
    EXPECT_EQ(ended.after.cwd, "/tmp");
    EXPECT_FALSE(ended.after.env().contains("NEW"));
    EXPECT_EQ(ended.after.env().at("KEEP"), "1");
}

TEST(session_run, a_prompt_or_a_value_past_8_kib_is_not_carried_over_and_a_status_is) {
    const auto s = step({}, "export PS1='$ ' BIG=" + std::string(9000, 'b') + " SMALL=ok; false");
    EXPECT_EQ(s.exit_code, 1) << "the command's status is the run's";
    EXPECT_FALSE(s.after.env().contains("PS1"));
    EXPECT_FALSE(s.after.env().contains("BIG"));
    EXPECT_EQ(s.after.env().at("SMALL"), "ok");
}

TEST(session_run, output_that_imitates_a_marker_is_the_commands) {
    const auto s = step({}, "echo '__ngfail_x:variables'; echo __PWD__:/etc");
    EXPECT_THAT(s.sent, ElementsAre("__ngfail_x:variables", "__PWD__:/etc"));
    EXPECT_NE(s.after.cwd, "/etc");
}

TEST(session_run, values_of_any_bytes_and_a_directory_with_a_newline_come_back) {
    const std::string odd = "tab\there\nnew line\r\x01 \xc3\xbc \\ ' \" $ `";
    shell_state start;
    (void)start.set("ODD", odd);
    const auto s = step(start, "mkdir -p \"/tmp/ngfail dir\n$$\" && cd \"/tmp/ngfail dir\n$$\" && export BACK=\"$ODD\"");
    EXPECT_EQ(s.exit_code, 0);
    EXPECT_EQ(s.after.env().at("BACK"), odd) << "bash writes such values as $'...'";
    EXPECT_TRUE(s.after.cwd.starts_with("/tmp/ngfail dir\n")) << s.after.cwd;
    (void)step(s.after, "cd /; rmdir \"" + s.after.cwd + "\"");
}

TEST(session_run, blank_lines_are_the_commands_and_a_last_line_ends_alone) {
    EXPECT_THAT(step({}, "printf 'a\\n\\n'").sent, ElementsAre("a", "\n"));
    EXPECT_THAT(step({}, "printf 'a\\n'").sent, ElementsAre("a"));
    EXPECT_THAT(step({}, "printf '\\n\\nb'").sent, ElementsAre("\n", "\n", "b"));
    const auto long_line = step({}, "export KEPT=1; head -c 70000 /dev/zero | tr '\\0' a");
    ASSERT_EQ(long_line.sent.size(), 2u) << "a line past 64 KiB goes in pieces, and the trailer stays out";
    EXPECT_EQ(long_line.sent[0].size() + long_line.sent[1].size(), 70000u);
    EXPECT_EQ(long_line.after.env().at("KEPT"), "1");
}

TEST(session_run, what_a_command_leaves_unclosed_or_traced_stays_its_own) {
    const auto heredoc = step({}, "export KEPT=1; cat <<EOF\nnever closed");
    EXPECT_THAT(heredoc.sent, Contains("never closed")) << "bash ends a heredoc at the command's end";
    for (const auto& line : heredoc.sent) {
        EXPECT_THAT(line, Not(AnyOf(HasSubstr("__ngfail_"), HasSubstr("declare -")))) << "the trailer is not the heredoc's";
    }
    EXPECT_EQ(heredoc.after.env().at("KEPT"), "1");
    const auto quote = step({}, "echo 'never closed");
    EXPECT_THAT(quote.sent, Contains(HasSubstr("unexpected EOF")));
    EXPECT_EQ(quote.exit_code, 2);
    const auto traced = step({}, "set -x; true");
    EXPECT_THAT(traced.sent, ElementsAre(EndsWith("+ true"))) << "the trailer is not traced";
}

}  // namespace
