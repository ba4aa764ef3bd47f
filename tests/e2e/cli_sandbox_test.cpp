// `ngfail sandbox`, the built binary run as a script runs it, against the embedded server on
// loopback: each action's output and JSON, its exit status (0 done, 1 a classified failure,
// 2 bad arguments), faults printed with kind, delivery and evidence row, and the API key
// never printed.
#include "support/cli_run.hpp"

#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ngfail::kind;
using ngfail::opensandbox::client;
using ngfail::opensandbox::testing::embedded_server;
using ngfail::opensandbox::testing::fault;
using ngfail_test::cli_run;
using testing::HasSubstr;
using testing::Not;
namespace json = boost::json;

constexpr std::string_view key = "sk-cli-SECRET-4242";

// A scratch file of the running test's own (ctest may run the tests side by side).
std::string scratch(const std::string& name) {
    return testing::TempDir() + "cli_sandbox-" + testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + name;
}

std::string temp_file(const std::string& name, const std::string& content) {
    const std::string path = scratch(name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The failure's own event in a failure report (what --json prints on a failure).
json::object failure_event(const cli_run& run) {
    const auto report = json::parse(run.out).as_object();
    const auto& id = report.at("failure_id").as_string();
    return report.at("events").at(id).as_object();
}

// How a run is given its key (as --api-key, or in the environment) and its stdin.
struct how {
    std::string key_option = " --api-key " + std::string(key);
    std::string env{};
    std::string stdin_file{};
};

class cli_sandbox : public testing::Test {
protected:
    void SetUp() override { ::unsetenv("OPEN_SANDBOX_API_KEY"); }  // only what a test passes

    // `ngfail sandbox ACTION …` against the server (its options before the action's own,
    // which may end in a command after `--`).
    [[nodiscard]] cli_run sandbox(const std::string& args, const how& h = {}) const {
        const auto action_end = std::min(args.find(' '), args.size());
        return ngfail_test::run_ngfail(
            "sandbox " + args.substr(0, action_end) + " --server " + url + h.key_option + args.substr(action_end),
            {.stdin_file = h.stdin_file, .limit = 60s, .env = h.env});
    }

    embedded_server server{{.api_key = std::string(key)}};
    std::string url = "http://127.0.0.1:" + std::to_string(server.port());
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
};

// ---- create ---------------------------------------------------------------------------------

TEST_F(cli_sandbox, create_prints_the_new_sandboxs_id_alone_on_stdout) {
    const auto run = sandbox("create --image python:3.12");
    ASSERT_EQ(run.status, 0) << run.err;
    ASSERT_THAT(run.out, testing::EndsWith("\n"));
    const std::string id = run.out.substr(0, run.out.size() - 1);
    EXPECT_EQ(sandboxes.get(id).state, "Running") << "the server has it, ready";
    EXPECT_THAT(run.err, HasSubstr(id + " is Running"));
}

TEST_F(cli_sandbox, create_json_is_the_sandbox_with_its_metadata) {
    const auto run = sandbox("create --json --metadata team=ml --metadata run=7 --metadata team=nlp --timeout 600");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto box = json::parse(run.out).as_object();
    EXPECT_EQ(box.at("state"), "Running");
    EXPECT_EQ(box.at("metadata").at("team"), "nlp") << "a later key wins";
    EXPECT_EQ(box.at("metadata").at("run"), "7");
    const auto seen = sandboxes.get(box.at("id").as_string());
    EXPECT_EQ(seen.metadata.at("team"), "nlp");
    EXPECT_EQ(seen.metadata.at("run"), "7");
}

// ---- exec -----------------------------------------------------------------------------------

TEST_F(cli_sandbox, exec_gives_each_stream_its_own_and_a_nonzero_exit_is_a_result) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("exec " + id + " -- 'echo out; cat /nope; exit 3'");
    EXPECT_EQ(run.status, 0) << "the command ran";
    EXPECT_EQ(run.out, "out\n");
    EXPECT_THAT(run.err, HasSubstr("cat: /nope: No such file or directory\n"));
    EXPECT_THAT(run.err, testing::EndsWith("ngfail sandbox exec: exit code 3\n"));
}

TEST_F(cli_sandbox, exec_json_holds_the_exit_code_and_both_streams) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("exec --json " + id + " --command 'echo out; cat /nope; exit 3'");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto result = json::parse(run.out).as_object();
    EXPECT_EQ(result.at("sandbox_id").as_string(), id);
    EXPECT_EQ(result.at("exit_code"), 3);
    EXPECT_EQ(result.at("stdout"), "out\n");
    EXPECT_EQ(result.at("stderr"), "cat: /nope: No such file or directory\n");
    EXPECT_EQ(result.at("detached"), false);
    EXPECT_FALSE(result.at("execution_id").as_string().empty());
}

