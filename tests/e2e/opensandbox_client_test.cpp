// The OpenSandbox client against the embedded server, over real loopback sockets: every
// row of the evidence table that a fault can produce, through both faces, over HTTP and
// HTTPS, through the server proxy and direct endpoints.
#include "support/test_ca.hpp"
#include "support/transports.hpp"

#include <ngfail/json.hpp>
#include <ngfail/opensandbox.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include <functional>
#include <limits>
#include <set>

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

using ngfail_test::transport;

class opensandbox_e2e : public testing::TestWithParam<transport> {
protected:
    static ngfail::opensandbox::server_options server_options() {
        return ngfail_test::serving(GetParam(), {.api_key = std::string(secret), .ping_every = 50ms, .metrics_every = 20ms});
    }

    // Options for a client of this test's server and transport.
    [[nodiscard]] ngfail::opensandbox::client_options options(std::string_view key = secret,
                                                              std::chrono::milliseconds timeout = 5s) const {
        return ngfail_test::reaching(GetParam(), server.port(), {.api_key = std::string(key), .timeout = timeout});
    }

    embedded_server server{server_options()};
    client sandboxes{options()};

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

TEST_P(opensandbox_e2e, a_sandbox_lives_through_create_get_exec_renew_kill) {
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
    EXPECT_THAT(sandboxes.endpoint(box.id).endpoint,
                testing::HasSubstr("/sandboxes/" + box.id + (GetParam().proxy ? "/proxy/44772" : "/port/44772")))
        << "the server proxy only when use_server_proxy is asked for";
    sandboxes.kill(box.id);
    EXPECT_THROW((void)sandboxes.get(box.id), ngfail::sandbox_failure);
}

TEST_P(opensandbox_e2e, a_non_zero_exit_is_a_normal_result) {
    const auto id = new_sandbox();
    const auto ran = sandboxes.exec(id, {.command = "exit 3"});
    EXPECT_EQ(ran.exit_code, 3);
    EXPECT_EQ(ran.error_value, "3");
    EXPECT_TRUE(sandboxes.try_exec(id, {.command = "exit 1"}));
}

TEST_P(opensandbox_e2e, pings_during_a_long_command_are_skipped) {
    const auto ran = sandboxes.exec(new_sandbox(), {.command = "sleep 0.3"});  // pings every 50 ms
    EXPECT_EQ(ran.exit_code, 0);
}

// ---- one test per row a fault can produce --------------------------------------------------------

TEST_P(opensandbox_e2e, oom_killed_a_command_killed_for_memory) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::signal_exit));
    inject_twice(fault::sandbox_status("get", "Running", "OOMKilled"));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "python big.py"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "python big.py"}); },
                                                        {kind::provider_oom_killed, delivery::delivered});
}

TEST_P(opensandbox_e2e, killed_by_signal_a_command_killed_by_a_signal) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::signal_exit));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "sleep 10"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "sleep 10"}); },
                                                        {kind::provider_command_terminated, delivery::delivered});
}

TEST_P(opensandbox_e2e, start_failed_a_sandbox_that_cannot_start) {
    inject_twice(fault::sandbox_status("create", "Failed", "ImagePullBackOff"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({.image = "nope:latest"}); },
                                                         [&] { return sandboxes.try_create({.image = "nope:latest"}); },
                                                         {kind::provider_start_failed, delivery::delivered}, false);
    inject_twice(fault::http_error("create", 504, "KUBERNETES::POD_READY_TIMEOUT", "Pod did not become ready"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::provider_start_failed, std::nullopt});
}

TEST_P(opensandbox_e2e, credentials_rejected_a_wrong_api_key) {
    client wrong_key(options("sk-wrong"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)wrong_key.create({}); },
                                                         [&] { return wrong_key.try_create({}); },
                                                         {kind::provider_credentials_rejected, delivery::not_sent});
}

TEST_P(opensandbox_e2e, quota_exhausted_with_retry_after) {
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

TEST_P(opensandbox_e2e, sandbox_lost_a_deleted_sandbox) {
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

TEST_P(opensandbox_e2e, an_exec_that_started_is_never_replayed_whatever_the_status_probe_says) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms};
    client retrying(retrying_options);
    const auto id = retrying.create({}).id;
    server.inject(fault::exec(action::drop_after_init));
    server.inject(fault::sandbox_status("get", "Failed", "FAILED"));
    const std::size_t before = server.requests();
    ngfail::request_failure_log log;
    const auto r = retrying.try_exec(id, {.command = "rm -rf /data && migrate"}, {.log = &log});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_sandbox_lost);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(r.error().details()).delivery, delivery::delivered);
    // The endpoint is cached since create's readiness check.
    EXPECT_EQ(server.requests() - before, 2u) << "command, status probe: one attempt only";
    EXPECT_TRUE(log.finish().events.empty()) << "no attempt was retried";
}

TEST_P(opensandbox_e2e, a_create_answered_with_a_failed_sandbox_is_not_replayed_and_the_sandbox_is_deleted) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms};
    client retrying(retrying_options);
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

TEST_P(opensandbox_e2e, a_caller_may_keep_a_failed_sandbox) {
    server.inject(fault::sandbox_status("create", "Failed", "FAILED"));
    const auto r = sandboxes.try_create({.delete_if_failed = false});
    ASSERT_TRUE(r.has_error());
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("kept, as asked"));
    const auto sandbox_id = std::get<ngfail::sandbox_details>(r.error().details()).sandbox_id;
    EXPECT_TRUE(sandboxes.try_get(*sandbox_id)) << "still there";
}

TEST_P(opensandbox_e2e, provider_not_ready_the_pod_has_no_ip_yet) {
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

TEST_P(opensandbox_e2e, backend_unreachable_the_proxy_cannot_connect) {
    inject_twice(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED", "Could not connect to the backend"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.create({}); },
                                                         [&] { return sandboxes.try_create({}); },
                                                         {kind::transport_unreachable, delivery::not_sent});
}

TEST_P(opensandbox_e2e, state_conflict_a_second_pause) {
    const auto id = new_sandbox();
    inject_twice(fault::http_error("renew", 409, "DOCKER::INVALID_EXPIRATION", "sandbox has no expiry"));
    expect_both_faces<std::string>([&] { (void)sandboxes.renew(id, "2031-01-01T00:00:00Z"); },
                                   [&] { return sandboxes.try_renew(id, "2031-01-01T00:00:00Z"); },
                                   {kind::provider_state_conflict, delivery::not_sent});
}

TEST_P(opensandbox_e2e, request_rejected_a_bad_request) {
    const auto id = new_sandbox();
    expect_both_faces<ngfail::opensandbox::endpoint_info>([&] { (void)sandboxes.endpoint(id, -5); },
                                                          [&] { return sandboxes.try_endpoint(id, -5); },
                                                          {kind::provider_request_rejected, delivery::not_sent});
}

TEST_P(opensandbox_e2e, server_fault_on_exec) {
    const auto id = new_sandbox();
    inject_twice(fault::http_error("exec", 500, "RUNTIME_ERROR", "runtime failed before the first event"));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::provider_unavailable, delivery::possibly_delivered});
}

TEST_P(opensandbox_e2e, unreachable_at_connect_a_closed_port) {
    auto closed = std::make_unique<embedded_server>();
    auto to_closed = options(secret, 2s);
    to_closed.base_url = std::string(GetParam().tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(closed->port());
    closed.reset();
    client nowhere(to_closed);
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)nowhere.create({}); },
                                                         [&] { return nowhere.try_create({}); },
                                                         {kind::transport_unreachable, delivery::not_sent});
}

TEST_P(opensandbox_e2e, malformed_reply_is_a_protocol_violation) {
    const auto id = new_sandbox();
    inject_twice(fault::malformed("get"));
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.get(id); },
                                                         [&] { return sandboxes.try_get(id); },
                                                         {kind::protocol_violation, delivery::possibly_delivered});
}

TEST_P(opensandbox_e2e, peer_dropped_a_stream_before_init) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::drop_before_init));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::transport_peer_drop, delivery::possibly_delivered});
}

TEST_P(opensandbox_e2e, peer_dropped_a_stream_after_init) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::drop_after_init));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::transport_peer_drop, delivery::delivered});
}

TEST_P(opensandbox_e2e, peer_dropped_a_stream_without_a_terminal_event) {
    const auto id = new_sandbox();
    inject_twice(fault::exec(action::no_terminal_event));
    expect_both_faces<ngfail::opensandbox::exec_result>([&] { (void)sandboxes.exec(id, {.command = "ls"}); },
                                                        [&] { return sandboxes.try_exec(id, {.command = "ls"}); },
                                                        {kind::transport_peer_drop, delivery::delivered});
}

TEST_P(opensandbox_e2e, timed_out_a_stalled_reply) {
    const auto id = new_sandbox();
    inject_twice(fault::stall("get", 3s));
    const ngfail::opensandbox::call_options quick{.timeout = 300ms};
    expect_both_faces<ngfail::opensandbox::sandbox_info>([&] { (void)sandboxes.get(id, quick); },
                                                         [&] { return sandboxes.try_get(id, quick); },
                                                         {kind::transport_timeout, delivery::possibly_delivered});
}

// ---- retries ------------------------------------------------------------------------------------

TEST_P(opensandbox_e2e, a_retried_create_returns_the_sandbox_and_reports_the_failed_attempt) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 10ms};
    client retrying(retrying_options);
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

