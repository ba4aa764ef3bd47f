// `ngfail serve --runtime process` through the client, as a user drives it: real commands,
// real exit codes and files, the kernel's OOM kill classified, a deleted sandbox's processes
// gone. Skipped, with the reason, where the host cannot run process sandboxes.
#include "support/emulator_calls.hpp"
#include "support/peak_memory.hpp"
#include "support/terminal_reads.hpp"
#include "opensandbox/emulator/process/process_kernel.hpp"
#include "opensandbox/emulator/process/process_runtime.hpp"

#include <ngfail/opensandbox.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using ngfail::kind;
using ngfail::opensandbox::client;
namespace sandbox_testing = ngfail::opensandbox::testing;
namespace fs = std::filesystem;

class process_runtime : public testing::Test {
protected:
    // The host folder that holds sandbox `id`'s writable tree.
    [[nodiscard]] fs::path server_tree(const std::string& id) const {
        return state / ("ngfail-" + std::to_string(::getpid())) / id / "tree";
    }

    void SetUp() override {
        if (const std::string why = sandbox_testing::process_runtime_unavailable(); !why.empty()) GTEST_SKIP() << why;
        server.emplace(sandbox_testing::server_options{.api_key = "sk-p",
                                                       .ping_every = 200ms,
                                                       .runtime = sandbox_testing::runtime::process,
                                                       .state_dir = state.string()});
        sandboxes.emplace(ngfail::opensandbox::client_options{.port = server->port(), .api_key = "sk-p", .timeout = 20s});
    }
    void TearDown() override {
        sandboxes.reset();
        server.reset();
        std::error_code ignored;
        fs::remove_all(state, ignored);
    }

    const fs::path state = fs::temp_directory_path() / ("ngfail-runtime-test-" + std::to_string(::getpid()));
    std::optional<sandbox_testing::embedded_server> server;
    std::optional<client> sandboxes;
};

TEST_F(process_runtime, commands_run_for_real) {
    const auto id = sandboxes->create({}).id;
    const auto ok = sandboxes->exec(id, {.command = "echo one; echo two >&2; echo three"});
    EXPECT_EQ(ok.exit_code, 0);
    EXPECT_EQ(ok.stdout_text, "one\nthree\n");
    EXPECT_EQ(ok.stderr_text, "two\n");
    const auto failed = sandboxes->exec(id, {.command = "false"});
    EXPECT_EQ(failed.exit_code, 1) << "the simulated runtime printed `ran: false` and exited 0";
    EXPECT_EQ(failed.error_value, "1");
    const auto no_dir = sandboxes->exec(id, {.command = "cd /no/such/dir"});
    EXPECT_NE(no_dir.exit_code, 0);
    EXPECT_THAT(no_dir.stderr_text, testing::HasSubstr("No such file or directory"));
    const auto no_cwd = sandboxes->exec(id, {.command = "pwd", .cwd = "/no/such"});
    EXPECT_EQ(no_cwd.exit_code, 1);
    EXPECT_EQ(no_cwd.stdout_text, "");
    EXPECT_EQ(no_cwd.stderr_text, "bash: line 1: cd: /no/such: No such file or directory\n") << "execd's cd, as bash says it";
    const auto shell = sandboxes->exec(id, {.command = R"(export V="x y"; echo "$V" $(id -u) $(pwd))", .cwd = "/tmp"});
    EXPECT_EQ(shell.stdout_text, "x y 1000 /tmp\n") << "a non-root user; quotes and substitutions are bash's";
    const auto envs = sandboxes->exec(id, {.command = "echo $GREETING", .envs = {{"GREETING", "hello"}}});
    EXPECT_EQ(envs.stdout_text, "hello\n");
    const auto blank = sandboxes->exec(id, {.command = "printf 'a\\n\\nb'"});
    EXPECT_EQ(blank.stdout_text, "a\n\nb\n") << "execd sends a line per event; a last line without its end gets one";
}

// A no_terminal_event fault holds under the process runtime too: the real command runs, its
// stream ends without its last event.
TEST_F(process_runtime, no_terminal_event_withholds_a_real_runs_last_event) {
    const auto id = sandboxes->create({}).id;
    server->inject(sandbox_testing::fault::exec(sandbox_testing::fault::action::no_terminal_event));
    const auto ran = sandboxes->try_exec(id, {.command = "echo ran > /tmp/ran"});
    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().code(), kind::transport_peer_drop);
    EXPECT_EQ(sandboxes->exec(id, {.command = "cat /tmp/ran"}).stdout_text, "ran\n") << "it ran; one fault, one run";
}

