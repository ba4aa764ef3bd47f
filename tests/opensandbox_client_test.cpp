// The OpenSandbox client against the embedded server, over real loopback sockets: every
// row of the evidence table that a fault can produce, through both faces.
#include <ngfail/json.hpp>
#include <ngfail/opensandbox.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

namespace {

using namespace std::chrono_literals;
using ngfail::delivery;
using ngfail::kind;
using ngfail::opensandbox::client;
using ngfail::opensandbox::embedded_server;
using ngfail::opensandbox::fault;
using action = ngfail::opensandbox::fault::action;

constexpr std::string_view secret = "sk-test-SECRET-1234";

struct expected {
    kind k;
    std::optional<delivery> d;
};

class opensandbox_e2e : public testing::Test {
protected:
    embedded_server server{{.api_key = std::string(secret)}};
    client sandboxes{{.port = server.port(), .api_key = std::string(secret), .timeout = 5s}};

    std::string new_sandbox() { return sandboxes.create({}).id; }

    // Runs the throwing call and the try_ call (each meets the fault once), and checks that
    // both give the expected kind and delivery, the same reason, and a structured cause.
    // `same_reason` is false where each call makes a new sandbox, whose id the reason names.
    template <class T>
    void expect_both_faces(const std::function<void()>& throwing, const std::function<ngfail::result<T>()>& trying,
                           expected want, bool same_reason = true) {
        std::string thrown_reason;
        try {
            throwing();
            ADD_FAILURE() << "nothing was thrown";
        } catch (const ngfail::sandbox_failure& e) {
            EXPECT_EQ(e.code(), want.k) << "threw " << e.what();
            EXPECT_EQ(e.sandbox().delivery, want.d) << e.what();
            EXPECT_EQ(e.sandbox().provider, "opensandbox");
            thrown_reason = e.reason();
            expect_structured_cause(e);
            check_no_secret(std::current_exception());
        }
        const auto r = trying();
        ASSERT_TRUE(r.has_error()) << "try_ face succeeded";
        EXPECT_EQ(r.error().code(), want.k) << r.error().what();
        EXPECT_EQ(std::get<ngfail::sandbox_details>(r.error().details()).delivery, want.d);
        if (same_reason) {
            EXPECT_EQ(r.error().reason(), thrown_reason);
        }
    }

    static void expect_structured_cause(const ngfail::sandbox_failure& e) {
        if (e.code() == kind::provider_command_terminated || e.code() == kind::provider_oom_killed) return;
        if (e.code() == kind::provider_start_failed && !e.http_status()) return;  // a status, no error
        try {
            std::rethrow_if_nested(e);
            ADD_FAILURE() << "no cause for " << e.what();
        } catch (const ngfail::opensandbox::api_error& api) {
            EXPECT_EQ(e.http_status(), api.status());
        } catch (const ngfail::opensandbox::connection_error&) {
        } catch (const std::system_error& s) {
            EXPECT_EQ(s.code(), ngfail::opensandbox::errc::malformed_response);
        }
    }

    // The key appears in nothing a failure produces: what(), reasons, details, report, header.
    static void check_no_secret(const std::exception_ptr& e) {
        const auto report = ngfail::report_for(e);
        const std::string text = ngfail::to_json(report) + ngfail::encode_header(report);
        EXPECT_THAT(text, testing::Not(testing::HasSubstr(secret)));
        for (const auto& level : ngfail::cause_chain(e)) {
            EXPECT_THAT(std::string(level.what()), testing::Not(testing::HasSubstr(secret)));
        }
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            EXPECT_THAT(ex.what(), testing::Not(testing::HasSubstr(secret)));
        }
    }

    void inject_twice(fault f) {
        f.times = 2;
        server.inject(std::move(f));
    }
};

// ---- the happy path ------------------------------------------------------------------------------

TEST_F(opensandbox_e2e, a_sandbox_lives_through_create_get_exec_renew_kill) {
    const auto box = sandboxes.create({.image = "python:3.11", .metadata = {{"team", "rl"}}});
    EXPECT_EQ(box.state, "Running");
    EXPECT_EQ(sandboxes.get(box.id).id, box.id);
    const auto ran = sandboxes.exec(box.id, {.command = "echo hello"});
    EXPECT_EQ(ran.exit_code, 0);
    EXPECT_EQ(ran.stdout_text, "hello\n");
    EXPECT_FALSE(ran.execution_id.empty());
    const auto status = sandboxes.exec_status(box.id, ran.execution_id);
    EXPECT_EQ(status.exit_code, 0);
    EXPECT_FALSE(status.running);
    EXPECT_EQ(sandboxes.renew(box.id, "2031-01-01T00:00:00Z"), "2031-01-01T00:00:00Z");
    EXPECT_THAT(sandboxes.endpoint(box.id).endpoint, testing::HasSubstr("/proxy/44772"));
    sandboxes.kill(box.id);
    EXPECT_THROW((void)sandboxes.get(box.id), ngfail::sandbox_failure);
}