// A new user's 429 with `Retry-After: 7` was resent after 2 s (the wait capped at
// max_backoff): a resend sooner than the server asked only meets the same refusal.
TEST_P(opensandbox_e2e, a_retry_after_is_waited_out_whole_or_the_call_ends_saying_why) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms, .max_backoff = 2000ms};
    client retrying(retrying_options);
    server.inject(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "pool is full", 1));
    const auto start = std::chrono::steady_clock::now();
    const auto box = retrying.try_create({});
    ASSERT_TRUE(box) << box.error().what();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 1s) << "resent no sooner than the server asked";

    server.inject(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "pool is full", 7));
    const std::size_t before = server.requests();
    const auto refused = retrying.try_create({});
    ASSERT_FALSE(refused);
    EXPECT_EQ(server.requests() - before, 1u) << "not resent";
    EXPECT_EQ(refused.error().code(), kind::provider_quota_exhausted);
    EXPECT_EQ(ngfail::delivery_of(refused.error()), delivery::not_sent);
    EXPECT_THAT(std::string(refused.error().reason()),
                testing::HasSubstr("not resent: the server asked for a wait of 7000 ms (Retry-After), more than "
                                   "the client's max_backoff (2000 ms)"));
    ASSERT_TRUE(refused.error().cause()) << "the 429 itself";

    // A caller's allowance with less time left than the server asks ends the call the same way.
    ngfail::policy::retry_allowance allowance({.attempts = 3, .elapsed = 3s});
    server.inject(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "pool is full", 7));
    const auto short_of_time = retrying.try_create({}, {.allowance = &allowance});
    ASSERT_FALSE(short_of_time);
    EXPECT_THAT(std::string(short_of_time.error().reason()), testing::HasSubstr("more than the time its allowance has left"));
}

TEST_P(opensandbox_e2e, a_500_on_exec_is_never_retried) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 5, .backoff = 10ms};
    client retrying(retrying_options);
    const auto id = new_sandbox();
    server.inject(fault::http_error("exec", 500, "RUNTIME_ERROR", "boom"));  // once: a retry would succeed
    ngfail::request_failure_log log;
    const auto r = retrying.try_exec(id, {.command = "ls"}, {.log = &log});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_unavailable);
    EXPECT_TRUE(log.finish().events.empty()) << "no attempt was retried";
}

TEST_P(opensandbox_e2e, an_idempotent_get_is_retried_after_a_server_fault_that_may_have_arrived) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms};
    client retrying(retrying_options);
    const auto id = new_sandbox();
    server.inject(fault::http_error("get", 500, "RUNTIME_ERROR", "boom"));  // once
    ngfail::request_failure_log log;
    const auto r = retrying.try_get(id, {.log = &log});
    ASSERT_TRUE(r.has_value()) << r.error().what();
    const auto report = log.finish();
    ASSERT_FALSE(report.events.empty()) << "the failed attempt is kept";
    const auto attempt = std::find_if(report.events.begin(), report.events.end(),
                                      [](const auto& e) { return e.second.kind == "provider_unavailable"; });
    ASSERT_NE(attempt, report.events.end());
    EXPECT_EQ(std::get<ngfail::sandbox_details>(attempt->second.details).delivery, delivery::possibly_delivered);
}

TEST_P(opensandbox_e2e, a_get_that_fails_every_attempt_says_how_many_and_keeps_the_last_as_its_cause) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms};
    client retrying(retrying_options);
    const auto id = new_sandbox();
    auto boom = fault::http_error("get", 503, "UNAVAILABLE", "busy");
    boom.times = 3;
    server.inject(boom);
    ngfail::request_failure_log log;
    const auto r = retrying.try_get(id, {.log = &log});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_unavailable) << "the last attempt's kind";
    EXPECT_EQ(r.error().http_status(), 503);
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("after 3 attempts"));
    ASSERT_TRUE(r.error().cause());
    EXPECT_EQ(ngfail::delivery_of(r.error()), delivery::possibly_delivered) << "the last attempt's evidence";
    const auto earlier = log.finish().events;
    EXPECT_EQ(std::count_if(earlier.begin(), earlier.end(),
                            [](const auto& e) { return e.second.kind == "provider_unavailable"; }),
              2)
        << "the two attempts before it";
}

TEST_P(opensandbox_e2e, a_refusal_the_same_request_would_get_again_is_never_retried) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms};
    client retrying(retrying_options);
    const auto id = new_sandbox();
    struct refusal {
        int status;
        const char* code;
        kind expected;
        delivery delivered = delivery::not_sent;
    };
    for (const refusal& r : {refusal{401, "UNAUTHORIZED", kind::provider_credentials_rejected},
                             refusal{400, "INVALID_PARAMETER", kind::provider_request_rejected},
                             refusal{404, "SANDBOX_NOT_FOUND", kind::provider_sandbox_lost},
                             refusal{501, "NOT_IMPLEMENTED", kind::provider_unavailable, delivery::possibly_delivered}}) {
        server.inject(fault::http_error("get", r.status, r.code, "refused"));  // once: a retry would succeed
        const auto before = server.requests();
        const auto got = retrying.try_get(id);
        ASSERT_TRUE(got.has_error()) << r.status;
        EXPECT_EQ(got.error().code(), r.expected) << got.error().what();
        EXPECT_EQ(ngfail::delivery_of(got.error()), r.delivered) << r.status;
        EXPECT_EQ(server.requests() - before, 1u) << r.status << ": one attempt, the answer would not change";
    }
    server.inject(fault::http_error("get", 429, "RATE_LIMITED", "slow down"));
    const auto before = server.requests();
    EXPECT_TRUE(retrying.try_get(id)) << "a 429 is still retried";
    EXPECT_EQ(server.requests() - before, 2u);
}

TEST_P(opensandbox_e2e, an_answer_is_not_retried_even_for_an_idempotent_get) {
    auto retrying_options = options();
    retrying_options.retries = {.max_attempts = 3, .backoff = 1ms};
    client retrying(retrying_options);
    const auto id = new_sandbox();
    const auto run = retrying.try_exec(id, {.command = "sleep 5", .background = true});
    ASSERT_TRUE(run.has_value()) << run.error().what();
    server.inject({.operation = "exec_status", .what = action::signal_exit, .times = 3});
    const std::size_t before = server.requests();
    const auto status = retrying.try_exec_status(id, run.value().execution_id);
    ASSERT_TRUE(status.has_error());
    EXPECT_EQ(status.error().code(), kind::provider_command_terminated);
    EXPECT_EQ(server.requests() - before, 1u) << "a command killed by a signal stays killed: no second ask";
}

// One logical request, one budget: the client's retries spend the caller's allowance.
void inject_429_drop_503(embedded_server& server) {
    server.inject(fault::http_error("get", 429, "RATE_LIMITED", "slow down"));
    server.inject({.operation = "get", .what = action::stall, .stall_for = 20ms});  // then closes: a drop
    server.inject(fault::http_error("get", 503, "SERVICE_UNAVAILABLE", "busy"));
}

TEST_P(opensandbox_e2e, a_429_a_drop_and_a_503_spend_one_allowance) {
    // A connection of its own for each request: a drop on a kept-alive one would be taken for
    // the server's idle close and sent again for free.
    auto unpooled_options = options();
    unpooled_options.max_idle_connections = 0;
    client unpooled(unpooled_options);
    const auto id = new_sandbox();
    inject_429_drop_503(server);
    ngfail::policy::retry_allowance budget({.attempts = 3, .base_delay = 1ms, .max_delay = 1ms});
    const std::size_t before = server.requests();
    const auto r = unpooled.try_get(id, {.allowance = &budget});  // the client's own retries are off
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_unavailable) << r.error().what();
    EXPECT_EQ(server.requests() - before, 3u) << "three attempts in all, counted by the server";
    ASSERT_EQ(budget.attempts().size(), 3u);
    EXPECT_EQ(budget.attempts()[0].code(), kind::provider_quota_exhausted);
    EXPECT_EQ(budget.attempts()[1].code(), ngfail::domain::transport);
    EXPECT_TRUE(budget.spent()) << "an outer loop sharing it stops instead of starting a budget of its own";
    EXPECT_EQ(budget.next_delay(), std::nullopt);

    inject_429_drop_503(server);
    ngfail::policy::retry_allowance roomier({.attempts = 4, .base_delay = 1ms, .max_delay = 1ms});
    const std::size_t again = server.requests();
    EXPECT_TRUE(unpooled.try_get(id, {.allowance = &roomier}).has_value());
    EXPECT_EQ(server.requests() - again, 4u);
}

TEST_P(opensandbox_e2e, no_allowance_repeats_a_possibly_delivered_create_or_exec) {
    const auto id = new_sandbox();
    ngfail::policy::retry_allowance generous({.attempts = 10, .base_delay = 1ms, .max_delay = 1ms});
    server.inject(fault::exec(action::drop_after_init));
    server.inject(fault::exec(action::signal_exit));  // what a second exec would meet
    const auto exec = sandboxes.try_exec(id, {.command = "touch /tmp/x"}, {.allowance = &generous});
    ASSERT_TRUE(exec.has_error());
    EXPECT_EQ(delivery_of(exec.error()), delivery::delivered) << "init came: the command started";
    const auto next = sandboxes.try_exec(id, {.command = "true"});
    ASSERT_TRUE(next.has_error()) << "the second fault is still queued: the command was not sent again";
    EXPECT_EQ(next.error().code(), kind::provider_command_terminated);

    server.inject({.operation = "create", .what = action::stall, .stall_for = 20ms});  // the reply is lost
    const std::size_t before = server.requests();
    const auto created = sandboxes.try_create({}, {.allowance = &generous});
    ASSERT_TRUE(created.has_error());
    EXPECT_EQ(delivery_of(created.error()), delivery::possibly_delivered);
    EXPECT_EQ(server.requests() - before, 1u) << "a sandbox may exist: none is created twice";
    EXPECT_EQ(generous.attempts_made(), 1) << "nothing was spent";
}