TEST_F(process_runtime, a_detached_exec_survives_cut_log_reads_with_a_real_command) {
    const auto id = sandboxes->create({}).id;
    std::string expected;
    for (int i = 1; i <= 150000; ++i) expected += std::to_string(i) + '\n';  // about 1 MiB
    server->inject(sandbox_testing::fault::cut_stream("exec_logs", 50'000, 3));
    const std::size_t started_before = server->commands_started();

    const auto ran = sandboxes->try_exec(id, {.command = "seq 1 150000; sleep 0.2; echo late >&2; exit 3",
                                              .detached = true});

    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().exit_code, 3);
    EXPECT_EQ(ran.value().stdout_text.size(), expected.size() + 5);
    EXPECT_TRUE(ran.value().stdout_text == expected + "late\n") << "stdout then stderr, as the log has them";
    EXPECT_EQ(server->commands_started() - started_before, 1u);
}

// A session's state is kept before its run's last event goes out: a caller that sends the
// next run on another connection the moment it reads that event finds it (the TypeScript
// SDK's suite once read the old directory on a loaded machine).
TEST_F(process_runtime, a_sessions_next_run_on_another_connection_finds_what_the_last_one_left) {
    const auto id = sandboxes->create({}).id;
    client other({.port = server->port(), .api_key = "sk-p", .timeout = 20s});
    const std::string session = sandboxes->create_session(id);
    for (int i = 0; i < 20; ++i) {
        const std::string n = std::to_string(i);
        client& first = i % 2 ? other : *sandboxes;
        client& second = i % 2 ? *sandboxes : other;
        (void)first.run_in_session(id, session, {.command = "mkdir -p /tmp/d" + n + " && cd /tmp/d" + n + " && export N=" + n});
        EXPECT_EQ(second.run_in_session(id, session, {.command = "echo $(pwd) $N"}).stdout_text, "/tmp/d" + n + " " + n + "\n");
    }
}

TEST_F(process_runtime, a_session_keeps_its_directory_and_exports_as_execd_does) {
    const auto id = sandboxes->create({}).id;
    const std::string session = sandboxes->create_session(id, "/workspace/project");
    const auto first = sandboxes->run_in_session(id, session, {.command = R"(pwd; export V="a b"; cd sub 2>/dev/null || mkdir sub && cd sub)"});
    EXPECT_EQ(first.exit_code, 0) << first.stdout_text;
    EXPECT_EQ(first.stdout_text, "/workspace/project\n") << "the session's directory was made; no marker reaches the client";
    const auto second = sandboxes->run_in_session(id, session, {.command = R"(echo "$V" $(pwd); echo oops >&2; printf 'no end')"});
    EXPECT_EQ(second.stdout_text, "a b /workspace/project/sub\noops\nno end\n")
        << "cd and export stay; stderr joins stdout, as execd's sessions give it";
    EXPECT_EQ(second.stderr_text, "");
    const auto quoted = sandboxes->run_in_session(id, session, {.command = R"(export Q='it'"'"'s "$HOME" \ `x`'; false)"});
    EXPECT_EQ(quoted.exit_code, 1);
    EXPECT_EQ(sandboxes->run_in_session(id, session, {.command = "printf '%s' \"$Q\""}).stdout_text, R"(it's "$HOME" \ `x`)" "\n")
        << "a value bash quotes in `export -p` comes back as it was";
    const auto left = sandboxes->run_in_session(id, session, {.command = "cd /tmp; export GONE=1; exit 3"});
    EXPECT_EQ(left.exit_code, 3);
    EXPECT_EQ(sandboxes->run_in_session(id, session, {.command = "pwd; echo \"[$GONE]\""}).stdout_text,
              "/workspace/project/sub\n[]\n")
        << "a run that ends its shell leaves the session as it was";
    const std::string elsewhere = sandboxes->create_session(id);
    EXPECT_EQ(sandboxes->run_in_session(id, elsewhere, {.command = "pwd; echo \"[$V]\""}).stdout_text, "/home/sandbox\n[]\n")
        << "sessions are apart; one without a directory starts at home";
    const auto outside = sandboxes->try_create_session(id, "/etc/nope");
    ASSERT_FALSE(outside);
    EXPECT_EQ(outside.error().http_status(), 500);
    EXPECT_THAT(std::string(outside.error().reason()), testing::HasSubstr("error creating session. mkdir /etc/nope"));
    // A link out of the writable folders leads to the host's /usr inside the sandbox: the
    // same refusal, and nothing made (a stranger's attack: a folder no command could see).
    ASSERT_EQ(sandboxes->exec(id, {.command = "ln -s ../../../../../usr /tmp/usrlink"}).exit_code, 0);
    EXPECT_FALSE(sandboxes->try_create_session(id, "/tmp/usrlink/made"));
    EXPECT_FALSE(sandboxes->try_create_session(id, "/workspace/" + std::string(5000, 'd')));
    // Quotes take five times their room once quoted for bash: 32 KB of them no longer make
    // the session's script too long to start (a stranger's attack: every later run failed).
    const std::string quotes = sandboxes->create_session(id);
    ASSERT_EQ(sandboxes->run_in_session(id, quotes, {.command = R"(q=$(printf '%8000s' ''); q=${q// /\'}; for i in 1 2 3 4; do export Q$i="$q"; done)"})
                  .exit_code,
              0);
    const auto after_quotes = sandboxes->run_in_session(id, quotes, {.command = "echo ${#Q1} ${#Q4}"});
    EXPECT_EQ(after_quotes.stdout_text, "8000 8000\n");
    sandboxes->delete_session(id, session);
    EXPECT_FALSE(sandboxes->try_run_in_session(id, session, {.command = "true"}));
}

TEST_F(process_runtime, a_timeout_or_an_interrupt_kills_the_command) {
    const auto id = sandboxes->create({}).id;
    const auto started = std::chrono::steady_clock::now();
    const auto timed_out = sandboxes->try_exec(id, {.command = "sleep 30", .timeout = 300ms});
    ASSERT_FALSE(timed_out) << "execd kills it: error -1, signal: killed";
    EXPECT_EQ(timed_out.error().code(), kind::provider_command_terminated) << timed_out.error().what();
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);

    const auto background = sandboxes->exec(id, {.command = "echo started; sleep 30", .background = true});
    ASSERT_FALSE(background.execution_id.empty());
    for (int i = 0; i < 100 && sandboxes->exec_logs(id, background.execution_id).content.empty(); ++i) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(sandboxes->exec_logs(id, background.execution_id).content, "started\n");
    EXPECT_TRUE(sandboxes->exec_status(id, background.execution_id).running);
    sandboxes->interrupt(id, background.execution_id);
    // A command a signal ended is a failure of the status call (provider_command_terminated).
    ngfail::result<ngfail::opensandbox::command_status> status = ngfail::opensandbox::command_status{.running = true};
    for (int i = 0; i < 200 && status && status.value().running; ++i) {
        std::this_thread::sleep_for(20ms);
        status = sandboxes->try_exec_status(id, background.execution_id);
    }
    ASSERT_FALSE(status) << "still running";
    EXPECT_EQ(status.error().code(), kind::provider_command_terminated) << status.error().what();
    EXPECT_EQ(std::get<ngfail::sandbox_details>(status.error().details()).exit_code, -1);
    const auto raw = ngfail_test::call(server->port(), ngfail_test::http::verb::get,
                                       "/sandboxes/" + id + "/proxy/44772/command/status/" + background.execution_id);
    EXPECT_EQ(boost::json::parse(raw.body).at("error"), "signal: terminated")
        << "SIGTERM to its process group, as execd's interrupt";
}

TEST_F(process_runtime, files_are_the_sandboxs_own) {
    const auto id = sandboxes->create({}).id;
    sandboxes->upload(id, "/workspace/data/input.txt", "42\n");
    EXPECT_EQ(sandboxes->exec(id, {.command = "cat /workspace/data/input.txt; echo out > /workspace/out.txt"}).stdout_text,
              "42\n");
    EXPECT_EQ(sandboxes->download(id, "/workspace/out.txt"), "out\n");
    const auto missing = sandboxes->try_download(id, "/workspace/none.txt");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().http_status(), 404);
    // `..` and an absolute symlink stay inside the sandbox's writable tree (its /home, /root,
    // /tmp and /workspace): the host's /etc/hostname is out of reach.
    (void)sandboxes->exec(id, {.command = "ln -s /etc/hostname /workspace/host"});
    const auto host = sandboxes->try_download(id, "/workspace/host");
    ASSERT_FALSE(host) << host.value();
    EXPECT_EQ(host.error().http_status(), 404);
    EXPECT_FALSE(sandboxes->try_download(id, "/../../../../proc/self/environ"));
    EXPECT_FALSE(sandboxes->try_download(id, "/tmp/../../../etc/shadow"));
}

// The kernel kills the command; the sandbox fails as the Kubernetes backend reports an OOM
// kill: Failed, reason FAILED, the pod's OOMKilled only in the message (which is not
// evidence). The client says what the evidence proves: the command was killed, and the
// sandbox is gone for the next call.
TEST_F(process_runtime, directories_and_file_operations_act_on_the_real_tree) {
    const auto id = sandboxes->create({}).id;
    sandboxes->create_directories(id, {"/workspace/a/b", "/workspace/c"}, 700);
    sandboxes->upload(id, "/workspace/a/b/f.txt", "12345");
    EXPECT_EQ(sandboxes->exec(id, {.command = "stat -c '%a %U' /workspace/a/b; ls /workspace/a/b"}).stdout_text,
              "700 sandbox\nf.txt\n") << "made for real, owned by the sandbox's user";
    const auto info = sandboxes->file_info(id, {"/workspace/a/b/f.txt"});
    ASSERT_EQ(info.count("/workspace/a/b/f.txt"), 1u);
    EXPECT_EQ(info.at("/workspace/a/b/f.txt").size, 5u);
    EXPECT_EQ(info.at("/workspace/a/b/f.txt").owner, "sandbox");
    const auto listed = sandboxes->list_directory(id, "/workspace", 3);
    std::vector<std::string> paths;
    for (const auto& e : listed) paths.push_back(e.path);
    EXPECT_THAT(paths, testing::ElementsAre("/workspace/a", "/workspace/a/b", "/workspace/a/b/f.txt", "/workspace/c"))
        << "by name, each directory's entries right after it";
    sandboxes->move_files(id, {{.src = "/workspace/a/b/f.txt", .dest = "/tmp/moved/g.txt"}});
    EXPECT_EQ(sandboxes->exec(id, {.command = "cat /tmp/moved/g.txt"}).stdout_text, "12345\n");
    const auto onto = sandboxes->try_move_files(id, {{.src = "/tmp/moved/g.txt", .dest = "/workspace/c"}});
    ASSERT_FALSE(onto) << "a destination that exists is refused";
    EXPECT_THAT(std::string(onto.error().reason()), testing::HasSubstr("already exists"));
    sandboxes->delete_files(id, {"/tmp/moved/g.txt", "/tmp/never-there"});
    EXPECT_FALSE(sandboxes->try_file_info(id, {"/tmp/moved/g.txt"}));
    (void)sandboxes->exec(id, {.command = "mkdir -p /workspace/d/e && touch /workspace/d/e/x && ln -s /usr /workspace/d/usr"});
    sandboxes->delete_directories(id, {"/workspace/d", "/workspace"});
    EXPECT_EQ(sandboxes->exec(id, {.command = "ls -A /workspace; test -d /workspace && echo kept; ls /usr | head -1"}).stdout_text,
              "kept\nbin\n") << "rm -rf removes links, not what they point to; a writable folder is emptied, not removed";
    // What a link leads to beside the writable folders is out of reach, as for downloads.
    (void)sandboxes->exec(id, {.command = "ln -s ../../../../usr /tmp/usr; ln -s /etc /tmp/etc"});
    EXPECT_FALSE(sandboxes->try_list_directory(id, "/tmp/usr", 1));
    EXPECT_FALSE(sandboxes->try_file_info(id, {"/tmp/etc/hostname"}));
    EXPECT_FALSE(sandboxes->try_move_files(id, {{.src = "/workspace", .dest = "/tmp/w"}}));
}

// A reviewer's findings (#43): a NUL ended the name the kernel saw, so `/workspace/..%00`
// removed the tree's own folders; a trailing slash named nothing; a removal went as deep as
// the sandbox nested directories, a descriptor a level.
TEST_F(process_runtime, a_removal_stays_in_what_it_names) {
    const auto id = sandboxes->create({}).id;
    const std::string directories = "/sandboxes/" + id + "/proxy/44772/directories?path=";
    sandboxes->upload(id, "/tmp/kept.txt", "kept");
    sandboxes->upload(id, "/workspace/w.txt", "w");
    for (const char* path : {"/workspace/..%00", "/workspace/.%00", "/tmp/%00/../..", "/%00"}) {
        (void)ngfail_test::call(server->port(), ngfail_test::http::verb::delete_, directories + path);
    }
    EXPECT_EQ(sandboxes->exec(id, {.command = "cat /tmp/kept.txt /workspace/w.txt; touch /home/sandbox/h && echo ok"}).stdout_text,
              "keptw" "ok\n")
        << "no folder of the tree went";
    const auto emptied = ngfail_test::call(server->port(), ngfail_test::http::verb::delete_, directories + "/workspace/");
    EXPECT_EQ(emptied.status, 200u);
    EXPECT_EQ(sandboxes->exec(id, {.command = "ls -A /workspace; test -d /workspace && echo kept"}).stdout_text, "kept\n")
        << "a trailing slash names the folder: emptied, kept";
    ASSERT_EQ(sandboxes->exec(id, {.command = "cd /workspace && for i in $(seq 300); do mkdir d && cd d; done"}).exit_code, 0);
    const auto descriptors = [] {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& fd : fs::directory_iterator("/proc/self/fd")) ++n;
        return n;
    };
    const std::size_t before = descriptors();
    const auto deep = ngfail_test::call(server->port(), ngfail_test::http::verb::delete_, directories + "/workspace/d");
    EXPECT_EQ(deep.status, 500u) << "a removal that stopped says so (it answered 200)";
    EXPECT_THAT(deep.body, testing::HasSubstr("error removing directory /workspace/d. too many levels"));
    EXPECT_LE(descriptors(), before + 2) << "the levels' descriptors are closed";
    EXPECT_EQ(sandboxes->exec(id, {.command = "echo alive"}).stdout_text, "alive\n");
}