// Detached execution reads execd's log, which holds both streams as written.
TEST_F(cli_sandbox, exec_detached_follows_the_command_to_its_end_through_its_log) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("exec --json --detached " + id + " -- 'echo out; cat /nope; exit 3'");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto result = json::parse(run.out).as_object();
    EXPECT_EQ(result.at("detached"), true);
    EXPECT_EQ(result.at("exit_code"), 3);
    EXPECT_EQ(result.at("stdout"), "out\ncat: /nope: No such file or directory\n");
    EXPECT_EQ(result.at("stderr"), "");
    EXPECT_EQ(server.commands_started(), 1u);
}

// Options after `--` are the command's: `--help` there is grep's, not ngfail's.
TEST_F(cli_sandbox, words_after_the_double_dash_are_the_commands_own) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("exec " + id + " -- echo --help --json");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "--help --json\n");
}

TEST_F(cli_sandbox, exec_on_an_unknown_sandbox_prints_kind_delivery_and_evidence_row) {
    const auto run = sandbox("exec sbx-no-such-box -- echo hi");
    EXPECT_EQ(run.status, 1);
    EXPECT_EQ(run.out, "") << "a failure is not a result";
    EXPECT_THAT(run.err, HasSubstr("kind      provider_sandbox_lost"));
    EXPECT_THAT(run.err, HasSubstr("delivery  not_sent"));
    EXPECT_THAT(run.err, HasSubstr("rule      sandbox_lost"));
    EXPECT_THAT(run.err, HasSubstr("provider_sandbox_lost  [http 404, op exec, delivery not_sent]"))
        << "the chain, as `ngfail decode` prints it";

    const auto as_json = sandbox("exec --json sbx-no-such-box -- echo hi");
    EXPECT_EQ(as_json.status, 1);
    const auto event = failure_event(as_json);
    EXPECT_EQ(event.at("failure_kind"), "provider_sandbox_lost");
    EXPECT_EQ(event.at("details").at("delivery"), "not_sent");
    EXPECT_EQ(event.at("details").at("evidence_row"), "sandbox_lost");
    EXPECT_EQ(event.at("details").at("sandbox_id"), "sbx-no-such-box");
}

TEST_F(cli_sandbox, an_oom_kill_is_a_classified_failure_of_the_exec) {
    const std::string id = sandboxes.create({}).id;
    server.inject({.operation = "exec", .what = fault::action::oom_kill});
    const auto run = sandbox("exec --json " + id + " -- python train.py");
    EXPECT_EQ(run.status, 1);
    const auto event = failure_event(run);
    // Kubernetes shows OOMKilled only in a message, never evidence: a kill by signal.
    EXPECT_EQ(event.at("failure_kind"), "provider_command_terminated");
    EXPECT_EQ(event.at("details").at("delivery"), "delivered");
    EXPECT_EQ(event.at("details").at("evidence_row"), "killed_by_signal");
    EXPECT_EQ(event.at("details").at("exit_code"), -1);
}

