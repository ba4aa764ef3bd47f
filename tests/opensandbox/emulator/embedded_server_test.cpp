// The emulator on its own, over real loopback sockets: each backend profile and named fault
// answers with the shapes the reference notes record for real deployments.
#include "support/emulator_calls.hpp"
#include "support/peak_memory.hpp"
#include "support/raw_client.hpp"
#include "support/test_ca.hpp"

#include <ngfail/event_id.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <ngfail/opensandbox/operation.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <thread>

namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using namespace std::chrono_literals;
using ngfail::opensandbox::testing::backend;
using ngfail::opensandbox::testing::embedded_server;
using ngfail::opensandbox::testing::fault;
using ngfail::opensandbox::testing::parse_fault;
using action = fault::action;
using testing::HasSubstr;

using ngfail_test::call;
using ngfail_test::create;
using ngfail_test::reply;

json::object status_of(const embedded_server& s, const std::string& id) {
    return call(s.port(), http::verb::get, "/v1/sandboxes/" + id).object().at("status").as_object();
}

reply exec(const embedded_server& s, const std::string& id, const std::string& command) {
    return call(s.port(), http::verb::post, "/sandboxes/" + id + "/proxy/44772/command",
                R"({"command":")" + command + R"("})");
}

// ---- what every reply carries ----------------------------------------------------------------

TEST(embedded_server, every_reply_has_a_uuid_request_id) {
    embedded_server s;
    const std::string id = create(s);
    for (const reply& r : {call(s.port(), http::verb::get, "/v1/sandboxes/" + id),
                           call(s.port(), http::verb::get, "/v1/sandboxes/missing"),
                           call(s.port(), http::verb::get, "/v1/sandboxes"),
                           call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/ping")}) {
        const auto request_id = std::string(r.headers["X-Request-ID"]);
        EXPECT_TRUE(ngfail::parse_event_id(request_id)) << "'" << request_id << "' is not a UUID";
    }
}

TEST(embedded_server, a_sandbox_is_pending_then_running_and_execd_answers_only_then) {
    embedded_server s({.pending_for = 300ms});
    const std::string id = create(s);
    EXPECT_EQ(status_of(s, id).at("state"), "Pending");
    const auto early = call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/ping");
    EXPECT_EQ(early.status, 502u);
    EXPECT_EQ(early.object().at("code"), "BACKEND_CONNECTION_FAILED");
    // Running once 300 ms have passed: polled, since a loaded machine may run this late.
    for (int i = 0; i < 100 && status_of(s, id).at("state") != "Running"; ++i) std::this_thread::sleep_for(50ms);
    EXPECT_EQ(status_of(s, id).at("state"), "Running");
    EXPECT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/ping").status, 200u);
}

// The simulated shell through execd's session routes: quotes are removed as bash removes
// them, and a `cd` into nothing fails with bash's status and leaves the directory.
TEST(embedded_server, a_session_runs_bash_builtins_as_bash_does) {
    embedded_server s;
    const std::string execd = "/sandboxes/" + create(s) + "/proxy/44772";
    const auto session = call(s.port(), http::verb::post, execd + "/session", R"({"cwd":"/tmp"})");
    ASSERT_EQ(session.status, 200u) << session.body;
    const std::string run = execd + "/session/" + std::string(session.object().at("session_id").as_string()) + "/run";
    const auto in_session = [&](const std::string& command) {
        return call(s.port(), http::verb::post, run, json::serialize(json::object{{"command", command}}));
    };
    EXPECT_EQ(in_session(R"(export V="x")").status, 200u);
    EXPECT_THAT(in_session("echo $V").body, HasSubstr(R"("text":"x\n")"));
    const reply missing = in_session("cd /no/such");
    EXPECT_THAT(missing.body, HasSubstr("bash: cd: /no/such: No such file or directory"));
    EXPECT_THAT(missing.body, HasSubstr(R"("evalue":"1")")) << "status 1, as execd reports a failed command";
    EXPECT_THAT(in_session("pwd").body, HasSubstr(R"("text":"/tmp\n")"));
}

// The execd hook (what `ngfail serve --otlp` exports) names requests as execd's own
// telemetry does: Gin's route paths, "unknown" for no route, a token's refusal too, and the
// execution and filesystem metrics' operation names and results.
TEST(embedded_server, execd_requests_are_reported_with_execds_own_names) {
    struct seen {
        std::string method, route, operation, metric_operation, result;
        int status;
    };
    std::mutex lock;
    std::vector<seen> requests;
    embedded_server s({.on_execd_request = [&](const ngfail::opensandbox::testing::execd_request_seen& r) {
        const std::scoped_lock hold(lock);
        requests.push_back({std::string(r.method), std::string(r.route), std::string(r.operation),
                            std::string(r.metric_operation), std::string(r.result), r.status});
    }});
    const std::string id = create(s);
    const std::string execd = "/sandboxes/" + id + "/proxy/44772";
    ASSERT_EQ(exec(s, id, "echo hi").status, 200u);
    const reply failed = exec(s, id, "exit 3");
    ASSERT_EQ(failed.status, 200u);
    ASSERT_EQ(call(s.port(), http::verb::get, execd + "/files/info?path=/tmp").status, 200u);
    ASSERT_EQ(call(s.port(), http::verb::get, execd + "/files/info?path=/no/such").status, 404u);
    ASSERT_EQ(call(s.port(), http::verb::get, execd + "/command/status/nothing").status, 404u);
    ASSERT_EQ(call(s.port(), http::verb::get, execd + "/no/such/route").status, 404u);
    // A method HTTP does not define is "_OTHER": a stranger's inventions open no series of their own.
    const std::string brewed = ngfail_test::exchange_raw(
        s.port(), "BREW " + execd + "/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 2s, false, "\r\n\r\n");
    ASSERT_TRUE(brewed.starts_with("HTTP/1.1 404")) << brewed;
    // A refused token is execd's answer; a port nothing listens on is the proxy's, unseen by execd.
    const std::string secure = create(s, R"(,"secureAccess":true)");
    ASSERT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + secure + "/proxy/44772/ping").status, 401u);
    ASSERT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/8080/ping").status, 502u);
    // A refused token on a file route: execd's file handler never ran, so no file operation.
    ASSERT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + secure + "/proxy/44772/files/info?path=/tmp").status, 401u);
    // A background command is complete for execd once it has started; a run that cannot start
    // (no such session) is a failure.
    const reply background = call(s.port(), http::verb::post, execd + "/command", R"({"command":"sleep 0","background":true})");
    ASSERT_EQ(background.status, 200u);
    EXPECT_THAT(background.body, testing::HasSubstr(R"("type":"execution_complete")")) << "execd's stream says so too";
    ASSERT_EQ(call(s.port(), http::verb::post, execd + "/session/nosuch/run", R"({"command":"true"})").status, 500u);
    // The proxy's bare 502 for a sandbox an OOM kill ended is not execd's.
    s.inject({.operation = "file_info", .what = action::oom_kill, .shown_as = fault::surface::bare_502});
    ASSERT_EQ(call(s.port(), http::verb::get, execd + "/files/info?path=/tmp").status, 502u);

    // The hook runs after each reply is written: the last request's report may trail its reply.
    const auto reported = [&] {
        const std::scoped_lock hold(lock);
        return requests.size();
    };
    for (int i = 0; i < 200 && reported() < 11; ++i) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(50ms);  // and nothing more comes
    const std::scoped_lock hold(lock);
    ASSERT_EQ(requests.size(), 11u);
    const auto with_status = [&](int status) {
        return std::count_if(requests.begin(), requests.end(), [&](const seen& r) { return r.status == status; });
    };
    const auto with = [&](std::string_view route, int status, std::string_view result) {
        return std::count_if(requests.begin(), requests.end(), [&](const seen& r) {
            return r.route == route && r.status == status && r.result == result;
        });
    };
    EXPECT_EQ(with("/command", 200, "success"), 2);
    EXPECT_EQ(with("/command", 200, "failure"), 1) << "a command's non-zero exit is execd's OnExecuteError";
    EXPECT_EQ(with("/files/info", 200, "success"), 1);
    EXPECT_EQ(with("/files/info", 404, "failure"), 1);
    EXPECT_EQ(with("/command/status/:id", 404, ""), 1);
    EXPECT_EQ(with("unknown", 404, ""), 2);
    EXPECT_EQ(std::count_if(requests.begin(), requests.end(), [](const seen& r) { return r.method == "_OTHER"; }), 1);
    EXPECT_EQ(std::count_if(requests.begin(), requests.end(), [](const seen& r) { return r.method == "BREW"; }), 0);
    EXPECT_EQ(with("/ping", 401, ""), 1);
    EXPECT_EQ(with("/files/info", 401, ""), 1);
    EXPECT_EQ(with("/session/:sessionId/run", 500, "failure"), 1);
    EXPECT_EQ(with_status(502), 0);
    for (const seen& r : requests) {
        const std::map<std::string, std::string> metric_name{
            {"/command", "run_command"}, {"/files/info", "info"}, {"/session/:sessionId/run", "run_in_session"}};
        EXPECT_EQ(r.metric_operation, metric_name.contains(r.route) ? metric_name.at(r.route) : "") << r.route;
        EXPECT_EQ(r.operation.empty(), r.route == "unknown") << r.route;
        EXPECT_TRUE(r.method == "GET" || r.method == "POST" || r.method == "_OTHER") << r.method;
    }
}