TEST_P(opensandbox_e2e, retries_are_off_by_default) {
    server.inject(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED", "once"));
    EXPECT_TRUE(sandboxes.try_create({}).has_error());
}

// ---- secrets ------------------------------------------------------------------------------------

TEST_P(opensandbox_e2e, the_api_key_appears_in_no_failure_of_any_fault) {
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
        [&] { client other(options("sk-test-SECRET-wrong")); (void)other.get(id); },
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

using ngfail_test::every_transport;
using ngfail_test::transport_name;
INSTANTIATE_TEST_SUITE_P(transports, opensandbox_e2e, every_transport, transport_name);

}  // namespace

// ---- against a server we did not write: hostile, echoing, or merely unusual ----------------------

#include "support/raw_server.hpp"

#include <chrono>
#include <mutex>
#include <vector>

namespace {

using ngfail_test::raw_server;

// Every request head a raw server saw, in order.
struct seen_requests {
    std::mutex mutex;
    std::vector<std::string> heads;
    void add(const std::string& head) {
        const std::lock_guard lock(mutex);
        heads.push_back(head);
    }
    [[nodiscard]] bool any_line_starts_with(std::string_view prefix) {
        const std::lock_guard lock(mutex);
        for (const auto& head : heads) {
            for (std::size_t at = 0; at != std::string::npos;) {
                if (std::string_view(head).substr(at).starts_with(prefix)) return true;
                at = head.find("\r\n", at);
                if (at != std::string::npos) at += 2;
            }
        }
        return false;
    }
};

std::string sse(std::string_view json) { return std::string(json) + "\n\n"; }

// A server that records every request and answers each with a running sandbox.
struct recording_server {
    seen_requests seen;
    raw_server server{[this](int fd, const std::string& head) {
        seen.add(head);
        raw_server::send_all(fd, raw_server::reply("200 OK", R"({"id":"x","status":{"state":"Running"}})"));
    }};
};

std::string stream_head() {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
}

// The failure from `r`, checked to hold `secret` nowhere: what(), reason, report, header.
template <class T>
void expect_scrubbed(const ngfail::result<T>& r, std::string_view key) {
    ASSERT_TRUE(r.has_error());
    const auto report = ngfail::report_for(r.error());
    const std::string everything = std::string(r.error().what()) + ngfail::to_json(report) + ngfail::encode_header(report);
    EXPECT_THAT(everything, testing::Not(testing::HasSubstr(std::string(key)))) << everything;
    EXPECT_THAT(everything, testing::HasSubstr("[redacted]")) << "the echo is visible as redacted";
    try {
        r.value();
    } catch (const std::exception& e) {
        for (const auto& level : ngfail::cause_chain(std::current_exception())) {
            EXPECT_THAT(std::string(level.what()), testing::Not(testing::HasSubstr(std::string(key))));
        }
    }
}

constexpr std::string_view echoed_key = "sk-ECHOED-7d2a9c";

TEST(hostile_server, an_echoed_key_in_an_error_envelope_and_request_id_is_scrubbed) {
    raw_server server([](int fd, const std::string& head) {
        const std::string key = raw_server::header(head, "OPEN-SANDBOX-API-KEY");
        raw_server::send_all(fd, raw_server::reply("400 Bad Request",
                                                   R"({"code":")" + key + R"(","message":"bad key )" + key + R"("})",
                                                   "X-Request-ID: " + key + "\r\n"));
    });
    client c({.port = server.port(), .api_key = std::string(echoed_key), .timeout = 5s});
    expect_scrubbed(c.try_get("sbx-1"), echoed_key);
}

TEST(hostile_server, an_echoed_key_as_sandbox_id_and_status_reason_is_scrubbed) {
    raw_server server([](int fd, const std::string& head) {
        const std::string key = raw_server::header(head, "OPEN-SANDBOX-API-KEY");
        if (head.starts_with("POST /v1/sandboxes ")) {
            raw_server::send_all(fd, raw_server::reply("202 Accepted", R"({"id":")" + key +
                                                                           R"(","status":{"state":"Failed","reason":")" +
                                                                           key + R"("}})"));
        } else {
            raw_server::send_all(fd, raw_server::reply("204 No Content", ""));
        }
    });
    client c({.port = server.port(), .api_key = std::string(echoed_key), .timeout = 5s});
    expect_scrubbed(c.try_create({}), echoed_key);
}

TEST(hostile_server, an_echoed_key_as_execution_id_and_probe_reason_is_scrubbed) {
    unsigned short port = 0;
    raw_server server([&port](int fd, const std::string& head) {
        const std::string key = "sk-ECHOED-7d2a9c";  // execd never sees the key; it echoes what it knows
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) +
                                                                     R"(/x","headers":{}})"));
        } else if (head.starts_with("POST /x/command")) {
            raw_server::send_all(fd, stream_head() + sse(R"({"type":"init","text":")" + key + R"("})"));
        } else {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"id":"sbx-1","status":{"state":"Failed","reason":")" +
                                                                     key + R"("}})"));
        }
    });
    port = server.port();
    client c({.port = port, .api_key = std::string(echoed_key), .timeout = 5s});
    expect_scrubbed(c.try_exec("sbx-1", {.command = "ls"}), echoed_key);
}

TEST(hostile_server, an_echoed_execd_token_in_a_command_status_is_scrubbed) {
    unsigned short port = 0;
    raw_server server([&port](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) +
                                                                     R"(/x","headers":{"X-EXECD-ACCESS-TOKEN":"tok-SECRET-55"}})"));
        } else {
            const std::string token = raw_server::header(head, "X-EXECD-ACCESS-TOKEN");
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"id":")" + token +
                                                                     R"(","running":false,"exit_code":-1,"error":")" +
                                                                     token + R"("})"));
        }
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    expect_scrubbed(c.try_exec_status("sbx-1", "ex-1"), "tok-SECRET-55");
}

// An exec and an exec status against a server whose endpoint reply carries `headers` (a
// JSON object); the heads of the execd requests it saw (two when both calls succeeded).
std::vector<std::string> execd_heads_with_endpoint_headers(const std::string& headers, std::string& host) {
    unsigned short port = 0;
    seen_requests seen;
    raw_server server([&](int fd, const std::string& head) {
        seen.add(head);
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) +
                                                                     R"(/x","headers":)" + headers + "}"));
        } else if (head.starts_with("POST /x/command")) {
            raw_server::send_all(fd, stream_head() + sse(R"({"type":"init","text":"ex-1"})") +
                                         sse(R"({"type":"execution_complete"})"));
        } else {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"id":"ex-1","running":false,"exit_code":0})"));
        }
    });
    port = server.port();
    host = "127.0.0.1:" + std::to_string(port);
    client c({.port = port, .timeout = 5s});
    // The status first: a GET has no body, so a length the server chose would have it wait.
    EXPECT_TRUE(c.try_exec_status("sbx-1", "ex-1"));
    EXPECT_TRUE(c.try_exec("sbx-1", {.command = "ls"}));
    std::vector<std::string> execd;
    const std::lock_guard lock(seen.mutex);
    for (const auto& head : seen.heads) {
        if (head.starts_with("POST /x/") || head.starts_with("GET /x/")) execd.push_back(head);
    }
    return execd;
}

TEST(hostile_server, endpoint_headers_arrive_on_every_execd_request) {
    std::string host;
    const auto heads = execd_heads_with_endpoint_headers(R"({"X-EXECD-ACCESS-TOKEN":"tok-1","X-Route":"r-9"})", host);
    EXPECT_EQ(heads.size(), 2u);
    for (const auto& head : heads) {
        EXPECT_EQ(raw_server::header(head, "X-EXECD-ACCESS-TOKEN"), "tok-1") << head;
        EXPECT_EQ(raw_server::header(head, "X-Route"), "r-9") << head;
    }
}

TEST(hostile_server, endpoint_headers_cannot_frame_the_request) {
    std::string host;
    const auto heads = execd_heads_with_endpoint_headers(
        R"({"Content-Length":"5","HOST":"evil","Transfer-Encoding":"chunked","X-Route":"r-9"})", host);
    EXPECT_EQ(heads.size(), 2u);
    for (const auto& head : heads) {
        EXPECT_EQ(raw_server::header(head, "Host"), host) << head;
        for (const std::string_view never : {"evil", "chunked", "Content-Length: 5"}) {
            EXPECT_EQ(head.find(never), std::string::npos) << never << " in " << head;
        }
        EXPECT_EQ(raw_server::header(head, "X-Route"), "r-9") << head;
    }
}

// An exec whose endpoint reply is `{"endpoint":"127.0.0.1:<port>` + `rest`; every request
// the server saw is left in `seen`.
ngfail::result<ngfail::opensandbox::exec_result> exec_with_endpoint(const std::string& rest, seen_requests& seen) {
    unsigned short port = 0;
    raw_server server([&](int fd, const std::string& head) {
        seen.add(head);
        raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) + rest));
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    return c.try_exec("sbx-1", {.command = "ls"});
}

TEST(hostile_server, an_endpoint_that_would_split_the_request_is_refused_before_sending) {
    seen_requests seen;
    const auto r = exec_with_endpoint(R"(/x HTTP/1.1\r\nHost: a\r\n\r\nGET /smuggled","headers":{}})", seen);
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation) << r.error().what();
    EXPECT_FALSE(seen.any_line_starts_with("GET /smuggled"));
    EXPECT_FALSE(seen.any_line_starts_with("POST /x"));
}

TEST(hostile_server, endpoint_headers_with_a_line_break_are_refused) {
    seen_requests seen;
    const auto r = exec_with_endpoint(R"(/x","headers":{"X-A":"v\r\nX-Injected: 1"}})", seen);
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation);
    EXPECT_FALSE(seen.any_line_starts_with("POST /x"));
}

TEST(hostile_server, endpoint_headers_whose_name_is_not_a_field_name_are_refused) {
    for (const std::string name : {"X-A: 1\\u0020X-B", "X A", "X:A", ""}) {
        seen_requests seen;
        const auto r = exec_with_endpoint(R"(/x","headers":{")" + name + R"(":"v"}})", seen);
        ASSERT_TRUE(r.has_error()) << name;
        EXPECT_EQ(r.error().code(), kind::protocol_violation) << name;
        EXPECT_FALSE(seen.any_line_starts_with("POST /x")) << name;
    }
}