TEST_F(cli_sandbox, exec_past_its_timeout_is_a_classified_timeout) {
    const std::string id = sandboxes.create({}).id;
    const auto started = std::chrono::steady_clock::now();
    const auto run = sandbox("exec --json --timeout 1 " + id + " -- sleep 30");
    EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
    EXPECT_EQ(run.status, 1) << run.out;
    EXPECT_EQ(failure_event(run).at("failure_kind"), "transport_timeout");
}

// ---- files ----------------------------------------------------------------------------------

TEST_F(cli_sandbox, files_put_ls_get_and_rm_reach_the_sandboxs_files) {
    const std::string id = sandboxes.create({}).id;
    const std::string content = "line one\nline two\n";
    const auto local = temp_file("put.txt", content);

    const auto put = sandbox("files " + id + " put " + local + " /workspace/data/put.txt");
    ASSERT_EQ(put.status, 0) << put.err;
    EXPECT_EQ(sandboxes.download(id, "/workspace/data/put.txt"), content) << "the server holds it";

    const auto ls = sandbox("files " + id + " ls /workspace/data --json");
    ASSERT_EQ(ls.status, 0) << ls.err;
    const auto entries = json::parse(ls.out).as_array();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].at("path"), "/workspace/data/put.txt");
    EXPECT_EQ(entries[0].at("type"), "file");
    EXPECT_EQ(entries[0].at("size"), static_cast<std::int64_t>(content.size()));
    EXPECT_THAT(sandbox("files " + id + " ls /workspace/data").out, testing::EndsWith("\t/workspace/data/put.txt\n"));

    EXPECT_EQ(sandbox("files " + id + " get /workspace/data/put.txt").out, content);
    const std::string copy = scratch("got.txt");
    const auto got = sandbox("files " + id + " get /workspace/data/put.txt --out " + copy + " --json");
    ASSERT_EQ(got.status, 0) << got.err;
    EXPECT_EQ(read_file(copy), content);
    EXPECT_EQ(json::parse(got.out).at("size"), static_cast<std::int64_t>(content.size()));

    ASSERT_EQ(sandbox("files " + id + " rm /workspace/data/put.txt").status, 0);
    const auto gone = sandbox("files --json " + id + " get /workspace/data/put.txt");
    EXPECT_EQ(gone.status, 1);
    EXPECT_EQ(failure_event(gone).at("details").at("operation"), "download");
}

TEST_F(cli_sandbox, files_mkdir_and_rm_recursive_make_and_remove_directories) {
    const std::string id = sandboxes.create({}).id;
    ASSERT_EQ(sandbox("files " + id + " mkdir /workspace/a/b /workspace/c").status, 0);
    sandboxes.upload(id, "/workspace/a/b/f.txt", "x");
    EXPECT_EQ(sandboxes.list_directory(id, "/workspace/c").size(), 0u);
    const auto rm = sandbox("files " + id + " rm --recursive /workspace/a --json");
    ASSERT_EQ(rm.status, 0) << rm.err;
    EXPECT_EQ(json::parse(rm.out).at("removed").at(0), "/workspace/a");
    EXPECT_FALSE(sandboxes.try_file_info(id, {"/workspace/a"}));
}

TEST_F(cli_sandbox, files_takes_each_actions_own_operands_and_options) {
    const std::string id = sandboxes.create({}).id;
    for (const std::string& bad : {"files " + id, "files " + id + " cp a b", "files " + id + " put only-one",
                                   "files " + id + " ls /workspace --out x", "files " + id + " get a b"}) {
        const auto run = sandbox(bad);
        EXPECT_EQ(run.status, 2) << bad;
        EXPECT_EQ(run.out, "") << bad;
        EXPECT_THAT(run.err, testing::StartsWith("ngfail sandbox files")) << bad;
    }
    const auto missing = sandbox("files " + id + " put /nonexistent/file /workspace/x");
    EXPECT_EQ(missing.status, 2);
    EXPECT_THAT(missing.err, HasSubstr("cannot read '/nonexistent/file'"));
}