// A no_terminal_event fault withholds a run's last event however the run ends: a background
// start's `execution_complete` too (the fault is used, not lost), and a code run's.
TEST(embedded_server, no_terminal_event_withholds_a_background_starts_last_event_too) {
    embedded_server s;
    const std::string id = create(s);
    const std::string execd = "/sandboxes/" + id + "/proxy/44772";
    s.inject(fault::exec(action::no_terminal_event));
    const reply background = call(s.port(), http::verb::post, execd + "/command", R"({"command":"true","background":true})");
    ASSERT_EQ(background.status, 200u);
    EXPECT_THAT(background.body, HasSubstr(R"("type":"init")"));
    EXPECT_THAT(background.body, testing::Not(HasSubstr("execution_complete")));
    const reply next = call(s.port(), http::verb::post, execd + "/command", R"({"command":"true"})");
    EXPECT_THAT(next.body, HasSubstr("execution_complete")) << "one fault, one run";
    s.inject({.operation = "run_code", .what = action::no_terminal_event});
    const reply code = call(s.port(), http::verb::post, execd + "/code",
                            R"({"code":"1 + 1","context":{"language":"python"}})");
    ASSERT_EQ(code.status, 200u);
    EXPECT_THAT(code.body, HasSubstr(R"("type":"result")"));
    EXPECT_THAT(code.body, testing::Not(HasSubstr("execution_complete")));
}