TEST(hostile_server, endpoint_headers_past_a_request_heads_bounds_are_refused) {
    const auto headers = [](std::size_t count, std::size_t value_size) {
        std::string json = "{";
        for (std::size_t i = 0; i < count; ++i) {
            json += (i ? ",\"X-" : "\"X-") + std::to_string(i) + R"(":")" + std::string(value_size, 'v') + '"';
        }
        return json + "}";
    };
    // Each header set scans the head: without the bounds these three took 4.5 minutes of CPU.
    for (const auto& [count, value_size] : {std::pair<std::size_t, std::size_t>{257, 1}, {100000, 1}, {2, 40000}}) {
        seen_requests seen;
        const auto r = exec_with_endpoint(R"(/x","headers":)" + headers(count, value_size) + "}", seen);
        ASSERT_TRUE(r.has_error()) << count;
        EXPECT_EQ(r.error().code(), kind::protocol_violation) << count;
        EXPECT_FALSE(seen.any_line_starts_with("POST /x")) << count;
    }
    std::string host;
    const auto heads = execd_heads_with_endpoint_headers(headers(256, 200), host);
    EXPECT_EQ(heads.size(), 2u) << "256 headers of 200 bytes are within the bounds";
}

TEST(client_arguments, a_bad_argument_is_refused_before_anything_is_sent) {
    recording_server recorder;
    client c({.port = recorder.server.port(), .timeout = 5s});
    client bad_key({.port = recorder.server.port(), .api_key = "sk-1\r\nX-Injected: yes", .timeout = 5s});
    const std::vector<std::pair<std::string, ngfail::failure>> refused{
        {"empty sandbox id", c.try_exec("", {.command = "ls"}).error()},
        {"CRLF sandbox id", c.try_get("a\r\nX-Injected: yes").error()},
        {"NUL sandbox id", c.try_kill(std::string_view("a\0b", 3)).error()},
        {"empty execution id", c.try_exec_status("sbx-1", "").error()},
        {"CRLF API key", bad_key.try_get("sbx-1").error()},
    };
    for (const auto& [what, f] : refused) {
        EXPECT_EQ(f.code(), kind::provider_request_rejected) << what << ": " << f.what();
        EXPECT_EQ(std::get<ngfail::sandbox_details>(f.details()).delivery, delivery::not_sent) << what;
        EXPECT_THAT(std::string(f.what()), testing::Not(testing::HasSubstr("X-Injected"))) << what;
    }
    EXPECT_TRUE(recorder.seen.heads.empty()) << "nothing reached the server";
}

TEST(client_arguments, path_parameters_are_percent_encoded) {
    recording_server recorder;
    client c({.port = recorder.server.port(), .timeout = 5s});
    ASSERT_TRUE(c.try_get("a b/c?d"));
    const auto& heads = recorder.seen.heads;
    ASSERT_EQ(heads.size(), 1u);
    EXPECT_TRUE(heads[0].starts_with("GET /v1/sandboxes/a%20b%2Fc%3Fd HTTP/1.1\r\n")) << heads[0];
}

TEST(client_timeouts, durations_saturate) {
    embedded_server server;
    client c({.port = server.port(), .timeout = std::chrono::milliseconds::max()});
    const auto created = c.try_create({});
    ASSERT_TRUE(created) << created.error().what();
    EXPECT_TRUE(c.try_get(created.value().id, {.timeout = std::chrono::milliseconds::max()}));
}

TEST(client_timeouts, nothing_a_call_does_outlives_its_deadline) {
    unsigned short port = 0;
    raw_server server([&port](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) +
                                                                     R"(/x","headers":{}})"));
            return;
        }
        if (head.starts_with("POST /x/command")) raw_server::send_all(fd, stream_head());
        char byte;
        (void)::recv(fd, &byte, 1, 0);  // stall (the stream, or the status probe) until the client hangs up
    });
    port = server.port();
    client c({.port = port, .timeout = 1s});
    const auto start = std::chrono::steady_clock::now();
    const auto r = c.try_exec("sbx-1", {.command = "ls", .total_timeout = 1s});
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::transport_timeout) << r.error().what();
    EXPECT_LT(took, 1900ms) << "the status probe got time of its own beyond the exec's 1 s";
}

// 100 Continue and 103 Early Hints before the final reply.
std::string interim() { return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"; }

TEST(interim_replies, are_skipped_before_a_final_error) {
    raw_server server([](int fd, const std::string& head) {
        if (head.starts_with("DELETE")) {
            raw_server::send_all(fd, interim() + raw_server::reply("500 Internal Server Error",
                                                                   R"({"code":"X","message":"boom"})"));
        } else {
            raw_server::send_all(fd, interim() + raw_server::reply("404 Not Found",
                                                                   R"({"code":"KUBERNETES::SANDBOX_NOT_FOUND","message":"gone"})"));
        }
    });
    client c({.port = server.port(), .timeout = 5s});
    const auto killed = c.try_kill("sbx-1");
    ASSERT_FALSE(killed) << "a 500 after 100 Continue is not success";
    EXPECT_EQ(killed.error().code(), kind::provider_unavailable);
    const auto got = c.try_get("sbx-1");
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code(), kind::provider_sandbox_lost);
}

TEST(interim_replies, are_skipped_before_a_sandbox_and_an_exec_stream) {
    unsigned short port = 0;
    raw_server server([&port](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, interim() + raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" +
                                                                                 std::to_string(port) + R"(/x"})"));
        } else if (head.starts_with("POST /x/command")) {
            raw_server::send_all(fd, interim() + stream_head() + sse(R"({"type":"init","text":"ex-1"})") +
                                         sse(R"({"type":"stdout","text":"hi"})") + sse(R"({"type":"execution_complete"})"));
        } else {
            raw_server::send_all(fd, interim() + raw_server::reply("200 OK", R"({"id":"sbx-1","status":{"state":"Running"}})"));
        }
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    const auto got = c.try_get("sbx-1");
    ASSERT_TRUE(got) << got.error().what();
    EXPECT_EQ(got.value().state, "Running");
    const auto ran = c.try_exec("sbx-1", {.command = "echo hi"});
    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().stdout_text, "hi\n");
}

TEST(ranged_download, a_server_that_ignores_the_range_still_gives_only_the_bytes_asked_for) {
    unsigned short port = 0;
    std::string range_seen;
    raw_server server([&](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) + R"("})"));
        } else {
            range_seen = raw_server::header(head, "Range");
            raw_server::send_all(fd, raw_server::reply("200 OK", "0123456789", "", "application/octet-stream"));
        }
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    const auto part = c.try_download_range("sbx-1", "/f", 2, 4);
    ASSERT_TRUE(part) << part.error().what();
    EXPECT_EQ(part.value(), "234");
    EXPECT_EQ(range_seen, "bytes=2-4");
    EXPECT_EQ(c.try_download_range("sbx-1", "/f", 20).value(), "") << "past the end of what came";
    EXPECT_EQ(c.try_download_range("sbx-1", "/f", 7, std::numeric_limits<std::uint64_t>::max()).value(), "789")
        << "the largest last byte is the end, not a wrap to 0";
    EXPECT_EQ(c.try_download_range("sbx-1", "/f", 9, 9).value(), "9") << "the last byte alone";
}

// A 206 is the part its Content-Range names: a part that is not the one asked for (another
// start, more bytes than asked, a length the body does not have, no Content-Range at all) is
// a malformed reply, never returned as the bytes asked for.
TEST(ranged_download, a_partial_reply_must_be_the_range_asked_for) {
    unsigned short port = 0;
    std::string content_range;
    std::string body;
    raw_server server([&](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) + R"("})"));
        } else {
            const std::string header = content_range.empty() ? "" : "Content-Range: " + content_range + "\r\n";
            raw_server::send_all(fd, raw_server::reply("206 Partial Content", body, header, "application/octet-stream"));
        }
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    const auto asking_50_to_59 = [&](std::string range, std::string bytes) {
        content_range = std::move(range);
        body = std::move(bytes);
        return c.try_download_range("sbx-1", "/f", 50, 59);
    };
    EXPECT_EQ(asking_50_to_59("bytes 50-59/100", "5555555555").value(), "5555555555");
    EXPECT_EQ(asking_50_to_59("bytes 50-54/55", "55555").value(), "55555") << "the file ends first";
    EXPECT_EQ(asking_50_to_59("bytes 50-59/*", "5555555555").value(), "5555555555") << "a length not known";
    for (const auto& [range, bytes] : std::initializer_list<std::pair<const char*, const char*>>{
             {"bytes 0-9/100", "0000000000"},       // the review's: another part, given as the one asked for
             {"bytes 50-60/100", "55555555555"},    // more than asked
             {"bytes 50-59/100", "55555"},          // a body shorter than its range
             {"bytes 50-59/55", "5555555555"},      // past the length it gives
             {"bytes 50-49/100", ""},               // an end before its start
             {"bytes */100", ""},                   // a 416's form
             {"items 50-59/100", "5555555555"},     // another unit
             {"bytes 50-59", "5555555555"},         // without a length
             {"bytes 50-5x/100", "5555555555"},     // not numbers
             {"", "5555555555"}}) {                 // no Content-Range
        const auto got = asking_50_to_59(range, bytes);
        ASSERT_FALSE(got) << range;
        EXPECT_EQ(got.error().code(), kind::protocol_violation) << range << ": " << got.error().what();
    }
    content_range = "bytes 7-9/10";
    body = "789";
    EXPECT_EQ(c.try_download_range("sbx-1", "/f", 7).value(), "789") << "an open range to the end";
    content_range = "bytes 7-8/10";
    body = "78";
    EXPECT_FALSE(c.try_download_range("sbx-1", "/f", 7)) << "an open range stops short of the length";
}

