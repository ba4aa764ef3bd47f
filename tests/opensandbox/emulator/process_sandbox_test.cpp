// The process runtime's sandboxes, for real (bubblewrap, the kernel's cgroups): skipped, with
// the reason, where the host cannot run them.
#include "opensandbox/emulator/process/process_sandbox.hpp"

#include "support/peak_memory.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <array>
#include <fstream>
#include <system_error>
#include <string>

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace {

using ngfail::opensandbox::testing::detail::process_sandbox;
using ngfail::opensandbox::testing::detail::process_command;
using ngfail::opensandbox::testing::detail::process_streams;

void write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        ASSERT_GT(n, 0);
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

// What `fd` gives until `marker` has come (or 10 s have passed, or it ended).
std::string read_until(int fd, std::string_view marker) {
    std::string seen;
    std::array<char, 4096> chunk{};
    while (seen.find(marker) == std::string::npos) {
        pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
        if (::poll(&p, 1, 10000) <= 0) break;
        const ssize_t n = ::read(fd, chunk.data(), chunk.size());
        if (n <= 0) break;
        seen.append(chunk.data(), static_cast<std::size_t>(n));
    }
    return seen;
}
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

TEST_F(process_sandboxes, files_by_their_paths_inside_never_reach_the_host) {
    process_sandbox box("sbx-paths", {.state_root = root});
    box.write_file("/workspace/deep/er/uploaded.txt", "from the server\n");
    const auto read = box.run({.command = "cat /workspace/deep/er/uploaded.txt && echo made > /tmp/out.txt"});
    EXPECT_EQ(read.stdout_text, "from the server\n") << read.stderr_text;
    EXPECT_EQ(box.read_file("/tmp/out.txt"), "made\n");
    // Escapes a command can plant, and ones a path can spell: each stays inside the tree.
    EXPECT_EQ(box.run({.command = "ln -s /etc/hostname /workspace/abs; ln -s ../../../../../../etc/hostname "
                                  "/workspace/rel; ln -s /proc/self/root /workspace/proc"})
                  .exit_code,
              0);
    for (const char* path : {"/workspace/abs", "/workspace/rel", "/workspace/proc/etc/hostname",
                             "/../../../../etc/hostname", "/proc/self/root/etc/hostname", "/usr/bin/bash"}) {
        try {
            const std::string got = box.read_file(path);
            ADD_FAILURE() << path << " read " << got.size() << " bytes from outside the sandbox's tree";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory) << path << ": " << e.what();
        }
    }
    EXPECT_THROW(box.write_file("/workspace/abs", "x"), std::system_error) << "its target is not in the tree";
    EXPECT_FALSE(fs::exists(root / "etc")) << "nothing written beside the tree";
}

TEST_F(process_sandboxes, directories_are_made_inside_and_a_file_in_the_way_fails) {
    process_sandbox box("sbx-dirs", {.state_root = root});
    box.make_directories("/workspace/a/b/c", 700);
    EXPECT_EQ(box.run({.command = "stat -c %a /workspace/a/b/c"}).stdout_text, "700\n");
    box.write_file("/workspace/f", "x");
    try {
        box.make_directories("/workspace/f/g");
        ADD_FAILURE() << "made a directory below a file";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::errc::not_a_directory) << e.what();
    }
    EXPECT_THROW(box.make_directories("/etc/x"), std::system_error) << "only the writable folders are the tree";
    ASSERT_EQ(box.run({.command = "ln -s /proc/self/root /workspace/proc; ln -s /etc /workspace/etc"}).exit_code, 0);
    EXPECT_THROW(box.make_directories("/workspace/proc/x"), std::system_error) << "a link is resolved in the tree";
    EXPECT_THROW(box.make_directories("/workspace/etc/x"), std::system_error);
    EXPECT_FALSE(fs::exists("/etc/x"));
    EXPECT_FALSE(fs::exists(box.files() / "etc")) << "a refused path makes nothing";
}