// As the server's snapshot service: 202 Creating with a Location, Ready once captured;
// neither deleted nor restored before; newest first; a bounded number kept.
TEST(embedded_server, a_snapshot_is_creating_then_ready_and_only_then_restored_or_deleted) {
    embedded_server s({.pending_for = 300ms, .max_snapshots = 2});
    const std::string id = create(s);
    const auto early = call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/snapshots");
    EXPECT_EQ(early.status, 409u) << "a Pending sandbox: " << early.body;
    EXPECT_EQ(early.object().at("code"), "SNAPSHOT::INVALID_SOURCE_STATE");
    for (int i = 0; i < 100 && status_of(s, id).at("state") != "Running"; ++i) std::this_thread::sleep_for(50ms);

    const auto taken = call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/snapshots", R"({"name":"one"})");
    ASSERT_EQ(taken.status, 202u) << taken.body;
    const std::string snapshot(taken.object().at("id").as_string());
    EXPECT_THAT(std::string(taken.headers[http::field::location]), testing::EndsWith(":" + std::to_string(s.port()) + "/v1/snapshots/" + snapshot));
    EXPECT_EQ(taken.object().at("status").at("state"), "Creating");
    EXPECT_EQ(taken.object().at("status").at("reason"), "snapshot_accepted");

    const auto deleting = call(s.port(), http::verb::delete_, "/v1/snapshots/" + snapshot);
    EXPECT_EQ(deleting.status, 409u);
    EXPECT_EQ(deleting.object().at("code"), "SNAPSHOT::INVALID_STATE");
    const auto restoring = call(s.port(), http::verb::post, "/v1/sandboxes", R"({"snapshotId":")" + snapshot + R"("})");
    EXPECT_EQ(restoring.status, 409u);
    EXPECT_EQ(restoring.object().at("code"), "SNAPSHOT::NOT_READY");

    const auto second = call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/snapshots");
    EXPECT_EQ(second.status, 202u) << "an empty body is no name";
    EXPECT_FALSE(second.object().contains("name"));
    const auto third = call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/snapshots");
    EXPECT_EQ(third.status, 409u) << "two kept at most";
    EXPECT_EQ(third.object().at("code"), "SNAPSHOT::LIMIT_EXCEEDED");
    EXPECT_EQ(call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/snapshots", R"({"name":""})").status, 400u);
    EXPECT_EQ(call(s.port(), http::verb::get, "/v1/snapshots?pageSize=201").status, 400u);

    const auto state_of = [&] {
        return std::string(call(s.port(), http::verb::get, "/v1/snapshots/" + snapshot).object().at("status").at("state").as_string());
    };
    for (int i = 0; i < 100 && state_of() != "Ready"; ++i) std::this_thread::sleep_for(50ms);
    EXPECT_EQ(state_of(), "Ready");
    const auto listed = call(s.port(), http::verb::get, "/v1/snapshots?sandboxId=" + id).object();
    ASSERT_EQ(listed.at("items").as_array().size(), 2u);
    EXPECT_EQ(listed.at("items").as_array()[1].at("id").as_string(), snapshot) << "newest first";
    EXPECT_EQ(call(s.port(), http::verb::get, "/v1/snapshots?state=ready").object().at("items").as_array().size(), 0u)
        << "states as written";

    const auto restored = call(s.port(), http::verb::post, "/v1/sandboxes", R"({"snapshotId":")" + snapshot + R"("})");
    ASSERT_EQ(restored.status, 202u) << restored.body;
    EXPECT_FALSE(restored.object().contains("snapshotId")) << "the create reply carries no startup source";
    const auto restored_sandbox =
        call(s.port(), http::verb::get, "/v1/sandboxes/" + std::string(restored.object().at("id").as_string())).object();
    EXPECT_EQ(restored_sandbox.at("snapshotId").as_string(), snapshot);
    EXPECT_EQ(restored_sandbox.at("image").at("uri").as_string(), "opensandbox-snapshots:" + snapshot);
    EXPECT_EQ(call(s.port(), http::verb::delete_, "/v1/snapshots/" + snapshot).status, 204u);
    EXPECT_EQ(call(s.port(), http::verb::get, "/v1/snapshots/" + snapshot).object().at("code"), "SNAPSHOT::NOT_FOUND");
}

TEST(embedded_server, a_kubernetes_pause_and_resume_pass_through_pausing_and_resuming) {
    embedded_server s({.transition_for = 2s});  // long enough for the checks on a loaded machine
    const std::string id = create(s);
    const std::string lifecycle = "/v1/sandboxes/" + id;
    const std::string ping = "/sandboxes/" + id + "/proxy/44772/ping";
    const auto wait_for = [&](const char* state) {
        for (int i = 0; i < 200 && status_of(s, id).at("state") != json::value(state); ++i) std::this_thread::sleep_for(50ms);
        return status_of(s, id).at("state") == json::value(state);
    };
    ASSERT_EQ(call(s.port(), http::verb::post, lifecycle + "/pause").status, 202u);
    EXPECT_EQ(status_of(s, id).at("state"), "Pausing");
    EXPECT_EQ(status_of(s, id).at("reason"), "PAUSING");
    const auto again = call(s.port(), http::verb::post, lifecycle + "/resume");
    EXPECT_EQ(again.status, 409u);
    EXPECT_THAT(again.body, HasSubstr("Cannot resume: operation in progress (phase=Pausing)"));
    ASSERT_TRUE(wait_for("Paused"));
    ASSERT_EQ(call(s.port(), http::verb::post, lifecycle + "/resume").status, 202u);
    EXPECT_EQ(status_of(s, id).at("state"), "Resuming");
    EXPECT_EQ(call(s.port(), http::verb::get, ping).status, 502u) << "execd is not back yet";
    ASSERT_TRUE(wait_for("Running"));
    EXPECT_EQ(call(s.port(), http::verb::get, ping).status, 200u);
}

TEST(embedded_server, a_docker_pause_is_immediate) {
    embedded_server s({.backend = backend::docker, .transition_for = 60s});
    const std::string id = create(s);
    ASSERT_EQ(call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/pause").status, 202u);
    EXPECT_EQ(status_of(s, id).at("state"), "Paused");
}

// The port of a sandbox's direct endpoint ("127.0.0.1:PORT/sandboxes/…").
unsigned short direct_port_of(const embedded_server& s, const std::string& id) {
    const auto endpoint = call(s.port(), http::verb::get, "/v1/sandboxes/" + id + "/endpoints/44772").object();
    const std::string text(endpoint.at("endpoint").as_string());
    const auto colon = text.find(':');
    return static_cast<unsigned short>(std::stoi(text.substr(colon + 1, text.find('/') - colon - 1)));
}

// Whether anything listens on the port: a refused connection says nothing does.
bool refused(unsigned short port) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    boost::system::error_code ec;
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
    return ec == boost::asio::error::connection_refused;
}

TEST(embedded_server, use_server_proxy_chooses_the_proxy_or_a_direct_endpoint_that_both_serve_execd) {
    embedded_server s;
    const std::string id = create(s);
    const auto direct = call(s.port(), http::verb::get, "/v1/sandboxes/" + id + "/endpoints/44772").object();
    const unsigned short own = direct_port_of(s, id);
    EXPECT_NE(own, s.port());
    EXPECT_NE(own, s.direct_port()) << "a running sandbox has an address of its own, as a pod has its IP";
    EXPECT_EQ(direct.at("endpoint"),
              json::value("127.0.0.1:" + std::to_string(own) + "/sandboxes/" + id + "/port/44772"));
    EXPECT_EQ(call(own, http::verb::get, "/sandboxes/" + id + "/port/44772/ping").status, 200u);
    const auto proxied =
        call(s.port(), http::verb::get, "/v1/sandboxes/" + id + "/endpoints/44772?use_server_proxy=true").object();
    EXPECT_EQ(proxied.at("endpoint"),
              json::value("127.0.0.1:" + std::to_string(s.port()) + "/sandboxes/" + id + "/proxy/44772"));
    EXPECT_EQ(call(s.direct_port(), http::verb::get, "/sandboxes/" + id + "/port/44772/ping").status, 200u);
    EXPECT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/ping").status, 200u);
}

TEST(embedded_server, a_sandboxs_own_address_refuses_connections_while_it_does_not_run) {
    embedded_server s;
    const std::string id = create(s);
    const std::string other = create(s);
    const unsigned short own = direct_port_of(s, id);
    EXPECT_EQ(direct_port_of(s, id), own) << "the address stays while the sandbox runs";
    EXPECT_EQ(call(own, http::verb::get, "/sandboxes/" + other + "/port/44772/ping").status, 404u)
        << "a sandbox's address reaches that sandbox only";
    ASSERT_EQ(call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/pause").status, 202u);
    EXPECT_TRUE(refused(own)) << "a paused sandbox's address refuses, as a dead pod's does";
    EXPECT_EQ(call(s.direct_port(), http::verb::get, "/sandboxes/" + id + "/port/44772/ping").status, 502u)
        << "the shared direct port still answers as the proxy would";
    ASSERT_EQ(call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/resume").status, 202u);
    EXPECT_EQ(call(own, http::verb::get, "/sandboxes/" + id + "/port/44772/ping").status, 200u)
        << "running again, at the same address";
    s.set_sandbox_status(id, "Failed", "CrashLoopBackOff");
    EXPECT_TRUE(refused(own));
    s.set_sandbox_status(id, "Running", "");
    EXPECT_EQ(call(own, http::verb::get, "/sandboxes/" + id + "/port/44772/ping").status, 200u);
    ASSERT_EQ(call(s.port(), http::verb::delete_, "/v1/sandboxes/" + id).status, 204u);
    EXPECT_TRUE(refused(own)) << "a deleted sandbox's address is nobody's";
    EXPECT_EQ(call(direct_port_of(s, other), http::verb::get, "/sandboxes/" + other + "/port/44772/ping").status, 200u);
}

// The outside attack: an exec carrying an `expire` fault, on the sandbox's own address, was
// answered 404 KUBERNETES::SANDBOX_NOT_FOUND, the lifecycle API's words. Its pod is gone.
TEST(embedded_server, a_fault_that_ends_the_sandbox_leaves_its_own_address_unanswered) {
    embedded_server s;
    struct ending {
        const char* operation;
        action what;
        http::verb verb;
        const char* route;
        const char* body;
    };
    for (const ending e : {ending{"exec", action::expire, http::verb::post, "/command", R"({"command":"ls"})"},
                           ending{"file_info", action::crash, http::verb::get, "/files/info?path=/tmp", ""}}) {
        const std::string id = create(s);
        const unsigned short own = direct_port_of(s, id);
        s.inject({.operation = e.operation, .what = e.what});
        const auto r = call(own, e.verb, "/sandboxes/" + id + "/port/44772" + e.route, e.body);
        EXPECT_TRUE(r.body.empty()) << r.body;
        EXPECT_THAT(r.body, testing::Not(HasSubstr("SANDBOX_NOT_FOUND")));
        EXPECT_TRUE(refused(own)) << "and the address is closed";
    }
}

TEST(embedded_server, secure_access_gives_an_execd_token_that_execd_requires) {
    embedded_server s;
    const std::string id = create(s, R"(,"secureAccess":true)");
    const auto endpoint = call(s.port(), http::verb::get, "/v1/sandboxes/" + id + "/endpoints/44772").object();
    const std::string token(endpoint.at("headers").as_object().at("X-EXECD-ACCESS-TOKEN").as_string());
    const std::string ping = "/sandboxes/" + id + "/port/44772/ping";
    EXPECT_EQ(call(s.direct_port(), http::verb::get, ping).status, 401u);
    EXPECT_EQ(call(s.direct_port(), http::verb::get, ping, "", {{"X-EXECD-ACCESS-TOKEN", token}}).status, 200u);
}

TEST(embedded_server, the_command_status_has_the_spec_fields) {
    embedded_server s;
    const std::string id = create(s);
    const auto stream = exec(s, id, "echo hi");
    ASSERT_EQ(stream.status, 200u);
    const auto init = json::parse(stream.body.substr(0, stream.body.find('\n'))).as_object();
    const std::string command_id(init.at("text").as_string());
    const auto status =
        call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/command/status/" + command_id).object();
    EXPECT_EQ(status.at("id"), json::value(command_id));
    EXPECT_EQ(status.at("content"), "echo hi");
    EXPECT_EQ(status.at("running"), false);
    EXPECT_EQ(status.at("exit_code"), 0);
    EXPECT_TRUE(status.at("started_at").is_string());
    EXPECT_TRUE(status.at("finished_at").is_string());
}

TEST(embedded_server, a_command_runs_with_its_envs_and_cwd_and_refuses_envs_that_are_not_strings) {
    embedded_server s;
    const std::string id = create(s);
    const std::string path = "/sandboxes/" + id + "/proxy/44772/command";
    const auto ran = call(s.port(), http::verb::post, path, R"({"command":"echo $GREETING && pwd","cwd":"/srv/app","envs":{"GREETING":"hi"}})");
    ASSERT_EQ(ran.status, 200u);
    EXPECT_NE(ran.body.find(R"("text":"hi\n/srv/app\n")"), std::string::npos) << ran.body;
    const auto refused = call(s.port(), http::verb::post, path, R"({"command":"ls","envs":{"N":1}})");
    EXPECT_EQ(refused.status, 400u);
    EXPECT_EQ(call(s.port(), http::verb::post, path, R"({"command":"ls","envs":["A"]})").status, 400u);
}

TEST(embedded_server, output_that_is_not_utf8_is_sent_as_replacement_characters_strictly) {
    // Overlong forms (C0 A4, E0 80 80), a surrogate (ED A0 80) and F5: none is UTF-8, as Go's
    // encoder in execd holds; each byte becomes U+FFFD and the event stays valid JSON.
    embedded_server s;
    const std::string id = create(s);
    ASSERT_EQ(ngfail_test::upload(s, id, {{"/bin.dat", "a\xC0\xA4" "b\xE0\x80\x80" "c\xED\xA0\x80" "d\xF5\x80" "e\xC3\xA9"}}).status, 200u);
    const auto ran = exec(s, id, "cat /bin.dat");
    ASSERT_EQ(ran.status, 200u);
    const std::string replacement = "\xEF\xBF\xBD";
    std::string printed;
    for (std::size_t at = 0; at < ran.body.size();) {
        const auto end = ran.body.find("\n\n", at);
        const auto event = json::parse(ran.body.substr(at, end - at)).as_object();
        if (event.at("type") == "stdout") printed += event.at("text").as_string();
        at = end + 2;
    }
    EXPECT_EQ(printed, "a" + replacement + replacement + "b" + replacement + replacement + replacement + "c" + replacement +
                           replacement + replacement + "d" + replacement + replacement + "e\xC3\xA9");
}

TEST(embedded_server, a_download_gives_a_byte_range_or_lines_but_not_both) {
    embedded_server s;
    const std::string id = create(s);
    const std::string base = "/sandboxes/" + id + "/proxy/44772";
    const std::string form = "--B\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"path\":\"/f.txt\"}\r\n"
                             "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\n\r\n"
                             "a\nb\nc\n\r\n--B--\r\n";
    ASSERT_EQ(call(s.port(), http::verb::post, base + "/files/upload", form,
                   {{"Content-Type", "multipart/form-data; boundary=B"}}).status, 200u);
    const auto ranged = call(s.port(), http::verb::get, base + "/files/download?path=/f.txt", "", {{"Range", "bytes=2-3, 0-"}});
    EXPECT_EQ(ranged.status, 206u);
    EXPECT_EQ(ranged.body, "b\n") << "the first range, as execd serves it";
    EXPECT_EQ(ranged.headers[http::field::content_range], "bytes 2-3/6");
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt", "", {{"Range", "bytes=-2"}}).body, "c\n");
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt", "", {{"Range", "bytes=x"}}).status, 416u);
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt", "", {{"Range", "bytes=9-"}}).status, 416u);
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt&limit=1", "", {{"Range", "bytes=0-"}}).status,
              400u) << "lines and bytes are exclusive";
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt&offset=2&limit=1").body, "b");
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt&offset=0").status, 400u);
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/f.txt&limit=x").status, 400u);
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download").status, 400u) << "MISSING_QUERY";
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/download?path=/none").status, 404u);
}

// ---- the backend profiles and their named faults -------------------------------------------------

struct profile_case {
    backend b;
    std::string prefix;
    std::string running_reason;
    std::string oom_reason;
    std::string oom_message;  // a part of it
    unsigned image_pull_status;
    std::string image_pull_code;
    friend void PrintTo(const profile_case& c, std::ostream* os) { *os << ngfail::opensandbox::testing::name(c.b); }
};

class profiles : public testing::TestWithParam<profile_case> {};

TEST_P(profiles, running_sandboxes_report_the_backends_reason) {
    embedded_server s({.backend = GetParam().b});
    EXPECT_EQ(status_of(s, create(s)).at("reason"), json::value(GetParam().running_reason));
}

TEST_P(profiles, oom_kill_ends_the_command_by_signal_and_fails_the_sandbox_as_the_backend_says) {
    embedded_server s({.backend = GetParam().b});
    const std::string id = create(s);
    s.inject({.operation = "exec", .what = action::oom_kill});
    const auto stream = exec(s, id, "python train.py");
    EXPECT_THAT(stream.body, HasSubstr(R"("evalue":"-1")"));
    EXPECT_THAT(stream.body, HasSubstr("signal: killed"));
    const auto status = status_of(s, id);
    EXPECT_EQ(status.at("state"), "Failed");
    EXPECT_EQ(status.at("reason"), json::value(GetParam().oom_reason)) << "never OOMKilled as a structured reason";
    EXPECT_THAT(std::string(status.at("message").as_string()), HasSubstr(GetParam().oom_message));
}

TEST_P(profiles, crash_drops_the_stream_after_init_and_fails_the_sandbox) {
    embedded_server s({.backend = GetParam().b});
    const std::string id = create(s);
    s.inject({.operation = "exec", .what = action::crash});
    const auto stream = exec(s, id, "python serve.py");
    EXPECT_THAT(stream.body, HasSubstr(R"("type":"init")"));
    EXPECT_THAT(stream.body, testing::Not(HasSubstr("execution_complete")));
    EXPECT_EQ(status_of(s, id).at("state"), "Failed");
}

TEST_P(profiles, image_pull_failure_answers_create_as_the_backend_does) {
    embedded_server s({.backend = GetParam().b});
    s.inject({.operation = "create", .what = action::image_pull_failure});
    const auto r = call(s.port(), http::verb::post, "/v1/sandboxes", R"({"image":{"uri":"nope:1"},"entrypoint":["x"]})");
    EXPECT_EQ(r.status, GetParam().image_pull_status);
    EXPECT_EQ(r.object().at("code"), json::value(GetParam().prefix + GetParam().image_pull_code));
}

TEST_P(profiles, an_expired_sandbox_is_not_found_with_the_backends_code) {
    embedded_server s({.backend = GetParam().b});
    const std::string id = create(s);
    s.inject({.operation = "get", .what = action::expire});
    const auto r = call(s.port(), http::verb::get, "/v1/sandboxes/" + id);
    EXPECT_EQ(r.status, 404u);
    EXPECT_EQ(r.object().at("code"), json::value(GetParam().prefix + "SANDBOX_NOT_FOUND"));
    EXPECT_THAT(std::string(r.object().at("message").as_string()), HasSubstr(id));
}

INSTANTIATE_TEST_SUITE_P(
    backends, profiles,
    testing::Values(profile_case{backend::kubernetes, "KUBERNETES::", "RUNNING", "FAILED", "primary reason=OOMKilled",
                                 504, "POD_READY_TIMEOUT"},
                    profile_case{backend::docker, "DOCKER::", "CONTAINER_RUNNING", "CONTAINER_EXITED_ERROR",
                                 "exited with code 137", 500, "SANDBOX_IMAGE_PULL_FAILED"}),
    [](const auto& info) { return std::string(ngfail::opensandbox::testing::name(info.param.b)); });

// ---- faults as JSON ----------------------------------------------------------------------------

TEST(parse_fault, reads_every_field_and_rejects_what_it_does_not_know) {
    const auto f = parse_fault(
        R"({"operation":"create","action":"http_error","status":502,"code":"BACKEND_CONNECTION_FAILED",)"
        R"("message":"m","retry_after_s":7,"times":2})");
    ASSERT_TRUE(f) << f.error().reason();
    EXPECT_EQ(f.value().status, 502);
    EXPECT_EQ(f.value().retry_after_s, 7);
    EXPECT_EQ(f.value().times, 2);
    EXPECT_EQ(parse_fault(R"({"operation":"exec","action":"stall","stall_ms":250})").value().stall_for,
              250ms);
    for (const char* bad : {R"({"action":"http_error"})", R"({"operation":"exec","action":"teleport"})",
                            R"({"operation":"exec","action":"http_error","status":99})",
                            R"({"operation":"exec","action":"http_error","times":0})", "[1]", "{"}) {
        const auto r = parse_fault(bad);
        EXPECT_FALSE(r) << bad;
        if (!r) {
            EXPECT_EQ(r.error().code(), ngfail::kind::provider_request_rejected) << bad;
        }
    }
}

// A typo must not turn a chaos test into one that passes without its fault.
TEST(parse_fault, a_misspelt_operation_or_field_is_refused_by_name) {
    const auto refused = [](std::string_view text) {
        const auto r = parse_fault(text);
        return r ? std::string("accepted") : std::string(r.error().reason());
    };
    EXPECT_THAT(refused(R"({"operation":"crate","action":"http_error","status":502})"),
                testing::HasSubstr("unknown operation \"crate\""));
    EXPECT_THAT(refused(R"({"operation":"create","status":429,"retry_after":7})"),
                testing::HasSubstr("unknown field \"retry_after\""));
    EXPECT_THAT(refused(R"({"operation":"exec","action":"stall","stal_ms":250})"),
                testing::HasSubstr("unknown field \"stal_ms\""));
    EXPECT_THAT(refused(R"({"operation":"exec","\u001b[2J":1})"), testing::HasSubstr("unknown field \"?[2J\""))
        << "a stranger's field name is quoted printable";
    // An action that does nothing to its operation would never fire either.
    EXPECT_THAT(refused(R"({"operation":"create","action":"drop_before_init"})"),
                testing::HasSubstr("action \"drop_before_init\" does nothing to \"create\"; it acts on exec run_in_session run_code"));
    EXPECT_THAT(refused(R"({"operation":"get","action":"taken_over"})"), testing::HasSubstr("does nothing to \"get\""));
    EXPECT_EQ(refused(R"({"operation":"run_in_session","action":"drop_after_init"})"), "accepted");
    for (const auto op : ngfail::opensandbox::all_operations()) {
        const std::string text =
            R"({"operation":")" + std::string(ngfail::opensandbox::name(op)) + R"(","action":"http_error"})";
        EXPECT_EQ(refused(text), "accepted") << "every operation of the client may carry a fault";
    }
}

// A field the action does nothing with would be dropped, and the chaos test would pass on a
// fault other than the one it wrote: it is refused by name, with what the action takes.
TEST(parse_fault, a_field_its_action_does_nothing_with_is_refused) {
    const auto refused = [](std::string_view text) {
        const auto r = parse_fault(text);
        return r ? std::string("accepted") : std::string(r.error().reason());
    };
    EXPECT_THAT(refused(R"({"operation":"exec","action":"http_error","status":503,"stall_ms":500})"),
                testing::HasSubstr("field \"stall_ms\" does nothing to action \"http_error\"; beside operation and "
                                   "times it takes status, code, message, retry_after_s"));
    EXPECT_THAT(refused(R"({"operation":"exec","action":"stall","stall_ms":500,"retry_after_s":7})"),
                testing::HasSubstr("field \"retry_after_s\" does nothing to action \"stall\""));
    EXPECT_THAT(refused(R"({"operation":"exec","action":"stall","status":500})"),
                testing::HasSubstr("field \"status\" does nothing to action \"stall\""))
        << "even at its default: the writer meant something by it";
    EXPECT_THAT(refused(R"({"operation":"exec","action":"crash","state":"Failed","reason":"OOMKilled"})"),
                testing::HasSubstr("field \"state\" does nothing to action \"crash\"; it takes only operation and times"));
    EXPECT_THAT(refused(R"({"operation":"exec","action":"oom_kill","state":"Failed","reason":"OOMKilled"})"),
                testing::HasSubstr("field \"state\" does nothing to action \"oom_kill\"; beside operation and times "
                                   "it takes surface"));
    EXPECT_THAT(refused(R"({"operation":"get","action":"sandbox_status","state":"Failed","code":"X"})"),
                testing::HasSubstr("field \"code\" does nothing to action \"sandbox_status\""));
    EXPECT_EQ(refused(R"({"operation":"get","action":"sandbox_status","state":"Failed","reason":"R","times":3})"),
              "accepted");
    EXPECT_EQ(refused(R"({"operation":"exec","action":"stall","stall_ms":5,"times":2})"), "accepted");
    EXPECT_THAT(refused(R"({"operation":"get","action":"sandbox_status","reason":"R"})"),
                testing::HasSubstr("\"state\" is required for sandbox_status"));
}

// What acts on a sandbox (its death, its expiry) does nothing where the request names none:
// the fault would be used up without acting.
TEST(parse_fault, what_acts_on_a_sandbox_is_refused_where_there_is_none) {
    for (const char* action : {"oom_kill", "expire", "crash"}) {
        for (const char* op : {"create", "list", "list_snapshots", "get_snapshot", "delete_snapshot"}) {
            const auto r = parse_fault(std::string(R"({"operation":")") + op + R"(","action":")" + action + "\"}");
            ASSERT_FALSE(r) << action << " on " << op;
            EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("it acts on every operation on a sandbox"));
        }
        EXPECT_TRUE(parse_fault(std::string(R"({"operation":"get","action":")") + action + "\"}")) << action;
        EXPECT_TRUE(parse_fault(std::string(R"({"operation":"create_snapshot","action":")") + action + "\"}")) << action;
    }
}

TEST(parse_fault, what_it_echoes_is_ascii) {
    const auto f = parse_fault(R"({"operation":"get","action":"http_error","code":"\u009b31mRED\u007f"})");
    ASSERT_TRUE(f);
    const std::string echoed = ngfail::opensandbox::testing::to_json(f.value());
    EXPECT_TRUE(std::all_of(echoed.begin(), echoed.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) << echoed;
    EXPECT_EQ(json::parse(echoed).at("code"), "\u009b31mRED\u007f");
}

TEST(parse_fault, an_action_is_required_and_named_among_those_there_are) {
    const auto r = parse_fault(R"({"operation":"create","status":500})");
    ASSERT_FALSE(r) << "a missing action used to be an http_error 500";
    EXPECT_THAT(std::string(r.error().reason()),
                testing::HasSubstr("\"action\" is required; the actions are oom_kill, image_pull_failure, "));
    EXPECT_THAT(std::string(parse_fault(R"({"operation":"create","action":5})").error().reason()),
                testing::HasSubstr("\"action\" must be a string"));
    EXPECT_THAT(std::string(parse_fault(R"({"operation":"create","action":"explode"})").error().reason()),
                testing::HasSubstr("unknown action \"explode\"; the actions are oom_kill, "));
}

TEST(parse_fault, a_number_out_of_range_says_the_range) {
    const auto why = [](std::string_view text) { return std::string(parse_fault(text).error().reason()); };
    for (const char* times : {"0", "-1", "2147483648", "1.5", "\"2\""}) {
        EXPECT_THAT(why(std::string(R"({"operation":"get","action":"expire","times":)") + times + "}"),
                    testing::HasSubstr("\"times\" must be a whole number from 1 to 2147483647"))
            << times;
    }
    EXPECT_THAT(why(R"({"operation":"get","action":"stall","stall_ms":3600001})"),
                testing::HasSubstr("\"stall_ms\" must be a whole number of milliseconds from 0 to 3600000"));
    EXPECT_THAT(why(R"({"operation":"get","action":"http_error","retry_after_s":-1})"),
                testing::HasSubstr("\"retry_after_s\" must be a whole number of seconds from 0 to 2147483647"));
    EXPECT_THAT(why(R"({"operation":"get","action":"http_error","message":")" + std::string(4097, 'm') + R"("})"),
                testing::HasSubstr("a string is longer than 4096 bytes"))
        << "which bounds what a queued fault holds";
    EXPECT_THAT(why(R"({"operation":"get","action":"http_error","code":7})"), testing::HasSubstr("\"code\" must be a string"));
}

// A 1xx with a body breaks HTTP's framing, and a 2xx or 3xx is not an error: an http_error
// fault's status is 400 to 599.
TEST(parse_fault, an_http_error_is_a_4xx_or_a_5xx) {
    for (const int status : {100, 101, 199, 200, 204, 302, 399, 600}) {
        const auto r = parse_fault(R"({"operation":"get","action":"http_error","status":)" + std::to_string(status) + "}");
        ASSERT_FALSE(r) << status;
        EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("an HTTP error status from 400 to 599"));
    }
    EXPECT_TRUE(parse_fault(R"({"operation":"get","action":"http_error","status":400})"));
    EXPECT_TRUE(parse_fault(R"({"operation":"get","action":"http_error","status":599})"));
    embedded_server s;
    EXPECT_THROW(s.inject(fault::http_error("get", 101, "X", "m")), std::invalid_argument);
    EXPECT_THROW(s.inject({.operation = "get", .what = action::stall, .status = 503}), std::invalid_argument)
        << "inject refuses a field its action does nothing with, as parse_fault does";
    EXPECT_THROW(s.inject({.operation = "get", .what = action::expire, .times = 0}), std::invalid_argument);
    EXPECT_NO_THROW(s.inject(fault::stall("get", 10ms)));
}

// A stranger's loop of POSTs must not grow the server without bound: past max_faults
// waiting, one more is refused until one fires.
TEST(embedded_server, faults_waiting_are_bounded) {
    embedded_server s({.max_faults = 3});
    const std::string expire = R"({"operation":"renew","action":"expire"})";
    for (int i = 0; i < 3; ++i) EXPECT_EQ(call(s.port(), http::verb::post, "/_ngfail/faults", expire).status, 201u);
    const auto full = call(s.port(), http::verb::post, "/_ngfail/faults", expire);
    EXPECT_EQ(full.status, 409u);
    EXPECT_THAT(full.body, testing::HasSubstr("FAULT::LIMIT_EXCEEDED"));
    EXPECT_THAT(full.body, testing::HasSubstr("3 faults are waiting already"));
    EXPECT_THROW(s.inject({.operation = "get", .what = action::expire}), std::length_error);
    // One fires (a renew of no sandbox still takes it): room for one more.
    call(s.port(), http::verb::post, "/v1/sandboxes/none/renew-expiration", R"({"expiresAt":"2030-01-01T00:00:00Z"})");
    EXPECT_EQ(call(s.port(), http::verb::post, "/_ngfail/faults", expire).status, 201u);
    EXPECT_EQ(call(s.port(), http::verb::post, "/_ngfail/faults", expire).status, 409u);
}

TEST(embedded_server, refuses_to_inject_a_fault_for_no_operation) {
    embedded_server s;
    EXPECT_THROW(s.inject(fault::http_error("crate", 502, "X", "m")), std::invalid_argument);
    EXPECT_THROW(s.inject({.operation = "upload", .what = action::signal_exit}), std::invalid_argument);
    EXPECT_NO_THROW(s.inject(fault::http_error("create", 502, "X", "m")));
}

TEST(parse_fault, its_json_echoes_what_was_understood) {
    const auto f = parse_fault(
        R"({"operation":"create","action":"http_error","status":429,"code":"Q","message":"m","retry_after_s":7,"times":2})");
    ASSERT_TRUE(f);
    EXPECT_EQ(json::parse(ngfail::opensandbox::testing::to_json(f.value())),
              json::parse(R"({"operation":"create","action":"http_error","times":2,"status":429,"code":"Q",)"
                          R"("message":"m","retry_after_s":7})"));
    const auto stall = parse_fault(R"({"operation":"exec","action":"stall","stall_ms":250})");
    EXPECT_EQ(json::parse(ngfail::opensandbox::testing::to_json(stall.value())),
              json::parse(R"({"operation":"exec","action":"stall","times":1,"stall_ms":250})"));
}

TEST(embedded_server, faults_added_at_run_time_need_the_api_key) {
    embedded_server s({.api_key = "sk-e"});
    const std::string fault_json = R"({"operation":"get","action":"http_error","status":503,"code":"X","message":"m"})";
    EXPECT_EQ(call(s.port(), http::verb::post, "/_ngfail/faults", fault_json).status, 401u);
    EXPECT_EQ(call(s.port(), http::verb::post, "/_ngfail/faults", fault_json, {{"OPEN-SANDBOX-API-KEY", "sk-e"}}).status,
              201u);
    EXPECT_EQ(call(s.port(), http::verb::get, "/v1/sandboxes/x", "", {{"OPEN-SANDBOX-API-KEY", "sk-e"}}).status, 503u);
}

}  // namespace

// ---- a stranger on the network (the second review) ----------------------------------------------
// Each test drives real sockets; where the defect was in framing, with raw bytes.

namespace stranger {

std::string exchange_raw(unsigned short port, const std::string& bytes, std::chrono::milliseconds patience = 5s) {
    return ngfail_test::exchange_raw(port, bytes, patience);
}

std::string command_id_of(const reply& stream) {
    return std::string(json::parse(stream.body.substr(0, stream.body.find('\n'))).as_object().at("text").as_string());
}

reply upload(const embedded_server& s, const std::string& id, const std::string& path, const std::string& content) {
    return ngfail_test::upload(s, id, {{path, content}});
}

}  // namespace stranger

// Real execd writes its response head with the first event: a stream dropped before `init`
// shows the client a connection closed with nothing, not a 200 cut short.
TEST(embedded_server, a_stream_dropped_before_init_sends_no_head) {
    embedded_server s;
    const std::string id = create(s);
    s.inject(fault::exec(action::drop_before_init));
    const std::string body = R"({"command":"ls"})";
    const std::string answer = stranger::exchange_raw(
        s.port(), "POST /sandboxes/" + id + "/proxy/44772/command HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    EXPECT_EQ(answer, "");
    EXPECT_EQ(exec(s, id, "ls").status, 200u) << "the next stream is whole";
}

// What a stranger can make the server hold is bounded across sandboxes: their number, and
// every sandbox's and snapshot's files together (a full disk's answer past it).
TEST(stranger, sandboxes_and_their_files_are_bounded_across_the_whole_server) {
    embedded_server s({.max_sandboxes = 2, .max_file_bytes = 256 * 1024});
    const std::string a = create(s);
    const std::string b = create(s);
    const auto third = call(s.port(), http::verb::post, "/v1/sandboxes", R"({"image":{"uri":"p"},"entrypoint":["x"]})");
    EXPECT_EQ(third.status, 409u);
    EXPECT_EQ(third.object().at("code"), "SANDBOX::LIMIT_EXCEEDED");

    EXPECT_EQ(stranger::upload(s, a, "/w/one", std::string(100 * 1024, 'x')).status, 200u);
    EXPECT_EQ(stranger::upload(s, b, "/w/two", std::string(100 * 1024, 'x')).status, 200u);
    const auto full = stranger::upload(s, b, "/w/three", std::string(100 * 1024, 'x'));
    EXPECT_EQ(full.status, 500u) << "the budget is the server's, not each sandbox's";
    EXPECT_THAT(full.body, HasSubstr("no space left on device"));
    const auto snapshot = call(s.port(), http::verb::post, "/v1/sandboxes/" + a + "/snapshots");
    EXPECT_EQ(snapshot.status, 409u) << "a snapshot's copy of the files counts too";

    EXPECT_EQ(call(s.port(), http::verb::delete_, "/v1/sandboxes/" + a).status, 204u);
    EXPECT_EQ(stranger::upload(s, b, "/w/three", std::string(100 * 1024, 'x')).status, 200u)
        << "a deleted sandbox gives its room back";
    EXPECT_EQ(call(s.port(), http::verb::post, "/v1/sandboxes", R"({"image":{"uri":"p"},"entrypoint":["x"]})").status,
              202u);
}

TEST(stranger, paging_numbers_never_wrap_and_bad_ones_are_a_400) {
    embedded_server s;
    create(s);
    for (const std::string query : {"page=4611686018427387904&pageSize=4", "page=9223372036854775807&pageSize=200",
                                    "page=2&pageSize=200"}) {
        const auto r = call(s.port(), http::verb::get, "/v1/sandboxes?" + query);
        ASSERT_EQ(r.status, 200u) << query;
        EXPECT_TRUE(r.object().at("items").as_array().empty()) << query;
    }
    const auto one = call(s.port(), http::verb::get, "/v1/sandboxes?page=1&pageSize=200");
    EXPECT_EQ(one.object().at("items").as_array().size(), 1u);
    EXPECT_EQ(one.object().at("pagination").at("totalPages"), 1);
    // A page is at most 200, as the server's own `le=200` says: a stranger's pageSize of
    // 100,000 over 4,096 sandboxes of 256 labels made a 395 MB reply.
    for (const std::string query : {"page=0", "pageSize=-1", "page=99999999999999999999", "pageSize=1x", "page=",
                                    "pageSize=201", "pageSize=9223372036854775807"}) {
        EXPECT_EQ(call(s.port(), http::verb::get, "/v1/sandboxes?" + query).status, 400u) << query;
    }
    EXPECT_EQ(call(s.port(), http::verb::get, "/health").status, 200u) << "the server is still up";
}

TEST(stranger, durations_saturate_or_are_refused_never_wrap_into_the_past) {
    embedded_server s;
    const std::string id = create(s);
    const auto long_timeout = call(s.port(), http::verb::post, "/sandboxes/" + id + "/proxy/44772/command",
                                   R"({"command":"echo fine","timeout":10000000000000})");
    EXPECT_THAT(long_timeout.body, HasSubstr("execution_complete")) << "not killed at once";
    EXPECT_THAT(long_timeout.body, testing::Not(HasSubstr("signal: killed")));
    const auto beyond_int64 = call(s.port(), http::verb::post, "/sandboxes/" + id + "/proxy/44772/command",
                                   R"({"command":"echo fine","timeout":18446744073709551615})");
    EXPECT_THAT(beyond_int64.body, HasSubstr("execution_complete"));
    for (const std::string timeout : {"10000000000", "0", "-5", "1.5", "\"60\""}) {
        const auto r = call(s.port(), http::verb::post, "/v1/sandboxes",
                            R"({"image":{"uri":"python:3.11"},"entrypoint":["x"],"timeout":)" + timeout + "}");
        EXPECT_EQ(r.status, 400u) << timeout;
    }
    for (const std::string when : {"9999-12-31T23:59:59Z", "2300-01-01T00:00:00Z"}) {
        const auto r = call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/renew-expiration",
                            R"({"expiresAt":")" + when + R"("})");
        EXPECT_EQ(r.status, 400u) << when;
    }
    const auto cursor = call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/command/x/logs?cursor=-1");
    EXPECT_EQ(cursor.status, 400u);
    EXPECT_EQ(status_of(s, id).at("state"), "Running");
}

TEST(stranger, a_renewal_honours_the_times_offset) {
    embedded_server s;
    const std::string id = create(s);
    const auto r = call(s.port(), http::verb::post, "/v1/sandboxes/" + id + "/renew-expiration",
                        R"({"expiresAt":"2100-01-01T10:00:00+02:00"})");
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.object().at("expiresAt"), "2100-01-01T08:00:00Z");
}

