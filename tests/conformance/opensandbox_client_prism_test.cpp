// The client against Stoplight Prism mocking the official OpenAPI specs (`prism mock
// --errors`): every request the client sends passes Prism's validation (an invalid one is
// answered 422, a missing execd token 401), and the client reads Prism's spec-generated
// replies, the examples in static mode and generated data in dynamic mode over fixed seeds.
// Prism and the specs come from tests/conformance (or NGFAIL_CONFORMANCE).
#include "support/raw_server.hpp"

#include <ngfail/opensandbox/client.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using ngfail::opensandbox::client;
using ngfail::opensandbox::command;
using ngfail_test::raw_server;

std::string conformance(const std::string& below) {
    const char* dir = std::getenv("NGFAIL_CONFORMANCE");
    return std::string(dir ? dir : NGFAIL_CONFORMANCE_DIR) + "/" + below;
}

unsigned short free_port() {
    raw_server probe([](int, const std::string&) {});
    return probe.port();  // closed again when the probe goes: Prism binds it next
}

// `prism mock` on a spec, started and stopped with the test.
class prism_mock {
public:
    // A port found free may be taken before Prism binds it (tests run in parallel): Prism
    // then exits before it listens, and starts again on another port.
    prism_mock(const std::string& spec, std::optional<int> seed) {
        for (int attempt = 0; attempt < 5; ++attempt) {
            port_ = free_port();
            if (start(spec, seed)) return;
            stop();
        }
        throw std::runtime_error("prism did not start");
    }
    ~prism_mock() { stop(); }
    prism_mock(const prism_mock&) = delete;
    prism_mock& operator=(const prism_mock&) = delete;

    [[nodiscard]] unsigned short port() const { return port_; }

private:
    bool start(const std::string& spec, std::optional<int> seed) {
        std::vector<std::string> args{conformance("node_modules/.bin/prism"), "mock", "--errors", spec,
                                      "-p", std::to_string(port_), "-h", "127.0.0.1"};
        if (seed) args.insert(args.end(), {"--dynamic", "--seed", std::to_string(*seed)});
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error("pipe");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
            throw std::runtime_error("cannot start prism");
        }
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        output_ = ::fdopen(out[0], "r");
        // Ready once it says so; its log goes on being read so that it never blocks on a pipe.
        bool listening = false;
        for (std::array<char, 4096> line{}; !listening && std::fgets(line.data(), line.size(), output_);) {
            listening = std::string_view(line.data()).find("Prism is listening") != std::string_view::npos;
        }
        drain_ = std::thread([f = output_] {
            for (std::array<char, 4096> line{}; std::fgets(line.data(), line.size(), f);) {
            }
        });
        return listening;
    }

    void stop() {
        if (pid_ == 0) return;
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = 0;
        drain_.join();
        std::fclose(output_);
    }

    unsigned short port_ = 0;
    pid_t pid_ = 0;
    std::FILE* output_ = nullptr;
    std::thread drain_;
};

// The lifecycle and diagnostics specs' server URL ends in /v1, which `prism mock` does not
// serve: the same spec with its paths under /v1, as a real server has them.
std::string spec_under_v1(const std::string& name) {
    const std::filesystem::path source = conformance("specs/" + name);
    // One file per process: ctest runs this program's tests in parallel processes.
    const std::filesystem::path copy =
        std::filesystem::path(testing::TempDir()) / ("ngfail-v1-" + std::to_string(::getpid()) + "-" + name);
    std::ifstream in(source);
    std::ofstream out(copy);
    bool in_paths = false;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != ' ') in_paths = line.starts_with("paths:");
        if (in_paths && line.starts_with("  /")) line.insert(2, "/v1");
        out << line << '\n';
    }
    return copy.string();
}

std::string lifecycle_spec_under_v1() { return spec_under_v1("sandbox-lifecycle.yml"); }
std::string execd_spec() { return conformance("specs/execd-api.yaml"); }

// What went wrong, for a failure message.
template <class R>
std::string outcome(const R& r) {
    return r ? std::string("ok") : std::string(r.error().what());
}

