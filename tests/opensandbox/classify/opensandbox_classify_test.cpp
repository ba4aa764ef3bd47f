#include <ngfail/opensandbox/classify.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/system/system_error.hpp>
#include <gtest/gtest.h>

#include <vector>

namespace {

using ngfail::delivery;
using ngfail::kind;
using ngfail::opensandbox::classify;
using ngfail::opensandbox::errc;
using ngfail::opensandbox::observation;
using ngfail::opensandbox::phase;

struct expected {
    kind k;
    std::optional<delivery> d;
};

void expect_classified(const observation& seen, expected want, std::string_view note = "") {
    const auto c = classify(seen);
    EXPECT_EQ(c.kind, want.k) << "got " << ngfail::kind_name(c.kind) << " " << note;
    EXPECT_EQ(c.delivery, want.d) << "kind " << ngfail::kind_name(c.kind) << " " << note;
}

std::error_code errno_code(std::errc e) { return std::make_error_code(e); }

// ---- one test per row of the evidence table ------------------------------------------------------------------------

TEST(classify_explicit_kind, an_explicit_kind_is_taken_and_delivery_comes_from_the_rows_below) {
    expect_classified({.operation = "exec", .failure_kind = "agent_timeout"}, {kind::agent_timeout, std::nullopt});
    expect_classified({.operation = "get", .failure_kind = "cancelled", .http_status = 401},
                      {kind::cancelled, delivery::not_sent});
    const auto unknown = classify({.operation = "exec", .failure_kind = "acme:sandbox_melted"});
    EXPECT_EQ(ngfail::kind_name(unknown.kind), "acme:sandbox_melted") << "unknown kinds are kept";
}

TEST(classify_oom_killed, status_reason_oomkilled_is_an_oom_kill) {
    expect_classified({.operation = "exec", .execution_id = "ex-1", .provider_status_reason = "OOMKilled"},
                      {kind::provider_oom_killed, delivery::delivered});
    expect_classified({.operation = "get", .provider_status_reason = "OOMKilled"},
                      {kind::provider_oom_killed, std::nullopt});
}

TEST(classify_killed_by_signal, exec_exit_minus_one_is_a_command_killed_by_a_signal) {
    expect_classified({.operation = "exec", .exit_code = -1}, {kind::provider_command_terminated, delivery::delivered});
    expect_classified({.operation = "exec_status", .exit_code = -1},
                      {kind::provider_command_terminated, delivery::delivered});
}

TEST(classify_killed_by_signal, a_signal_reported_on_an_exec_is_a_command_killed_by_a_signal) {
    expect_classified({.operation = "exec", .execution_id = "ex-1", .signal = "SIGKILL"},
                      {kind::provider_command_terminated, delivery::delivered});
    EXPECT_EQ(ngfail::opensandbox::matching_rule({.operation = "run_in_session", .signal = "9"}), "killed_by_signal");
}

TEST(classify_start_failed, create_start_failures) {
    expect_classified({.operation = "create", .http_status = 504, .provider_code = "KUBERNETES::POD_READY_TIMEOUT"},
                      {kind::provider_start_failed, std::nullopt});
    expect_classified({.operation = "create", .provider_status_reason = "ImagePullBackOff"},
                      {kind::provider_start_failed, std::nullopt});
    expect_classified({.operation = "create", .provider_status_reason = "ErrImagePull"},
                      {kind::provider_start_failed, std::nullopt});
    expect_classified({.operation = "create", .transport_error = errc::readiness_timeout},
                      {kind::provider_start_failed, std::nullopt});
}

TEST(classify_start_failed, a_create_answered_with_a_sandbox_id_was_delivered) {
    expect_classified({.operation = "create", .sandbox_id = "sbx-1", .transport_error = errc::readiness_timeout},
                      {kind::provider_start_failed, delivery::delivered}, "the sandbox exists");
    expect_classified({.operation = "create", .sandbox_id = "sbx-1", .provider_status_reason = "ImagePullBackOff"},
                      {kind::provider_start_failed, delivery::delivered});
}

TEST(classify_credentials_rejected, http_401_is_rejected_credentials) {
    expect_classified({.operation = "get", .http_status = 401, .provider_code = "INVALID_API_KEY"},
                      {kind::provider_credentials_rejected, delivery::not_sent});
}

TEST(classify_quota_exhausted, quota_and_capacity) {
    const auto c = classify({.operation = "create", .http_status = 429, .retry_after = std::chrono::seconds(7)});
    EXPECT_EQ(c.kind, kind::provider_quota_exhausted);
    EXPECT_EQ(c.delivery, delivery::not_sent);
    expect_classified({.operation = "create", .http_status = 403, .provider_code = "KUBERNETES::QUOTA_EXCEEDED"},
                      {kind::provider_quota_exhausted, delivery::not_sent});
    expect_classified({.operation = "create", .http_status = 503, .provider_code = "KUBERNETES::POOL_CAPACITY_EXHAUSTED"},
                      {kind::provider_quota_exhausted, delivery::not_sent});
    const auto event = ngfail::opensandbox::opensandbox_failure(
        {.operation = "create", .http_status = 429, .retry_after = std::chrono::seconds(7)});
    EXPECT_EQ(event.sandbox().retry_after, std::chrono::seconds(7));
}

TEST(classify_sandbox_lost, a_lost_sandbox) {
    expect_classified({.operation = "get", .http_status = 404, .provider_code = "KUBERNETES::SANDBOX_NOT_FOUND"},
                      {kind::provider_sandbox_lost, delivery::not_sent});
    expect_classified({.operation = "get", .http_status = 404, .provider_code = "DOCKER::SANDBOX_NOT_FOUND"},
                      {kind::provider_sandbox_lost, delivery::not_sent});
}

// Replay safety: a state seen afterwards never proves the request was refused.
TEST(classify_sandbox_lost, a_state_read_afterwards_never_says_not_sent) {
    expect_classified({.operation = "exec", .sandbox_state = "Terminated"}, {kind::provider_sandbox_lost, std::nullopt});
    expect_classified({.operation = "get", .sandbox_state = "Failed"}, {kind::provider_sandbox_lost, std::nullopt});
    expect_classified({.operation = "exec", .sandbox_id = "sbx-1", .execution_id = "ex-1", .sandbox_state = "Failed"},
                      {kind::provider_sandbox_lost, delivery::delivered}, "the command started");
    expect_classified({.operation = "create", .sandbox_id = "sbx-1", .sandbox_state = "Failed"},
                      {kind::provider_sandbox_lost, delivery::delivered}, "the create made a sandbox");
    expect_classified({.operation = "exec", .execution_id = "ex-1", .sandbox_state = "Failed",
                       .transport_error = errno_code(std::errc::connection_reset), .transport_phase = phase::receive},
                      {kind::provider_sandbox_lost, delivery::delivered});
}

// Every row that may say not_sent, with the evidence that licenses it removed: never not_sent.
TEST(classify_delivery, not_sent_only_from_a_refusing_reply_or_a_connect_phase_error) {
    const std::vector<observation> without_refusal{
        {.operation = "exec", .execution_id = "ex", .sandbox_state = "Failed"},
        {.operation = "create", .sandbox_id = "s", .sandbox_state = "Terminated"},
        {.operation = "exec", .transport_error = errno_code(std::errc::host_unreachable), .transport_phase = phase::receive},
        {.operation = "exec", .transport_error = errno_code(std::errc::network_unreachable)},
        {.operation = "exec", .transport_error = errno_code(std::errc::timed_out)},
        {.operation = "exec", .transport_error = errno_code(std::errc::too_many_files_open), .transport_phase = phase::send},
        {.operation = "exec", .provider_status_reason = "OOMKilled"},
        {.operation = "create", .provider_status_reason = "ImagePullBackOff", .sandbox_state = "Failed"},
        {.operation = "create", .sandbox_id = "s", .transport_error = errc::readiness_timeout},
    };
    for (const auto& seen : without_refusal) {
        EXPECT_NE(ngfail::opensandbox::classify(seen).delivery, delivery::not_sent)
            << seen.operation << " " << seen.sandbox_state.value_or("-");
    }
}

TEST(classify_provider_not_ready, provider_not_ready) {
    expect_classified({.operation = "endpoint", .http_status = 404, .provider_code = "KUBERNETES::POD_IP_NOT_AVAILABLE"},
                      {kind::provider_unavailable, delivery::not_sent});
    expect_classified({.operation = "create", .http_status = 503, .provider_code = "DOCKER::INITIALIZATION_ERROR"},
                      {kind::provider_unavailable, delivery::not_sent});
}

TEST(classify_backend_unreachable, backend_connection_failed_is_unreachable) {
    expect_classified({.operation = "exec", .http_status = 502, .provider_code = "BACKEND_CONNECTION_FAILED"},
                      {kind::transport_unreachable, delivery::not_sent});
}

TEST(classify_state_conflict, http_409_is_a_state_conflict) {
    expect_classified({.operation = "renew", .http_status = 409, .provider_code = "KUBERNETES::INVALID_STATE"},
                      {kind::provider_state_conflict, delivery::not_sent});
}

TEST(classify_request_rejected, other_4xx_is_a_rejected_request) {
    expect_classified({.operation = "create", .http_status = 400, .provider_code = "SANDBOX::INVALID_PARAMETER"},
                      {kind::provider_request_rejected, delivery::not_sent});
    expect_classified({.operation = "get", .http_status = 403}, {kind::provider_request_rejected, delivery::not_sent});
}

TEST(classify_server_fault, other_5xx_is_unavailable_and_possibly_delivered) {
    expect_classified({.operation = "exec", .http_status = 500, .provider_code = "GENERAL::UNKNOWN_ERROR"},
                      {kind::provider_unavailable, delivery::possibly_delivered});
    expect_classified({.operation = "create", .http_status = 502}, {kind::provider_unavailable, delivery::possibly_delivered});
    expect_classified({.operation = "create", .http_status = 504}, {kind::provider_unavailable, delivery::possibly_delivered});
}

TEST(classify_unreachable_at_connect, unreachable_while_connecting) {
    for (const auto e : {std::errc::connection_refused, std::errc::network_unreachable, std::errc::host_unreachable,
                         std::errc::timed_out}) {
        expect_classified({.operation = "create", .transport_error = errno_code(e), .transport_phase = phase::connect},
                          {kind::transport_unreachable, delivery::not_sent});
    }
    expect_classified({.operation = "get", .transport_error = errc::host_not_found, .transport_phase = phase::connect},
                      {kind::transport_unreachable, delivery::not_sent});
    expect_classified({.operation = "get", .transport_error = errno_code(std::errc::connection_refused)},
                      {kind::transport_unreachable, delivery::not_sent}, "a refusal says the phase itself");
}

TEST(classify_unreachable_at_connect, a_tls_handshake_or_certificate_failure_while_connecting) {
    const std::error_code handshake = errc::tls_failed;
    expect_classified({.operation = "create", .transport_error = handshake, .transport_phase = phase::connect},
                      {kind::transport_unreachable, delivery::not_sent});
    expect_classified({.operation = "get", .transport_error = handshake, .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::possibly_delivered}, "a TLS session broken mid-exchange");
    expect_classified({.operation = "exec", .execution_id = "e-1",
                       .transport_error = errc::connection_closed, .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::delivered}, "closed without ending the TLS session");
}

TEST(classify_cancelled, a_cancelled_call_says_what_was_delivered) {
    const std::error_code cancelled = ngfail::opensandbox::errc::cancelled;
    expect_classified({.operation = "exec", .transport_error = cancelled, .transport_phase = phase::connect},
                      {kind::cancelled, delivery::not_sent});
    expect_classified({.operation = "exec", .transport_error = cancelled, .transport_phase = phase::receive},
                      {kind::cancelled, delivery::possibly_delivered});
    expect_classified({.operation = "exec", .execution_id = "e-1", .transport_error = cancelled,
                       .transport_phase = phase::receive},
                      {kind::cancelled, delivery::delivered});
    expect_classified({.operation = "create", .sandbox_id = "s-1", .transport_error = cancelled,
                       .transport_phase = phase::receive},
                      {kind::cancelled, delivery::delivered}, "the sandbox exists");
}

TEST(classify_local_resource, local_resources) {
    for (const auto e : {std::errc::too_many_files_open, std::errc::too_many_files_open_in_system,
                         std::errc::no_buffer_space, std::errc::not_enough_memory, std::errc::address_not_available}) {
        expect_classified({.operation = "exec", .transport_error = errno_code(e), .transport_phase = phase::connect},
                          {kind::transport_local_resource, delivery::not_sent});
        expect_classified({.operation = "exec", .transport_error = errno_code(e), .transport_phase = phase::send},
                          {kind::transport_local_resource, delivery::possibly_delivered});
    }
}

TEST(classify_malformed_reply, a_malformed_response) {
    expect_classified({.operation = "get", .transport_error = errc::malformed_response, .transport_phase = phase::receive},
                      {kind::protocol_violation, delivery::possibly_delivered});
}

TEST(classify_peer_dropped, the_peer_dropped_an_established_connection) {
    for (const std::error_code e : {errno_code(std::errc::connection_reset), errno_code(std::errc::connection_aborted),
                                    errno_code(std::errc::broken_pipe), std::error_code(errc::connection_closed),
                                    std::error_code(errc::stream_incomplete)}) {
        expect_classified({.operation = "get", .transport_error = e, .transport_phase = phase::receive},
                          {kind::transport_peer_drop, delivery::possibly_delivered});
    }
    expect_classified({.operation = "exec", .execution_id = "ex-1", .transport_error = errc::stream_incomplete,
                       .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::delivered});
    expect_classified({.operation = "exec", .transport_error = errc::connection_closed, .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::possibly_delivered}, "before init, nothing shows the command started");
}

TEST(classify_timed_out, timed_out_after_connecting) {
    expect_classified({.operation = "get", .transport_error = errno_code(std::errc::timed_out),
                       .transport_phase = phase::receive},
                      {kind::transport_timeout, delivery::possibly_delivered});
    expect_classified({.operation = "exec", .execution_id = "ex-9",
                       .transport_error = errno_code(std::errc::timed_out), .transport_phase = phase::receive},
                      {kind::transport_timeout, delivery::delivered});
}

TEST(classify_nothing_matched, nothing_is_undetermined) {
    expect_classified({.operation = "exec"}, {kind::undetermined, std::nullopt});
    expect_classified({.operation = "exec", .exit_code = 1}, {kind::undetermined, std::nullopt}, "a non-zero exit is no failure kind");
}

// ---- precedence ----------------------------------------------------------------------------

TEST(classify_precedence, oom_beats_a_signal_exit) {
    expect_classified({.operation = "exec", .execution_id = "e", .provider_status_reason = "OOMKilled", .exit_code = -1},
                      {kind::provider_oom_killed, delivery::delivered});
}

TEST(classify_precedence, a_start_failure_beats_5xx) {
    expect_classified({.operation = "create", .http_status = 504, .provider_code = "KUBERNETES::POD_READY_TIMEOUT"},
                      {kind::provider_start_failed, std::nullopt});
    expect_classified({.operation = "get", .http_status = 504, .provider_code = "KUBERNETES::POD_READY_TIMEOUT"},
                      {kind::provider_unavailable, delivery::possibly_delivered}, "start_failed is about create only");
}

TEST(classify_precedence, credentials_beat_quota_and_quota_beats_lost) {
    expect_classified({.operation = "create", .http_status = 401, .provider_code = "KUBERNETES::POOL_CAPACITY_EXHAUSTED"},
                      {kind::provider_credentials_rejected, delivery::not_sent});
    expect_classified({.operation = "get", .http_status = 429, .sandbox_state = "Failed"},
                      {kind::provider_quota_exhausted, delivery::not_sent});
}

TEST(classify_precedence, specific_codes_beat_the_generic_status_rows) {
    expect_classified({.operation = "exec", .http_status = 502, .provider_code = "BACKEND_CONNECTION_FAILED"},
                      {kind::transport_unreachable, delivery::not_sent});
    expect_classified({.operation = "exec", .http_status = 404, .provider_code = "KUBERNETES::POD_IP_NOT_AVAILABLE"},
                      {kind::provider_unavailable, delivery::not_sent});
}

TEST(classify_precedence, an_http_status_beats_a_transport_error) {
    expect_classified({.operation = "get", .http_status = 500, .transport_error = errno_code(std::errc::connection_reset),
                       .transport_phase = phase::receive},
                      {kind::provider_unavailable, delivery::possibly_delivered});
}

TEST(classify_precedence, a_code_needs_its_backend_separator) {
    expect_classified({.operation = "get", .http_status = 404, .provider_code = "NOTSANDBOX_NOT_FOUND"},
                      {kind::provider_request_rejected, delivery::not_sent});
}

// ---- never evidence --------------------------------------------------------------------------

TEST(classify_never_evidence, words_in_messages_reasons_and_causes_prove_nothing) {
    for (const std::string text : {"OOMKilled", "container OOMKilled (exit code 137)", "401 Unauthorized",
                                   "signal: killed", "connection refused", "HTTP 502 Bad Gateway",
                                   "KUBERNETES::SANDBOX_NOT_FOUND", "exit status -1"}) {
        const observation seen{.operation = "exec",
                               .cause = std::make_exception_ptr(std::runtime_error(text)),
                               .reason = text};
        const auto c = classify(seen);
        EXPECT_EQ(c.kind, kind::undetermined) << text;
        EXPECT_EQ(c.delivery, std::nullopt) << text;
    }
}

TEST(classify_never_evidence, diagnostics_text_is_carried_never_read) {
    // The diagnostics API's text names the real cause for people; the kind, the delivery
    // and the deciding row stay what the structured fields say, whatever it says.
    const std::vector<observation> cases{
        {.operation = "exec", .http_status = 502},
        {.operation = "exec", .sandbox_state = "Failed"},
        {.operation = "create", .http_status = 504, .provider_code = "KUBERNETES::POD_READY_TIMEOUT"},
        {.operation = "attach_terminal", .close_code = 1011},
        {.operation = "get"},
    };
    for (observation seen : cases) {
        const auto without = classify(seen);
        const std::string_view row = ngfail::opensandbox::matching_rule(seen);
        seen.diagnostics = "runtime Warning OOMKilling Memory cgroup out of memory: Killed process 7 (python3); "
                           "container sandbox terminated with OOMKilled (exit code 137); 401 Unauthorized";
        EXPECT_EQ(classify(seen), without) << seen.operation;
        EXPECT_EQ(ngfail::opensandbox::matching_rule(seen), row) << seen.operation;
        EXPECT_EQ(ngfail::opensandbox::opensandbox_failure(seen).sandbox().diagnostics, seen.diagnostics);
        EXPECT_EQ(ngfail::opensandbox::opensandbox_failure(seen).sandbox().evidence_row, row);
    }
}

TEST(classify_never_evidence, exit_codes_137_and_143_alone) {
    expect_classified({.operation = "exec", .exit_code = 137}, {kind::undetermined, std::nullopt});
    expect_classified({.operation = "exec", .exit_code = 143}, {kind::undetermined, std::nullopt});
}

TEST(classify_never_evidence, a_bare_404_is_not_a_lost_sandbox) {
    expect_classified({.operation = "get", .http_status = 404}, {kind::provider_request_rejected, delivery::not_sent});
}

TEST(classify_never_evidence, minus_one_outside_exec_is_no_signal) {
    expect_classified({.operation = "get", .exit_code = -1}, {kind::undetermined, std::nullopt});
}

TEST(classify_never_evidence, a_signal_outside_exec_or_an_empty_one_is_no_signal_death) {
    expect_classified({.operation = "get", .signal = "SIGKILL"}, {kind::undetermined, std::nullopt});
    expect_classified({.operation = "exec", .signal = ""}, {kind::undetermined, std::nullopt});
}

// ---- causes read structurally -----------------------------------------------------------------

TEST(classify_causes, an_api_error_gives_status_and_code) {
    const auto cause = std::make_exception_ptr(
        ngfail::opensandbox::api_error(404, "KUBERNETES::SANDBOX_NOT_FOUND", "Sandbox 'x' not found", "req-1"));
    expect_classified({.operation = "get", .cause = cause}, {kind::provider_sandbox_lost, delivery::not_sent});
}

TEST(classify_causes, a_std_system_error_gives_its_errno_code) {
    const auto cause = std::make_exception_ptr(std::system_error(errno_code(std::errc::connection_reset)));
    expect_classified({.operation = "get", .cause = cause, .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::possibly_delivered});
}

TEST(classify_causes, a_boost_system_error_gives_its_errno_code) {
    const auto with = [](boost::system::error_code ec, std::optional<phase> at) {
        return observation{.operation = "get", .cause = std::make_exception_ptr(boost::system::system_error(ec)),
                           .transport_phase = at};
    };
    expect_classified(with(boost::asio::error::connection_refused, phase::connect),
                      {kind::transport_unreachable, delivery::not_sent});
    expect_classified(with(boost::asio::error::connection_reset, phase::receive),
                      {kind::transport_peer_drop, delivery::possibly_delivered});
    expect_classified(with(boost::asio::error::timed_out, phase::receive),
                      {kind::transport_timeout, delivery::possibly_delivered});
}

// SPEC §9.2: Asio's and Beast's codes are recognised by category name and value, whether
// the cause is a boost::system::system_error or a std::system_error holding the code
// converted; no header of theirs is needed by the classifier.
struct cause_case {
    const char* operation;
    boost::system::error_code error;
    phase at;
    std::optional<std::string> execution_id;
    expected want;
};

TEST(classify_causes, asio_and_beast_codes_are_read_by_category_name_and_value) {
    const cause_case cases[] = {
        {"exec", boost::asio::error::eof, phase::receive, "ex-1", {kind::transport_peer_drop, delivery::delivered}},
        {"get", boost::asio::error::eof, phase::receive, {}, {kind::transport_peer_drop, delivery::possibly_delivered}},
        {"get", boost::asio::error::host_not_found, phase::connect, {}, {kind::transport_unreachable, delivery::not_sent}},
        {"get", boost::asio::error::host_not_found_try_again, phase::connect, {},
         {kind::transport_unreachable, delivery::not_sent}},
        {"get", boost::beast::error::timeout, phase::receive, {}, {kind::transport_timeout, delivery::possibly_delivered}},
        {"get", boost::beast::http::error::end_of_stream, phase::receive, {},
         {kind::transport_peer_drop, delivery::possibly_delivered}},
        {"get", boost::beast::http::error::partial_message, phase::receive, {},
         {kind::transport_peer_drop, delivery::possibly_delivered}},
        {"exec", boost::beast::error::timeout, phase::receive, "ex-9", {kind::transport_timeout, delivery::delivered}},
        {"get", boost::asio::error::operation_aborted, phase::receive, {}, {kind::cancelled, delivery::possibly_delivered}},
        {"exec", boost::asio::error::operation_aborted, phase::connect, {}, {kind::cancelled, delivery::not_sent}},
    };
    for (const cause_case& c : cases) {
        const std::string note = std::string(c.error.category().name()) + " " + std::to_string(c.error.value());
        const std::exception_ptr causes[] = {std::make_exception_ptr(boost::system::system_error(c.error)),
                                             std::make_exception_ptr(std::system_error(std::error_code(c.error)))};
        for (const std::exception_ptr& cause : causes) {
            expect_classified({.operation = c.operation, .cause = cause, .execution_id = c.execution_id,
                               .transport_phase = c.at},
                              c.want, note);
        }
        expect_classified({.operation = c.operation, .execution_id = c.execution_id,
                           .transport_error = std::error_code(c.error), .transport_phase = c.at},
                          c.want, note + " as the transport error");
    }
}

TEST(classify_causes, a_raw_ecanceled_is_a_cancellation) {
    for (const std::error_code ec : {std::error_code(ECANCELED, std::system_category()), errno_code(std::errc::operation_canceled)}) {
        expect_classified({.operation = "get", .cause = std::make_exception_ptr(std::system_error(ec)),
                           .transport_phase = phase::receive},
                          {kind::cancelled, delivery::possibly_delivered}, ec.category().name());
        expect_classified({.operation = "get", .transport_error = ec, .transport_phase = phase::connect},
                          {kind::cancelled, delivery::not_sent}, ec.category().name());
    }
}

TEST(classify_causes, another_code_of_those_categories_is_not_evidence) {
    for (const boost::system::error_code ec : {boost::system::error_code(boost::asio::error::already_open),
                                                boost::system::error_code(boost::beast::http::error::bad_target)}) {
        expect_classified({.operation = "get", .cause = std::make_exception_ptr(boost::system::system_error(ec)),
                           .transport_phase = phase::receive},
                          {kind::undetermined, std::nullopt}, ec.category().name());
    }
}

// A terminal's rows (execd's PTY controller): the close code and the code are the evidence,
// never the close reason's text; input written before a failure may have reached the shell.
TEST(classify_terminal, taken_over_policy_close_held_and_gone) {
    expect_classified({.operation = "attach_terminal", .execution_id = "t", .close_code = 4001},
                      {kind::provider_state_conflict, delivery::delivered}, "attached, nothing typed");
    expect_classified({.operation = "attach_terminal", .execution_id = "t", .close_code = 4001, .input_written = true},
                      {kind::provider_state_conflict, delivery::possibly_delivered});
    expect_classified({.operation = "attach_terminal", .execution_id = "t", .close_code = 1008},
                      {kind::provider_request_rejected, delivery::delivered});
    expect_classified({.operation = "attach_terminal", .http_status = 409, .provider_code = "ALREADY_CONNECTED"},
                      {kind::provider_state_conflict, delivery::not_sent});
    expect_classified({.operation = "attach_terminal", .execution_id = "t", .provider_code = "ALREADY_CONNECTED"},
                      {kind::provider_state_conflict, delivery::not_sent}, "a takeover that timed out, after the upgrade");
    for (const char* op : {"attach_terminal", "terminal_status", "delete_terminal"}) {
        expect_classified({.operation = op, .http_status = 404, .provider_code = "CONTEXT_NOT_FOUND"},
                          {kind::session_lost, delivery::not_sent}, op);
    }
    expect_classified({.operation = "run_code", .http_status = 404, .provider_code = "CONTEXT_NOT_FOUND"},
                      {kind::provider_request_rejected, delivery::not_sent}, "a code context is not a terminal");
    expect_classified({.operation = "exec", .close_code = 4001}, {kind::undetermined, std::nullopt},
                      "a close code means nothing outside a terminal");
    expect_classified({.operation = "attach_terminal", .reason = "taken over by another client", .close_code = 1000},
                      {kind::undetermined, std::nullopt}, "no text is read");
}

TEST(classify_terminal, a_dropped_attachment_is_delivered_unless_input_was_written) {
    const auto drop = errno_code(std::errc::connection_reset);
    expect_classified({.operation = "attach_terminal", .execution_id = "t", .transport_error = drop,
                       .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::delivered});
    expect_classified({.operation = "attach_terminal", .execution_id = "t", .transport_error = drop,
                       .transport_phase = phase::receive, .input_written = true},
                      {kind::transport_peer_drop, delivery::possibly_delivered});
    expect_classified({.operation = "attach_terminal", .transport_error = drop, .transport_phase = phase::receive},
                      {kind::transport_peer_drop, delivery::possibly_delivered}, "during the upgrade");
}

TEST(classify_rules, each_row_is_named_by_what_it_establishes) {
    using ngfail::opensandbox::matching_rule;
    const std::vector<std::pair<observation, std::string_view>> cases{
        {{.operation = "exec", .failure_kind = "agent_timeout", .http_status = 500}, "explicit_kind"},
        {{.operation = "exec", .provider_status_reason = "OOMKilled"}, "oom_killed"},
        {{.operation = "exec", .exit_code = -1}, "killed_by_signal"},
        {{.operation = "create", .transport_error = errc::readiness_timeout}, "start_failed"},
        {{.operation = "get", .http_status = 401}, "credentials_rejected"},
        {{.operation = "get", .http_status = 429}, "quota_exhausted"},
        {{.operation = "get", .sandbox_state = "Terminated"}, "sandbox_lost"},
        {{.operation = "get", .http_status = 503, .provider_code = "INITIALIZATION_ERROR"}, "provider_not_ready"},
        {{.operation = "get", .http_status = 502, .provider_code = "BACKEND_CONNECTION_FAILED"}, "backend_unreachable"},
        {{.operation = "attach_terminal", .close_code = 4001}, "terminal_taken_over"},
        {{.operation = "attach_terminal", .close_code = 1008}, "terminal_policy_close"},
        {{.operation = "attach_terminal", .http_status = 409, .provider_code = "ALREADY_CONNECTED"}, "terminal_held"},
        {{.operation = "delete_terminal", .http_status = 404, .provider_code = "CONTEXT_NOT_FOUND"}, "terminal_gone"},
        {{.operation = "get", .http_status = 409}, "state_conflict"},
        {{.operation = "get", .http_status = 400}, "request_rejected"},
        {{.operation = "get", .http_status = 500}, "server_fault"},
        {{.operation = "get", .transport_error = errno_code(std::errc::connection_refused)}, "unreachable_at_connect"},
        {{.operation = "get", .transport_error = errno_code(std::errc::too_many_files_open)}, "local_resource"},
        {{.operation = "get", .transport_error = errc::malformed_response}, "malformed_reply"},
        {{.operation = "get", .transport_error = errc::connection_closed, .transport_phase = phase::receive}, "peer_dropped"},
        {{.operation = "get", .transport_error = errno_code(std::errc::timed_out)}, "timed_out"},
        {{.operation = "get", .transport_error = errc::cancelled}, "cancelled"},
        {{.operation = "get"}, "nothing_matched"},
    };
    for (const auto& [seen, rule] : cases) EXPECT_EQ(matching_rule(seen), rule);
}

TEST(classify_causes, observation_fields_win_over_the_cause) {
    const auto cause = std::make_exception_ptr(ngfail::opensandbox::api_error(500, "GENERAL::UNKNOWN_ERROR", "x"));
    expect_classified({.operation = "get", .cause = cause, .http_status = 401},
                      {kind::provider_credentials_rejected, delivery::not_sent});
}

// ---- the event and the failure ---------------------------------------------------------------

TEST(opensandbox_failure, records_the_observation_and_keeps_the_cause) {
    const auto cause = std::make_exception_ptr(
        ngfail::opensandbox::api_error(404, "KUBERNETES::SANDBOX_NOT_FOUND", "gone", "req-2"));
    const auto e = ngfail::opensandbox::opensandbox_failure(
        {.operation = "exec", .sandbox_id = "sbx-3", .cause = cause, .http_status = 404,
         .provider_code = "KUBERNETES::SANDBOX_NOT_FOUND"});
    EXPECT_EQ(e.code(), kind::provider_sandbox_lost);
    EXPECT_EQ(e.sandbox().provider, "opensandbox");
    EXPECT_EQ(e.sandbox().delivery, delivery::not_sent);
    EXPECT_EQ(e.sandbox().sandbox_id, "sbx-3");
    EXPECT_EQ(e.http_status(), 404);
    EXPECT_EQ(e.cause(), cause);
    const ngfail::failure f = ngfail::opensandbox::to_failure(
        {.operation = "exec", .sandbox_id = "sbx-3", .cause = cause, .http_status = 404,
         .provider_code = "KUBERNETES::SANDBOX_NOT_FOUND"});
    EXPECT_EQ(f.code(), e.code());
    EXPECT_EQ(std::get<ngfail::sandbox_details>(f.details()), e.sandbox());
}

TEST(opensandbox_failure, every_fact_of_the_observation_reaches_the_details) {
    const observation seen{.operation = "exec",
                           .sandbox_id = "sbx-4",
                           .execution_id = "ex-4",
                           .provider_status_reason = "Error",
                           .exit_code = -1,
                           .provider_code = "EXECD::KILLED",
                           .retry_after = std::chrono::seconds(3),
                           .signal = "SIGTERM",
                           .provider = "opensandbox-eu",
                           .diagnostics = "events (all): pod restarted"};
    const ngfail::sandbox_details want{.operation = "exec",
                                       .provider = "opensandbox-eu",
                                       .sandbox_id = "sbx-4",
                                       .execution_id = "ex-4",
                                       .provider_status_reason = "Error",
                                       .provider_code = "EXECD::KILLED",
                                       .exit_code = -1,
                                       .signal = "SIGTERM",
                                       .delivery = delivery::delivered,
                                       .retry_after = std::chrono::seconds(3),
                                       .evidence_row = "killed_by_signal",
                                       .diagnostics = "events (all): pod restarted"};
    EXPECT_EQ(ngfail::opensandbox::opensandbox_failure(seen).sandbox(), want);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(ngfail::opensandbox::to_failure(seen).details()), want);
}

TEST(opensandbox_failure, the_provider_is_opensandbox_unless_the_observation_names_another) {
    EXPECT_EQ(ngfail::opensandbox::opensandbox_failure({.operation = "get", .http_status = 401}).sandbox().provider,
              "opensandbox");
    EXPECT_EQ(ngfail::opensandbox::opensandbox_failure({.operation = "get", .provider = std::nullopt}).sandbox().provider,
              std::nullopt);
}

TEST(api_error, carries_the_envelope_as_data) {
    const ngfail::opensandbox::api_error e(429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED", "pool full", "req-9",
                                           std::chrono::seconds(5));
    EXPECT_EQ(e.status(), 429);
    EXPECT_EQ(e.code(), "KUBERNETES::POOL_CAPACITY_EXHAUSTED");
    EXPECT_EQ(e.request_id(), "req-9");
    EXPECT_EQ(e.retry_after(), std::chrono::seconds(5));
    const auto d = ngfail::sdk_error_details_of(std::make_exception_ptr(e));
    EXPECT_EQ(d.http_status, 429);
    EXPECT_EQ(d.code, "KUBERNETES::POOL_CAPACITY_EXHAUSTED");
    EXPECT_EQ(d.request_id, "req-9");
}

}  // namespace
