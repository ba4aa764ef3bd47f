// The CLI's OTLP export end to end: the real OTLP/HTTP exporters (protobuf and JSON) of the
// built `ngfail` binary, configured by OTEL_* variables only, deliver to a receiver in this
// test: `ngfail sandbox exec` meeting a fault delivers its failed span and its metrics;
// `ngfail serve --otlp` delivers execd's metric names.
#include "support/cli_run.hpp"
#include "support/loopback_http.hpp"
#include "support/raw_client.hpp"

#include <ngfail/opensandbox.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <csignal>
#include <iostream>
#include <mutex>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using ngfail::opensandbox::testing::embedded_server;
using ngfail::opensandbox::testing::fault;
using testing::HasSubstr;

// What an OpenTelemetry Collector's OTLP/HTTP receiver would get.
class otlp_receiver {
public:
    struct export_request {
        std::string path;          // /v1/traces, /v1/metrics
        std::string content_type;  // application/x-protobuf, application/json
        std::string body;
    };

    otlp_receiver()
        : server_([this](const ngfail_test::request& req) {
              {
                  std::lock_guard lock(mutex_);
                  received_.push_back({std::string(req.target()), std::string(req[ngfail_test::beast_http::field::content_type]),
                                       req.body()});
              }
              ngfail_test::response res(ngfail_test::beast_http::status::ok, req.version());
              res.set(ngfail_test::beast_http::field::content_type, req[ngfail_test::beast_http::field::content_type]);
              if (req[ngfail_test::beast_http::field::content_type] == "application/json") res.body() = "{}";
              return res;
          }) {}

    [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }

    // Every body sent to `path`, joined.
    [[nodiscard]] std::string all(std::string_view path, std::string_view content_type) {
        std::lock_guard lock(mutex_);
        std::string joined;
        for (const auto& r : received_) {
            if (r.path == path) {
                EXPECT_EQ(r.content_type, content_type);
                joined += r.body;
            }
        }
        return joined;
    }

    [[nodiscard]] std::vector<export_request> received() {
        std::lock_guard lock(mutex_);
        return received_;
    }

private:
    std::mutex mutex_;
    std::vector<export_request> received_;
    ngfail_test::loopback_server server_;
};

// Every span in an OTLP/JSON traces body, with its status code and attributes as text.
struct json_span {
    std::string name;
    int status = 0;  // 2: ERROR
    std::map<std::string, std::string> attributes;
    std::string trace_id, parent_span_id;
};

std::vector<json_span> spans_in(const std::string& body) {
    std::vector<json_span> out;
    const auto v = boost::json::parse(body);
    for (const auto& rs : v.at("resourceSpans").as_array()) {
        for (const auto& ss : rs.at("scopeSpans").as_array()) {
            for (const auto& s : ss.at("spans").as_array()) {
                json_span span{.name = std::string(s.at("name").as_string()), .status = 0, .attributes = {},
                               .trace_id = std::string(s.at("traceId").as_string()), .parent_span_id = {}};
                if (const auto* parent = s.as_object().if_contains("parentSpanId")) {
                    span.parent_span_id = std::string(parent->as_string());
                }
                if (const auto* status = s.as_object().if_contains("status")) {
                    if (const auto* code = status->as_object().if_contains("code")) span.status = static_cast<int>(code->to_number<double>());
                }
                if (const auto* attributes = s.as_object().if_contains("attributes")) {
                    for (const auto& a : attributes->as_array()) {
                        const auto& value = a.at("value").as_object();
                        span.attributes[std::string(a.at("key").as_string())] =
                            value.contains("stringValue") ? std::string(value.at("stringValue").as_string())
                                                          : boost::json::serialize(value);
                    }
                }
                out.push_back(std::move(span));
            }
        }
    }
    return out;
}

struct protocol_case {
    std::string protocol;      // OTEL_EXPORTER_OTLP_PROTOCOL
    std::string content_type;  // what it sends
};

class sandbox_exec_export : public testing::TestWithParam<protocol_case> {};