// Every lifecycle operation; each must be sent valid and read its reply.
void every_lifecycle_operation(unsigned short port) {
    client c({.port = port, .api_key = "sk-prism"});
    const auto created = c.try_create({.wait_until_ready = false});
    EXPECT_TRUE(created) << outcome(created);
    EXPECT_TRUE(c.try_get("sbx-1")) << outcome(c.try_get("sbx-1"));
    const auto listed = c.try_list({.states = {"Running", "Paused"}, .metadata = {{"team", "rl"}, {"run", "7"}}});
    EXPECT_TRUE(listed) << outcome(listed);
    const auto renewed = c.try_renew("sbx-1", "2030-01-01T00:00:00Z");
    EXPECT_TRUE(renewed) << outcome(renewed);
    for (const bool proxy : {false, true}) {
        client endpoints({.port = port, .api_key = "sk-prism", .use_server_proxy = proxy});
        const auto endpoint = endpoints.try_endpoint("sbx-1");
        EXPECT_TRUE(endpoint) << outcome(endpoint);
    }
    EXPECT_TRUE(c.try_pause("sbx-1")) << outcome(c.try_pause("sbx-1"));
    EXPECT_TRUE(c.try_resume("sbx-1")) << outcome(c.try_resume("sbx-1"));
    const auto patched = c.try_patch_metadata("sbx-1", {{"stage", "eval"}, {"team", std::nullopt}});
    EXPECT_TRUE(patched) << outcome(patched);
    const auto snapshot = c.try_create_snapshot("sbx-1", "checkpoint");
    EXPECT_TRUE(snapshot) << outcome(snapshot);
    EXPECT_TRUE(c.try_get_snapshot("snap-1")) << outcome(c.try_get_snapshot("snap-1"));
    const auto snapshots = c.try_list_snapshots({.sandbox_id = "sbx-1", .states = {"Ready", "Failed"}, .page_size = 50});
    EXPECT_TRUE(snapshots) << outcome(snapshots);
    const auto restored = c.try_create({.entrypoint = {}, .wait_until_ready = false, .snapshot_id = "snap-1"});
    EXPECT_TRUE(restored) << outcome(restored);
    EXPECT_TRUE(c.try_delete_snapshot("snap-1")) << outcome(c.try_delete_snapshot("snap-1"));
    EXPECT_TRUE(c.try_kill("sbx-1")) << outcome(c.try_kill("sbx-1"));
}

// A lifecycle server that sends every sandbox to execd's mock, with an access token.
raw_server endpoint_to(unsigned short execd_port, bool with_token = true) {
    return raw_server([execd_port, with_token](int fd, const std::string&) {
        const std::string headers = with_token ? R"({"X-EXECD-ACCESS-TOKEN":"tok-1"})" : "{}";
        raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(execd_port) +
                                                                 R"(","headers":)" + headers + "}"));
    });
}