// A reviewer's finding (#43): an upload opened its path with O_CREAT before the check that it
// lies in a writable folder, so a dangling link made a file beside them, in the tree's root.
TEST_F(process_runtime, an_upload_makes_no_file_outside_the_writable_folders) {
    const auto id = sandboxes->create({}).id;
    ASSERT_EQ(sandboxes->exec(id, {.command = "ln -s /made-by-link /workspace/dangling; ln -s /workspace/real /workspace/good"}).exit_code, 0);
    EXPECT_FALSE(sandboxes->try_upload(id, "/workspace/dangling", "x"));
    bool made = false;
    for (const auto& entry : fs::recursive_directory_iterator(state)) made = made || entry.path().filename() == "made-by-link";
    EXPECT_FALSE(made) << "nothing was made in the tree's root";
    sandboxes->upload(id, "/workspace/real", "r");
    sandboxes->upload(id, "/workspace/good", "through the link");
    EXPECT_EQ(sandboxes->exec(id, {.command = "cat /workspace/real"}).stdout_text, "through the link\n")
        << "a link to a file in a writable folder is written through, as Linux does";
}

TEST_F(process_runtime, an_oom_kill_is_the_kernels_and_the_sandbox_fails_as_the_backend_shows_it) {
    // The supervisor is this program: a sanitizer's runtime in it takes most of 64 MiB.
    if (ngfail_test::instrumented) GTEST_SKIP() << "a sanitized supervisor does not fit in 64 MiB";
    const auto id = sandboxes->create({.resource_limits = {{"memory", "64Mi"}}}).id;
    const auto r = sandboxes->try_exec(id, {.command = "python3 -c 'x = bytearray(300 * 1024 * 1024)'"});
    ASSERT_TRUE(r.has_error()) << "exit " << r.value().exit_code.value_or(0);
    EXPECT_EQ(r.error().code(), kind::provider_command_terminated) << r.error().what();
    const auto after = sandboxes->get(id);
    EXPECT_EQ(after.state, "Failed");
    EXPECT_EQ(after.reason, "FAILED");
    const auto next = sandboxes->try_exec(id, {.command = "echo alive"});
    ASSERT_FALSE(next) << "a failed sandbox runs nothing";
    EXPECT_NE(next.error().code(), kind::provider_credentials_rejected) << next.error().what();
}

// A session's bash outlives the command the kernel killed: the kernel's count fails the
// sandbox all the same (a stranger's attack: it stayed Running).
TEST_F(process_runtime, an_oom_kill_in_a_session_fails_the_sandbox_too) {
    if (ngfail_test::instrumented) GTEST_SKIP() << "a sanitized supervisor does not fit in 64 MiB";
    const auto id = sandboxes->create({.resource_limits = {{"memory", "64Mi"}}}).id;
    const std::string session = sandboxes->create_session(id);
    const auto r = sandboxes->try_run_in_session(id, session, {.command = "python3 -c 'x = bytearray(300 * 1024 * 1024)'"});
    if (r) {
        EXPECT_EQ(r.value().exit_code, 137);
    }
    EXPECT_EQ(sandboxes->get(id).state, "Failed");
}

// A process no run follows (left behind by a command that has ended) is OOM-killed later:
// the server's sweep reads the kernel's count every second.
TEST_F(process_runtime, an_oom_kill_of_a_process_no_run_follows_fails_the_sandbox) {
    if (ngfail_test::instrumented) GTEST_SKIP() << "a sanitized supervisor does not fit in 64 MiB";
    const auto id = sandboxes->create({.resource_limits = {{"memory", "64Mi"}}}).id;
    const auto left = sandboxes->exec(
        id, {.command = "(sleep 0.3; python3 -c 'x = bytearray(300 * 1024 * 1024)') > /dev/null 2>&1 &"});
    EXPECT_EQ(left.exit_code, 0);
    EXPECT_EQ(sandboxes->get(id).state, "Running") << "nothing was killed yet";
    std::string state;
    for (int i = 0; i < 100 && (state = sandboxes->get(id).state) != "Failed"; ++i) std::this_thread::sleep_for(50ms);
    EXPECT_EQ(state, "Failed");
}

