// The emulator's simulated commands: what a session's state does to them.
#include "opensandbox/emulator/simulated_shell.hpp"

#include <gtest/gtest.h>

namespace {

using ngfail::opensandbox::emulator::shell_state;
using ngfail::opensandbox::emulator::simulate;

const ngfail::opensandbox::emulator::file_reader no_files = [](const std::string&) {
    return std::shared_ptr<const std::string>();
};

TEST(simulated_shell, cd_and_export_change_the_session_and_later_commands_see_it) {
    shell_state shell;
    EXPECT_EQ(simulate("cd /work && export NAME=ngfail", no_files, &shell).exit_code, 0);
    EXPECT_EQ(shell.cwd, "/work");
    EXPECT_EQ(shell.env.at("NAME"), "ngfail");
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
    shell_state shell{.cwd = "/w"};
    std::string asked;
    const auto reader = [&](const std::string& path) {
        asked = path;
        return std::make_shared<const std::string>("content");
    };
    EXPECT_EQ(simulate("cat notes.txt", reader, &shell).stdout_text, "content");
    EXPECT_EQ(asked, "/w/notes.txt");
}

}  // namespace
