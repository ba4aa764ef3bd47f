// The process runtime's sandboxes, for real (bubblewrap, the kernel's cgroups): skipped, with
// the reason, where the host cannot run them.
#include "opensandbox/emulator/process/process_sandbox.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

using ngfail::opensandbox::emulator::process_sandbox;
namespace fs = std::filesystem;

class process_sandboxes : public testing::Test {
protected:
    void SetUp() override {
        if (const std::string why = process_sandbox::unavailable(); !why.empty()) GTEST_SKIP() << why;
        std::error_code ignored;
        fs::remove_all(root, ignored);
        fs::create_directories(root);
        fs::permissions(root, fs::perms::all);
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
    const fs::path root = fs::temp_directory_path() / ("ngfail-process-test-" + std::to_string(::getpid()));
};

TEST_F(process_sandboxes, commands_run_for_real_with_their_exit_codes_and_streams) {
    process_sandbox box("sbx-real", {.state_root = root});
    const auto python = box.run({.command = "python3 -c 'print(6*7)'"});
    EXPECT_EQ(python.exit_code, 0) << python.stderr_text;
    EXPECT_EQ(python.stdout_text, "42\n");
    EXPECT_EQ(box.run({.command = "false"}).exit_code, 1);
    const auto both = box.run({.command = "echo out; echo err >&2; exit 3"});
    EXPECT_EQ(both.stdout_text, "out\n");
    EXPECT_EQ(both.stderr_text, "err\n");
    EXPECT_EQ(both.exit_code, 3);
    const auto env = box.run({.command = "cd /tmp && pwd && echo $GREETING && id -un", .envs = {"GREETING=hi"}});
    EXPECT_EQ(env.stdout_text, "/tmp\nhi\nsandbox\n") << env.stderr_text;
    EXPECT_EQ(box.run({.command = "pwd", .cwd = "/no/such/dir"}).exit_code, 1);
}

TEST_F(process_sandboxes, files_written_inside_are_in_the_sandboxs_tree_and_nowhere_else) {
    process_sandbox box("sbx-files", {.state_root = root});
    EXPECT_EQ(box.run({.command = "echo data > /workspace/made.txt"}).exit_code, 0);
    std::ifstream made(box.files() / "workspace/made.txt");
    std::string line;
    std::getline(made, line);
    EXPECT_EQ(line, "data");
    EXPECT_NE(box.run({.command = "echo x > /usr/escape.txt"}).exit_code, 0) << "/usr is read-only";
    const auto host = box.run({.command = "ls / ; cat /etc/shadow"});
    EXPECT_EQ(host.stdout_text.find("work\n"), std::string::npos) << "the host's folders are not there";
    EXPECT_NE(host.exit_code, 0) << "no host secret is readable";
}

TEST_F(process_sandboxes, no_network_but_loopback_by_default) {
    process_sandbox box("sbx-net", {.state_root = root});
    const auto links = box.run({.command = "cat /proc/net/dev"});
    EXPECT_NE(links.stdout_text.find("lo:"), std::string::npos);
    EXPECT_EQ(links.stdout_text.find("eth0"), std::string::npos) << links.stdout_text;
}

TEST_F(process_sandboxes, past_its_memory_limit_a_command_is_killed_by_the_kernel_which_counts_it) {
    process_sandbox box("sbx-oom", {.state_root = root, .limits = {.memory_bytes = 64 << 20}});
    EXPECT_EQ(box.oom_kills(), 0);
    const auto grown = box.run({.command = "python3 -c 'x = bytearray(200 * 1024 * 1024)'"});
    EXPECT_EQ(grown.exit_code, 128 + SIGKILL) << grown.stderr_text;
    EXPECT_EQ(box.oom_kills(), 1) << "the kernel's own count is the evidence";
    EXPECT_EQ(box.run({.command = "echo alive"}).stdout_text, "alive\n") << "the sandbox lives on";
}

TEST_F(process_sandboxes, a_signal_reaches_the_commands_process_group) {
    process_sandbox box("sbx-signal", {.state_root = root});
    const auto started = box.start({.command = "sleep 30 & sleep 30; echo never"});
    box.signal(started.id, SIGTERM);
    EXPECT_EQ(box.wait(started.id), 128 + SIGTERM);
    ::close(started.stdout_fd);
    ::close(started.stderr_fd);
}

TEST_F(process_sandboxes, nothing_of_a_sandbox_remains_after_it_goes) {
    fs::path files;
    {
        process_sandbox box("sbx-gone", {.state_root = root});
        files = box.files();
        const auto started = box.start({.command = "sleep 300"});
        ::close(started.stdout_fd);
        ::close(started.stderr_fd);
        EXPECT_TRUE(fs::exists(files / "workspace"));
    }
    EXPECT_FALSE(fs::exists(files));
    const auto group = fs::path("/sys/fs/cgroup/memory");
    bool left = false;
    for (const auto& entry : fs::recursive_directory_iterator(group, fs::directory_options::skip_permission_denied)) {
        if (entry.path().filename().string().find("sbx-gone") != std::string::npos) left = true;
    }
    EXPECT_FALSE(left) << "its control group is removed";
}

}  // namespace
