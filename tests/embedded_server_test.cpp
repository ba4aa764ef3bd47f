// The emulator on its own, over real loopback sockets: each backend profile and named fault
// answers with the shapes the reference notes record for real deployments.
#include <ngfail/event_id.hpp>
#include <ngfail/opensandbox/embedded_server.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using namespace std::chrono_literals;
using ngfail::opensandbox::backend;
using ngfail::opensandbox::embedded_server;
using ngfail::opensandbox::fault;
using action = fault::action;
using testing::HasSubstr;

struct reply {
    unsigned status = 0;
    std::string body;
    http::fields headers;
    [[nodiscard]] json::object object() const { return json::parse(body).as_object(); }
};

// One request on a fresh connection.
reply call(unsigned short port, http::verb verb, const std::string& target, const std::string& body = "",
           const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) req.set(name, value);
    if (!body.empty()) {
        req.set(http::field::content_type, "application/json");
        req.body() = body;
    }
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    boost::beast::error_code ec;
    http::read(socket, buffer, parser, ec);  // a dropped stream keeps what arrived before the drop
    const auto& res = parser.get();
    return {res.result_int(), res.body(), res.base()};
}

std::string create(const embedded_server& s, const std::string& extra = "") {
    const auto r = call(s.port(), http::verb::post, "/v1/sandboxes",
                        R"({"image":{"uri":"python:3.11"},"entrypoint":["sleep","inf"])" + extra + "}");
    EXPECT_EQ(r.status, 202u) << r.body;
    return std::string(r.object().at("id").as_string());
}

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
    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(status_of(s, id).at("state"), "Running");
    EXPECT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/ping").status, 200u);
}

TEST(embedded_server, use_server_proxy_chooses_the_proxy_or_a_direct_endpoint_that_both_serve_execd) {
    embedded_server s;
    const std::string id = create(s);
    const auto direct = call(s.port(), http::verb::get, "/v1/sandboxes/" + id + "/endpoints/44772").object();
    EXPECT_EQ(direct.at("endpoint"),
              json::value("127.0.0.1:" + std::to_string(s.direct_port()) + "/sandboxes/" + id + "/port/44772"));
    const auto proxied =
        call(s.port(), http::verb::get, "/v1/sandboxes/" + id + "/endpoints/44772?use_server_proxy=true").object();
    EXPECT_EQ(proxied.at("endpoint"),
              json::value("127.0.0.1:" + std::to_string(s.port()) + "/sandboxes/" + id + "/proxy/44772"));
    EXPECT_EQ(call(s.direct_port(), http::verb::get, "/sandboxes/" + id + "/port/44772/ping").status, 200u);
    EXPECT_EQ(call(s.port(), http::verb::get, "/sandboxes/" + id + "/proxy/44772/ping").status, 200u);
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

// ---- the backend profiles and their named faults -------------------------------------------------

struct profile_case {
    backend b;
    std::string prefix;
    std::string running_reason;
    std::string oom_reason;
    std::string oom_message;  // a part of it
    unsigned image_pull_status;
    std::string image_pull_code;
    friend void PrintTo(const profile_case& c, std::ostream* os) { *os << ngfail::opensandbox::name(c.b); }
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
    [](const auto& info) { return std::string(ngfail::opensandbox::name(info.param.b)); });

// ---- faults as JSON ----------------------------------------------------------------------------

TEST(parse_fault, reads_every_field_and_rejects_what_it_does_not_know) {
    const auto f = ngfail::opensandbox::parse_fault(
        R"({"operation":"create","action":"http_error","status":502,"code":"BACKEND_CONNECTION_FAILED",)"
        R"("message":"m","retry_after_s":7,"times":2})");
    ASSERT_TRUE(f) << f.error().reason();
    EXPECT_EQ(f.value().status, 502);
    EXPECT_EQ(f.value().retry_after_s, 7);
    EXPECT_EQ(f.value().times, 2);
    EXPECT_EQ(ngfail::opensandbox::parse_fault(R"({"operation":"exec","action":"stall","stall_ms":250})").value().stall_for,
              250ms);
    for (const char* bad : {R"({"action":"http_error"})", R"({"operation":"x","action":"teleport"})",
                            R"({"operation":"x","status":99})", R"({"operation":"x","times":0})", "[1]", "{"}) {
        const auto r = ngfail::opensandbox::parse_fault(bad);
        EXPECT_FALSE(r) << bad;
        if (!r) {
            EXPECT_EQ(r.error().code(), ngfail::kind::provider_request_rejected) << bad;
        }
    }
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