TEST_F(process_runtime, a_deleted_sandbox_takes_its_processes_and_files_with_it) {
    const auto id = sandboxes->create({}).id;
    (void)sandboxes->exec(id, {.command = "sleep 300", .background = true});
    // Its folder, found under --state-dir (the server's own folder is between them).
    const auto folders = [&] {
        std::size_t found = 0;
        std::error_code ec;
        for (fs::recursive_directory_iterator it(state, ec), end; !ec && it != end; it.increment(ec)) {
            if (it->path().filename() == id) ++found;
            if (it.depth() >= 1) it.disable_recursion_pending();
        }
        return found;
    };
    EXPECT_EQ(folders(), 1u) << "the sandbox's folder is under --state-dir";
    sandboxes->kill(id);
    for (int i = 0; i < 250 && folders() > 0; ++i) std::this_thread::sleep_for(20ms);
    EXPECT_EQ(folders(), 0u) << "its folder went with it";
    EXPECT_FALSE(sandboxes->try_get(id));
}

// A real shell's output comes as the sandbox's processes run: a slow host's may take seconds.
std::string read_until(ngfail::opensandbox::terminal_session& t, std::string_view wanted) {
    return ngfail_test::read_until(t, wanted, 10s);
}

TEST_F(process_runtime, a_terminal_is_a_real_pty_that_resizes_interrupts_and_replays) {
    using ngfail::opensandbox::terminal_exit;
    using ngfail::opensandbox::terminal_output;
    using ngfail::opensandbox::terminal_stream;
    const auto box = sandboxes->create({}).id;
    const std::string id = sandboxes->create_terminal(box, {.cwd = "/workspace"});
    std::int64_t seen_up_to = 0;
    {
        auto t = sandboxes->attach_terminal(box, id);
        EXPECT_EQ(t.mode(), "pty");
        t.write("tty; pwd\r");
        EXPECT_THAT(read_until(t, "/workspace\r\n"), testing::ContainsRegex("/dev/pts/[0-9]+\r\n/workspace\r\n"));
        t.write("stty size\r");
        EXPECT_THAT(read_until(t, "24 80\r\n"), testing::HasSubstr("24 80\r\n")) << "execd's 80 by 24";
        t.resize(100, 30);
        t.write("stty size\r");
        EXPECT_THAT(read_until(t, "30 100\r\n"), testing::HasSubstr("30 100\r\n"));
        t.write("sleep 30; echo never\r");
        std::this_thread::sleep_for(300ms);
        t.write("\x03");
        // (the typed line's echo may come late on a loaded machine: its prompt's "$ " is not the new one)
        std::string interrupted = read_until(t, "^C");
        if (const auto at = interrupted.find("^C"); at == std::string::npos || interrupted.find("$ ", at) == std::string::npos) {
            interrupted += read_until(t, "$ ");  // bash drops what was typed ahead of its prompt
        }
        EXPECT_THAT(interrupted, testing::HasSubstr("^C")) << "the line discipline's interrupt";
        EXPECT_THAT(interrupted, testing::Not(testing::HasSubstr("\rnever\r\n")));
        t.write("echo after\r");  // its output follows the echo and bash's "\e[?2004l\r"
        EXPECT_THAT(read_until(t, "\rafter\r\n"), testing::HasSubstr("\rafter\r\n"));
        seen_up_to = t.offset();
        t.detach();
    }
    std::this_thread::sleep_for(100ms);
    EXPECT_TRUE(sandboxes->terminal_status(box, id).running) << "the shell outlives its holder";
    auto again = sandboxes->attach_terminal(box, id, {.since = 0});
    const auto replay = std::get<terminal_output>(again.read());
    EXPECT_EQ(replay.stream, terminal_stream::replay);
    EXPECT_THAT(replay.bytes, testing::HasSubstr("/workspace")) << "since=0 replays what was written";
    EXPECT_GE(again.offset(), seen_up_to);
    again.write("exit 4\r");
    EXPECT_THAT(read_until(again, "<exit"), testing::HasSubstr("<exit 4>"));
    sandboxes->delete_terminal(box, id);

    const std::string piped = sandboxes->create_terminal(box);
    auto p = sandboxes->attach_terminal(box, piped, {.pipe = true});
    EXPECT_EQ(p.mode(), "pipe");
    p.write("ls /missing; echo out\n");
    std::string out;
    std::string err;
    for (const auto give_up = std::chrono::steady_clock::now() + 10s;
         (out.empty() || err.empty()) && std::chrono::steady_clock::now() < give_up;) {
        const auto piece = std::get<terminal_output>(p.read());
        (piece.stream == terminal_stream::stderr_bytes ? err : out) += piece.bytes;
    }
    EXPECT_EQ(out, "out\n") << "a pipe echoes nothing";
    EXPECT_THAT(err, testing::HasSubstr("/missing")) << "stderr apart";
    sandboxes->delete_terminal(box, piped);
    EXPECT_EQ(sandboxes->exec(box, {.command = "pgrep -c sleep || true"}).stdout_text, "0\n")
        << "a deleted terminal's processes are gone";
}

TEST_F(process_runtime, permissions_search_and_replace_act_on_the_real_tree) {
    const auto id = sandboxes->create({}).id;
    sandboxes->upload(id, "/workspace/a.txt", "one two one");
    sandboxes->upload(id, "/workspace/sub/b.py", "print(1)");
    sandboxes->set_permissions(id, {{"/workspace/a.txt", {.mode = 640}}});
    EXPECT_EQ(sandboxes->exec(id, {.command = "stat -c %a /workspace/a.txt"}).stdout_text, "640\n");
    const auto counts = sandboxes->replace_contents(id, {{"/workspace/a.txt", {.old_text = "one", .new_text = "1"}}});
    EXPECT_EQ(counts.at("/workspace/a.txt"), 2);
    EXPECT_EQ(sandboxes->exec(id, {.command = "cat /workspace/a.txt; echo; stat -c %a /workspace/a.txt"}).stdout_text,
              "1 two 1\n640\n")
        << "replaced in place, its mode kept";
    const auto found = sandboxes->search_files(id, "/workspace", "*.py");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path, "/workspace/sub/b.py");
    sandboxes->set_permissions(id, {{"/workspace/a.txt", {.mode = 600, .owner = "root"}}});
    EXPECT_EQ(sandboxes->file_info(id, {"/workspace/a.txt"}).at("/workspace/a.txt").owner, "root");
    EXPECT_NE(sandboxes->exec(id, {.command = "echo x > /workspace/a.txt"}).exit_code, 0)
        << "root's file, mode 600: the sandbox's user may not write it, as in a real image";
    const auto unknown = sandboxes->try_set_permissions(id, {{"/workspace/a.txt", {.mode = 0, .owner = "bob"}}});
    ASSERT_FALSE(unknown);
    EXPECT_THAT(std::string(unknown.error().reason()), testing::HasSubstr("unknown user bob"));
    (void)sandboxes->exec(id, {.command = "ln -s /etc/passwd /workspace/out"});
    EXPECT_FALSE(sandboxes->try_set_permissions(id, {{"/workspace/out", {.mode = 777}}})) << "no link leads out";
    EXPECT_FALSE(sandboxes->try_replace_contents(id, {{"/workspace/out", {.old_text = "root", .new_text = "x"}}}));
    EXPECT_TRUE(sandboxes->search_files(id, "/workspace", "passwd").empty());
    // A stranger's finding: `/` (and `/workspace/..`) named the tree itself, whose mode on
    // the host keeps other users out.
    const auto tree_mode = [&] { return fs::status(server_tree(id)).permissions(); };
    const auto before = tree_mode();
    for (const char* root : {"/", "/workspace/..", "//"}) {
        const auto r = sandboxes->try_set_permissions(id, {{root, {.mode = 777, .owner = "root"}}});
        ASSERT_FALSE(r) << root;
        EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("operation not permitted")) << root;
    }
    EXPECT_EQ(tree_mode(), before);
}