// A server that keeps its first connection alive after one answer, then reads the next
// request on it and closes without a word: what a client meets when the server's idle
// timeout fires as its request arrives. Later connections are answered and closed.
struct closes_when_idle {
    std::atomic<int> connections{0};
    std::atomic<int> requests{0};
    raw_server server{[this](int fd, const std::string& head) {
        ++requests;
        const std::string sandbox = R"({"id":"x","status":{"state":"Running"},"expiresAt":"2030-01-01T00:00:00Z"})";
        if (connections++ > 0) {
            raw_server::send_all(fd, raw_server::reply("200 OK", sandbox));
            return;
        }
        (void)head;
        raw_server::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                     std::to_string(sandbox.size()) + "\r\n\r\n" + sandbox);
        if (raw_server::read_request(fd)) ++requests;
    }};
};

TEST(kept_alive, a_get_that_meets_the_servers_idle_close_is_sent_again_on_a_fresh_connection) {
    closes_when_idle idle;
    client c({.port = idle.server.port(), .timeout = 5s});  // retries off: one attempt
    ASSERT_TRUE(c.try_get("x"));
    const auto again = c.try_get("x");
    ASSERT_TRUE(again) << again.error().what();
    EXPECT_EQ(idle.requests, 3) << "the first GET, the one the close met, and its repetition";
    EXPECT_EQ(idle.connections, 2);
}

TEST(kept_alive, a_post_that_meets_it_is_not_sent_again_and_may_have_been_delivered) {
    closes_when_idle idle;
    client c({.port = idle.server.port(), .timeout = 5s});
    ASSERT_TRUE(c.try_get("x"));
    const auto renewed = c.try_renew("x", "2030-01-01T00:00:00Z");
    ASSERT_FALSE(renewed) << "the server may have acted on it before closing";
    EXPECT_EQ(renewed.error().code(), kind::transport_peer_drop) << renewed.error().what();
    EXPECT_EQ(ngfail::delivery_of(renewed.error()), delivery::possibly_delivered);
    EXPECT_EQ(idle.requests, 2);
    EXPECT_EQ(idle.connections, 1);
}

TEST(kept_alive, a_fresh_connection_closed_without_an_answer_is_a_failure_not_a_repetition) {
    std::atomic<int> requests{0};
    raw_server server([&](int, const std::string&) { ++requests; });  // reads, then closes
    client c({.port = server.port(), .timeout = 5s});
    const auto got = c.try_get("x");
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code(), kind::transport_peer_drop) << got.error().what();
    EXPECT_EQ(requests, 1);
}

}  // namespace

// ---- endpoints, as the spec allows them ---------------------------------------------------------

#include "opensandbox/client/reply.hpp"

namespace {

TEST(endpoints, every_form_the_spec_allows_is_read) {
    using ngfail::opensandbox::detail::parse_endpoint;
    const auto spec_example = parse_endpoint("endpoint.opensandbox.io/sandboxes/abc123/port/8080");
    EXPECT_EQ(spec_example.host, "endpoint.opensandbox.io");
    EXPECT_EQ(spec_example.port, 80) << "no port: HTTP's";
    EXPECT_EQ(spec_example.base, "/sandboxes/abc123/port/8080");
    const auto with_scheme = parse_endpoint("http://10.0.0.7:44772");
    EXPECT_EQ(with_scheme.host, "10.0.0.7");
    EXPECT_EQ(with_scheme.port, 44772);
    EXPECT_EQ(with_scheme.base, "");
    const auto v6 = parse_endpoint("[::1]:9000/proxy/44772");
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.port, 9000);
    EXPECT_EQ(v6.base, "/proxy/44772");
    const auto https = parse_endpoint("https://api.example.com/route");
    EXPECT_TRUE(https.tls);
    EXPECT_EQ(https.port, 443) << "no port: HTTPS's";
    const auto as_the_server_is = parse_endpoint("10.0.0.7/route", /*tls=*/true);
    EXPECT_TRUE(as_the_server_is.tls) << "no scheme: the lifecycle server's";
    EXPECT_EQ(as_the_server_is.port, 443);
    EXPECT_TRUE(parse_endpoint("https://10.0.0.7", /*tls=*/false).tls) << "an upgrade is followed";
    try {
        (void)parse_endpoint("http://10.0.0.7", /*tls=*/true);
        ADD_FAILURE() << "an https server's http:// endpoint was followed: the execd token would go in clear";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), ngfail::opensandbox::errc::malformed_response);
    }
    for (const char* bad : {"", ":80", "h:0", "h:65536", "h:x", "ftp://h/x", "h p:80", "[::1]x"}) {
        EXPECT_THROW((void)parse_endpoint(bad), std::system_error) << bad;
    }
}

TEST(endpoints, use_server_proxy_chooses_the_route_and_both_run_commands) {
    embedded_server server;
    for (const bool proxied : {true, false}) {
        client c({.port = server.port(), .timeout = 5s, .use_server_proxy = proxied});
        const auto id = c.create({}).id;
        const auto endpoint = c.endpoint(id).endpoint;
        EXPECT_THAT(endpoint, testing::HasSubstr(proxied ? "/proxy/44772" : "/port/44772")) << endpoint;
        EXPECT_EQ(c.exec(id, {.command = "echo routed"}).stdout_text, "routed\n");
    }
}

TEST(client_requests, no_api_key_header_is_sent_when_there_is_no_key) {
    recording_server recorder;
    client c({.port = recorder.server.port(), .timeout = 5s});
    ASSERT_TRUE(c.try_get("sbx-1"));
    ASSERT_EQ(recorder.seen.heads.size(), 1u);
    EXPECT_THAT(recorder.seen.heads[0], testing::Not(testing::HasSubstr("OPEN-SANDBOX-API-KEY")));
}

TEST(client_requests, a_command_status_without_an_id_is_read) {
    unsigned short port = 0;
    raw_server server([&port](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) + R"("})"));
        } else {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"running":false,"exit_code":0})"));
        }
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    const auto status = c.try_exec_status("sbx-1", "ex-9");
    ASSERT_TRUE(status) << status.error().what();
    EXPECT_EQ(status.value().id, "ex-9");
    EXPECT_EQ(status.value().exit_code, 0);
}

}  // namespace

namespace {

TEST(exec_streams, the_full_sse_grammar_is_read) {
    unsigned short port = 0;
    raw_server server([&port](int fd, const std::string& head) {
        if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) + R"("})"));
            return;
        }
        raw_server::send_all(fd, stream_head() +
                                     ": a comment\r\n"
                                     "event: message\r\nid: 1\r\nretry: 1000\r\n"
                                     "data: {\"type\":\"init\",\r\ndata:  \"text\":\"ex-1\"}\r\n\r\n"  // one event, two lines
                                     "data: {\"text\":\"an event without a type\"}\n\n"
                                     "{\"type\":\"stdout\",\"text\":\"bare \"}\n\n"  // execd's own framing
                                     "data:{\"type\":\"stdout\",\"text\":\"and data\"}\n\n"
                                     "data: {\"type\":\"execution_complete\"}");  // ended by the stream's end
    });
    port = server.port();
    client c({.port = port, .timeout = 5s});
    const auto ran = c.try_exec("sbx-1", {.command = "x"});
    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().execution_id, "ex-1");
    EXPECT_EQ(ran.value().stdout_text, "bare \nand data\n") << "a line per event, as execd sends output";
    EXPECT_EQ(ran.value().exit_code, 0);
}

}  // namespace

namespace {

// ---- readiness, as the official SDK waits for it ------------------------------------------------

TEST(readiness, create_returns_once_the_sandbox_runs_and_execd_answers) {
    embedded_server server({.pending_for = 300ms});
    client c({.port = server.port(), .timeout = 10s});
    const auto start = std::chrono::steady_clock::now();
    const auto box = c.create({});
    EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms) << "it waited out Pending";
    EXPECT_EQ(box.state, "Running");
    EXPECT_EQ(c.exec(box.id, {.command = "echo ready"}).stdout_text, "ready\n") << "usable at once";
}

TEST(readiness, a_sandbox_that_never_becomes_ready_is_a_start_failure_and_is_deleted) {
    embedded_server server({.pending_for = 60s});
    client c({.port = server.port(), .timeout = 10s});
    const auto r = c.try_create({.ready_timeout = 300ms, .ready_poll = 50ms});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), kind::provider_start_failed) << r.error().what();
    const auto& details = std::get<ngfail::sandbox_details>(r.error().details());
    EXPECT_EQ(details.delivery, delivery::delivered) << "the sandbox exists";
    ASSERT_TRUE(details.sandbox_id);
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("; deleted"));
    EXPECT_EQ(c.try_get(*details.sandbox_id).error().code(), kind::provider_sandbox_lost);

    const auto kept = c.try_create({.ready_timeout = 100ms, .ready_poll = 50ms, .delete_if_failed = false});
    ASSERT_FALSE(kept);
    EXPECT_TRUE(c.try_get(*std::get<ngfail::sandbox_details>(kept.error().details()).sandbox_id)) << "kept, as asked";
}

TEST(readiness, the_wait_never_outlives_the_calls_timeout) {
    embedded_server server({.pending_for = 60s});
    client c({.port = server.port(), .timeout = 1s});
    const auto start = std::chrono::steady_clock::now();
    const auto r = c.try_create({});  // ready_timeout 30 s, but the call has 1 s
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), kind::provider_start_failed);
    EXPECT_THAT(std::string(r.error().reason()), testing::HasSubstr("; deleted")) << "time was kept for the clean-up";
}

}  // namespace

namespace {

// ---- the rest of the API: both faces, against the emulator ---------------------------------------

class operations : public opensandbox_e2e {};

TEST_P(operations, ping_list_pause_and_resume) {
    const auto id = new_sandbox();
    sandboxes.ping(id);
    const auto all = sandboxes.list();
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const auto& s) { return s.id == id; }));
    sandboxes.pause(id);
    EXPECT_EQ(sandboxes.get(id).state, "Paused");
    EXPECT_TRUE(sandboxes.list({.states = {"Paused"}}).size() >= 1);
    const auto paused_again = sandboxes.try_pause(id);
    ASSERT_FALSE(paused_again);
    EXPECT_EQ(paused_again.error().code(), kind::provider_state_conflict) << "state_conflict: a paused sandbox cannot pause";
    EXPECT_EQ(std::get<ngfail::sandbox_details>(paused_again.error().details()).delivery, delivery::not_sent);
    sandboxes.resume(id);
    EXPECT_EQ(sandboxes.get(id).state, "Running");
}