// Every execd operation; each must be sent valid and read its reply. Prism cannot make an
// event stream (it answers 500 "Cannot serialise complex objects as text"), so for `exec`
// only the request's validity is checked: not a 4xx.
void every_execd_operation(unsigned short execd_port) {
    raw_server lifecycle = endpoint_to(execd_port);
    client c({.port = lifecycle.port()});
    EXPECT_TRUE(c.try_ping("sbx-1")) << outcome(c.try_ping("sbx-1"));
    const auto status = c.try_exec_status("sbx-1", "cmd-1");
    EXPECT_TRUE(status || status.error().code() == ngfail::kind::provider_command_terminated) << outcome(status);
    const auto logs = c.try_exec_logs("sbx-1", "cmd-1", 0);
    EXPECT_TRUE(logs) << outcome(logs);
    EXPECT_TRUE(c.try_interrupt("sbx-1", "cmd-1")) << outcome(c.try_interrupt("sbx-1", "cmd-1"));
    const auto uploaded = c.try_upload("sbx-1", "/tmp/a.txt", "bytes");
    EXPECT_TRUE(uploaded) << outcome(uploaded);
    const auto downloaded = c.try_download("sbx-1", "/tmp/a.txt");
    EXPECT_TRUE(downloaded) << outcome(downloaded);
    const auto ranged = c.try_download_range("sbx-1", "/tmp/a.txt", 0, 9);
    EXPECT_TRUE(ranged) << outcome(ranged);
    const auto lines = c.try_read_lines("sbx-1", "/tmp/a.txt", 2, 10);
    EXPECT_TRUE(lines) << outcome(lines);
    const auto info = c.try_file_info("sbx-1", {"/tmp/a.txt", "/tmp"});
    EXPECT_TRUE(info) << outcome(info);
    EXPECT_TRUE(c.try_delete_files("sbx-1", {"/tmp/a.txt"})) << outcome(c.try_delete_files("sbx-1", {"/tmp/a.txt"}));
    const auto listed = c.try_list_directory("sbx-1", "/tmp", 2);
    EXPECT_TRUE(listed) << outcome(listed);
    const auto made = c.try_create_directories("sbx-1", {"/tmp/d/e"}, 755);
    EXPECT_TRUE(made) << outcome(made);
    const auto removed = c.try_delete_directories("sbx-1", {"/tmp/d"});
    EXPECT_TRUE(removed) << outcome(removed);
    const auto moved = c.try_move_files("sbx-1", {{.src = "/tmp/a.txt", .dest = "/tmp/b.txt"}});
    EXPECT_TRUE(moved) << outcome(moved);
    const auto permitted = c.try_set_permissions("sbx-1", {{"/tmp/b.txt", {.mode = 644, .owner = "root"}}});
    EXPECT_TRUE(permitted) << outcome(permitted);
    const auto searched = c.try_search_files("sbx-1", "/tmp", "*.txt");
    EXPECT_TRUE(searched) << outcome(searched);
    const auto replaced = c.try_replace_contents("sbx-1", {{"/tmp/b.txt", {.old_text = "a", .new_text = "b"}}});
    EXPECT_TRUE(replaced) << outcome(replaced);
    const auto metrics = c.try_get_metrics("sbx-1");
    EXPECT_TRUE(metrics) << outcome(metrics);
    // The metrics watch streams as exec does: Prism checks its request, and either serves its
    // example as the stream or answers 500 for a stream it cannot make.
    const auto watched = c.try_watch_metrics("sbx-1", [](const ngfail::opensandbox::metrics_sample&) { return false; });
    if (!watched) {
        EXPECT_EQ(watched.error().http_status(), 500) << watched.error().what();
        EXPECT_EQ(watched.error().code(), ngfail::kind::provider_unavailable) << watched.error().what();
    }
    const auto session = c.try_create_session("sbx-1", "/tmp");
    EXPECT_TRUE(session) << outcome(session);
    EXPECT_TRUE(c.try_delete_session("sbx-1", "session-1")) << outcome(c.try_delete_session("sbx-1", "session-1"));
    for (const bool background : {false, true}) {
        const command cmd{.command = "ls -la", .cwd = "/tmp", .timeout = 5s, .envs = {{"A", "1"}},
                          .background = background};
        const auto ran = c.try_exec("sbx-1", cmd);
        if (!ran) {
            // A request Prism finds invalid is a 422; a valid one gets Prism's 500 for the
            // stream it cannot serialise. Nothing else (no transport failure) passes.
            EXPECT_EQ(ran.error().http_status(), 500) << ran.error().what();
            EXPECT_EQ(ran.error().code(), ngfail::kind::provider_unavailable) << ran.error().what();
        }
    }
    const auto context = c.try_create_code_context("sbx-1", "python", "/tmp");
    EXPECT_TRUE(context) << outcome(context);
    const auto got_context = c.try_get_code_context("sbx-1", "session-abc123");
    EXPECT_TRUE(got_context) << outcome(got_context);
    const auto contexts = c.try_list_code_contexts("sbx-1", "python");
    EXPECT_TRUE(contexts) << outcome(contexts);
    const auto deleted_context = c.try_delete_code_context("sbx-1", "session-abc123");
    EXPECT_TRUE(deleted_context) << outcome(deleted_context);
    const auto deleted_contexts = c.try_delete_code_contexts("sbx-1", "python");
    EXPECT_TRUE(deleted_contexts) << outcome(deleted_contexts);
    const auto interrupted = c.try_interrupt_code("sbx-1", "session-abc123");
    EXPECT_TRUE(interrupted) << outcome(interrupted);
    // A code run streams as exec does: the same check of its request.
    const auto code = c.try_run_code("sbx-1", {.code = "print(1)", .context_id = "session-abc123", .language = "python"});
    if (!code) {
        EXPECT_EQ(code.error().http_status(), 500) << code.error().what();
        EXPECT_EQ(code.error().code(), ngfail::kind::provider_unavailable) << code.error().what();
    }
    // A session run streams as exec does: the same check of its request.
    const auto in_session = c.try_run_in_session("sbx-1", "session-1", {.command = "ls", .cwd = "/tmp", .timeout = 5s});
    if (!in_session) {
        EXPECT_EQ(in_session.error().http_status(), 500) << in_session.error().what();
        EXPECT_EQ(in_session.error().code(), ngfail::kind::provider_unavailable) << in_session.error().what();
    }
}