// A stranger filling the disk: the writable folders are a tmpfs of the server's bound, so
// the host's disk is never the one that fills.
TEST(process_runtime_disk, a_sandbox_fills_its_own_bounded_tree_never_the_hosts_disk) {
    if (const std::string why = sandbox_testing::process_runtime_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (::geteuid() != 0) GTEST_SKIP() << "only a root server can mount a sandbox's tree";
    const fs::path state = fs::temp_directory_path() / ("ngfail-disk-test-" + std::to_string(::getpid()));
    {
        sandbox_testing::embedded_server server({.api_key = "sk-d", .runtime = sandbox_testing::runtime::process,
                                                 .state_dir = state.string(), .sandbox_disk_bytes = 32 << 20});
        client sandboxes({.port = server.port(), .api_key = "sk-d", .timeout = 20s});
        const auto id = sandboxes.create({}).id;
        const auto filled = sandboxes.exec(id, {.command = "head -c 64M /dev/zero > /workspace/big; echo $?; "
                                                           "stat -c %s /workspace/big"});
        EXPECT_THAT(filled.stderr_text, testing::HasSubstr("No space left on device"));
        EXPECT_THAT(filled.stdout_text, testing::StartsWith("1\n"));
        const auto upload = sandboxes.try_upload(id, "/tmp/more", std::string(1 << 20, 'x'));
        ASSERT_FALSE(upload) << "the folders are one bound: /tmp is full too";
        EXPECT_THAT(std::string(upload.error().reason()), testing::HasSubstr("no space left on device"));
        sandboxes.delete_files(id, {"/workspace/big"});
        sandboxes.upload(id, "/tmp/more", std::string(1 << 20, 'x'));
    }
    EXPECT_FALSE(fs::exists(state / ("ngfail-" + std::to_string(::getpid())))) << "unmounted and removed";
    std::ifstream mounts("/proc/mounts");
    const std::string all((std::istreambuf_iterator<char>(mounts)), {});
    EXPECT_THAT(all, testing::Not(testing::HasSubstr(state.string()))) << "no mount left behind";
    std::error_code ignored;
    fs::remove_all(state, ignored);
}

// A stranger's findings: a deep tree of long names made each listed path tens of kilobytes
// (a search of 30,000 entries took 1.8 GB); and every terminal holds descriptors of the
// server's, which 124 sandboxes of 32 terminals took to the process's limit.
TEST_F(process_runtime, listings_are_bounded_by_their_paths_bytes_and_terminals_by_the_server) {
    const auto id = sandboxes->create({}).id;
    const std::string name(250, 'n');
    ASSERT_EQ(sandboxes->exec(id, {.command = "cd /workspace && for i in $(seq 240); do mkdir " + name + " && cd " + name +
                                              "; done && for i in $(seq 1200); do : > f$i; done"})
                  .exit_code,
              0);
    const auto search = sandboxes->try_search_files(id, "/workspace", "nothing-matches");
    ASSERT_FALSE(search);
    EXPECT_THAT(std::string(search.error().reason()), testing::HasSubstr("64 MiB of their paths"));
    const auto listing = sandboxes->try_list_directory(id, "/workspace", 300);
    ASSERT_FALSE(listing);
    EXPECT_THAT(std::string(listing.error().reason()), testing::HasSubstr("64 MiB of their paths"));

    std::size_t made = 0;
    for (int box = 0; box < 9; ++box) {
        const auto holder = sandboxes->create({}).id;
        for (int t = 0; t < 32; ++t) made += sandboxes->try_create_terminal(holder) ? 1 : 0;
    }
    EXPECT_EQ(made, 256u) << "the server's terminals are bounded together";
}

// A stranger's finding: a sandbox of 10m CPU kept busy starves its own supervisor, whose
// answer to a start took seconds, and each start held a worker (and a terminal's, the
// sandbox's lock) while it waited: four attaches froze every other sandbox's requests.
TEST_F(process_runtime, a_starved_sandbox_holds_no_thread_another_needs) {
    if (ngfail_test::instrumented) GTEST_SKIP() << "a sanitized supervisor starves on its own";
    const auto starved = sandboxes->create({.resource_limits = {{"cpu", "10m"}}}).id;
    const auto other = sandboxes->create({}).id;
    (void)sandboxes->exec(starved, {.command = "for i in 1 2 3 4 5 6 7 8; do (while :; do :; done) & done", .background = true});
    std::this_thread::sleep_for(500ms);
    std::vector<std::future<void>> waiting;
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < 4; ++i) {
        clients.push_back(std::make_unique<client>(ngfail::opensandbox::client_options{
            .port = server->port(), .api_key = "sk-p", .timeout = 20s}));
        client& mine = *clients.back();
        waiting.push_back(std::async(std::launch::async, [&mine, starved, i] {
            if (i % 2 == 0) {
                (void)mine.try_exec(starved, {.command = "true", .timeout = 15s});
            } else {
                auto t = mine.try_create_terminal(starved);
                if (t) (void)mine.try_attach_terminal(starved, t.value());  // starts its shell
            }
        }));
    }
    std::this_thread::sleep_for(300ms);
    for (int i = 0; i < 5; ++i) {
        const auto start = std::chrono::steady_clock::now();
        EXPECT_EQ(sandboxes->exec(other, {.command = "echo ok"}).stdout_text, "ok\n");
        (void)sandboxes->file_info(other, {"/workspace"});
        EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "another sandbox waited for the starved one";
    }
    sandboxes->kill(starved);
    for (auto& w : waiting) w.wait();
}

// A cell in context `context` of sandbox `id`.
ngfail::opensandbox::code_result cell(client& sandboxes, const std::string& id, const ngfail::opensandbox::code_context_info& context,
                                      std::string_view code) {
    return sandboxes.run_code(id, {.code = code, .context_id = context.id, .language = context.language});
}

// A cell run on another thread, once it has printed (so surely running): `printed` is false
// when it printed nothing within 20 s.
struct started_cell {
    std::future<ngfail::result<ngfail::opensandbox::code_result>> result;
    bool printed = false;
};
started_cell start_cell(client& sandboxes, const std::string& id, const ngfail::opensandbox::code_context_info& context,
                        std::string code) {
    auto printed = std::make_shared<std::promise<void>>();
    auto once = std::make_shared<std::once_flag>();
    auto first_output = printed->get_future();
    started_cell started{.result = std::async(std::launch::async, [&sandboxes, id, context, code, printed, once] {
        return sandboxes.try_run_code(id, {.code = code, .context_id = context.id, .language = context.language,
                                           .on_stdout = [printed, once](std::string_view) {
                                               std::call_once(*once, [&] { printed->set_value(); });
                                           }});
    })};
    started.printed = first_output.wait_for(20s) == std::future_status::ready;
    return started;
}