TEST_P(operations, a_sandbox_another_client_paused_is_unreachable_through_its_endpoint_and_nothing_was_sent) {
    const auto id = new_sandbox();
    EXPECT_EQ(sandboxes.exec(id, {.command = "echo before"}).stdout_text, "before\n");  // the endpoint is cached
    client other(options());
    other.pause(id);
    // Directly, the sandbox's own address refuses the connection, as a dead pod's does; through
    // the proxy, the server answers 502 BACKEND_CONNECTION_FAILED. Either way nothing ran.
    const auto unreachable = sandboxes.try_exec(id, {.command = "echo during"});
    ASSERT_FALSE(unreachable);
    EXPECT_EQ(unreachable.error().code(), kind::transport_unreachable) << unreachable.error().what();
    EXPECT_EQ(ngfail::delivery_of(unreachable.error()), delivery::not_sent);
    EXPECT_EQ(unreachable.error().http_status(), GetParam().proxy ? std::optional(502) : std::nullopt)
        << "directly, no server answered: the connection was refused; " << unreachable.error().what();
    other.resume(id);
    EXPECT_EQ(sandboxes.exec(id, {.command = "echo after"}).stdout_text, "after\n") << "running again, reachable again";
}

namespace {

// A dead sandbox's next exec: lost or unreachable (through the server proxy, its 404 names the
// sandbox), never a rejected request or bad credentials.
void expect_lost_or_unreachable(client& c, const std::string& id, const char* after) {
    const auto next = c.try_exec(id, {.command = "echo again"});
    ASSERT_FALSE(next) << after;
    const auto code = next.error().code();
    EXPECT_TRUE(code == kind::transport_unreachable || code == kind::transport_peer_drop ||
                code == kind::provider_sandbox_lost)
        << after << ": " << next.error().what();
    EXPECT_NE(next.error().http_status(), std::optional(401)) << after;
}

// An OOM kill, then an expiry, each after an exec that cached the sandbox's endpoint.
void kill_then_expire(embedded_server& server, client& c) {
    const auto killed = c.create({}).id;
    EXPECT_EQ(c.exec(killed, {.command = "echo before"}).stdout_text, "before\n");  // endpoint cached
    server.inject(fault::exec(action::oom_kill));
    EXPECT_EQ(c.try_exec(killed, {.command = "grow"}).error().code(), kind::provider_command_terminated)
        << "Kubernetes names the OOM kill only in a message, which is never evidence";
    expect_lost_or_unreachable(c, killed, "after the OOM kill");

    const auto expiring = c.create({.timeout_s = 1}).id;
    EXPECT_EQ(c.exec(expiring, {.command = "echo before"}).stdout_text, "before\n");
    std::this_thread::sleep_for(1100ms);
    expect_lost_or_unreachable(c, expiring, "after the expiry");
}

}  // namespace

// A new user's harness read an OOM kill as a wrong API key: the next exec, on the connection
// kept alive to the dead sandbox's own address, reached the lifecycle API's auth check (401).
// A dead pod's address answers nothing, whatever connection a request comes on.
TEST_P(operations, after_an_oom_kill_or_an_expiry_the_sandbox_is_lost_or_unreachable_never_bad_credentials) {
    kill_then_expire(server, sandboxes);
}

// The same without an API key, where the lifecycle API answered the dead address's request
// with 404 "no such route" (a rejected request, to the client).
TEST_P(operations, without_an_api_key_an_oom_kill_or_an_expiry_is_never_a_rejected_request) {
    embedded_server keyless(ngfail_test::serving(GetParam(), {}));
    client c(ngfail_test::reaching(GetParam(), keyless.port(), {.timeout = 5s}));
    kill_then_expire(keyless, c);
}

TEST_P(operations, a_background_command_its_logs_from_a_cursor_and_its_interrupt) {
    const auto id = new_sandbox();
    const auto started = sandboxes.exec(id, {.command = "echo detached", .background = true});
    ASSERT_FALSE(started.execution_id.empty());
    EXPECT_EQ(started.exit_code, std::nullopt) << "still running, or not yet asked";
    ngfail::opensandbox::command_status status;
    for (int i = 0; i < 100 && (status = sandboxes.exec_status(id, started.execution_id)).running; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(status.exit_code, 0);
    const auto running = [&](const std::string& execution) {
        const auto r = sandboxes.try_exec_status(id, execution);
        return r && r.value().running;
    };
    const auto logs = sandboxes.exec_logs(id, started.execution_id);
    EXPECT_EQ(logs.content, "detached\n");
    EXPECT_EQ(logs.cursor, 9u);
    EXPECT_EQ(sandboxes.exec_logs(id, started.execution_id, logs.cursor).content, "");

    const auto long_run = sandboxes.exec(id, {.command = "sleep 30", .background = true});
    sandboxes.interrupt(id, long_run.execution_id);
    for (int i = 0; i < 100 && running(long_run.execution_id); ++i) std::this_thread::sleep_for(10ms);
    const auto ended = sandboxes.try_exec_status(id, long_run.execution_id);
    ASSERT_FALSE(ended) << "exit -1 is a command killed by a signal";
    EXPECT_EQ(ended.error().code(), kind::provider_command_terminated);
    const auto again = sandboxes.try_interrupt(id, long_run.execution_id);
    ASSERT_FALSE(again) << "nothing left to interrupt";
    EXPECT_EQ(again.error().code(), kind::provider_unavailable);
}

TEST_P(operations, upload_and_download_a_file) {
    const auto id = new_sandbox();
    const std::string binary = std::string("\x00\x01\xff\r\n--boundary--\r\n", 19) + "binary";
    sandboxes.upload(id, "/workspace/data.bin", binary);
    EXPECT_EQ(sandboxes.download(id, "/workspace/data.bin"), binary) << "every byte, in and out";
    sandboxes.upload(id, "/workspace/notes.txt", "line one\nline two\n");
    EXPECT_EQ(sandboxes.exec(id, {.command = "cat /workspace/notes.txt"}).stdout_text, "line one\nline two\n");
    const auto missing = sandboxes.try_download(id, "/workspace/none");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), kind::provider_request_rejected) << "request_rejected: a 404 without a sandbox code";
}

TEST_P(operations, every_new_operation_refuses_bad_arguments_before_sending) {
    const std::size_t before = server.requests();
    EXPECT_EQ(sandboxes.try_ping("").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_pause("a\nb").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_exec_logs("sbx", "").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_interrupt("sbx", "a\rb").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_upload("sbx", "", "x").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_download("", "/x").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(server.requests(), before);
}

TEST_P(operations, list_with_several_states_and_metadata) {
    const auto a = sandboxes.create({.metadata = {{"team", "a"}, {"tier", "gpu.x-y_z"}}}).id;
    const auto b = sandboxes.create({.metadata = {{"team", "b"}}}).id;
    sandboxes.pause(b);
    const auto ids = [&](const ngfail::opensandbox::list_request& request) {
        std::set<std::string> out;
        for (const auto& s : sandboxes.list(request)) out.insert(s.id);
        return out;
    };
    const auto both = ids({.states = {"running", "Paused"}, .page_size = 200});
    EXPECT_TRUE(both.contains(a) && both.contains(b)) << "OR-ed, in any case";
    EXPECT_EQ(ids({.metadata = {{"team", "a"}}}), std::set<std::string>{a});
    EXPECT_EQ(ids({.metadata = {{"team", "a"}, {"tier", "gpu.x-y_z"}}}), std::set<std::string>{a})
        << "the filter's own '&' and '=' survive the encoding of its one query parameter";
    EXPECT_EQ(ids({.metadata = {{"team", "a&tier=gpu.x-y_z"}}}), std::set<std::string>{})
        << "an '&' inside a value is the value's, not a second filter";
    EXPECT_EQ(ids({.states = {"Running"}, .metadata = {{"team", "b"}}}), std::set<std::string>{});
}

TEST_P(operations, directories_and_files_listed_described_and_deleted) {
    const auto id = new_sandbox();
    sandboxes.create_directories(id, {"/w/p/src", "/w/logs"}, 700);
    sandboxes.upload(id, "/w/p/README.md", "hello");
    const auto listed = sandboxes.list_directory(id, "/w", 2);
    std::vector<std::string> paths;
    for (const auto& e : listed) paths.push_back(e.path);
    EXPECT_EQ(paths, (std::vector<std::string>{"/w/logs", "/w/p", "/w/p/README.md", "/w/p/src"}));
    EXPECT_EQ(listed[0].type, "directory");
    EXPECT_EQ(listed[0].mode, 700);
    EXPECT_FALSE(listed[0].modified_at.empty());
    const auto info = sandboxes.file_info(id, {"/w/p/README.md"});
    ASSERT_EQ(info.size(), 1u);
    EXPECT_EQ(info.at("/w/p/README.md").size, 5u);
    EXPECT_EQ(info.at("/w/p/README.md").type, "file");

    const auto on_a_directory = sandboxes.try_delete_files(id, {"/w/p"});
    ASSERT_FALSE(on_a_directory) << "execd deletes files only";
    EXPECT_EQ(on_a_directory.error().code(), kind::provider_unavailable) << "server_fault: execd's 500";
    sandboxes.delete_files(id, {"/w/p/README.md", "/w/never-was"});
    EXPECT_EQ(sandboxes.try_file_info(id, {"/w/p/README.md"}).error().code(), kind::provider_request_rejected)
        << "a 404 FILE_NOT_FOUND";
    sandboxes.delete_directories(id, {"/w"});
    const auto gone = sandboxes.try_list_directory(id, "/w");
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::provider_request_rejected);
    EXPECT_EQ(ngfail::delivery_of(gone.error()), delivery::not_sent);
    EXPECT_EQ(ngfail::opensandbox::name(ngfail::opensandbox::operation::list_directory),
              std::get<ngfail::sandbox_details>(gone.error().details()).operation);
}