TEST(stranger, one_sandboxs_execd_cannot_reach_another_sandboxs_commands) {
    embedded_server s;
    const std::string a = create(s);
    const std::string b = create(s, R"(,"secureAccess":true)");
    const auto endpoint = call(s.port(), http::verb::get, "/v1/sandboxes/" + b + "/endpoints/44772?use_server_proxy=true");
    const std::string token(endpoint.object().at("headers").at("X-EXECD-ACCESS-TOKEN").as_string());
    const auto ran = call(s.port(), http::verb::post, "/sandboxes/" + b + "/proxy/44772/command",
                          R"({"command":"sleep 30","background":true})", {{"X-EXECD-ACCESS-TOKEN", token}});
    const std::string command = stranger::command_id_of(ran);
    const std::string through_a = "/sandboxes/" + a + "/proxy/44772/command";
    EXPECT_EQ(call(s.port(), http::verb::get, through_a + "/status/" + command).status, 404u);
    const auto logs = call(s.port(), http::verb::get, through_a + "/" + command + "/logs");
    EXPECT_EQ(logs.status, 400u);
    EXPECT_THAT(logs.body, testing::Not(HasSubstr("sleep 30")));
    EXPECT_EQ(call(s.port(), http::verb::delete_, through_a + "?id=" + command).status, 500u);
    const auto own = call(s.port(), http::verb::get, "/sandboxes/" + b + "/proxy/44772/command/status/" + command, "",
                          {{"X-EXECD-ACCESS-TOKEN", token}});
    EXPECT_EQ(own.object().at("running"), true) << "not interrupted through the other sandbox";
    EXPECT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + b + "/proxy/44772/command/status/" + command).status, 401u)
        << "and its own execd still wants its token";
}