TEST_F(opensandbox_e2e, a_non_zero_exit_is_a_normal_result) {
    const auto id = new_sandbox();
    const auto ran = sandboxes.exec(id, {.command = "exit 3"});
    EXPECT_EQ(ran.exit_code, 3);
    EXPECT_EQ(ran.error_value, "3");
    EXPECT_TRUE(sandboxes.try_exec(id, {.command = "exit 1"}));
}

TEST_F(opensandbox_e2e, pings_during_a_long_command_are_skipped) {
    const auto ran = sandboxes.exec(new_sandbox(), {.command = "sleep 500"});
    EXPECT_EQ(ran.exit_code, 0);
}

// ---- one test per row a fault can produce --------------------------------------------------------

TEST_F(opensandbox_e2e, row_2_an_oom_killed_command) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::signal_exit));
    inject_twice(fault::sandbox_status("get", "Running", "OOMKilled"));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "python big.py"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "python big.py"}); },
                                                        {kind::provider_oom_killed, delivery::delivered});
}

TEST_F(opensandbox_e2e, row_3_a_command_killed_by_a_signal) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::signal_exit));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "sleep 10"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "sleep 10"}); },
                                                        {kind::provider_command_terminated, delivery::delivered});
}

TEST_F(opensandbox_e2e, row_4_a_sandbox_that_cannot_start) {
    inject_twice(fault::sandbox_status("create", "Failed", "ImagePullBackOff"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({.image = "nope:latest"}); },
                                                         [&] { return sandboxes.try_create({.image = "nope:latest"}); },
                                                         {kind::provider_start_failed, delivery::delivered}, false);
    inject_twice(fault::http_error("create", 504, "KUBERNETES::POD_READY_TIMEOUT", "Pod did not become ready"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::provider_start_failed, std::nullopt});
}

TEST_F(opensandbox_e2e, row_5_rejected_credentials) {
    client wrong_key({.port = server.port(), .api_key = "sk-wrong", .timeout = 5s});
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)wrong_key.create({}); },
                                                         [&] { return wrong_key.try_create({}); },
                                                         {kind::provider_credentials_rejected, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_6_quota_with_retry_after) {
    inject_twice(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "pool is full", 7));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::provider_quota_exhausted, delivery::not_sent});
    server.inject(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "pool is full", 7));
    const auto r = sandboxes.try_create({});
    EXPECT_EQ(std::get<ngfail::sandbox_details>(r.error().details()).retry_after, 7s);
    inject_twice(fault::http_error("create", 403, "KUBERNETES::QUOTA_EXCEEDED", "namespace quota"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::provider_quota_exhausted, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_7_a_lost_sandbox) {
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.get("sbx-missing"); },
                                                         [&] { return sandboxes.try_get("sbx-missing"); },
                                                         {kind::provider_sandbox_lost, delivery::not_sent});
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::drop_after_init));
    inject_twice(fault::sandbox_status("get", "Terminated", "SandboxExpired"));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::provider_sandbox_lost, delivery::delivered});
}

// ---- replay safety: delivery is evidence -----------------------------------------------------------

TEST_F(opensandbox_e2e, an_exec_that_started_is_never_replayed_whatever_the_status_probe_says) {
    client retrying({.port = server.port(), .api_key = std::string(secret), .timeout = 5s,
                     .retries = {.max_attempts = 3, .backoff = 1ms}});
    const auto id = retrying.create({}).id;
    server.inject(fault::exec(action::drop_after_init));
    server.inject(fault::sandbox_status("get", "Failed", "FAILED"));
    const std::size_t before = server.requests();
    ngfail::request_failure_log log;
    const auto r = retrying.try_exec(id, {.command = "rm -rf /data && migrate"}, {.log = &log});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_sandbox_lost);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(r.error().details()).delivery, delivery::delivered);
    EXPECT_EQ(server.requests() - before, 3u) << "endpoint, command, status probe: one attempt only";
    EXPECT_TRUE(log.finish().events.empty()) << "no attempt was retried";
}