// ---- terminal -------------------------------------------------------------------------------

TEST_F(cli_sandbox, terminal_types_stdins_lines_and_ends_with_the_shell) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("terminal " + id, {.stdin_file = temp_file("in.txt", "echo hello\nexit 4\n")});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_THAT(run.out, HasSubstr("hello\r\n")) << "the PTY's output";
    EXPECT_THAT(run.err, testing::EndsWith("ngfail sandbox terminal: exit code 4\n"));
}

TEST_F(cli_sandbox, the_end_of_stdin_types_exit) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("terminal " + id, {.stdin_file = temp_file("in.txt", "echo hello\n")});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_THAT(run.out, testing::ContainsRegex("hello\r\n.*exit\r\n")) << "the PTY echoes what was typed";
    EXPECT_THAT(run.err, HasSubstr("ngfail sandbox terminal: exit code "));
}

TEST_F(cli_sandbox, terminal_json_holds_the_output_and_the_terminal_goes_with_its_shell) {
    const std::string id = sandboxes.create({}).id;
    const auto input = temp_file("in.txt", "echo piped\ncat /nope\nexit 5");  // a last line without its newline
    const auto run = sandbox("terminal --json --pipe " + id, {.stdin_file = input});
    ASSERT_EQ(run.status, 0) << run.err;
    const auto result = json::parse(run.out).as_object();
    EXPECT_EQ(result.at("stdout"), "piped\n");
    EXPECT_EQ(result.at("stderr"), "cat: /nope: No such file or directory\n") << "a pipe keeps stderr apart";
    EXPECT_EQ(result.at("exit_code"), 5);
    const auto status = sandboxes.try_terminal_status(id, result.at("terminal_id").as_string());
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code(), kind::session_lost) << "the terminal it made is deleted";
}

TEST_F(cli_sandbox, a_terminal_of_an_unknown_sandbox_is_a_classified_failure) {
    const auto run = sandbox("terminal sbx-no-such-box", {.stdin_file = "/dev/null"});
    EXPECT_EQ(run.status, 1);
    EXPECT_THAT(run.err, HasSubstr("kind      provider_sandbox_lost"));
}

// ---- diagnostics ----------------------------------------------------------------------------

TEST_F(cli_sandbox, diagnostics_print_the_servers_text_as_it_came) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("diagnostics " + id);
    ASSERT_EQ(run.status, 0) << run.err;
    const auto logs = sandboxes.diagnostic_logs(id);
    ASSERT_TRUE(logs.content);
    EXPECT_FALSE(logs.content->empty());
    EXPECT_EQ(run.out, *logs.content) << "the logs, what the client reads";
}