TEST(stranger, a_sandbox_runs_and_keeps_a_bounded_number_of_commands) {
    embedded_server s({.commands_per_sandbox = 8});
    const std::string id = create(s);
    const std::string first = stranger::command_id_of(exec(s, id, "echo first"));
    std::string last;
    for (int i = 0; i < 20; ++i) last = stranger::command_id_of(exec(s, id, "echo " + std::to_string(i)));
    const std::string status = "/sandboxes/" + id + "/proxy/44772/command/status/";
    EXPECT_EQ(call(s.port(), http::verb::get, status + first).status, 404u) << "the oldest finished are forgotten";
    EXPECT_EQ(call(s.port(), http::verb::get, status + last).status, 200u);
    const std::string background = R"({"command":"sleep 60","background":true})";
    const std::string command = "/sandboxes/" + id + "/proxy/44772/command";
    for (int i = 0; i < 8; ++i) EXPECT_EQ(call(s.port(), http::verb::post, command, background).status, 200u);
    EXPECT_EQ(call(s.port(), http::verb::post, command, background).status, 429u) << "a ninth running command";
}

TEST(stranger, a_running_command_is_kept_while_finished_ones_are_forgotten) {
    embedded_server s({.commands_per_sandbox = 4});
    const std::string id = create(s);
    const std::string command = "/sandboxes/" + id + "/proxy/44772/command";
    const std::string sleeper =
        stranger::command_id_of(call(s.port(), http::verb::post, command, R"({"command":"sleep 60","background":true})"));
    std::vector<std::string> echoes;
    for (int i = 0; i < 12; ++i) echoes.push_back(stranger::command_id_of(exec(s, id, "echo " + std::to_string(i))));
    const auto status = [&](const std::string& run) {
        return call(s.port(), http::verb::get, command + "/status/" + run).status;
    };
    EXPECT_EQ(status(sleeper), 200u) << "started first, still running: kept";
    for (int i = 0; i < 9; ++i) EXPECT_EQ(status(echoes[i]), 404u) << "finished " << i << ": forgotten";
    for (int i = 9; i < 12; ++i) EXPECT_EQ(status(echoes[i]), 200u) << "the newest three fill the room left";
}