// Both diagnostics routes, in a scope the spec names; each must be sent valid and read.
void every_diagnostics_operation(unsigned short port) {
    client c({.port = port, .api_key = "sk-prism"});
    const auto logs = c.try_diagnostic_logs("sbx-1", "container");
    ASSERT_TRUE(logs) << outcome(logs);
    EXPECT_TRUE(logs.value().delivery == "inline" || logs.value().delivery == "url") << logs.value().delivery;
    const auto events = c.try_diagnostic_events("sbx-1");
    ASSERT_TRUE(events) << outcome(events);
    EXPECT_TRUE(events.value().kind == "logs" || events.value().kind == "events") << events.value().kind;
}

struct prism_client : testing::TestWithParam<std::optional<int>> {};

TEST_P(prism_client, diagnostics_requests_are_valid_and_replies_are_read) {
    const prism_mock prism(spec_under_v1("diagnostic-api.yml"), GetParam());
    every_diagnostics_operation(prism.port());
}

TEST_P(prism_client, lifecycle_requests_are_valid_and_replies_are_read) {
    const prism_mock prism(lifecycle_spec_under_v1(), GetParam());
    every_lifecycle_operation(prism.port());
}

TEST_P(prism_client, execd_requests_are_valid_and_replies_are_read) {
    const prism_mock prism(execd_spec(), GetParam());
    every_execd_operation(prism.port());
}

INSTANTIATE_TEST_SUITE_P(static_and_seeded, prism_client, testing::Values(std::nullopt, 1, 2, 3),
                         [](const auto& info) {
                             return info.param ? "seed_" + std::to_string(*info.param) : std::string("examples");
                         });

// The spec gives its endpoint example in prose, so Prism makes the schema's placeholder, a
// bare host; `endpoints.every_form_the_spec_allows_is_read` reads the prose example.
TEST(prism_client_static, the_endpoint_prism_makes_is_read) {
    const prism_mock prism(lifecycle_spec_under_v1(), std::nullopt);
    client c({.port = prism.port(), .api_key = "sk-prism"});
    const auto endpoint = c.try_endpoint("sbx-1");
    ASSERT_TRUE(endpoint) << outcome(endpoint);
    EXPECT_EQ(endpoint.value().endpoint, "string");
}

TEST(prism_client_static, the_endpoints_token_is_what_execd_requires) {
    const prism_mock prism(execd_spec(), std::nullopt);
    raw_server tokenless = endpoint_to(prism.port(), /*with_token=*/false);
    client c({.port = tokenless.port()});
    const auto r = c.try_ping("sbx-1");
    ASSERT_FALSE(r) << "Prism takes no request to execd without X-EXECD-ACCESS-TOKEN";
    EXPECT_EQ(r.error().http_status(), 401);
}

}  // namespace