TEST_F(opensandbox_e2e, a_create_answered_with_a_failed_sandbox_is_not_replayed_and_the_sandbox_is_deleted) {
    client retrying({.port = server.port(), .api_key = std::string(secret), .timeout = 5s,
                     .retries = {.max_attempts = 3, .backoff = 1ms}});
    server.inject(fault::sandbox_status("create", "Failed", "FAILED"));
    const std::size_t before = server.requests();
    const auto r = retrying.try_create({});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(std::get<ngfail::sandbox_details>(r.error().details()).delivery, delivery::delivered);
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("; deleted"));
    EXPECT_EQ(server.requests() - before, 2u) << "one create and its clean-up";
    const auto sandbox_id = std::get<ngfail::sandbox_details>(r.error().details()).sandbox_id;
    ASSERT_TRUE(sandbox_id);
    const auto gone = sandboxes.try_get(*sandbox_id);
    ASSERT_TRUE(gone.has_error()) << "the failed sandbox was left behind";
    EXPECT_EQ(gone.error().code(), kind::provider_sandbox_lost);
}

TEST_F(opensandbox_e2e, a_caller_may_keep_a_failed_sandbox) {
    server.inject(fault::sandbox_status("create", "Failed", "FAILED"));
    const auto r = sandboxes.try_create({.delete_if_failed = false});
    ASSERT_TRUE(r.has_error());
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("kept, as asked"));
    const auto sandbox_id = std::get<ngfail::sandbox_details>(r.error().details()).sandbox_id;
    EXPECT_TRUE(sandboxes.try_get(*sandbox_id)) << "still there";
}

TEST_F(opensandbox_e2e, row_8_the_provider_is_not_ready) {
    const auto id = new_sandbox();
    inject_twice(fault::http_error("endpoint", 404, "KUBERNETES::POD_IP_NOT_AVAILABLE", "Pod IP is not yet available"));
    expect_both_faces<ngfail::opensandbox::endpoint_info>([&] { (void)sandboxes.endpoint(id); },
                                                          [&] { return sandboxes.try_endpoint(id); },
                                                          {kind::provider_unavailable, delivery::not_sent});
    inject_twice(fault::http_error("create", 503, "KUBERNETES::INITIALIZATION_ERROR", "k8s client not ready"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::provider_unavailable, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_9_the_backend_is_unreachable) {
    inject_twice(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED", "Could not connect to the backend"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::transport_unreachable, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_10_a_state_conflict) {
    const auto id = new_sandbox();
    inject_twice(fault::http_error("renew", 409, "DOCKER::INVALID_EXPIRATION", "sandbox has no expiry"));
    expect_both_faces<std::string>([&] { (void)sandboxes.renew(id, "2031-01-01T00:00:00Z"); },
                                   [&] { return sandboxes.try_renew(id, "2031-01-01T00:00:00Z"); },
                                   {kind::provider_state_conflict, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_11_a_rejected_request) {
    const auto id = new_sandbox();
    expect_both_faces<ngfail::opensandbox::endpoint_info>([&] { (void)sandboxes.endpoint(id, -5); },
                                                          [&] { return sandboxes.try_endpoint(id, -5); },
                                                          {kind::provider_request_rejected, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_12_a_server_fault_on_exec) {
    const auto id = new_sandbox();
    inject_twice(fault::http_error("exec", 500, "RUNTIME_ERROR", "runtime failed before the first event"));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::provider_unavailable, delivery::possibly_delivered});
}

TEST_F(opensandbox_e2e, row_13_a_closed_port) {
    auto closed = std::make_unique<embedded_server>();
    const auto port = closed->port();
    closed.reset();
    client nowhere({.port = port, .api_key = std::string(secret), .timeout = 2s});
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)nowhere.create({}); },
                                                         [&] { return nowhere.try_create({}); },
                                                         {kind::transport_unreachable, delivery::not_sent});
}

TEST_F(opensandbox_e2e, row_15_a_malformed_reply) {
    const auto id = new_sandbox();
    inject_twice(fault::malformed("get"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.get(id); },
                                                         [&] { return sandboxes.try_get(id); },
                                                         {kind::protocol_violation, delivery::possibly_delivered});
}

TEST_F(opensandbox_e2e, row_16_a_stream_dropped_before_init) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::drop_before_init));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::transport_peer_drop, delivery::possibly_delivered});
}