// Real execd kills a foreground command when its client disconnects (the request's context
// ends): a stranger who starts execs and drops them must not pile up "running" commands.
TEST(stranger, a_dropped_foreground_command_is_killed_and_then_forgotten) {
    embedded_server s({.commands_per_sandbox = 4});
    const std::string id = create(s);
    const std::string body = R"({"command":"sleep 60"})";
    const std::string request = "POST /sandboxes/" + id + "/proxy/44772/command HTTP/1.1\r\nHost: x\r\n"
                                "Content-Type: application/json\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    const auto start_and_drop = [&] {
        const std::string seen = ngfail_test::exchange_raw(s.port(), request, 5s, false, "\"type\":\"init\"");
        const auto text = seen.find("\"text\":\"");
        return text == std::string::npos ? seen : seen.substr(text + 8, seen.find('"', text + 8) - text - 8);
    };
    const std::string command = "/sandboxes/" + id + "/proxy/44772/command";
    const auto status = [&](const std::string& run) { return call(s.port(), http::verb::get, command + "/status/" + run); };
    const auto running = [&](const std::string& run) { return status(run).object().at("running") == true; };

    const std::string one = start_and_drop();
    for (int i = 0; i < 100 && running(one); ++i) std::this_thread::sleep_for(10ms);
    const auto killed = status(one).object();
    EXPECT_EQ(killed.at("running"), false) << "killed when its peer went";
    EXPECT_EQ(killed.at("exit_code"), -1);
    EXPECT_EQ(killed.at("error"), "signal: killed");

    std::vector<std::string> dropped;
    const int drops = ngfail_test::instrumented ? 100 : 1000;
    for (int i = 0; i < drops; ++i) dropped.push_back(start_and_drop());
    const auto kept = [&] {
        return std::count_if(dropped.begin(), dropped.end(), [&](const std::string& run) { return status(run).status == 200u; });
    };
    for (int i = 0; i < 50 && kept() > 4; ++i) std::this_thread::sleep_for(20ms);
    EXPECT_LE(kept(), 4) << "of " << drops << " dropped execs, only the newest finished ones are kept";
    EXPECT_EQ(call(s.port(), http::verb::post, command, R"({"command":"sleep 60","background":true})").status, 200u);
}