TEST_F(process_sandboxes, a_nul_in_any_field_is_refused_before_the_supervisor_sees_it) {
    process_sandbox box("sbx-nul", {.state_root = root});
    const std::string nul("a\0b", 3);
    for (const auto& command : {process_command{.command = "echo " + nul}, process_command{.command = "true", .cwd = nul},
                                process_command{.command = "true", .envs = {"A=" + nul}}}) {
        try {
            (void)box.start(command);
            ADD_FAILURE() << "started a command with a NUL in it";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), std::errc::invalid_argument) << e.what();
        }
    }
    EXPECT_EQ(box.run({.command = "echo still"}).stdout_text, "still\n");
}

TEST_F(process_sandboxes, a_bash_fed_on_stdin_keeps_its_directory_and_exports) {
    process_sandbox box("sbx-session", {.state_root = root});
    const auto shell = box.start({.command = "exec bash --noprofile --norc", .streams = process_streams::with_stdin});
    write_all(shell.stdin_fd, "cd /tmp && export GREETING=hello\n");
    write_all(shell.stdin_fd, "echo \"$(pwd) $GREETING\"; echo __end__\n");
    EXPECT_EQ(read_until(shell.stdout_fd, "__end__\n"), "/tmp hello\n__end__\n");
    ::close(shell.stdin_fd);
    EXPECT_EQ(box.wait(shell.id), 0) << "bash ends with its input";
    ::close(shell.stdout_fd);
    ::close(shell.stderr_fd);
}

TEST_F(process_sandboxes, a_terminal_is_a_real_pty_that_resizes_and_interrupts) {
    process_sandbox box("sbx-pty", {.state_root = root});
    // It waits for a line, so that the resize comes first.
    const auto term = box.start({.command = "read line; tty; stty size; echo \"got $line\"",
                                 .streams = process_streams::terminal});
    ASSERT_GE(term.terminal_fd, 0);
    winsize size{.ws_row = 30, .ws_col = 100, .ws_xpixel = 0, .ws_ypixel = 0};
    ASSERT_EQ(::ioctl(term.terminal_fd, TIOCSWINSZ, &size), 0);
    write_all(term.terminal_fd, "hello\r");
    const std::string seen = read_until(term.terminal_fd, "got hello\r\n");
    EXPECT_NE(seen.find("/dev/pts/"), std::string::npos) << seen;
    EXPECT_NE(seen.find("30 100"), std::string::npos) << seen;
    EXPECT_EQ(box.wait(term.id), 0);
    ::close(term.terminal_fd);

    // Ctrl-C is the line discipline's SIGINT to the terminal's foreground process group.
    const auto sleeper = box.start({.command = "echo sleep\"\"ing; sleep 30; echo after",
                                    .streams = process_streams::terminal});
    EXPECT_NE(read_until(sleeper.terminal_fd, "sleeping\r\n").find("sleeping"), std::string::npos);
    write_all(sleeper.terminal_fd, "\x03");
    EXPECT_EQ(box.wait(sleeper.id), 128 + SIGINT);
    ::close(sleeper.terminal_fd);
}

TEST_F(process_sandboxes, no_network_but_loopback_by_default) {
    process_sandbox box("sbx-net", {.state_root = root});
    const auto links = box.run({.command = "cat /proc/net/dev"});
    EXPECT_NE(links.stdout_text.find("lo:"), std::string::npos);
    EXPECT_EQ(links.stdout_text.find("eth0"), std::string::npos) << links.stdout_text;
}

TEST_F(process_sandboxes, past_its_memory_limit_a_command_is_killed_by_the_kernel_which_counts_it) {
    // The supervisor is this program, and counts against the sandbox's memory as execd does
    // against its container's: a sanitizer's runtime in it takes most of 64 MiB by itself.
    if (ngfail_test::instrumented) GTEST_SKIP() << "a sanitized supervisor does not fit in 64 MiB";
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