TEST_F(process_runtime, code_contexts_run_real_interpreters_that_keep_what_a_cell_defines) {
    const auto id = sandboxes->create({}).id;
    const auto python = sandboxes->create_code_context(id, "python", "/workspace/notebook");
    EXPECT_EQ(python.language, "python");
    const auto first = cell(*sandboxes, id, python, "import os, sys\nx = 6 * 7\nprint('in', os.getcwd())\nprint('warn', file=sys.stderr)");
    EXPECT_EQ(first.stdout_text, "in /workspace/notebook\n") << "made, and the kernel starts there";
    EXPECT_EQ(first.stderr_text, "warn\n");
    EXPECT_EQ(first.execution_count, 1);
    EXPECT_FALSE(first.error);
    EXPECT_TRUE(first.results.empty()) << "a print is no value";
    const auto second = cell(*sandboxes, id, python, "print(x)\nx");
    EXPECT_EQ(second.stdout_text, "42\n");
    EXPECT_EQ(second.results.at("text"), "42") << "the last expression's repr, as a notebook shows it";
    EXPECT_EQ(second.execution_count, 2);
    const auto raised = cell(*sandboxes, id, python, "print('before')\n1 / 0");
    EXPECT_EQ(raised.stdout_text, "before\n");
    ASSERT_TRUE(raised.error);
    EXPECT_EQ(raised.error->name, "ZeroDivisionError");
    EXPECT_EQ(raised.error->value, "division by zero");
    EXPECT_THAT(raised.error->traceback, testing::Contains(testing::HasSubstr("ZeroDivisionError")));
    // A run naming no context runs in the language's own, made on its first use.
    (void)sandboxes->run_code(id, {.code = "y = 1", .language = "python"});
    EXPECT_EQ(sandboxes->run_code(id, {.code = "y + 1", .language = "python"}).results.at("text"), "2");
    EXPECT_EQ(sandboxes->run_code(id, {.code = "'x' in dir()", .language = "python"}).results.at("text"), "False")
        << "its own names, not another context's";

    const auto bash = sandboxes->create_code_context(id, "bash");
    (void)cell(*sandboxes, id, bash, "cd /tmp; unexported=kept");
    EXPECT_EQ(cell(*sandboxes, id, bash, "echo $unexported $(pwd)").stdout_text, "kept /tmp\n");
    const auto failed = cell(*sandboxes, id, bash, "false");
    ASSERT_TRUE(failed.error);
    EXPECT_EQ(failed.error->value, "1") << "bash_kernel's failed cell";

    if (ngfail::opensandbox::testing::detail::has_process_kernel("javascript")) {
        const auto node = sandboxes->create_code_context(id, "javascript");
        (void)cell(*sandboxes, id, node, "const a = 40; let b = 2;");
        EXPECT_EQ(cell(*sandboxes, id, node, "console.log('sum'); a + b").results.at("text"), "42");
        const auto thrown = cell(*sandboxes, id, node, "throw new TypeError('bad')");
        ASSERT_TRUE(thrown.error);
        EXPECT_EQ(thrown.error->name, "TypeError");
        EXPECT_EQ(thrown.error->value, "bad");
    }

    const auto no_kernel = sandboxes->try_create_code_context(id, "java");
    ASSERT_FALSE(no_kernel);
    EXPECT_EQ(no_kernel.error().http_status(), 500);
    EXPECT_THAT(std::string(no_kernel.error().reason()), testing::HasSubstr("no kernel specs found"));
}

TEST_F(process_runtime, an_interrupt_stops_a_cell_and_its_kernel_lives_on) {
    const auto id = sandboxes->create({}).id;
    const auto python = sandboxes->create_code_context(id, "python");
    (void)cell(*sandboxes, id, python, "kept = 'still here'");
    auto running = start_cell(*sandboxes, id, python, "import time\nprint('looping')\nwhile True: time.sleep(0.01)");
    ASSERT_TRUE(running.printed) << "a quiet kernel's output goes out as it comes";
    sandboxes->interrupt_code(id, python.id);
    const auto stopped = running.result.get();
    ASSERT_TRUE(stopped) << stopped.error().what();
    ASSERT_TRUE(stopped.value().error);
    EXPECT_EQ(stopped.value().error->name, "KeyboardInterrupt");
    EXPECT_EQ(cell(*sandboxes, id, python, "kept").results.at("text"), "'still here'");
}

TEST_F(process_runtime, a_kernel_that_dies_ends_its_cell_and_the_next_cell_has_a_new_one) {
    const auto id = sandboxes->create({}).id;
    const auto python = sandboxes->create_code_context(id, "python");
    (void)cell(*sandboxes, id, python, "gone = 1");
    const auto died = cell(*sandboxes, id, python, "import os\nprint('last words', flush=True)\nos._exit(3)");
    EXPECT_EQ(died.stdout_text, "last words\n");
    ASSERT_TRUE(died.error);
    EXPECT_EQ(died.error->name, "DeadKernelError");
    EXPECT_THAT(died.error->value, testing::HasSubstr("exit status 3"));
    const auto fresh = cell(*sandboxes, id, python, "'gone' in dir()");
    EXPECT_EQ(fresh.results.at("text"), "False");
    EXPECT_EQ(fresh.execution_count, 1);
    sandboxes->delete_code_context(id, python.id);
    std::string kernels = "1";
    for (int i = 0; i < 100 && kernels != "0\n"; ++i) {
        kernels = sandboxes->exec(id, {.command = "pgrep -c python3 || true"}).stdout_text;
        if (kernels != "0\n") std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(kernels, "0\n") << "a deleted context's kernel is killed";
}

TEST_F(process_runtime, a_kernel_that_died_idle_is_replaced_and_a_pipe_with_no_reader_never_kills_the_server) {
    const auto id = sandboxes->create({}).id;
    const auto python = sandboxes->create_code_context(id, "python");
    (void)cell(*sandboxes, id, python, "import os\nos.close(3)");  // its driver's next read fails: it dies idle
    std::this_thread::sleep_for(300ms);
    const auto next = cell(*sandboxes, id, python, "6 * 7");
    EXPECT_EQ(next.results.at("text"), "42") << "a new kernel, as Jupyter restarts a dead one";
    EXPECT_EQ(next.execution_count, 1);
    // A terminal whose shell has closed its stdin: what is typed goes to a pipe nobody reads,
    // which killed the whole server (SIGPIPE) before its threads were made with it blocked.
    const std::string piped = sandboxes->create_terminal(id);
    auto t = sandboxes->attach_terminal(id, piped, {.pipe = true});
    t.write("exec 0<&-; echo closed; sleep 30\n");
    EXPECT_THAT(read_until(t, "closed\n"), testing::HasSubstr("closed\n"));
    for (int i = 0; i < 20; ++i) t.write("typed into nothing\n");
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(sandboxes->exec(id, {.command = "echo alive"}).stdout_text, "alive\n");
}

TEST_F(process_runtime, a_cell_that_breaks_its_kernels_loop_or_ignores_an_interrupt_still_ends) {
    const auto id = sandboxes->create({}).id;
    const auto bash = sandboxes->create_code_context(id, "bash");
    for (const std::string_view breaking : {"echo a; continue", "echo b; break", "__ngfail_marker=x; echo c",
                                            "exec 1>&-; echo gone"}) {
        const auto r = sandboxes->try_run_code(id, {.code = breaking, .context_id = bash.id, .language = "bash",
                                                    .total_timeout = 20s});
        ASSERT_TRUE(r) << breaking << ": " << r.error().what();
    }
    const auto python = sandboxes->create_code_context(id, "python");
    const auto redirected = cell(*sandboxes, id, python, "import os, sys\nos.dup2(2, 1)\nprint('to stderr now')\n'done'");
    EXPECT_EQ(redirected.results.at("text"), "'done'") << "the kernel's line does not follow a redirected stdout";
    EXPECT_THAT(redirected.stderr_text, testing::Not(testing::HasSubstr("__ngfail")));
    EXPECT_EQ(cell(*sandboxes, id, python, "import pickle\nclass Point: pass\nlen(pickle.dumps(Point())) > 0").results.at("text"),
              "True")
        << "cells run in the real __main__, as in Jupyter";

    // A loop of builtins in bash traps nothing an interrupt can stop: the kernel is killed.
    const auto spinner = sandboxes->create_code_context(id, "bash");  // (the first has closed its stdout)
    auto spinning = start_cell(*sandboxes, id, spinner, "echo spinning; while :; do :; done");
    ASSERT_TRUE(spinning.printed);
    const auto interrupted_at = std::chrono::steady_clock::now();
    sandboxes->interrupt_code(id, spinner.id);
    const auto stopped = spinning.result.get();
    ASSERT_TRUE(stopped) << stopped.error().what();
    ASSERT_TRUE(stopped.value().error);
    EXPECT_EQ(stopped.value().error->name, "DeadKernelError");
    EXPECT_THAT(stopped.value().error->value, testing::HasSubstr("did not stop at its interrupt"));
    EXPECT_LT(std::chrono::steady_clock::now() - interrupted_at, 10s);
    EXPECT_EQ(cell(*sandboxes, id, spinner, "echo $((40 + 2))").stdout_text, "42\n");
}

TEST_F(process_runtime, deleting_a_busy_context_ends_its_cell_and_kills_its_kernel) {
    const auto id = sandboxes->create({}).id;
    const auto python = sandboxes->create_code_context(id, "python");
    auto ticking = start_cell(*sandboxes, id, python, "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)");
    ASSERT_TRUE(ticking.printed);
    sandboxes->delete_code_context(id, python.id);
    ASSERT_EQ(ticking.result.wait_for(10s), std::future_status::ready) << "the cell ends with its kernel";
    const auto ended = ticking.result.get();
    ASSERT_TRUE(ended) << ended.error().what();
    ASSERT_TRUE(ended.value().error);
    EXPECT_EQ(ended.value().error->name, "DeadKernelError");
    EXPECT_THAT(ended.value().error->value, testing::HasSubstr("context was deleted"));
}

TEST_F(process_runtime, what_it_does_not_serve_yet_is_a_501_naming_it) {
    const auto id = sandboxes->create({}).id;
    const auto r = sandboxes->try_create_snapshot(id);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().http_status(), 501);
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("is not served by the process runtime yet"));
}