TEST(stranger, a_sandboxs_commands_go_with_it) {
    embedded_server s;
    // 16 rounds of create, a 2 MiB command, delete: the server's memory stays flat (keeping
    // each deleted sandbox's output alone would add 32 MiB).
    const std::string big(2 << 20, 'x');
    const auto round = [&] {
        const std::string sandbox = create(s);
        exec(s, sandbox, "echo " + big);
        call(s.port(), http::verb::delete_, "/v1/sandboxes/" + sandbox);
    };
    if (!ngfail_test::instrumented) {
        for (int i = 0; i < 4; ++i) round();  // the allocator's own working set
    }
    const long before = ngfail_test::peak_rss_kib();
    // Under a sanitizer the bound is not checked (peak_memory.hpp): two rounds walk the same code.
    for (int i = 0; i < (ngfail_test::instrumented ? 2 : 16); ++i) round();
    EXPECT_LT(ngfail_test::peak_rss_kib() - before, 20 * 1024) << "KiB kept by 16 deleted sandboxes";
}

TEST(stranger, open_command_streams_share_a_sandboxs_files_instead_of_copying_them) {
    embedded_server s;
    const std::string id = create(s);
    ASSERT_EQ(stranger::upload(s, id, "/data/big.bin", std::string(8 << 20, 'd')).status, 200u);
    const long before = ngfail_test::peak_rss_kib();
    std::vector<std::thread> streams;
    for (int i = 0; i < 24; ++i) streams.emplace_back([&] { exec(s, id, "sleep 0.5"); });
    for (auto& t : streams) t.join();
    EXPECT_LT(ngfail_test::peak_rss_kib() - before, 64 * 1024) << "KiB for 24 command streams beside an 8 MiB file";
}

TEST(stranger, a_transfer_coding_other_than_final_chunked_is_a_400_and_a_close) {
    embedded_server s;
    const std::string id = create(s);
    const std::string smuggled = "DELETE /v1/sandboxes/" + id + " HTTP/1.1\r\nHost: x\r\n\r\n";
    for (const std::string coding : {"gzip", "chunked, gzip", "identity"}) {
        const std::string raw = "POST /v1/sandboxes/" + id + "/pause HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " +
                                coding + "\r\n\r\n" + smuggled;
        const std::string answer = stranger::exchange_raw(s.port(), raw);
        EXPECT_THAT(answer, testing::StartsWith("HTTP/1.1 400")) << coding;
        EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << "one reply, then the close: " << coding;
        EXPECT_EQ(call(s.port(), http::verb::get, "/v1/sandboxes/" + id).status, 200u) << "not deleted: " << coding;
    }
}

// The Content-Disposition of a download of `path`, uploaded first.
std::string disposition_of(const embedded_server& s, const std::string& id, const std::string& path) {
    EXPECT_EQ(stranger::upload(s, id, path, "content").status, 200u) << path;
    const auto r = call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/files/download?path=" + ngfail_test::url_encoded(path));
    EXPECT_EQ(r.status, 200u) << path;
    EXPECT_EQ(r.body, "content");
    EXPECT_EQ(r.headers.count("Set-Cookie"), 0u);
    EXPECT_EQ(r.headers.count("X-Injected"), 0u);
    return std::string(r.headers[http::field::content_disposition]);
}

TEST(stranger, a_downloaded_name_cannot_add_header_lines_or_parameters) {
    embedded_server s;
    const std::string id = create(s);
    const std::string disposition =
        disposition_of(s, id, "/tmp/a\r\nSet-Cookie: stolen=1\r\nX-Injected: yes\"; filename*=evil.txt");
    EXPECT_EQ(disposition.find_first_of("\r\n"), std::string::npos);
    EXPECT_THAT(disposition, HasSubstr(R"(filename*=UTF-8''a%0D%0ASet-Cookie)"));
    std::size_t unescaped_quotes = 0;  // the quoted name opens and closes, nothing ends it early
    for (std::size_t i = 0; i < disposition.size(); ++i) {
        if (disposition[i] == '\\') ++i;
        else if (disposition[i] == '"') ++unescaped_quotes;
    }
    EXPECT_EQ(unescaped_quotes, 2u) << disposition;
}

// RFC 6266: a plain name is one quoted parameter; any other has a fallback of safe bytes only
// (a quote in it, even escaped, let a naive parser find a stranger's `filename*=`) and the
// exact name in RFC 8187's encoding.
TEST(stranger, a_downloaded_name_is_plain_when_it_can_be_and_a_quote_never_looks_like_a_parameter) {
    embedded_server s;
    const std::string id = create(s);
    EXPECT_EQ(disposition_of(s, id, "/tmp/report (v2)-final.txt"), R"(attachment; filename="report (v2)-final.txt")");
    EXPECT_EQ(disposition_of(s, id, "/tmp/x\"; filename*=UTF-8''evil.txt"),
              R"(attachment; filename="x__ filename__UTF-8''evil.txt"; filename*=UTF-8''x%22%3B%20filename%2A%3DUTF-8%27%27evil.txt)");
    EXPECT_EQ(disposition_of(s, id, "/tmp/r\xc3\xa9sum\xc3\xa9\\.pdf"),
              R"(attachment; filename="r__sum___.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%5C.pdf)");
}

// Owner and group names are Linux's user names, 32 bytes at most (file_tree_test shows that
// they count in the file budget): names of a mebibyte once took 256 MiB past a 4 MiB budget.
TEST(stranger, owner_and_group_names_are_at_most_32_bytes) {
    embedded_server s;
    const std::string id = create(s);
    const std::string base = "/sandboxes/" + id + "/proxy/44772";
    ASSERT_EQ(stranger::upload(s, id, "/w/f", "x").status, 200u);
    const auto chown = [&](const std::string& owner, const std::string& group) {
        return call(s.port(), http::verb::post, base + "/files/permissions",
                    json::serialize(json::object{{"/w/f", {{"owner", owner}, {"group", group}}}}));
    };
    EXPECT_EQ(chown(std::string(32, 'o'), std::string(32, 'g')).status, 200u);
    const auto info = call(s.port(), http::verb::get, base + "/files/info?path=/w/f");
    EXPECT_EQ(json::value_to<std::string>(info.object().at("/w/f").at("owner")), std::string(32, 'o'));
    for (const auto& [owner, group] : {std::pair{std::string(33, 'o'), std::string()},
                                       std::pair{std::string(), std::string(33, 'g')},
                                       std::pair{std::string(1 << 20, 'o'), std::string(1 << 20, 'g')}}) {
        const reply refused = chown(owner, group);
        EXPECT_EQ(refused.status, 400u) << owner.size() << " " << group.size();
        EXPECT_EQ(refused.object().at("code"), "INVALID_REQUEST_BODY");
        EXPECT_LT(refused.body.size(), 1024u) << "the name is not quoted back";
    }
}

// Paths as Linux bounds them (PATH_MAX, NAME_MAX), so that mkdir -p is cheap: a 24 KiB path
// once took the server to 294 MiB, every ancestor built as a string twice.
TEST(stranger, paths_past_4095_bytes_or_names_past_255_are_too_long_wherever_they_make_parents) {
    embedded_server s;
    const std::string id = create(s);
    const std::string base = "/sandboxes/" + id + "/proxy/44772";
    const auto mkdir = [&](const std::string& path) {
        return call(s.port(), http::verb::post, base + "/directories", json::serialize(json::object{{path, json::object{}}}));
    };
    const auto too_long = [](const reply& r) {
        EXPECT_EQ(r.status, 500u) << r.body.substr(0, 200);
        EXPECT_EQ(r.object().at("code"), "RUNTIME_ERROR");
        EXPECT_THAT(r.body, HasSubstr("file name too long"));
    };
    std::string deepest;  // "/a/a/…/a", 4095 bytes: the longest path Linux takes
    while (deepest.size() < 4094) deepest += "/a";
    deepest += "b";
    ASSERT_EQ(deepest.size(), 4095u);
    EXPECT_EQ(mkdir(deepest).status, 200u);
    const long before = ngfail_test::peak_rss_kib();
    std::string huge;
    while (huge.size() < 24 * 1024) huge += "/z";
    too_long(mkdir(huge));
    EXPECT_LT(ngfail_test::peak_rss_kib() - before, 16 * 1024) << "KiB for one 24 KiB path";
    too_long(mkdir(deepest + "c"));
    too_long(mkdir("/w/" + std::string(256, 'n')));
    EXPECT_EQ(mkdir("/w/" + std::string(255, 'n')).status, 200u);
    too_long(stranger::upload(s, id, "/w/" + std::string(256, 'n') + "/f", "x"));
    too_long(call(s.port(), http::verb::post, base + "/files/mv",
                  json::serialize(json::array{json::object{{"src", "/w"}, {"dest", huge}}})));
    EXPECT_EQ(call(s.port(), http::verb::get, base + "/files/info?path=/w").status, 200u) << "nothing moved";
}