TEST_P(sandbox_exec_export, a_failed_exec_delivers_its_span_and_metrics) {
    otlp_receiver receiver;
    embedded_server server;
    ngfail::opensandbox::client c({.port = server.port(), .timeout = 5s});
    const std::string id = c.create({}).id;
    server.inject(fault::exec(fault::action::oom_kill));

    const auto run = ngfail_test::run_ngfail(
        "sandbox exec " + id + " --server http://127.0.0.1:" + std::to_string(server.port()) + " -- echo hi",
        {.limit = 60s,
         .env = "OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver.endpoint() + " OTEL_EXPORTER_OTLP_PROTOCOL=" +
                GetParam().protocol + " OTEL_SERVICE_NAME=worker-7"});
    EXPECT_EQ(run.status, 1) << run.err;
    // (a signal's exit, with the sandbox's OOM named only in diagnostics text: a terminated command)
    EXPECT_THAT(run.err, HasSubstr("provider_command_terminated"));

    const std::string traces = receiver.all("/v1/traces", GetParam().content_type);
    const std::string metrics = receiver.all("/v1/metrics", GetParam().content_type);
    for (const std::string_view expected : {"opensandbox.exec", "opensandbox.exec attempt", "error.type",
                                            "provider_command_terminated", "killed_by_signal", "worker-7"}) {
        EXPECT_THAT(traces, HasSubstr(std::string(expected)));
    }
    for (const std::string_view expected : {"ngfail.client.operation.duration", "ngfail.client.failures",
                                            "provider_command_terminated", "ngfail.delivery"}) {
        EXPECT_THAT(metrics, HasSubstr(std::string(expected)));
    }
    EXPECT_THAT(metrics, testing::Not(HasSubstr(id))) << "no id on a metric";
    if (GetParam().protocol != "http/json") return;
    std::cout << traces << '\n' << metrics << '\n';  // for the suite's secrets scan
    const auto spans = spans_in(traces);
    const auto exec = std::find_if(spans.begin(), spans.end(), [](const json_span& s) { return s.name == "opensandbox.exec"; });
    ASSERT_NE(exec, spans.end());
    EXPECT_EQ(exec->status, 2) << "STATUS_CODE_ERROR";
    EXPECT_EQ(exec->attributes.at("error.type"), "provider_command_terminated");
    EXPECT_EQ(exec->attributes.at("ngfail.evidence_row"), "killed_by_signal");
    EXPECT_EQ(exec->attributes.at("ngfail.sandbox_id"), id);
    EXPECT_EQ(exec->attributes.at("ngfail.program"), "echo");
    EXPECT_THAT(metrics, HasSubstr("\"explicitBounds\":[0.005,")) << "seconds' buckets for a duration in seconds";
}

INSTANTIATE_TEST_SUITE_P(protocols, sandbox_exec_export,
                         testing::Values(protocol_case{"http/protobuf", "application/x-protobuf"},
                                         protocol_case{"http/json", "application/json"}),
                         [](const auto& info) { return info.param.protocol == "http/json" ? "json" : "protobuf"; });