TEST_F(cli_sandbox, diagnostics_json_is_the_descriptor_with_its_text) {
    const std::string id = sandboxes.create({}).id;
    // Its events settled first (a slow machine may record `Running` after the create has
    // returned), so that the CLI's text and the client's are of the same moment.
    for (int i = 0; i < 100 && sandboxes.diagnostic_events(id, "lifecycle").content->find(" Running ") == std::string::npos;
         ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const auto run = sandbox("diagnostics --json " + id + " --kind events --scope lifecycle");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto d = json::parse(run.out).as_object();
    EXPECT_EQ(d.at("sandbox_id").as_string(), id);
    EXPECT_EQ(d.at("kind"), "events");
    EXPECT_EQ(d.at("scope"), "lifecycle");
    EXPECT_EQ(d.at("delivery"), "inline");
    EXPECT_EQ(d.at("truncated"), false);
    EXPECT_TRUE(d.at("warnings").is_array());
    EXPECT_EQ(d.at("content").as_string(), *sandboxes.diagnostic_events(id, "lifecycle").content);
    EXPECT_THAT(std::string(d.at("content").as_string()), HasSubstr("Created Sandbox " + id));
    EXPECT_EQ(sandbox("diagnostics " + id + " --kind metrics").status, 2);
}

TEST(cli_sandbox_diagnostics, a_server_without_the_api_is_a_classified_failure) {
    embedded_server server{{.api_key = std::string(key), .diagnostics = false}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
    const std::string id = sandboxes.create({}).id;
    const auto run = ngfail_test::run_ngfail("sandbox diagnostics --json --server http://127.0.0.1:" +
                                                 std::to_string(server.port()) + " --api-key " + std::string(key) + " " + id,
                                             {.limit = 60s});
    EXPECT_EQ(run.status, 1);
    const auto event = failure_event(run);
    EXPECT_EQ(event.at("http_status"), 501);
    EXPECT_EQ(event.at("failure_kind"), "provider_unavailable") << "a 5xx, as the evidence table reads it";
    EXPECT_EQ(event.at("details").at("operation"), "diagnostic_logs");
    EXPECT_EQ(event.at("details").at("evidence_row"), "server_fault");
}

// A generic 504 on create hides why the sandbox never started; its diagnostics say.
TEST_F(cli_sandbox, a_failed_create_brings_the_servers_diagnostics_around_it) {
    server.inject(fault::pod_ready_timeout(fault::start_cause::quota, 50ms));
    const auto run = sandbox("create");
    EXPECT_EQ(run.status, 1);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, HasSubstr("kind      provider_start_failed"));
    EXPECT_THAT(run.err, HasSubstr("rule      start_failed"));
    EXPECT_THAT(run.err, testing::ContainsRegex("\ndiagnostics\n(  .*\n|\n)*  .*exceeded quota"));

    server.inject(fault::pod_ready_timeout(fault::start_cause::pool, 50ms));
    const auto event = failure_event(sandbox("create --json"));
    EXPECT_EQ(event.at("details").at("evidence_row"), "start_failed") << "the 504's code decides, not the text";
    EXPECT_THAT(std::string(event.at("details").at("diagnostics").as_string()), HasSubstr("no idle sandbox in pool"));

    server.inject(fault::pod_ready_timeout(fault::start_cause::pool, 50ms));
    const auto quiet = failure_event(sandbox("create --json --no-failure-diagnostics"));
    EXPECT_EQ(quiet.at("failure_kind"), "provider_start_failed");
    EXPECT_FALSE(quiet.at("details").as_object().contains("diagnostics"));
}

// ---- kill -----------------------------------------------------------------------------------

TEST_F(cli_sandbox, kill_deletes_the_sandbox_and_one_already_gone_counts_as_killed) {
    const std::string id = sandboxes.create({}).id;
    const auto run = sandbox("kill " + id);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, id + "\n");
    EXPECT_EQ(sandboxes.try_get(id).error().code(), kind::provider_sandbox_lost);

    const auto again = sandbox("kill --json " + id);
    ASSERT_EQ(again.status, 0) << again.err;
    const auto result = json::parse(again.out).as_object();
    EXPECT_EQ(result.at("killed"), true);
    EXPECT_EQ(result.at("already_gone"), true);
    EXPECT_EQ(json::parse(sandbox("kill --json " + sandboxes.create({}).id).out).at("already_gone"), false);
}

TEST_F(cli_sandbox, a_kill_the_server_fails_prints_kind_delivery_and_evidence_row) {
    const std::string id = sandboxes.create({}).id;
    server.inject(fault::http_error("kill", 500, "KUBERNETES::API_ERROR", "the API server failed"));
    const auto run = sandbox("kill " + id);
    EXPECT_EQ(run.status, 1);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, HasSubstr("kind      provider_unavailable"));
    EXPECT_THAT(run.err, HasSubstr("delivery  possibly_delivered"));
    EXPECT_THAT(run.err, HasSubstr("rule      server_fault"));

    server.inject(fault::http_error("kill", 500, "KUBERNETES::API_ERROR", "the API server failed"));
    const auto event = failure_event(sandbox("kill --json " + id));
    EXPECT_EQ(event.at("failure_kind"), "provider_unavailable");
    EXPECT_EQ(event.at("http_status"), 500);
    EXPECT_EQ(event.at("details").at("provider_code"), "KUBERNETES::API_ERROR");
    EXPECT_EQ(event.at("details").at("evidence_row"), "server_fault");
}