TEST(stranger, a_half_sent_head_is_dropped_at_the_read_deadline) {
    embedded_server s({.read_timeout = 300ms});
    const auto started = std::chrono::steady_clock::now();
    const std::string answer = stranger::exchange_raw(s.port(), "GET /health HTTP/1.1\r\nHost:", 20s);
    EXPECT_TRUE(answer.empty());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 15s) << "closed by the server, not by our patience";
}

TEST(stranger, a_tls_handshake_that_never_comes_is_dropped_at_the_read_deadline) {
    embedded_server s({.read_timeout = 300ms,
                       .tls_certificate_file = ngfail_test::ca().file("server.pem"),
                       .tls_key_file = ngfail_test::ca().file("server.key")});
    const auto started = std::chrono::steady_clock::now();
    EXPECT_TRUE(stranger::exchange_raw(s.port(), "", 20s).empty());
    EXPECT_LT(std::chrono::steady_clock::now() - started, 15s) << "closed by the server, not by our patience";
}

TEST(stranger, past_the_connection_cap_idle_connections_make_room_for_new_ones) {
    embedded_server s({.max_connections = 8});
    boost::asio::io_context io;
    std::vector<boost::asio::ip::tcp::socket> half_sent;
    for (int i = 0; i < 40; ++i) {
        auto& socket = half_sent.emplace_back(io);
        socket.connect({boost::asio::ip::make_address("127.0.0.1"), s.port()});
        boost::asio::write(socket, boost::asio::buffer(std::string_view("GET /health HTTP/1.1\r\nHo")));
    }
    const std::string answer = stranger::exchange_raw(s.port(), "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_THAT(answer, testing::StartsWith("HTTP/1.1 200"));
    // A shed connection closes on its own strand, just after the new one is counted.
    for (int i = 0; i < 200 && s.open_connections() > 8; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_LE(s.open_connections(), 8u);
}

TEST(stranger, command_streams_to_http_1_0_are_not_chunked) {
    embedded_server s;
    const std::string id = create(s);
    const std::string body = R"({"command":"echo one-zero"})";
    const std::string answer = stranger::exchange_raw(
        s.port(), "POST /sandboxes/" + id + "/proxy/44772/command HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    ASSERT_THAT(answer, testing::StartsWith("HTTP/1.0 200"));
    const std::string head = answer.substr(0, answer.find("\r\n\r\n"));
    EXPECT_THAT(head, testing::Not(HasSubstr("chunked")));
    const std::string events = answer.substr(answer.find("\r\n\r\n") + 4);
    EXPECT_EQ(events.front(), '{') << "the first event, with no chunk size before it";
    EXPECT_THAT(events, HasSubstr("execution_complete"));
}

TEST(stranger, a_head_request_gets_a_head_and_no_body) {
    embedded_server s;
    for (const std::string target : {"/health", "/v1/no-such-route"}) {
        const std::string answer = stranger::exchange_raw(
            s.port(), "HEAD " + target + " HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        const auto first_end = answer.find("\r\n\r\n");
        ASSERT_NE(first_end, std::string::npos) << target;
        EXPECT_THAT(answer.substr(first_end + 4), testing::StartsWith("HTTP/1.1 200")) << "the next reply follows at once: " << target;
    }
}

TEST(stranger, expect_100_continue_is_answered_before_the_body) {
    embedded_server s;
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), s.port()});
    const std::string body = R"({"image":{"uri":"python:3.11"},"entrypoint":["x"]})";
    boost::asio::write(socket, boost::asio::buffer("POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                                   "Content-Type: application/json\r\nContent-Length: " +
                                                   std::to_string(body.size()) + "\r\n\r\n"));
    const timeval tv{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char interim[64] = {};
    const auto n = ::recv(socket.native_handle(), interim, sizeof interim - 1, 0);
    ASSERT_GT(n, 0) << "no interim reply before the body";
    EXPECT_THAT(std::string(interim), testing::StartsWith("HTTP/1.1 100 Continue"));
    boost::asio::write(socket, boost::asio::buffer(body));
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    EXPECT_EQ(res.result_int(), 202u);
}

// ---- what the official SDKs call: list filters, files and directories --------------------------

TEST(embedded_server, a_list_takes_several_states_in_any_case_and_requires_every_metadata_pair) {
    embedded_server s;
    const std::string a = create(s, R"(,"metadata":{"team":"a","tier":"gpu"})");
    const std::string b = create(s, R"(,"metadata":{"team":"b"})");
    ASSERT_EQ(call(s.port(), http::verb::post, "/v1/sandboxes/" + b + "/pause").status, 202u);
    const auto ids = [&](const std::string& query) {
        const reply r = call(s.port(), http::verb::get, "/v1/sandboxes?" + query);
        EXPECT_EQ(r.status, 200u) << query << ": " << r.body;
        std::vector<std::string> out;
        const json::object page = r.object();
        for (const auto& item : page.at("items").as_array()) out.emplace_back(item.at("id").as_string());
        std::sort(out.begin(), out.end());
        return out;
    };
    std::vector<std::string> both{a, b};
    std::sort(both.begin(), both.end());
    EXPECT_EQ(ids("state=Paused&state=running"), both) << "OR-ed, case-insensitive";
    EXPECT_EQ(ids("state=PAUSED"), std::vector<std::string>{b});
    EXPECT_EQ(ids("metadata=team%3Da"), std::vector<std::string>{a});
    EXPECT_EQ(ids("metadata=team%3Da%26tier%3Dgpu"), std::vector<std::string>{a});
    EXPECT_EQ(ids("metadata=team%3Da%26tier%3Dcpu"), std::vector<std::string>{});
    EXPECT_EQ(ids("metadata=team%3Db&state=Running"), std::vector<std::string>{}) << "every filter holds";
    const reply bad = call(s.port(), http::verb::get, "/v1/sandboxes?metadata=team%3Da%26broken");
    EXPECT_EQ(bad.status, 400u);
    EXPECT_EQ(bad.object().at("code").as_string(), "INVALID_METADATA_FORMAT");
}

TEST(embedded_server, directories_and_files_answer_as_execd_does) {
    embedded_server s;
    const std::string id = create(s);
    const std::string execd = "/sandboxes/" + id + "/proxy/44772";
    const auto get = [&](const std::string& target) { return call(s.port(), http::verb::get, execd + target); };
    EXPECT_EQ(call(s.port(), http::verb::post, execd + "/directories", R"({"/w/p/src":{"mode":700}})").status, 200u);
    EXPECT_EQ(stranger::upload(s, id, "/w/p/README.md", "hello").status, 200u);

    const reply listed = get("/directories/list?path=/w/p");
    ASSERT_EQ(listed.status, 200u) << listed.body;
    const auto entries = json::parse(listed.body).as_array();
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].at("path").as_string(), "/w/p/README.md");
    EXPECT_EQ(entries[0].at("type").as_string(), "file");
    EXPECT_EQ(entries[0].at("size").as_int64(), 5);
    for (const char* field : {"modified_at", "created_at", "owner", "group", "mode"}) {
        EXPECT_TRUE(entries[0].as_object().contains(field)) << field;
    }
    EXPECT_EQ(entries[1].at("type").as_string(), "directory");
    EXPECT_EQ(entries[1].at("mode").as_int64(), 700);
    EXPECT_EQ(json::parse(get("/directories/list?path=/w&depth=3").body).as_array().size(), 3u);

    const reply info = get("/files/info?path=/w/p/README.md&path=/w");
    ASSERT_EQ(info.status, 200u);
    EXPECT_EQ(info.object().size(), 2u) << "one entry per path asked";

    const std::pair<std::string, std::pair<unsigned, std::string>> refusals[] = {
        {"/directories/list", {400u, "MISSING_QUERY"}},
        {"/directories/list?path=/w&depth=-1", {400u, "INVALID_REQUEST_BODY"}},
        {"/directories/list?path=/w/p/README.md", {400u, "INVALID_REQUEST_BODY"}},
        {"/directories/list?path=/nope", {404u, "FILE_NOT_FOUND"}},
        {"/files/info?path=/nope", {404u, "FILE_NOT_FOUND"}},
    };
    for (const auto& [target, want] : refusals) {
        const reply r = get(target);
        EXPECT_EQ(r.status, want.first) << target;
        EXPECT_EQ(r.object().at("code").as_string(), want.second) << target;
    }

    const reply on_a_directory = call(s.port(), http::verb::delete_, execd + "/files?path=/w/p");
    EXPECT_EQ(on_a_directory.status, 500u) << "RemoveFiles refuses a directory";
    EXPECT_EQ(call(s.port(), http::verb::delete_, execd + "/files?path=/w/p/README.md&path=/missing").status, 200u);
    EXPECT_EQ(get("/files/download?path=/w/p/README.md").status, 404u);
    EXPECT_EQ(call(s.port(), http::verb::delete_, execd + "/directories?path=/w").status, 200u);
    EXPECT_EQ(get("/directories/list?path=/w").status, 404u) << "rm -rf";
    EXPECT_EQ(call(s.port(), http::verb::post, execd + "/directories", R"(["/x"])").status, 400u);
}
