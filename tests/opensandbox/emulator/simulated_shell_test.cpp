// The emulator's simulated commands: what a session's state does to them.
#include "opensandbox/emulator/simulated_shell.hpp"

#include "support/peak_memory.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

namespace {

namespace emulator = ngfail::opensandbox::testing::detail;
using emulator::shell_state;
using emulator::simulate;

const emulator::file_reader no_files{};
// Where every path is a directory: for rules about the working directory, not the tree.
const emulator::file_reader every_directory{.is_directory = [](const std::string&) { return true; }};

TEST(simulated_shell, cd_and_export_change_the_session_and_later_commands_see_it) {
    shell_state shell;
    EXPECT_EQ(simulate("cd /work && export NAME=ngfail", every_directory, &shell).exit_code, 0);
    EXPECT_EQ(shell.cwd, "/work");
    EXPECT_EQ(shell.env().at("NAME"), "ngfail");
    EXPECT_EQ(simulate("cd sub; pwd; echo hi $NAME $UNSET.", every_directory, &shell).stdout_text, "/work/sub\nhi ngfail .\n");
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
    const emulator::file_reader reader{.read_file = [&](const std::string& path) {
        asked = path;
        return std::make_shared<const std::string>("content");
    }};
    EXPECT_EQ(simulate("cat notes.txt", reader, &shell).stdout_text, "content");
    EXPECT_EQ(asked, "/w/notes.txt");
}

// ---- bash's builtins, as bash runs them ---------------------------------------------------------

TEST(simulated_shell, true_succeeds_and_false_fails_with_1) {
    const auto failed = simulate("false", no_files);
    EXPECT_EQ(failed.exit_code, 1);
    EXPECT_EQ(failed.stdout_text, "") << "false prints nothing, it is no `ran: false`";
    EXPECT_EQ(simulate("true", no_files).exit_code, 0);
    EXPECT_EQ(simulate("false; true", no_files).exit_code, 0);
}

TEST(simulated_shell, cd_into_a_missing_directory_fails_and_stays) {
    shell_state shell;
    shell.cwd = "/tmp";
    const auto ran = simulate("cd /no/such/dir", no_files, &shell);
    EXPECT_EQ(ran.exit_code, 1);
    EXPECT_EQ(ran.stderr_text, "bash: cd: /no/such/dir: No such file or directory\n");
    EXPECT_EQ(shell.cwd, "/tmp");
    EXPECT_EQ(simulate("cd nowhere; pwd", no_files, &shell).stdout_text, "/tmp\n");
}

TEST(simulated_shell, cd_into_a_file_is_not_a_directory) {
    const emulator::file_reader one_file{.read_file = [](const std::string& path) {
        return path == "/tmp/f" ? std::make_shared<const std::string>("x") : nullptr;
    }};
    shell_state shell;
    const auto ran = simulate("cd /tmp/f/", one_file, &shell);
    EXPECT_EQ(ran.exit_code, 1);
    EXPECT_EQ(ran.stderr_text, "bash: cd: /tmp/f/: Not a directory\n");
    EXPECT_EQ(shell.cwd, "/");
}

TEST(simulated_shell, cd_enters_the_trees_directories_and_an_images_usual_ones) {
    const emulator::file_reader tree{
        .is_directory = [](const std::string& path) { return path == "/w" || path == "/w/sub"; }};
    shell_state shell;
    EXPECT_EQ(simulate("cd /w/sub/ && pwd && cd .. && pwd", tree, &shell).stdout_text, "/w/sub\n/w\n")
        << "a path is made normal, as bash's logical cd makes it";
    for (const char* usual : {"/", "/root", "/tmp", "/home", "/workspace", "/usr", "/bin", "/etc", "/var", "/opt"}) {
        EXPECT_EQ(simulate(std::string("cd ") + usual, no_files, &shell).exit_code, 0) << usual;
        EXPECT_EQ(shell.cwd, usual);
    }
    EXPECT_EQ(simulate("cd ~; pwd", no_files, &shell).stdout_text, "/root\n") << "~ ends at a separator too";
    EXPECT_EQ(simulate("cd /tmp && cd ~&& pwd", no_files, &shell).stdout_text, "/root\n");
}

TEST(simulated_shell, exit_ends_with_the_last_status_or_its_argument_modulo_256) {
    EXPECT_EQ(simulate("false; exit", no_files).exit_code, 1);
    EXPECT_EQ(simulate("exit 257", no_files).exit_code, 1);
    EXPECT_EQ(simulate("exit -1", no_files).exit_code, 255);
    const auto word = simulate("exit abc; echo never", no_files);
    EXPECT_EQ(word.exit_code, 2);
    EXPECT_EQ(word.stderr_text, "bash: exit: abc: numeric argument required\n");
    EXPECT_EQ(word.stdout_text, "");
}

TEST(simulated_shell, words_split_on_unquoted_blanks_and_quotes_are_removed) {
    shell_state shell;
    EXPECT_EQ(simulate(R"(export V="a b")", no_files, &shell).exit_code, 0);
    EXPECT_EQ(shell.env().at("V"), "a b");
    EXPECT_EQ(simulate(R"(echo "a  b")", no_files).stdout_text, "a  b\n");
    EXPECT_EQ(simulate("echo a  b", no_files).stdout_text, "a b\n");
    EXPECT_EQ(simulate(R"(echo "[$V]" '[$V]' [$V])", no_files, &shell).stdout_text, "[a b] [$V] [a b]\n");
    EXPECT_EQ(simulate(R"(echo "say \"hi\"" it\'s)", no_files).stdout_text, "say \"hi\" it's\n");
}

TEST(simulated_shell, separators_inside_quotes_or_a_substitution_do_not_split_the_line) {
    EXPECT_EQ(simulate(R"(echo "a; b" && echo 'c && d')", no_files).stdout_text, "a; b\nc && d\n");
    EXPECT_EQ(simulate(R"sh(echo "$(echo x; echo y)")sh", no_files).stdout_text, "x\ny\n");
}

TEST(simulated_shell, and_skips_only_its_own_list_and_the_status_is_the_last_run) {
    const auto ran = simulate("false && echo never; echo after", no_files);
    EXPECT_EQ(ran.stdout_text, "after\n");
    EXPECT_EQ(simulate("false && true; echo $?", no_files).stdout_text, "1\n");
}

TEST(simulated_shell, dollar_question_is_the_last_status_also_in_the_next_run) {
    shell_state shell;
    EXPECT_EQ(simulate("false; echo $?; echo $?", no_files, &shell).stdout_text, "1\n0\n");
    (void)simulate("cat /nope", no_files, &shell);
    EXPECT_EQ(simulate("echo $?", no_files, &shell).stdout_text, "1\n") << "a session's last status";
}

TEST(simulated_shell, a_substitution_runs_in_a_subshell_and_gives_its_output_without_trailing_newlines) {
    shell_state shell;
    shell.cwd = "/tmp";
    const auto ran = simulate(R"sh(echo "in $(cd /; pwd), here $(pwd)"; export W=$(echo hi; echo); echo "[$W]")sh", no_files,
                              &shell);
    EXPECT_EQ(ran.stdout_text, "in /, here /tmp\n[hi]\n");
    EXPECT_EQ(shell.cwd, "/tmp") << "the subshell's cd stays in it";
    EXPECT_EQ(simulate("echo $(echo $(echo deep) $(echo er))", no_files).stdout_text, "deep er\n");
    EXPECT_EQ(simulate("echo $(exit 3); echo $?", no_files).stdout_text, "\n0\n") << "exit ends the subshell only";
}

TEST(simulated_shell, an_unimplemented_command_is_only_echoed) {
    EXPECT_EQ(simulate("ls -l | wc -l", no_files).stdout_text, "ran: ls -l | wc -l\n");
    EXPECT_EQ(simulate("echo a > f", no_files).stdout_text, "ran: echo a > f\n") << "no redirection is pretended";
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
    EXPECT_LE(shell.env().at("A").size(), emulator::max_shell_variable_bytes);
    EXPECT_GE(shell.env().at("A").size(), 16u * 1024) << "it doubled until the bound";
    EXPECT_NE(ran.stderr_text.find("at most 64 KiB of variables"), std::string::npos);
    EXPECT_EQ(ran.stdout_text, "done\n");
    EXPECT_EQ(ran.exit_code, 0) << "the last command's status, as bash's";
}

TEST(simulated_shell, a_line_of_a_million_commands_is_split_in_one_pass) {
    shell_state shell;
    // Looking for `&&` and `;` apart rescanned the rest at every command: 10^6 commands of a
    // 5 MB line were 2.5 * 10^12 steps (hours), one pass is 5 * 10^6.
    const std::size_t commands = ngfail_test::scaled(1'000'000);
    const auto ran = simulate(repeated("pwd; ", commands) + "pwd", no_files, &shell);
    EXPECT_EQ(ran.stdout_text.size(), 2u * (commands + 1));
    EXPECT_EQ(ran.exit_code, 0);
}

TEST(simulated_shell, a_run_prints_at_most_16_mib_then_stops) {
    using emulator::max_run_output;
    const auto megabyte = std::make_shared<const std::string>(std::size_t{1} << 20, 'm');
    const emulator::file_reader one_file{
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
    const auto ran = simulate(repeated("cd aaaaaaaa; ", 2000), every_directory, &shell);
    EXPECT_LE(shell.cwd.size(), emulator::max_path_bytes);
    EXPECT_NE(ran.stderr_text.find("File name too long"), std::string::npos);
}

TEST(simulated_shell, the_sleeps_of_a_run_saturate_instead_of_wrapping) {
    // 110,000 days in milliseconds is past what a steady_clock deadline can hold in
    // nanoseconds: the sum wrapped and the run ended at once.
    const auto ran = simulate(repeated("sleep 86400; ", 110'000), no_files);
    EXPECT_EQ(ran.runs_for, emulator::longest_wait);
}

TEST(simulated_shell, substitutions_nest_at_most_32_deep) {
    std::string nested = "pwd";
    for (int i = 0; i < 40; ++i) nested = "echo $(" + nested + ")";
    const auto ran = simulate(nested, no_files);
    EXPECT_NE(ran.stderr_text.find("at most 32"), std::string::npos);
    EXPECT_NE(ran.exit_code, 0);
    // A million-deep one is found to be too deep without a million-deep recursion (a quarter
    // of it would overflow the stack as surely).
    const std::size_t depth = ngfail_test::scaled(1'000'000);
    const auto deep = simulate("echo " + repeated("$(", depth) + repeated(")", depth), no_files);
    EXPECT_NE(deep.stderr_text.find("at most 32"), std::string::npos);
}

TEST(simulated_shell, a_line_of_many_substitutions_is_linear) {
    // 200,000 substitutions, each one subshell: as many steps as the line has bytes, times a
    // small constant, not the square of it.
    const std::size_t substitutions = ngfail_test::scaled(200'000);
    const auto ran = simulate("echo " + repeated("$(echo x)", substitutions), no_files);
    EXPECT_EQ(ran.stdout_text.size(), substitutions + 1) << "one word: no blank between them";
    EXPECT_EQ(ran.exit_code, 0);
}

}  // namespace