TEST_F(process_runtime, a_paused_sandbox_is_frozen_and_a_resumed_one_goes_on) {
    const auto id = sandboxes->create({}).id;
    // A tick a line, every 20 ms, to a file the test reads from the host (execd does not
    // answer while the sandbox is paused).
    (void)sandboxes->exec(id, {.command = "while :; do echo t >> /tmp/ticks; sleep 0.02; done", .background = true});
    const fs::path ticks = state / ("ngfail-" + std::to_string(::getpid())) / id / "tree/tmp/ticks";
    const auto size = [&] {
        std::error_code ec;
        const auto n = fs::file_size(ticks, ec);
        return ec ? std::uintmax_t{0} : n;
    };
    for (int i = 0; i < 250 && size() < 4; ++i) std::this_thread::sleep_for(20ms);
    ASSERT_GE(size(), 4u) << "the command ticks";
    sandboxes->pause(id);
    std::this_thread::sleep_for(100ms);  // a write under way when the freeze came lands
    const auto paused_at = size();
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(size(), paused_at) << "nothing of a paused sandbox runs";
    sandboxes->resume(id);
    for (int i = 0; i < 250 && size() == paused_at; ++i) std::this_thread::sleep_for(20ms);
    EXPECT_GT(size(), paused_at) << "a resumed sandbox goes on where it stood";
    EXPECT_EQ(sandboxes->exec(id, {.command = "echo back"}).stdout_text, "back\n");
    sandboxes->pause(id);
    sandboxes->kill(id);  // a paused sandbox's processes die too (cgroup v1 thaws them to)
    EXPECT_FALSE(sandboxes->try_get(id));
}

TEST_F(process_runtime, metrics_are_the_sandboxs_own_group_and_limits_reach_the_kernel) {
    const auto id = sandboxes->create({.resource_limits = {{"memory", "64Mi"}, {"cpu", "250m"}}}).id;
    const auto idle = sandboxes->get_metrics(id);
    EXPECT_DOUBLE_EQ(idle.mem_total_mib, 64.0) << "its memory limit";
    EXPECT_DOUBLE_EQ(idle.cpu_count, 0.25) << "its CPU limit";
    EXPECT_GT(idle.mem_used_mib, 0.0);
    EXPECT_LT(idle.mem_used_mib, 64.0);
    EXPECT_GT(idle.timestamp_ms, 0);
    // A busy loop of at least a second's wall time: the kernel gives it a quarter of a CPU.
    const auto looped = sandboxes->exec(
        id, {.command = "TIMEFORMAT=%U; time (end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do :; done)"});
    const double cpu_seconds = std::stod(looped.stderr_text);
    EXPECT_LT(cpu_seconds, 0.8) << "1-2 s of wall time; without the limit it would have been all CPU";
    EXPECT_GT(cpu_seconds, 0.1);
    const auto busy = sandboxes->get_metrics(id);
    EXPECT_GT(busy.cpu_used_pct, 20.0) << "a second of a busy loop, against a quarter of a CPU";
    EXPECT_LE(busy.cpu_used_pct, 100.0);
    std::this_thread::sleep_for(300ms);
    EXPECT_LT(sandboxes->get_metrics(id).cpu_used_pct, busy.cpu_used_pct) << "a share since the last sample";
    for (const char* cpu : {"5m", "lots", "-1", "2000"}) {
        const auto refused = sandboxes->try_create({.resource_limits = {{"cpu", cpu}}});
        ASSERT_FALSE(refused) << cpu;
        EXPECT_EQ(refused.error().http_status(), 400) << cpu;
        EXPECT_THAT(std::string(refused.error().reason()), testing::HasSubstr("resourceLimits.cpu")) << cpu;
    }
}

// A stranger's attack (#43): the sandbox held the server's listeners (and answered its API
// requests), its log, the supervisor's control socket, and its blocked SIGTERM.
TEST_F(process_runtime, a_sandbox_holds_nothing_of_the_servers_and_cannot_touch_its_init) {
    const auto id = sandboxes->create({}).id;
    // (the shell's own descriptors, listed by a child: the child's would include its listing)
    EXPECT_EQ(sandboxes->exec(id, {.command = "find /proc/$$/fd -mindepth 1 -printf '%f ' > /tmp/fds; cat /tmp/fds; true"})
                  .stdout_text,
              "0 1 2 \n");
    EXPECT_EQ(sandboxes->exec(id, {.command = "grep SigBlk /proc/$$/status"}).stdout_text,
              "SigBlk:\t0000000000000000\n");
    const auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(sandboxes->exec(id, {.command = "timeout 1 sleep 20; echo $?"}).stdout_text, "124\n");
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << "SIGTERM reaches what it runs";
    // The supervisor is the namespace's init, undumpable: its descriptors are out of reach,
    // and the kernel drops the signals its commands send it.
    EXPECT_NE(sandboxes->exec(id, {.command = "ls /proc/1/fd"}).exit_code, 0);
    (void)sandboxes->exec(id, {.command = "kill -KILL 1; kill -STOP 1"});
    EXPECT_EQ(sandboxes->exec(id, {.command = "echo alive"}).stdout_text, "alive\n");
}