TEST_P(operations, a_bash_session_keeps_its_directory_and_variables_between_runs) {
    const auto id = new_sandbox();
    const std::string session = sandboxes.create_session(id, "/work");
    sandboxes.create_directories(id, {"/work/sub"});  // a cd into nothing fails, as bash's
    const auto first = sandboxes.run_in_session(id, session, {.command = "pwd && export GREETING=hi && cd sub"});
    EXPECT_EQ(first.stdout_text, "/work\n");
    EXPECT_EQ(first.exit_code, 0);
    EXPECT_EQ(first.execution_id, session) << "execd's init names the session";
    EXPECT_EQ(sandboxes.run_in_session(id, session, {.command = "pwd; echo $GREETING"}).stdout_text, "/work/sub\nhi\n");
    const auto failed = sandboxes.run_in_session(id, session, {.command = "exit 3"});
    EXPECT_EQ(failed.exit_code, 3) << "a non-zero exit is a result, as for exec";
    EXPECT_EQ(sandboxes.file_info(id, {"/work"}).at("/work").type, "directory") << "a session's directory is made";
    sandboxes.delete_session(id, session);
    const auto gone = sandboxes.try_run_in_session(id, session, {.command = "pwd"});
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::provider_unavailable) << "execd answers 500 for a session it does not know";
    const auto twice = sandboxes.try_delete_session(id, session);
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().code(), kind::provider_request_rejected) << "404 CONTEXT_NOT_FOUND";
    EXPECT_EQ(ngfail::delivery_of(twice.error()), delivery::not_sent);
}

TEST_P(operations, a_session_run_is_read_by_execs_rules) {
    const auto id = new_sandbox();
    const std::string session = sandboxes.create_session(id);
    server.inject({.operation = "run_in_session", .what = action::signal_exit});
    const auto killed = sandboxes.try_run_in_session(id, session, {.command = "sleep 10"});
    ASSERT_FALSE(killed);
    EXPECT_EQ(killed.error().code(), kind::provider_command_terminated);
    EXPECT_EQ(ngfail::delivery_of(killed.error()), delivery::delivered);
    server.inject({.operation = "run_in_session", .what = action::drop_after_init});
    const auto dropped = sandboxes.try_run_in_session(id, session, {.command = "ls"});
    ASSERT_FALSE(dropped);
    EXPECT_EQ(dropped.error().code(), kind::transport_peer_drop);
    EXPECT_EQ(ngfail::delivery_of(dropped.error()), delivery::delivered) << "init proves the run started";
    const std::size_t before = server.requests();
    EXPECT_EQ(sandboxes.try_run_in_session(id, session, {.command = "ls", .background = true}).error().code(),
              kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_run_in_session(id, "", {.command = "ls"}).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(server.requests(), before) << "refused before sending";
}

TEST_P(operations, a_code_context_keeps_what_the_code_defines_between_runs) {
    const auto id = new_sandbox();
    const auto made = sandboxes.create_code_context(id, "python", "/lab");
    EXPECT_EQ(made.language, "python");
    EXPECT_EQ(made.cwd, "/lab");
    EXPECT_EQ(made.id.find('-'), std::string::npos) << "execd's context ids are UUIDs without dashes";
    EXPECT_EQ(sandboxes.get_code_context(id, made.id).language, "python");
    const auto first = sandboxes.run_code(id, {.code = "x = 40", .context_id = made.id, .language = "python"});
    EXPECT_EQ(first.context_id, made.id) << "execd's init names the context";
    EXPECT_EQ(first.execution_count, 1);
    EXPECT_TRUE(first.results.empty());
    std::string streamed;
    const auto second = sandboxes.run_code(id, {.code = "print(x + 2)\nx",
                                                .context_id = made.id,
                                                .language = "python",
                                                .on_stdout = [&](std::string_view text) { streamed += text; }});
    EXPECT_EQ(second.stdout_text, "42\n");
    EXPECT_EQ(streamed, "42\n");
    EXPECT_EQ(second.results.at("text"), "40") << "execd names text/plain \"text\"";
    EXPECT_EQ(second.execution_count, 2);
    EXPECT_FALSE(second.error);
    const auto raised = sandboxes.run_code(id, {.code = "raise ValueError('no')", .context_id = made.id, .language = "python"});
    ASSERT_TRUE(raised.error) << "code that raises is a result, not a failure";
    EXPECT_EQ(raised.error->name, "ValueError");
    EXPECT_EQ(raised.error->value, "no");
    EXPECT_FALSE(raised.error->traceback.empty());

    const auto fresh = sandboxes.run_code(id, {.code = "1 + 1", .language = "python"});
    EXPECT_NE(fresh.context_id, made.id) << "no context named: the language's default one";
    EXPECT_EQ(fresh.results.at("text"), "2");
    EXPECT_EQ(sandboxes.list_code_contexts(id).size(), 2u);
    EXPECT_EQ(sandboxes.list_code_contexts(id, "python").size(), 2u);
    EXPECT_TRUE(sandboxes.list_code_contexts(id, "go").empty());
    const auto as_command = sandboxes.run_code(id, {.code = "echo hi"});
    EXPECT_EQ(as_command.stdout_text, "hi\n") << "no language: execd runs the code as a command";
    EXPECT_FALSE(as_command.execution_count);

    sandboxes.delete_code_context(id, made.id);
    const auto gone = sandboxes.try_get_code_context(id, made.id);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::provider_request_rejected) << "404 CONTEXT_NOT_FOUND";
    sandboxes.delete_code_contexts(id, "python");
    EXPECT_TRUE(sandboxes.list_code_contexts(id).empty());
    const auto no_kernel = sandboxes.try_create_code_context(id, "cobol");
    ASSERT_FALSE(no_kernel);
    EXPECT_EQ(no_kernel.error().code(), kind::provider_unavailable) << "execd's 500: no kernel spec found";
}