// `ngfail serve ARGS` in the background, with `env` added to the test's environment.
class served {
public:
    served(const std::vector<std::string>& args, const std::vector<std::string>& env) {
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        std::vector<std::string> words{NGFAIL_CLI_PATH, "serve"};
        words.insert(words.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        std::vector<std::string> environment(env);
        for (char** e = environ; *e; ++e) environment.emplace_back(*e);
        std::vector<char*> envp;
        for (auto& e : environment) envp.push_back(e.data());
        envp.push_back(nullptr);
        const int spawned = ::posix_spawn(&pid_, NGFAIL_CLI_PATH, &actions, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        if (spawned != 0) throw std::runtime_error("posix_spawn failed");
        // Its first line: "listening on http://127.0.0.1:PORT".
        std::string line;
        char c = 0;
        while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
        out_ = out[0];
        const auto colon = line.rfind(':');
        if (!line.starts_with("listening on ") || colon == std::string::npos) throw std::runtime_error("serve said: " + line);
        port_ = static_cast<unsigned short>(std::stoi(line.substr(colon + 1)));
    }
    ~served() {
        if (pid_ > 0) stop();
        ::close(out_);
    }

    [[nodiscard]] unsigned short port() const { return port_; }

    // SIGTERM, then its exit status.
    int stop() {
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    unsigned short port_ = 0;
};

// An observer whose every attempt has one trace parent, as an instrumented client's would.
class fixed_parent final : public ngfail::opensandbox::call_observer {
public:
    static constexpr std::string_view trace_id = "0af7651916cd43dd8448eb211c80319c";
    static constexpr std::string_view span_id = "b7ad6b7169203331";

    std::unique_ptr<ngfail::opensandbox::observed_call> begin(ngfail::opensandbox::operation, std::string_view,
                                                              std::span<const ngfail::opensandbox::trace_label>) override {
        return std::make_unique<call>();
    }

private:
    struct call final : ngfail::opensandbox::observed_call {
        std::string parent = "00-" + std::string(trace_id) + "-" + std::string(span_id) + "-01";
        std::string_view attempt_began(int) override { return parent; }
        void attempt_failed(const ngfail::failure&) override {}
        void ended(const ngfail::failure&, std::string_view) override {}
    };
};

TEST(serve_otlp, exports_execds_own_metrics_and_spans) {
    otlp_receiver receiver;
    served server({"--otlp", "--port", "0"},
                  {"OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver.endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"});
    ngfail::opensandbox::client c({.port = server.port(), .timeout = 5s, .observer = std::make_shared<fixed_parent>()});
    const std::string id = c.create({}).id;
    c.upload(id, "/workspace/a.txt", "data");
    EXPECT_EQ(c.download(id, "/workspace/a.txt"), "data");
    EXPECT_EQ(c.exec(id, {.command = "echo hi"}).stdout_text, "hi\n");
    // A method HTTP does not define is "_OTHER" on the metric and "HTTP" as the span's name.
    const std::string brewed = ngfail_test::exchange_raw(
        server.port(),
        "BREW /sandboxes/" + id + "/proxy/44772/ping HTTP/1.1\r\nHost: x\r\ntraceparent: 00-" +
            std::string(fixed_parent::trace_id) + "-" + std::string(fixed_parent::span_id) +
            "-01\r\nContent-Length: 0\r\n\r\n",
        5s, false, "\r\n\r\n");
    EXPECT_TRUE(brewed.starts_with("HTTP/1.1 404")) << brewed;
    EXPECT_EQ(server.stop(), 0);

    const std::string metrics = receiver.all("/v1/metrics", "application/json");
    for (const std::string_view expected : {"execd.http.request.duration", "execd.execution.duration",
                                            "execd.filesystem.operations.duration", "http_method", "http_route",
                                            "http_status_code", "/command", "run_command", "upload", "download",
                                            "\"success\"", "\"unit\":\"ms\"", "ngfail-serve"}) {
        EXPECT_THAT(metrics, HasSubstr(std::string(expected)));
    }
    EXPECT_THAT(metrics, HasSubstr("\"_OTHER\""));
    EXPECT_THAT(metrics, testing::Not(HasSubstr("BREW")));
    const auto spans = spans_in(receiver.all("/v1/traces", "application/json"));
    EXPECT_THAT(spans, testing::Contains(testing::Field(&json_span::name, "POST /command")));
    // Every execd request a call made, its create's readiness ping among them, is a child of
    // that call's attempt.
    EXPECT_THAT(spans, testing::Contains(testing::Field(&json_span::name, "GET /ping")));
    EXPECT_THAT(spans, testing::Contains(testing::Field(&json_span::name, "HTTP")));
    for (const auto& span : spans) {
        EXPECT_EQ(span.trace_id, fixed_parent::trace_id) << span.name;
        EXPECT_EQ(span.parent_span_id, fixed_parent::span_id) << span.name;
    }
}

TEST(serve_otlp, variables_it_cannot_honour_are_refused_in_one_line) {
    for (const std::string env : {"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_METRIC_EXPORT_INTERVAL=10000000000000",
                                  "OTEL_METRIC_EXPORT_INTERVAL=abc"}) {
        const auto run = ngfail_test::run_ngfail("serve --otlp --port 0", {.limit = 20s, .env = env});
        EXPECT_EQ(run.status, 2) << env;
        EXPECT_THAT(run.err, testing::StartsWith("ngfail serve: --otlp: OTEL_")) << env;
    }
}

TEST(sandbox_exec_export, a_collector_that_never_answers_delays_the_exit_by_seconds_at_most) {
    // A listener that never accepts, as a hung collector: the kernel completes each
    // connection, and no reply ever comes.
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor hung(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    embedded_server server;
    ngfail::opensandbox::client c({.port = server.port(), .timeout = 5s});
    const std::string id = c.create({}).id;
    const auto started = std::chrono::steady_clock::now();
    const auto run = ngfail_test::run_ngfail(
        "sandbox exec " + id + " --server http://127.0.0.1:" + std::to_string(server.port()) + " -- echo hi",
        {.limit = 60s,
         .env = "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:" + std::to_string(hung.local_endpoint().port()) +
                " OTEL_EXPORTER_OTLP_TIMEOUT=10000"});
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "hi\n");
    EXPECT_LT(std::chrono::steady_clock::now() - started, 15s) << "an export's wait is bounded at exit";
}

TEST(serve_otlp, an_endpoint_nobody_listens_on_changes_nothing_of_serving) {
    // Nothing listens at the endpoint: the server serves, and stops cleanly.
    served server({"--otlp", "--port", "0"}, {"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9", "OTEL_METRIC_EXPORT_INTERVAL=100"});
    ngfail::opensandbox::client c({.port = server.port(), .timeout = 5s});
    const std::string id = c.create({}).id;
    EXPECT_EQ(c.exec(id, {.command = "echo still"}).stdout_text, "still\n");
    EXPECT_EQ(server.stop(), 0);
}

}  // namespace