TEST_F(process_runtime, a_fifo_or_a_huge_sparse_file_is_refused_not_waited_for) {
    const auto id = sandboxes->create({}).id;
    (void)sandboxes->exec(id, {.command = "mkfifo /tmp/f; truncate -s 100G /tmp/sparse"});
    const auto started = std::chrono::steady_clock::now();
    const auto fifo = sandboxes->try_download(id, "/tmp/f");
    ASSERT_FALSE(fifo);
    EXPECT_THAT(std::string(fifo.error().reason()), testing::HasSubstr("not a regular file"));
    EXPECT_FALSE(sandboxes->try_upload(id, "/tmp/f", "x")) << "writing one would wait for a reader";
    // A download streams whatever the size: the client's own bound on a body refuses 100 GB
    // at once, and the server, holding a piece at a time, goes on.
    const auto sparse = sandboxes->try_download(id, "/tmp/sparse");
    ASSERT_FALSE(sparse);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    EXPECT_EQ(sandboxes->exec(id, {.command = "echo still"}).stdout_text, "still\n");
}

TEST_F(process_runtime, a_file_past_64_mib_downloads_whole_and_by_range) {
    // Every download takes the same streamed path, which the sanitizers see in the smaller
    // ones; 90 MB through instrumented code was a minute of their CI steps.
    if (ngfail_test::instrumented) GTEST_SKIP() << "90 MB through the sanitizers: the plain trees run it";
    const auto id = sandboxes->create({}).id;
    // 100 MiB of numbered lines, so that a lost or repeated piece shows.
    (void)sandboxes->exec(id, {.command = "seq -w 1 10485760 > /workspace/big.txt"});
    constexpr std::size_t size = std::size_t{10485760} * 9;  // 8 digits and a newline each
    client wide({.port = server->port(), .api_key = "sk-p", .timeout = 60s, .max_body_bytes = size + 1});
    const std::string whole = wide.download(id, "/workspace/big.txt");
    ASSERT_EQ(whole.size(), size);
    EXPECT_EQ(whole.substr(0, 18), "00000001\n00000002\n");
    EXPECT_EQ(whole.substr(size / 2, 9), "05242881\n");
    EXPECT_EQ(whole.substr(size - 9), "10485760\n");
    EXPECT_EQ(wide.download_range(id, "/workspace/big.txt", size - 18), "10485759\n10485760\n");
    // Lines are still read from the file whole, within 64 MiB.
    const auto by_lines = sandboxes->try_read_lines(id, "/workspace/big.txt", 1, 2);
    ASSERT_FALSE(by_lines);
    EXPECT_THAT(std::string(by_lines.error().reason()), testing::HasSubstr("file too large"));
}

TEST_F(process_runtime, a_command_that_prints_without_end_is_bounded_and_still_timed_out) {
    const auto id = sandboxes->create({}).id;
    const auto started = std::chrono::steady_clock::now();
    const auto flood = sandboxes->try_exec(id, {.command = "yes", .timeout = 500ms});
    EXPECT_FALSE(flood) << "killed at its timeout though its pipe is never empty";
    EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);

    const auto background = sandboxes->exec(id, {.command = "yes", .background = true});
    const std::string logs_at =
        "/sandboxes/" + id + "/proxy/44772/command/" + background.execution_id + "/logs?cursor=" + std::to_string(16 << 20);
    for (int i = 0; i < 100 && ngfail_test::call(server->port(), ngfail_test::http::verb::get, logs_at).body.empty(); ++i) {
        std::this_thread::sleep_for(200ms);
    }
    sandboxes->interrupt(id, background.execution_id);
    const auto logs = ngfail_test::call(server->port(), ngfail_test::http::verb::get,
                                        "/sandboxes/" + id + "/proxy/44772/command/" + background.execution_id +
                                            "/logs?cursor=0");
    EXPECT_LE(logs.body.size(), (16u << 20) + 100) << "what a command keeps is bounded";
    EXPECT_THAT(logs.body.substr(logs.body.size() - std::min<std::size_t>(logs.body.size(), 100)),
                testing::HasSubstr("output past 16 MiB is not kept"));
}

TEST_F(process_runtime, a_nul_in_a_command_its_directory_or_its_variables_is_refused) {
    const auto id = sandboxes->create({}).id;
    const std::string base = "/sandboxes/" + id + "/proxy/44772/command";
    for (const char* body : {R"({"command":"echo ran","cwd":"/tmp\u0000echo INJECTED"})",
                             R"({"command":"echo ran","envs":{"A":"b\u0000EVIL=1"}})",
                             R"({"command":"echo one\u0000echo two"})"}) {
        const auto r = ngfail_test::call(server->port(), ngfail_test::http::verb::post, base, body);
        EXPECT_EQ(r.status, 400u) << body;
        EXPECT_THAT(r.body, testing::HasSubstr("may not hold a NUL byte"));
    }
    const std::string execd = "/sandboxes/" + id + "/proxy/44772/session";
    const auto nul_session = ngfail_test::call(server->port(), ngfail_test::http::verb::post, execd, R"({"cwd":"/tmp/a\u0000b"})");
    EXPECT_EQ(nul_session.status, 400u) << nul_session.body;
    const std::string session = sandboxes->create_session(id);
    for (const char* body : {R"({"command":"echo one\u0000echo two"})", R"({"command":"pwd","cwd":"/tmp\u0000x"})"}) {
        const auto r = ngfail_test::call(server->port(), ngfail_test::http::verb::post, execd + "/" + session + "/run", body);
        EXPECT_EQ(r.status, 400u) << body;
        EXPECT_THAT(r.body, testing::HasSubstr("may not hold a NUL byte"));
    }
}

TEST_F(process_runtime, a_memory_limit_too_small_to_run_or_not_a_quantity_is_refused) {
    for (const char* memory : {"0", "4Ki", "15Mi", "lots"}) {
        const auto r = sandboxes->try_create({.resource_limits = {{"memory", memory}}});
        ASSERT_FALSE(r) << memory;
        EXPECT_EQ(r.error().http_status(), 400) << memory;
    }
    EXPECT_TRUE(sandboxes->try_create({.resource_limits = {{"memory", "0.0625Gi"}}})) << "64 MiB, as a decimal";
}

TEST(process_runtime_options, a_host_that_cannot_run_it_says_what_is_missing) {
    const std::string why = sandbox_testing::process_runtime_unavailable();
    if (why.empty()) GTEST_SKIP() << "this host can run process sandboxes";
    EXPECT_THROW(sandbox_testing::embedded_server({.runtime = sandbox_testing::runtime::process}), std::runtime_error);
}

TEST(process_runtime_options, quantities_read_as_kubernetes_writes_them) {
    using ngfail::opensandbox::testing::detail::cpu_quantity;
    using ngfail::opensandbox::testing::detail::memory_quantity;
    EXPECT_EQ(memory_quantity("512Mi"), std::int64_t{512} << 20);
    EXPECT_EQ(memory_quantity("1.5Gi"), std::int64_t{3} << 29);
    EXPECT_EQ(memory_quantity("1G"), 1'000'000'000);
    EXPECT_FALSE(memory_quantity("12 Mi"));
    EXPECT_FALSE(memory_quantity("9999999999Ti")) << "past 2^62";
    EXPECT_EQ(cpu_quantity("500m"), 500);
    EXPECT_EQ(cpu_quantity("2"), 2000);
    EXPECT_EQ(cpu_quantity("0.25"), 250);
    for (const char* refused : {"", "m", "9m", "1001", "-1", "1e3", "one", "1.5.0", "nan", "inf"}) {
        EXPECT_FALSE(cpu_quantity(refused)) << refused;
    }
}

TEST(process_runtime_options, runtimes_have_names) {
    EXPECT_EQ(sandbox_testing::name(sandbox_testing::runtime::process), "process");
    EXPECT_EQ(sandbox_testing::parse_runtime("simulated"), sandbox_testing::runtime::simulated);
    EXPECT_FALSE(sandbox_testing::parse_runtime("docker"));
}

}  // namespace