TEST_P(operations, a_code_run_is_read_by_execs_rules_and_an_interrupt_stops_it) {
    const auto id = new_sandbox();
    const auto context = sandboxes.create_code_context(id, "python");
    const ngfail::opensandbox::code_run slow{.code = "import time\ntime.sleep(30)", .context_id = context.id,
                                             .language = "python"};
    const std::size_t sent = server.requests();
    auto running = std::async(std::launch::async, [&] { return sandboxes.try_run_code(id, slow); });
    while (server.requests() == sent) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // execd runs one cell at a time in a context: a second is refused while the first runs.
    bool busy = false;
    for (int i = 0; i < 200 && !busy; ++i) {
        const auto second = sandboxes.try_run_code(id, {.code = "1", .context_id = context.id, .language = "python"});
        busy = !second && second.error().code() == kind::provider_unavailable;
        if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(busy) << (running.wait_for(std::chrono::seconds(0)) == std::future_status::ready
                              ? "the slow run ended first"
                              : "no run was refused");
    sandboxes.interrupt_code(id, context.id);
    const auto stopped = running.get();
    ASSERT_TRUE(stopped) << "an interrupted cell completes with the kernel's error";
    ASSERT_TRUE(stopped.value().error);
    EXPECT_EQ(stopped.value().error->name, "KeyboardInterrupt");

    server.inject({.operation = "run_code", .what = action::signal_exit});
    const auto killed = sandboxes.try_run_code(id, {.code = "1", .context_id = context.id, .language = "python"});
    ASSERT_FALSE(killed);
    EXPECT_EQ(killed.error().code(), kind::provider_command_terminated);
    EXPECT_EQ(ngfail::delivery_of(killed.error()), delivery::delivered);
    server.inject({.operation = "run_code", .what = action::drop_after_init});
    const auto dropped = sandboxes.try_run_code(id, {.code = "1", .context_id = context.id, .language = "python"});
    ASSERT_FALSE(dropped);
    EXPECT_EQ(dropped.error().code(), kind::transport_peer_drop);
    EXPECT_EQ(ngfail::delivery_of(dropped.error()), delivery::delivered) << "init proves the run started";
    const auto raised_minus_one =
        sandboxes.run_code(id, {.code = "raise ValueError(-1)", .context_id = context.id, .language = "python"});
    ASSERT_TRUE(raised_minus_one.error) << "an evalue of -1 from a kernel is no signal exit";

    const std::size_t before = server.requests();
    EXPECT_EQ(sandboxes.try_run_code(id, {.code = ""}).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_get_code_context(id, "").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_interrupt_code(id, "").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(server.requests(), before) << "refused before sending";
}

TEST_P(operations, the_file_operations_refuse_bad_arguments_before_sending) {
    const std::size_t before = server.requests();
    EXPECT_EQ(sandboxes.try_file_info("sbx", {"/ok", "bad\npath"}).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_delete_files("", {"/x"}).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_list_directory("sbx", "/x", -1).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_create_directories("sbx", {"/x"}, 8888).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_delete_directories("sbx", {"a\rb"}).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(server.requests(), before);
}

TEST_P(operations, files_moved_given_permissions_searched_and_rewritten) {
    using ngfail::opensandbox::content_replacement;
    using ngfail::opensandbox::file_move;
    using ngfail::opensandbox::file_permissions;
    const auto id = new_sandbox();
    sandboxes.upload(id, "/w/app/config.yaml", "host: localhost\nurl: http://localhost:80\n");
    sandboxes.upload(id, "/w/app/main.py", "print('localhost')");
    sandboxes.upload(id, "/w/app/notes.md", "nothing to replace");

    sandboxes.move_files(id, {file_move{.src = "/w/app/notes.md", .dest = "/w/docs/notes.md"}});
    EXPECT_EQ(sandboxes.download(id, "/w/docs/notes.md"), "nothing to replace");
    const auto moved_again = sandboxes.try_move_files(id, {file_move{.src = "/w/app/notes.md", .dest = "/w/x.md"}});
    ASSERT_FALSE(moved_again);
    EXPECT_EQ(moved_again.error().code(), kind::provider_request_rejected) << "404 FILE_NOT_FOUND";
    const auto taken = sandboxes.try_move_files(id, {file_move{.src = "/w/app/main.py", .dest = "/w/app/config.yaml"}});
    ASSERT_FALSE(taken);
    EXPECT_EQ(taken.error().code(), kind::provider_unavailable) << "execd's 500: the destination exists";

    sandboxes.set_permissions(id, {{"/w/app/main.py", file_permissions{.mode = 700, .owner = "app", .group = "staff"}}});
    const auto info = sandboxes.file_info(id, {"/w/app/main.py"}).at("/w/app/main.py");
    EXPECT_EQ(info.mode, 700);
    EXPECT_EQ(info.owner, "app");
    EXPECT_EQ(info.group, "staff");

    std::vector<std::string> found;
    for (const auto& e : sandboxes.search_files(id, "/w", "*.{py,yaml}")) found.push_back(e.path);
    EXPECT_EQ(found, (std::vector<std::string>{"/w/app/config.yaml", "/w/app/main.py"}));
    EXPECT_EQ(sandboxes.search_files(id, "/w").size(), 3u) << "every file, no directory";
    EXPECT_EQ(sandboxes.try_search_files(id, "/nowhere").error().code(), kind::provider_request_rejected);

    const auto counts = sandboxes.replace_contents(
        id, {{"/w/app/config.yaml", content_replacement{.old_text = "localhost", .new_text = "0.0.0.0"}},
             {"/w/app/main.py", content_replacement{.old_text = "localhost", .new_text = "0.0.0.0"}}});
    EXPECT_EQ(counts, (std::map<std::string, std::int64_t>{{"/w/app/config.yaml", 2}, {"/w/app/main.py", 1}}));
    EXPECT_EQ(sandboxes.download(id, "/w/app/config.yaml"), "host: 0.0.0.0\nurl: http://0.0.0.0:80\n");

    const std::size_t before = server.requests();
    EXPECT_EQ(sandboxes.try_replace_contents(id, {{"/w/app/main.py", content_replacement{}}}).error().code(),
              kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_set_permissions(id, {{"/w/app/main.py", file_permissions{.mode = 8888}}}).error().code(),
              kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_move_files(id, {file_move{.src = "/a\nb", .dest = "/c"}}).error().code(),
              kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_search_files("", "/w").error().code(), kind::provider_request_rejected);
    EXPECT_EQ(server.requests(), before) << "refused before sending";
}

TEST_P(operations, parts_of_a_file_by_bytes_and_by_lines) {
    const auto id = new_sandbox();
    sandboxes.upload(id, "/w/log.txt", "first\r\nsecond\nthird\nfourth\n");
    EXPECT_EQ(sandboxes.download_range(id, "/w/log.txt", 0, 4), "first");
    EXPECT_EQ(sandboxes.download_range(id, "/w/log.txt", 20), "fourth\n") << "to the end";
    EXPECT_EQ(sandboxes.download_range(id, "/w/log.txt", 20, 1000), "fourth\n") << "clipped to the file";
    EXPECT_EQ(sandboxes.read_lines(id, "/w/log.txt"), "first\nsecond\nthird\nfourth");
    EXPECT_EQ(sandboxes.read_lines(id, "/w/log.txt", 2, 2), "second\nthird");
    const auto beyond = sandboxes.try_download_range(id, "/w/log.txt", 500);
    ASSERT_FALSE(beyond);
    EXPECT_EQ(beyond.error().http_status(), 416);
    EXPECT_EQ(beyond.error().code(), kind::provider_request_rejected);
    const std::size_t before = server.requests();
    EXPECT_EQ(sandboxes.try_download_range(id, "/w/log.txt", 5, 2).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(sandboxes.try_read_lines(id, "/w/log.txt", 0).error().code(), kind::provider_request_rejected);
    EXPECT_EQ(server.requests(), before) << "refused before sending";
}

TEST_P(operations, a_snapshot_is_taken_listed_restored_with_its_files_and_deleted) {
    const auto id = new_sandbox();
    sandboxes.upload(id, "/w/state.txt", "before the snapshot");
    const ngfail::opensandbox::snapshot_info taken = sandboxes.create_snapshot(id, "checkpoint");
    EXPECT_EQ(taken.sandbox_id, id);
    EXPECT_EQ(taken.name, "checkpoint");
    EXPECT_EQ(taken.state, "Creating") << "accepted, not yet captured";
    sandboxes.upload(id, "/w/state.txt", "after the snapshot");

    const ngfail::opensandbox::snapshot_info ready = sandboxes.get_snapshot(taken.id);
    EXPECT_EQ(ready.state, "Ready");
    EXPECT_EQ(ready.reason, "snapshot_runtime_ready");
    const auto listed = sandboxes.list_snapshots({.sandbox_id = id, .states = {"Ready"}});
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed.front().id, taken.id);
    EXPECT_TRUE(sandboxes.list_snapshots({.sandbox_id = id, .states = {"Failed"}}).empty());

    const ngfail::opensandbox::sandbox_info restored = sandboxes.create({.entrypoint = {}, .snapshot_id = taken.id});
    EXPECT_EQ(sandboxes.get(restored.id).snapshot_id, taken.id);
    EXPECT_EQ(sandboxes.download(restored.id, "/w/state.txt"), "before the snapshot") << "the files as they were";
    EXPECT_EQ(sandboxes.download(id, "/w/state.txt"), "after the snapshot") << "the source kept its own";

    sandboxes.delete_snapshot(taken.id);
    const auto gone = sandboxes.try_get_snapshot(taken.id);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().http_status(), 404);
    EXPECT_NE(gone.error().code(), kind::provider_sandbox_lost) << "a missing snapshot loses no sandbox";
    EXPECT_EQ(std::get<ngfail::sandbox_details>(gone.error().details()).provider_code, "SNAPSHOT::NOT_FOUND");
    const auto restore_gone = sandboxes.try_create({.snapshot_id = taken.id});
    ASSERT_FALSE(restore_gone);
    EXPECT_EQ(restore_gone.error().http_status(), 404);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(restore_gone.error().details()).delivery, delivery::not_sent);
}

TEST_P(operations, a_snapshot_needs_a_running_sandbox_and_refuses_bad_arguments_before_sending) {
    const auto id = new_sandbox();
    sandboxes.pause(id);
    const auto paused = sandboxes.try_create_snapshot(id);
    ASSERT_FALSE(paused);
    EXPECT_EQ(paused.error().http_status(), 409);
    EXPECT_EQ(paused.error().code(), kind::provider_state_conflict);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(paused.error().details()).delivery, delivery::not_sent);
    const std::size_t before = server.requests();
    EXPECT_FALSE(sandboxes.try_create_snapshot(id, ""));
    EXPECT_FALSE(sandboxes.try_get_snapshot("a/b\r\n"));
    EXPECT_FALSE(sandboxes.try_delete_snapshot(""));
    EXPECT_EQ(server.requests(), before) << "refused before sending";
}

TEST_P(operations, metrics_once_and_watched_until_the_caller_has_enough) {
    const auto id = new_sandbox();
    const ngfail::opensandbox::metrics_sample once = sandboxes.get_metrics(id);
    EXPECT_GT(once.cpu_count, 0);
    EXPECT_GT(once.mem_total_mib, 0);
    EXPECT_GT(once.timestamp_ms, 0);
    EXPECT_FALSE(once.error);

    std::vector<std::int64_t> times;
    const std::size_t read = sandboxes.watch_metrics(id, [&](const ngfail::opensandbox::metrics_sample& sample) {
        times.push_back(sample.timestamp_ms);
        return times.size() < 3;
    });
    EXPECT_EQ(read, 3u);
    ASSERT_EQ(times.size(), 3u);
    EXPECT_LE(times.front(), times.back()) << "samples in time order";
    EXPECT_EQ(sandboxes.get_metrics(id).cpu_count, once.cpu_count) << "the client goes on after a watch it ended";

    const auto throwing = sandboxes.try_watch_metrics(id, [](const auto&) -> bool { throw std::runtime_error("no"); });
    ASSERT_FALSE(throwing);
    EXPECT_EQ(throwing.error().code(), kind::cancelled);
    const std::size_t before = server.requests();
    EXPECT_FALSE(sandboxes.try_watch_metrics(id, nullptr)) << "no callback";
    EXPECT_EQ(server.requests(), before) << "refused before sending";
    const auto gone = sandboxes.try_get_metrics("missing");
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::provider_sandbox_lost);
}

TEST_P(operations, metadata_is_merge_patched_and_read_back) {
    const auto id = sandboxes.create({.metadata = {{"team", "rl"}, {"run", "7"}}}).id;
    EXPECT_EQ(sandboxes.get(id).metadata, (std::map<std::string, std::string>{{"run", "7"}, {"team", "rl"}}));
    const auto patched = sandboxes.patch_metadata(id, {{"stage", "eval"}, {"team", std::nullopt}, {"absent", std::nullopt}});
    const std::map<std::string, std::string> want{{"run", "7"}, {"stage", "eval"}};
    EXPECT_EQ(patched.metadata, want) << "added, deleted, kept; a missing key's delete is no error";
    EXPECT_EQ(sandboxes.get(id).metadata, want);
    const auto gone = sandboxes.try_patch_metadata("missing", {{"a", "b"}});
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::provider_sandbox_lost);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(gone.error().details()).operation, "metadata");
}

INSTANTIATE_TEST_SUITE_P(transports, operations, every_transport, transport_name);

}  // namespace