// ---- what reaches a script ------------------------------------------------------------------

TEST_F(cli_sandbox, an_unreachable_server_fails_at_once_as_unreachable) {
    const auto run = ngfail_test::run_ngfail("sandbox kill --json sbx-1 --server http://127.0.0.1:1", {.limit = 60s});
    EXPECT_EQ(run.status, 1) << run.err;
    const auto event = failure_event(run);
    EXPECT_EQ(event.at("failure_kind"), "transport_unreachable");
    EXPECT_EQ(event.at("details").at("delivery"), "not_sent");
}

TEST_F(cli_sandbox, the_api_key_is_never_printed) {
    const std::string id = sandboxes.create({}).id;
    const std::string wrong = "sk-WRONG-key-777";
    const how wrong_option{.key_option = " --api-key " + wrong};
    const how wrong_in_env{.key_option = "", .env = "OPEN_SANDBOX_API_KEY=" + wrong};
    const how good_in_env{.key_option = "", .env = "OPEN_SANDBOX_API_KEY=" + std::string(key)};
    std::vector<cli_run> runs;
    for (const std::string& args : std::vector<std::string>{"create", "create --json", "exec " + id + " -- echo hi",
                                                            "files " + id + " ls /workspace", "kill --json sbx-x"}) {
        for (const how& h : {wrong_option, wrong_in_env}) {
            runs.push_back(sandbox(args, h));
            EXPECT_EQ(runs.back().status, 1) << args;
            EXPECT_THAT(runs.back().err + runs.back().out, HasSubstr("provider_credentials_rejected")) << args;
        }
    }
    EXPECT_THAT(runs.back().out, HasSubstr(R"("evidence_row":"credentials_rejected")"));
    EXPECT_THAT(runs.back().out, HasSubstr(R"("delivery":"not_sent")"));
    // A good key through every action, a misspelt option and --help.
    for (const std::string& args :
         std::vector<std::string>{"create --json", "exec --json " + id + " -- echo hi", "exec " + id + " -- exit 2",
                                  "files " + id + " ls /workspace", "kill --json " + id, "exec --help",
                                  "kill --api-kee=" + std::string(key) + " " + id}) {
        for (const how& h : {how{}, good_in_env}) runs.push_back(sandbox(args, h));
    }
    EXPECT_EQ(runs.back().status, 2) << "the misspelt option is refused";
    EXPECT_THAT(runs.back().err, HasSubstr("unknown option '--api-kee'"));
    // Misspelt with one dash, or cut from its option by a blank: refused, never echoed, never
    // sent as a sandbox's id.
    const how no_key{.key_option = ""};
    const std::size_t requests_before = server.requests();
    for (const std::string& args : {"kill -api-key=" + std::string(key), "create -api-key=" + std::string(key),
                                    "kill " + id + " " + std::string(key), "files " + id + " ls / --api-key= " + std::string(key)}) {
        runs.push_back(sandbox(args, no_key));
        EXPECT_EQ(runs.back().status, 2) << args;
    }
    EXPECT_EQ(server.requests(), requests_before) << "nothing was sent";
    for (const cli_run& run : runs) {
        for (const std::string& secret : {std::string(key), wrong}) {
            EXPECT_THAT(run.out, Not(HasSubstr(secret)));
            EXPECT_THAT(run.err, Not(HasSubstr(secret)));
        }
    }
}

