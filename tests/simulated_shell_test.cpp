// The emulator's simulated commands: what a session's state does to them.
#include "opensandbox/emulator/simulated_shell.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

namespace {

using ngfail::opensandbox::emulator::shell_state;
using ngfail::opensandbox::emulator::simulate;

const ngfail::opensandbox::emulator::file_reader no_files{};

TEST(simulated_shell, cd_and_export_change_the_session_and_later_commands_see_it) {
    shell_state shell;
    EXPECT_EQ(simulate("cd /work && export NAME=ngfail", no_files, &shell).exit_code, 0);
    EXPECT_EQ(shell.cwd, "/work");
    EXPECT_EQ(shell.env().at("NAME"), "ngfail");
    EXPECT_EQ(simulate("cd sub; pwd; echo hi $NAME $UNSET.", no_files, &shell).stdout_text, "/work/sub\nhi ngfail .\n");
    EXPECT_EQ(simulate("cd", no_files, &shell).exit_code, 0);
    EXPECT_EQ(shell.cwd, "/root") << "a bare cd goes home";
}

TEST(simulated_shell, and_stops_at_a_failure_and_exit_ends_the_shell) {
    shell_state shell;
    const auto stopped = simulate("cat /nope && echo never", no_files, &shell);
    EXPECT_EQ(stopped.exit_code, 1);
    EXPECT_EQ(stopped.stdout_text, "");
    const auto went_on = simulate("cat /nope; echo still", no_files, &shell);
    EXPECT_EQ(went_on.exit_code, 0);
    EXPECT_EQ(went_on.stdout_text, "still\n");
    const auto exited = simulate("exit 3; echo never", no_files, &shell);
    EXPECT_EQ(exited.exit_code, 3);
    EXPECT_EQ(exited.stdout_text, "");
    EXPECT_EQ(simulate("export =x", no_files, &shell).exit_code, 1);
}

TEST(simulated_shell, outside_a_session_nothing_is_kept) {
    EXPECT_EQ(simulate("cd /tmp && pwd", no_files).stdout_text, "/tmp\n");
    EXPECT_EQ(simulate("pwd", no_files).stdout_text, "/\n");
}

TEST(simulated_shell, cat_reads_relative_paths_from_the_working_directory) {
    shell_state shell;
    shell.cwd = "/w";
    std::string asked;
    const ngfail::opensandbox::emulator::file_reader reader{.read_file = [&](const std::string& path) {
        asked = path;
        return std::make_shared<const std::string>("content");
    }};
    EXPECT_EQ(simulate("cat notes.txt", reader, &shell).stdout_text, "content");
    EXPECT_EQ(asked, "/w/notes.txt");
}

// ---- bounds: whatever the line, a run's work is linear in it and its memory bounded -------------

std::string repeated(std::string_view piece, std::size_t times) {
    std::string out;
    out.reserve(piece.size() * times);
    for (std::size_t i = 0; i < times; ++i) out += piece;
    return out;
}

TEST(simulated_shell, a_doubling_variable_stops_at_64_kib_and_the_line_goes_on) {
    shell_state shell;
    // 2^40 bytes, unbounded: the server's memory limit within 30 doublings.
    const auto ran = simulate("export A=x" + repeated("; export A=$A$A", 40) + "; echo done", no_files, &shell);
    EXPECT_LE(shell.env().at("A").size(), ngfail::opensandbox::emulator::max_shell_variable_bytes);
    EXPECT_GE(shell.env().at("A").size(), 16u * 1024) << "it doubled until the bound";
    EXPECT_NE(ran.stderr_text.find("at most 64 KiB of variables"), std::string::npos);
    EXPECT_EQ(ran.stdout_text, "done\n");
    EXPECT_EQ(ran.exit_code, 0) << "the last command's status, as bash's";
}

TEST(simulated_shell, a_line_of_a_million_commands_is_split_in_one_pass) {
    shell_state shell;
    // Looking for `&&` and `;` apart rescanned the rest at every command: 10^6 commands of a
    // 5 MB line were 2.5 * 10^12 steps (hours), one pass is 5 * 10^6.
    const auto ran = simulate(repeated("pwd; ", 1'000'000) + "pwd", no_files, &shell);
    EXPECT_EQ(ran.stdout_text.size(), 2u * 1'000'001);
    EXPECT_EQ(ran.exit_code, 0);
}

TEST(simulated_shell, a_run_prints_at_most_16_mib_then_stops) {
    using ngfail::opensandbox::emulator::max_run_output;
    const auto megabyte = std::make_shared<const std::string>(std::size_t{1} << 20, 'm');
    const ngfail::opensandbox::emulator::file_reader one_file{
        .read_file = [&](const std::string& path) { return path == "/f" ? megabyte : nullptr; }};
    const auto ran = simulate(repeated("cat /f; ", 40) + "echo after", one_file);
    EXPECT_EQ(ran.stdout_text.size(), max_run_output);
    EXPECT_EQ(ran.stdout_text.find("after"), std::string::npos) << "the run stopped at its bound";
    EXPECT_NE(ran.stderr_text.find("at most 16 MiB"), std::string::npos);
    EXPECT_EQ(ran.exit_code, 1);

    // An expansion is bounded the same way: a 60 KB variable used 1,000 times is 60 MB.
    shell_state shell;
    ASSERT_TRUE(shell.set("A", std::string(60'000, 'a')));
    const auto expanded = simulate("echo " + repeated("$A", 1000), no_files, &shell);
    EXPECT_LE(expanded.stdout_text.size(), max_run_output);
    EXPECT_EQ(expanded.exit_code, 1);
}

TEST(simulated_shell, a_working_directory_is_at_most_path_max_long) {
    shell_state shell;
    const auto ran = simulate(repeated("cd aaaaaaaa; ", 2000), no_files, &shell);
    EXPECT_LE(shell.cwd.size(), ngfail::opensandbox::emulator::max_path_bytes);
    EXPECT_NE(ran.stderr_text.find("File name too long"), std::string::npos);
}

TEST(simulated_shell, the_sleeps_of_a_run_saturate_instead_of_wrapping) {
    // 110,000 days in milliseconds is past what a steady_clock deadline can hold in
    // nanoseconds: the sum wrapped and the run ended at once.
    const auto ran = simulate(repeated("sleep 86400; ", 110'000), no_files);
    EXPECT_EQ(ran.runs_for, ngfail::opensandbox::emulator::longest_wait);
}

}  // namespace