TEST_F(opensandbox_e2e, row_16_a_stream_dropped_after_init) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::drop_after_init));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::transport_peer_drop, delivery::delivered});
}

TEST_F(opensandbox_e2e, row_16_a_stream_without_a_terminal_event) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::no_terminal_event));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::transport_peer_drop, delivery::delivered});
}

TEST_F(opensandbox_e2e, row_17_a_stalled_reply_times_out) {
    const auto id = new_sandbox();
    inject_twice(fault::stall("get", 3s));
    const ngfail::opensandbox::call_options quick{.timeout = 300ms};
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.get(id, quick); },
                                                         [&] { return sandboxes.try_get(id, quick); },
                                                         {kind::transport_timeout, delivery::possibly_delivered});
}

// ---- retries ------------------------------------------------------------------------------------

TEST_F(opensandbox_e2e, a_retried_create_returns_the_sandbox_and_reports_the_failed_attempt) {
    client retrying({.port = server.port(), .api_key = std::string(secret), .timeout = 5s,
                     .retries = {.max_attempts = 3, .backoff = 10ms}});
    server.inject(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED", "Could not connect to the backend"));
    ngfail::request_failure_log log;
    const auto box = retrying.create({}, {.log = &log});
    EXPECT_EQ(box.state, "Running");
    const auto report = log.finish();
    EXPECT_FALSE(report.failure_id) << "the request succeeded";
    ASSERT_EQ(report.events.size(), 2u) << "the attempt and its cause";
    const auto attempt = std::find_if(report.events.begin(), report.events.end(),
                                      [](const auto& e) { return e.second.kind == "transport_unreachable"; });
    ASSERT_NE(attempt, report.events.end());
    EXPECT_EQ(std::get<ngfail::sandbox_details>(attempt->second.details).delivery, delivery::not_sent);
}

TEST_F(opensandbox_e2e, a_500_on_exec_is_never_retried) {
    client retrying({.port = server.port(), .api_key = std::string(secret), .timeout = 5s,
                     .retries = {.max_attempts = 5, .backoff = 10ms}});
    const auto id = new_sandbox();
    server.inject(fault::http_error("exec", 500, "RUNTIME_ERROR", "boom"));  // once: a retry would succeed
    ngfail::request_failure_log log;
    const auto r = retrying.try_exec(id, {.command = "ls"}, {.log = &log});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_unavailable);
    EXPECT_TRUE(log.finish().events.empty()) << "no attempt was retried";
}

TEST_F(opensandbox_e2e, retries_are_off_by_default) {
    server.inject(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED", "once"));
    EXPECT_TRUE(sandboxes.try_create({}).has_error());
}

// ---- secrets ------------------------------------------------------------------------------------

TEST_F(opensandbox_e2e, the_api_key_appears_in_no_failure_of_any_fault) {
    const auto id = new_sandbox();
    std::vector<std::function<void()>> provoke{
        [&] { server.inject(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED", "x")); (void)sandboxes.create({}); },
        [&] { server.inject(fault::exec(action::signal_exit)); (void)sandboxes.exec(id, {.command = "x"}); },
        [&] { server.inject(fault::exec(action::drop_before_init)); (void)sandboxes.exec(id, {.command = "x"}); },
        [&] { server.inject(fault::exec(action::drop_after_init)); (void)sandboxes.exec(id, {.command = "x"}); },
        [&] { server.inject(fault::exec(action::no_terminal_event)); (void)sandboxes.exec(id, {.command = "x"}); },
        [&] { server.inject(fault::malformed("get")); (void)sandboxes.get(id); },
        [&] { server.inject(fault::stall("get", 2s)); (void)sandboxes.get(id, {.timeout = 200ms}); },
        [&] { (void)sandboxes.get("sbx-missing"); },
        [&] { client other({.port = server.port(), .api_key = "sk-test-SECRET-wrong", .timeout = 5s}); (void)other.get(id); },
        [&] { server.inject(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "full", 3)); (void)sandboxes.create({}); },
    };
    for (std::size_t i = 0; i < provoke.size(); ++i) {
        try {
            provoke[i]();
            ADD_FAILURE() << "fault " << i << " did not fail";
        } catch (const ngfail::sandbox_failure&) {
            check_no_secret(std::current_exception());
        }
    }
}

}  // namespace