TEST_F(cli_sandbox, bad_arguments_exit_2_with_a_message_and_nothing_on_stdout) {
    const std::string id = sandboxes.create({}).id;
    const std::vector<std::string> bad{
        "",                                         // no action
        "frobnicate " + id,                         // an unknown one
        "exec " + id,                               // no command
        "exec " + id + " --command 'echo a' -- echo b",  // two
        "exec --timeout soon " + id + " -- echo a",
        "exec -- echo a",                           // no ID
        "kill",
        "kill " + id + " " + id,
        "create --metadata novalue",
        "create --timeout 0",
        "terminal " + id + " --terminal-id t --cwd /tmp",
        "kill " + id + " -- echo",
    };
    for (const std::string& args : bad) {
        const auto run = sandbox(args);
        EXPECT_EQ(run.status, 2) << args;
        EXPECT_EQ(run.out, "") << args;
        EXPECT_THAT(run.err, testing::StartsWith("ngfail sandbox")) << args;
    }
    const auto no_server = ngfail_test::run_ngfail("sandbox kill " + id);
    EXPECT_EQ(no_server.status, 2);
    EXPECT_THAT(no_server.err, HasSubstr("--server URL is required"));
    EXPECT_EQ(server.commands_started(), 0u) << "nothing ran";
    EXPECT_EQ(sandboxes.get(id).state, "Running") << "nothing was killed";
}

TEST_F(cli_sandbox, what_cannot_be_read_or_written_locally_is_never_a_silent_success) {
    const std::string id = sandboxes.create({}).id;
    sandboxes.upload(id, "/workspace/kept.txt", "kept");
    // A directory to upload, or stdin closed: refused, and the remote file stays as it was.
    for (const how& h : {how{}, how{.stdin_file = "/"}}) {
        const auto run = sandbox("files " + id + " put " + (h.stdin_file.empty() ? "/" : "-") + " /workspace/kept.txt", h);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_THAT(run.err, HasSubstr("cannot read"));
    }
    EXPECT_EQ(sandboxes.download(id, "/workspace/kept.txt"), "kept");
    // Output to a full device: not done, and said so.
    const auto full = ngfail_test::run_ngfail("sandbox files --server " + url + " --api-key " + std::string(key) + " " + id +
                                              " get /workspace/kept.txt > /dev/full");
    EXPECT_EQ(full.status, 2);
    EXPECT_THAT(full.err, HasSubstr("could not be written"));
}

TEST_F(cli_sandbox, a_file_past_the_librarys_8_mib_goes_up_and_down_whole) {
    const std::string id = sandboxes.create({}).id;
    std::string big(10'000'000, 'x');
    for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + i / 4096 % 26);
    const std::string local = temp_file("big-upload.bin", big);
    ASSERT_EQ(sandbox("files " + id + " put " + local + " /workspace/big.bin").status, 0);
    const auto got = sandbox("files " + id + " get /workspace/big.bin");
    ASSERT_EQ(got.status, 0) << got.err;
    EXPECT_TRUE(got.out == big) << got.out.size() << " bytes";
}

TEST_F(cli_sandbox, exec_timeout_bounds_a_stalled_start_too) {
    const std::string id = sandboxes.create({}).id;
    server.inject(fault::stall("exec", 60s));
    const auto started = std::chrono::steady_clock::now();
    const auto run = sandbox("exec --timeout 2 " + id + " -- echo hi");
    EXPECT_EQ(run.status, 1) << run.err;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST_F(cli_sandbox, every_action_is_described_by_help) {
    for (const char* args : {"sandbox --help", "sandbox exec --help", "sandbox files x ls --help"}) {
        const auto run = ngfail_test::run_ngfail(args);
        EXPECT_EQ(run.status, 0) << args;
        EXPECT_THAT(run.out, testing::StartsWith("usage: ngfail sandbox")) << args;
        for (const char* action : {"create", "exec", "files", "terminal", "diagnostics", "kill", "--detached", "Exit status"}) {
            EXPECT_THAT(run.out, HasSubstr(action)) << args;
        }
    }
}

}  // namespace
