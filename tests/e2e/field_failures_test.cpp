// The failures OpenSandbox users report, each reproduced by its fault in the embedded server
// and met by the client over real loopback sockets: a long command's stream cut mid-chunk
// (lost with its command when streamed; survived by detached execution, never started twice).
#include "support/raw_server.hpp"

#include <ngfail/opensandbox.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>
#include <ngfail/request_failure_log.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using ngfail::delivery;
using ngfail::kind;
using ngfail::opensandbox::client;
using ngfail::opensandbox::testing::embedded_server;
using ngfail::opensandbox::testing::fault;
using action = fault::action;

constexpr std::string_view key = "sk-field-failures";

// 1 MiB of lines, each numbered, so that a lost or repeated piece shows.
std::string mebibyte_of_lines() {
    std::string text;
    for (int line = 0; text.size() < (std::size_t{1} << 20); ++line) {
        text += "line " + std::to_string(line) + " of a long command's output\n";
    }
    return text;
}

const ngfail::sandbox_details& details_of(const ngfail::failure& f) {
    return std::get<ngfail::sandbox_details>(f.details());
}

class field_failures : public testing::Test {
protected:
    embedded_server server{{.api_key = std::string(key), .ping_every = 50ms}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
    std::string id = sandboxes.create({}).id;
};

// ---- long command streams cut mid-chunk -------------------------------------------------------

TEST_F(field_failures, a_detached_exec_cut_three_times_returns_all_its_output_and_starts_once) {
    const std::string output = mebibyte_of_lines();
    sandboxes.upload(id, "/workspace/big.txt", output);
    server.inject(fault::cut_stream("exec_logs", 100'000, 3));
    ngfail::request_failure_log recovered;

    const auto ran = sandboxes.try_exec(id, {.command = "cat /workspace/big.txt; exit 3", .detached = true},
                                        {.log = &recovered});

    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().exit_code, 3);
    EXPECT_EQ(ran.value().error_value, "3") << "as a streamed exec's execd error event gives it";
    EXPECT_EQ(ran.value().stdout_text.size(), output.size());
    EXPECT_TRUE(ran.value().stdout_text == output) << "the output differs";
    EXPECT_FALSE(ran.value().output_truncated);
    EXPECT_EQ(server.commands_started(), 1u) << "the start was never repeated";
    // Each cut read is a failure the exec recovered from, on the request's log.
    const auto report = recovered.finish();
    EXPECT_FALSE(report.failure_id);
    std::size_t cut_reads = 0;
    for (const auto& [event_id, record] : report.events) {
        if (record.cause_id) {  // (its cause, the connection's error, is the next record)
            ++cut_reads;
            EXPECT_EQ(record.kind, "transport_peer_drop") << record.reason;
            EXPECT_EQ(std::get<ngfail::sandbox_details>(record.details).operation, "exec_logs");
        }
    }
    EXPECT_EQ(cut_reads, 3u);
}

TEST_F(field_failures, a_streamed_exec_cut_mid_chunk_fails_and_its_command_dies_with_it) {
    server.inject({.operation = "exec", .what = action::cut_stream, .cut_after_ms = 150ms});

    const auto ran = sandboxes.try_exec(id, {.command = "sleep 20"});

    ASSERT_FALSE(ran);
    const auto& seen = details_of(ran.error());
    EXPECT_EQ(seen.delivery, delivery::delivered) << ran.error().what();
    ASSERT_TRUE(seen.execution_id) << "its init came before the cut";
    // execd kills a foreground command when its request goes: the command is gone.
    const auto status = sandboxes.try_exec_status(id, *seen.execution_id);
    ASSERT_FALSE(status) << "a command killed by a signal is exit -1";
    EXPECT_EQ(details_of(status.error()).exit_code, -1);
    EXPECT_EQ(server.commands_started(), 1u);
}

TEST_F(field_failures, the_same_command_detached_survives_that_cut) {
    server.inject({.operation = "exec_logs", .what = action::cut_stream, .cut_after_bytes = 3});

    const auto ran = sandboxes.try_exec(id, {.command = "echo first; sleep 0.3; echo second", .detached = true});

    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().stdout_text, "first\nsecond\n");
    EXPECT_EQ(ran.value().exit_code, 0);
    EXPECT_FALSE(ran.value().error_value);
}

TEST_F(field_failures, detached_is_the_clients_default_when_its_options_say_so) {
    client detaching({.port = server.port(), .api_key = std::string(key), .detached = {.by_default = true}});
    server.inject({.operation = "exec_logs", .what = action::cut_stream, .cut_after_bytes = 0});
    EXPECT_EQ(detaching.exec(id, {.command = "echo hi"}).stdout_text, "hi\n");
    // A command may still ask for a stream, which the same cut would have ended.
    EXPECT_EQ(detaching.exec(id, {.command = "echo streamed", .detached = false}).stdout_text, "streamed\n");
    EXPECT_EQ(server.commands_started(), 2u);
}

TEST_F(field_failures, a_detached_exec_past_its_total_time_interrupts_its_command_and_says_so) {
    const auto ran = sandboxes.try_exec(id, {.command = "sleep 30", .total_timeout = 300ms, .detached = true});

    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().code(), kind::transport_timeout) << ran.error().what();
    EXPECT_THAT(std::string(ran.error().reason()), testing::HasSubstr("the command was interrupted"));
    const auto& seen = details_of(ran.error());
    ASSERT_TRUE(seen.execution_id);
    // An interrupted command ends as its signal takes it (exit -1, a failure of exec_status).
    ngfail::result<ngfail::opensandbox::command_status> status = ngfail::opensandbox::command_status{.running = true};
    for (int tries = 0; tries < 200 && status && status.value().running; ++tries) {
        std::this_thread::sleep_for(10ms);
        status = sandboxes.try_exec_status(id, *seen.execution_id);
    }
    ASSERT_FALSE(status) << "the command still runs";
    EXPECT_EQ(details_of(status.error()).exit_code, -1);
}

TEST_F(field_failures, a_cancelled_detached_exec_interrupts_its_command_and_says_so) {
    namespace asio = boost::asio;
    asio::io_context io(1);
    client on_io(io.get_executor(), {.port = server.port(), .api_key = std::string(key)});
    asio::cancellation_signal cancel;
    std::optional<ngfail::result<ngfail::opensandbox::exec_result>> ran;
    const ngfail::opensandbox::command sleeper{.command = "sleep 30", .detached = true};
    on_io.async_exec(id, sleeper, {}, asio::bind_cancellation_slot(cancel.slot(), [&](auto r) { ran.emplace(std::move(r)); }));
    asio::steady_timer later(io, 300ms);
    later.async_wait([&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
    io.run();

    ASSERT_TRUE(ran && !*ran);
    EXPECT_EQ(ran->error().code(), kind::cancelled) << ran->error().what();
    EXPECT_THAT(std::string(ran->error().reason()), testing::HasSubstr("the command was interrupted"));
    const auto& seen = details_of(ran->error());
    ASSERT_TRUE(seen.execution_id);
    EXPECT_EQ(seen.delivery, delivery::delivered);
}

TEST_F(field_failures, a_throwing_output_callback_cancels_a_detached_exec_and_interrupts_its_command) {
    const auto ran = sandboxes.try_exec(
        id, {.command = "echo started; sleep 30",
             .on_stdout = [](std::string_view) { throw std::runtime_error("enough"); },
             .detached = true});

    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().code(), kind::cancelled) << ran.error().what();
    EXPECT_THAT(std::string(ran.error().reason()), testing::HasSubstr("the command was interrupted"));
}

TEST_F(field_failures, reads_beyond_the_allowance_end_a_detached_exec_with_the_last_reads_failure) {
    client impatient({.port = server.port(), .api_key = std::string(key), .detached = {.resumes = 1}});
    server.inject(fault::cut_stream("exec_logs", 0, 2));

    const auto ran = impatient.try_exec(id, {.command = "echo hi; sleep 30", .detached = true});

    ASSERT_FALSE(ran);
    EXPECT_EQ(details_of(ran.error()).operation, "exec_logs") << ran.error().what();
    EXPECT_THAT(std::string(ran.error().reason()), testing::HasSubstr("the command was interrupted"));
    EXPECT_EQ(server.commands_started(), 1u);
}

TEST_F(field_failures, a_detached_exec_keeps_max_body_bytes_and_hands_its_callback_everything) {
    client small({.port = server.port(), .api_key = std::string(key), .max_body_bytes = 1000});
    sandboxes.upload(id, "/workspace/big.txt", std::string(5000, 'x'));
    server.inject(fault::cut_stream("exec_logs", 3000, 2));  // cut mid-way, the callback already fed
    std::string called_back;
    const auto ran = small.try_exec(id, {.command = "cat /workspace/big.txt; exit 4",
                                         .on_stdout = [&](std::string_view text) { called_back += text; },
                                         .detached = true});
    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().exit_code, 4);
    EXPECT_EQ(ran.value().stdout_text, std::string(1000, 'x'));
    EXPECT_TRUE(ran.value().output_truncated);
    EXPECT_EQ(called_back, std::string(5000, 'x')) << "every byte once, whichever read brought it";
    // Without a callback the log is read no further than the result keeps.
    const auto quiet = small.try_exec(id, {.command = "cat /workspace/big.txt", .detached = true});
    ASSERT_TRUE(quiet) << quiet.error().what();
    EXPECT_EQ(quiet.value().stdout_text.size(), 1000u);
    EXPECT_TRUE(quiet.value().output_truncated);
}

TEST_F(field_failures, no_read_of_a_detached_exec_outlasts_its_total_time) {
    server.inject(fault::stall("exec_logs", 5s));
    const auto start = std::chrono::steady_clock::now();
    const auto ran = sandboxes.try_exec(id, {.command = "echo quick", .total_timeout = 300ms, .detached = true});
    ASSERT_FALSE(ran);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    EXPECT_EQ(ran.error().code(), kind::transport_timeout) << ran.error().what();
    EXPECT_THAT(std::string(ran.error().reason()), testing::HasSubstr("total_timeout"));
    EXPECT_THAT(std::string(ran.error().reason()), testing::HasSubstr("the command had ended"))
        << "its status said so before the log read stalled: nothing to interrupt";
}

TEST_F(field_failures, a_sandbox_that_dies_while_a_detached_exec_follows_it_is_lost) {
    client retrying({.port = server.port(), .api_key = std::string(key), .retries = {.max_attempts = 5, .backoff = 1ms}});
    server.inject({.operation = "exec_status", .what = action::oom_kill, .shown_as = fault::surface::bare_502});
    const auto ran = retrying.try_exec(id, {.command = "sleep 1", .detached = true});
    ASSERT_FALSE(ran);
    // A bare 502 alone is provider_unavailable, read again until the retries run out.
    EXPECT_EQ(ran.error().code(), kind::provider_sandbox_lost) << ran.error().what();
    EXPECT_EQ(details_of(ran.error()).operation, "exec_status");
}

TEST_F(field_failures, a_cut_timed_after_a_short_reply_still_cuts_it) {
    server.inject({.operation = "exec_logs", .what = action::cut_stream, .cut_after_ms = 20ms});
    ngfail::request_failure_log recovered;
    const auto ran = sandboxes.try_exec(id, {.command = "echo hi", .detached = true}, {.log = &recovered});
    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().stdout_text, "hi\n");
    EXPECT_FALSE(recovered.finish().events.empty()) << "the fault fired: one read was cut";
}

TEST_F(field_failures, a_kill_whose_reply_is_lost_is_sent_again_and_found_done) {
    client retrying({.port = server.port(), .api_key = std::string(key), .timeout = 2s,
                     .retries = {.max_attempts = 3, .backoff = 1ms}});
    server.inject({.operation = "kill", .what = action::lose_reply});
    const auto killed = retrying.try_kill(id);
    EXPECT_TRUE(killed) << killed.error().what();
    EXPECT_FALSE(sandboxes.try_get(id));
}

TEST_F(field_failures, background_and_detached_together_are_refused_unsent) {
    const auto ran = sandboxes.try_exec(id, {.command = "true", .background = true, .detached = true});
    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().code(), kind::provider_request_rejected);
    EXPECT_EQ(details_of(ran.error()).delivery, delivery::not_sent);
    EXPECT_EQ(server.commands_started(), 0u);
}

// ---- a lost reply, then a duplicate process -----------------------------------------------------

TEST_F(field_failures, a_start_whose_reply_is_lost_is_possibly_delivered_and_never_sent_again) {
    client retrying({.port = server.port(), .api_key = std::string(key), .timeout = 2s,
                     .retries = {.max_attempts = 4, .backoff = 1ms}});
    for (const bool detached : {false, true}) {
        server.inject({.operation = "exec", .what = action::lose_reply});
        const std::size_t before = server.commands_started();

        const auto ran = retrying.try_exec(id, {.command = "echo once", .detached = detached});

        ASSERT_FALSE(ran) << "detached " << detached;
        EXPECT_EQ(details_of(ran.error()).delivery, delivery::possibly_delivered) << ran.error().what();
        EXPECT_FALSE(details_of(ran.error()).execution_id) << "no reply named it";
        EXPECT_EQ(server.commands_started() - before, 1u) << "started once, never replayed";
    }
}

TEST_F(field_failures, a_lost_stream_after_its_init_names_the_command_that_may_be_running) {
    server.inject({.operation = "exec", .what = action::drop_after_init});
    const auto ran = sandboxes.try_exec(id, {.command = "sleep 5"});
    ASSERT_FALSE(ran);
    EXPECT_EQ(details_of(ran.error()).delivery, delivery::delivered);
    ASSERT_TRUE(details_of(ran.error()).execution_id) << ran.error().what();
}

TEST_F(field_failures, a_created_sandbox_whose_reply_is_lost_is_not_created_twice) {
    client retrying({.port = server.port(), .api_key = std::string(key), .timeout = 2s,
                     .retries = {.max_attempts = 4, .backoff = 1ms}});
    const std::size_t before = sandboxes.list().size();
    server.inject({.operation = "create", .what = action::lose_reply});

    const auto made = retrying.try_create({});

    ASSERT_FALSE(made);
    EXPECT_EQ(details_of(made.error()).delivery, delivery::possibly_delivered) << made.error().what();
    EXPECT_EQ(sandboxes.list().size(), before + 1) << "made once, never again";
}

// ---- lifetime races ---------------------------------------------------------------------------

TEST_F(field_failures, a_kill_answered_not_found_after_a_failed_create_is_a_cleanup_done) {
    server.inject(fault::sandbox_status("create", "Failed", "ImagePullBackOff"));
    const auto made = sandboxes.try_create({.image = "no/such:image"});
    ASSERT_FALSE(made);
    ASSERT_TRUE(details_of(made.error()).sandbox_id) << made.error().what();
    // The server removed the failed sandbox before the harness's cleanup came.
    server.inject(fault::http_error("kill", 404, "KUBERNETES::SANDBOX_NOT_FOUND", "Sandbox not found"));
    ngfail::request_failure_log recorded;

    const auto killed = sandboxes.try_kill(*details_of(made.error()).sandbox_id, {.log = &recorded});

    EXPECT_TRUE(killed) << killed.error().what();
    const auto report = recorded.finish();
    EXPECT_FALSE(report.failure_id) << "not a failure";
    ASSERT_EQ(report.events.size(), 2u) << "the 404, recorded (with its cause, the reply)";
    bool lost_seen = false;
    for (const auto& [event_id, record] : report.events) lost_seen |= record.kind == "provider_sandbox_lost";
    EXPECT_TRUE(lost_seen);
}

TEST_F(field_failures, a_kill_answered_not_found_without_the_servers_code_stays_a_failure) {
    server.inject(fault::http_error("kill", 404, "", "no route"));
    EXPECT_FALSE(sandboxes.try_kill(id));
}

TEST_F(field_failures, a_renew_answered_after_expiry_is_a_lost_sandbox) {
    server.inject({.operation = "renew", .what = action::expire});
    const auto renewed = sandboxes.try_renew(id, "2099-01-01T00:00:00Z");
    ASSERT_FALSE(renewed) << "renewed to " << renewed.value();
    EXPECT_EQ(renewed.error().code(), kind::provider_sandbox_lost) << renewed.error().what();
    EXPECT_FALSE(sandboxes.try_get(id)) << "and it stays gone: no orphan";
}

TEST_F(field_failures, a_resume_of_a_sandbox_whose_process_died_is_a_lost_sandbox) {
    sandboxes.pause(id);
    server.inject({.operation = "resume", .what = action::crash});
    const auto resumed = sandboxes.try_resume(id);
    ASSERT_FALSE(resumed);
    EXPECT_EQ(resumed.error().code(), kind::provider_sandbox_lost) << resumed.error().what();
    // (the evidence table's sandbox_lost row says nothing of delivery from a state alone)
    EXPECT_NE(details_of(resumed.error()).delivery, delivery::delivered);
}

TEST_F(field_failures, a_resume_refused_for_a_passing_state_stays_a_conflict) {
    const auto resumed = sandboxes.try_resume(id);  // it runs: nothing to resume
    ASSERT_FALSE(resumed);
    EXPECT_EQ(resumed.error().code(), kind::provider_state_conflict) << resumed.error().what();
}

// ---- OOM kills that surface as a bare 502 or a WebSocket close 1011 ----------------------------

// On each backend: an OOM kill's status, read after a failure that proves nothing, decides.
class oom_surfaces : public testing::TestWithParam<ngfail::opensandbox::testing::backend> {
protected:
    embedded_server server{{.api_key = std::string(key), .backend = GetParam()}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
    std::string id = sandboxes.create({}).id;
};

TEST_P(oom_surfaces, a_bare_502_on_exec_is_read_with_the_sandboxs_status) {
    server.inject({.operation = "exec", .what = action::oom_kill, .shown_as = fault::surface::bare_502});

    const auto ran = sandboxes.try_exec(id, {.command = "python3 train.py"});

    ASSERT_FALSE(ran);
    // Without the status, a 5xx is provider_unavailable: a retry into a dead sandbox.
    EXPECT_EQ(ran.error().code(), kind::provider_sandbox_lost) << ran.error().what();
    EXPECT_EQ(ran.error().http_status(), 502);
    EXPECT_EQ(details_of(ran.error()).provider_status_reason,
              GetParam() == ngfail::opensandbox::testing::backend::kubernetes ? "FAILED" : "CONTAINER_EXITED_ERROR");
}

TEST_P(oom_surfaces, a_bare_502_whose_sandbox_still_runs_stays_a_server_fault) {
    // The proxy's 502 page, and a status read that finds the sandbox running: nothing proven.
    server.inject({.operation = "exec", .what = action::oom_kill, .shown_as = fault::surface::bare_502});
    server.inject({.operation = "get", .what = action::sandbox_status, .state = "Running", .reason = "RUNNING"});
    const auto ran = sandboxes.try_exec(id, {.command = "true"});
    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().code(), kind::provider_unavailable) << ran.error().what();
}

TEST_P(oom_surfaces, a_terminal_closed_1011_is_read_with_the_sandboxs_status) {
    server.inject({.operation = "attach_terminal", .what = action::oom_kill, .shown_as = fault::surface::ws_1011});
    const std::string terminal = sandboxes.create_terminal(id);
    auto session = sandboxes.attach_terminal(id, terminal);
    session.write("python3 train.py\r");
    ngfail::result<ngfail::opensandbox::terminal_event> event = session.try_read();
    while (event && std::holds_alternative<ngfail::opensandbox::terminal_output>(event.value())) event = session.try_read();

    ASSERT_FALSE(event);
    EXPECT_EQ(event.error().code(), kind::provider_sandbox_lost) << event.error().what();
    EXPECT_EQ(details_of(event.error()).operation, "attach_terminal");
}

INSTANTIATE_TEST_SUITE_P(each_backend, oom_surfaces,
                         testing::Values(ngfail::opensandbox::testing::backend::kubernetes,
                                         ngfail::opensandbox::testing::backend::docker),
                         [](const auto& info) { return std::string(ngfail::opensandbox::testing::name(info.param)); });

TEST(oom_surface, is_refused_where_it_cannot_act) {
    namespace testing_ = ngfail::opensandbox::testing;
    EXPECT_FALSE(testing_::parse_fault(R"({"operation":"exec","action":"oom_kill","surface":"ws_1011"})"));
    EXPECT_FALSE(testing_::parse_fault(R"({"operation":"exec","action":"oom_kill","surface":"bare_503"})"));
    EXPECT_FALSE(testing_::parse_fault(R"({"operation":"exec","action":"crash","surface":"bare_502"})"));
    const auto parsed = testing_::parse_fault(R"({"operation":"attach_terminal","action":"oom_kill","surface":"ws_1011"})");
    ASSERT_TRUE(parsed) << parsed.error().what();
    EXPECT_EQ(parsed.value().shown_as, fault::surface::ws_1011);
    EXPECT_EQ(testing_::to_json(parsed.value()),
              R"({"operation":"attach_terminal","action":"oom_kill","times":1,"surface":"ws_1011"})");
}

TEST(cut_stream_fault, is_refused_without_a_point_to_cut_at_and_on_what_it_cannot_cut) {
    EXPECT_FALSE(ngfail::opensandbox::testing::parse_fault(R"({"operation":"exec","action":"cut_stream"})"));
    EXPECT_FALSE(ngfail::opensandbox::testing::parse_fault(
        R"({"operation":"kill","action":"cut_stream","cut_after_bytes":10})"));
    const auto parsed = ngfail::opensandbox::testing::parse_fault(
        R"({"operation":"exec","action":"cut_stream","cut_after_bytes":10,"cut_after_ms":500,"times":2})");
    ASSERT_TRUE(parsed) << parsed.error().what();
    EXPECT_EQ(parsed.value().cut_after_bytes, 10u);
    EXPECT_EQ(parsed.value().cut_after_ms, 500ms);
    EXPECT_EQ(parsed.value().times, 2);
    EXPECT_EQ(ngfail::opensandbox::testing::to_json(parsed.value()),
              R"({"operation":"exec","action":"cut_stream","times":2,"cut_after_bytes":10,"cut_after_ms":500})");
}

// ---- a create that waits, then a generic 504 that hides its cause -------------------------------

struct start_cause_case {
    fault::start_cause cause;
    std::string_view status_reason;  // what the sandbox's status says, structured
    std::string_view named_in_text;  // what its diagnostics say, for people

    friend void PrintTo(const start_cause_case& c, std::ostream* out) { *out << c.status_reason; }
};

class pod_ready_timeouts : public testing::TestWithParam<start_cause_case> {
protected:
    embedded_server server{{.api_key = std::string(key)}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s,
                      .failure_diagnostics = {.fetch = true}}};
};

TEST_P(pod_ready_timeouts, fail_the_start_with_the_status_read_and_the_diagnostics_attached) {
    server.inject(fault::pod_ready_timeout(GetParam().cause, 100ms));

    const auto created = sandboxes.try_create({});

    ASSERT_FALSE(created);
    const ngfail::failure& f = created.error();
    EXPECT_EQ(f.code(), kind::provider_start_failed) << f.what();
    EXPECT_EQ(f.http_status(), 504);
    const auto& d = details_of(f);
    EXPECT_EQ(d.evidence_row, "start_failed") << "the 504's code decides, not the diagnostics";
    ASSERT_TRUE(d.sandbox_id) << "the sandbox the 504 named";
    EXPECT_EQ(d.provider_status_reason, GetParam().status_reason);
    EXPECT_EQ(d.delivery, delivery::delivered) << "a sandbox was made";
    ASSERT_TRUE(d.diagnostics);
    EXPECT_THAT(*d.diagnostics, testing::HasSubstr(std::string(GetParam().named_in_text)));
    EXPECT_THAT(*d.diagnostics, testing::HasSubstr("no container log"));
    EXPECT_LE(d.diagnostics->size(), 2048u);
    // Named only in the message, it may be another's: reported, never deleted by the client.
    EXPECT_THAT(f.what(), testing::HasSubstr("not deleted: the server named it only in its message"));
    EXPECT_EQ(sandboxes.get(*d.sandbox_id).state, "Failed");
    // A report carries the row and the text to the other side of an HTTP hop.
    const auto decoded = ngfail::decode_header(ngfail::encode_header(ngfail::report_for(f)));
    ASSERT_TRUE(decoded) << decoded.error().what();
    ASSERT_TRUE(decoded.value().failure_id);
    const auto& carried = std::get<ngfail::sandbox_details>(decoded.value().events.at(*decoded.value().failure_id).details);
    EXPECT_EQ(carried.evidence_row, "start_failed");
    EXPECT_EQ(carried.diagnostics, d.diagnostics);
}

INSTANTIATE_TEST_SUITE_P(
    each_cause, pod_ready_timeouts,
    testing::Values(start_cause_case{fault::start_cause::quota, "QuotaExceeded", "exceeded quota"},
                    start_cause_case{fault::start_cause::pool, "PoolExhausted", "no idle sandbox in pool"},
                    start_cause_case{fault::start_cause::image_pull, "ImagePullBackOff", "Failed to pull image"}),
    [](const auto& info) { return std::string(info.param.status_reason); });

// A raw lifecycle server: create answers `create_status` with `create_body`; a GET of a
// sandbox answers `known` with its status, any other 404; diagnostics stall or answer.
struct scripted_lifecycle {
    std::string create_status = "504 Gateway Timeout";
    std::string create_body{};
    std::string known{};  // the one sandbox that exists (Failed)
    std::atomic<int> creates{0};
    std::atomic<int> deletes{0};
    ngfail_test::raw_server server{[this](int fd, const std::string& head) {
        using ngfail_test::raw_server;
        const std::string line = head.substr(0, head.find('\r'));
        if (line.starts_with("POST /v1/sandboxes ")) {
            ++creates;
            raw_server::send_all(fd, raw_server::reply(create_status, create_body));
        } else if (line.starts_with("DELETE ")) {
            ++deletes;
            raw_server::send_all(fd, raw_server::reply("204 No Content", ""));
        } else if (line.find("/diagnostics/") != std::string::npos) {
            std::this_thread::sleep_for(3s);  // a server slow to render them
            raw_server::send_all(fd, raw_server::reply("501 Not Implemented", R"({"code":"NOT_IMPLEMENTED","message":"no"})"));
        } else if (!known.empty() && line.starts_with("GET /v1/sandboxes/" + known + " ")) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"id":")" + known +
                R"(","status":{"state":"Failed","reason":"QuotaExceeded"},"createdAt":"2026-01-01T00:00:00Z","metadata":{},"entrypoint":["sh"]})"));
        } else {
            raw_server::send_all(fd, raw_server::reply("404 Not Found", R"({"code":"KUBERNETES::SANDBOX_NOT_FOUND","message":"gone"})"));
        }
    }};
};

std::string pod_timeout_naming(const std::string& words) {
    return R"({"code":"KUBERNETES::POD_READY_TIMEOUT","message":"Timeout waiting for sandbox )" + words +
           R"( to be Running with IP. Elapsed: 60.0s, Last state: Pending"})";
}

TEST(pod_ready_timeout, a_name_the_status_read_does_not_find_is_no_sandbox) {
    // "sandbox creation": a word after "sandbox" is no sandbox until the server finds one.
    scripted_lifecycle lifecycle{.create_body = pod_timeout_naming("creation")};
    client sandboxes{{.port = lifecycle.server.port(), .timeout = 5s}};
    const auto created = sandboxes.try_create({});
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().code(), kind::provider_start_failed);
    EXPECT_FALSE(details_of(created.error()).sandbox_id);
    EXPECT_FALSE(details_of(created.error()).delivery) << "text alone proves no delivery";
    EXPECT_EQ(lifecycle.creates, 1);
}

TEST(pod_ready_timeout, a_sandbox_named_only_in_text_is_never_deleted_and_other_5xx_are_not_read) {
    scripted_lifecycle lifecycle{.create_body = pod_timeout_naming("someone-elses"), .known = "someone-elses"};
    client sandboxes{{.port = lifecycle.server.port(), .timeout = 5s}};
    const auto created = sandboxes.try_create({});
    ASSERT_FALSE(created);
    EXPECT_EQ(details_of(created.error()).sandbox_id, "someone-elses");
    EXPECT_EQ(lifecycle.deletes, 0);
    // A 503 naming a sandbox is not the timeout's shape: read as it is, and not sent again
    // into a sandbox the text names.
    scripted_lifecycle other{.create_status = "503 Service Unavailable",
                             .create_body = R"({"code":"KUBERNETES::INITIALIZATION_ERROR","message":"sandbox sbx-9 not ready"})",
                             .known = "sbx-9"};
    client again{{.port = other.server.port(), .timeout = 5s}};
    const auto refused = again.try_create({});
    ASSERT_FALSE(refused);
    EXPECT_FALSE(details_of(refused.error()).sandbox_id);
}

TEST(pod_ready_timeout, slow_diagnostics_change_neither_the_failure_nor_its_time) {
    scripted_lifecycle lifecycle{.create_body = pod_timeout_naming("sbx-7"), .known = "sbx-7"};
    client plain{{.port = lifecycle.server.port(), .timeout = 4s}};
    client attaching{{.port = lifecycle.server.port(), .timeout = 4s, .failure_diagnostics = {.fetch = true}}};
    const auto without = plain.try_create({});
    const auto started = std::chrono::steady_clock::now();
    const auto with = attaching.try_create({});
    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_FALSE(without);
    ASSERT_FALSE(with);
    EXPECT_EQ(with.error().code(), without.error().code());
    EXPECT_EQ(details_of(with.error()).sandbox_id, details_of(without.error()).sandbox_id);
    EXPECT_EQ(details_of(with.error()).delivery, details_of(without.error()).delivery);
    EXPECT_EQ(details_of(with.error()).provider_status_reason, "QuotaExceeded");
    EXPECT_FALSE(details_of(with.error()).diagnostics) << "none came in time";
    EXPECT_LT(took, 5s) << "the diagnostics' slice is bounded, within the call's time";
}

TEST(pod_ready_timeout, without_the_option_the_failure_is_the_same_and_carries_no_text) {
    embedded_server server{{.api_key = std::string(key)}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
    server.inject(fault::pod_ready_timeout(fault::start_cause::pool));
    const auto created = sandboxes.try_create({});
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().code(), kind::provider_start_failed);
    EXPECT_EQ(details_of(created.error()).provider_status_reason, "PoolExhausted");
    EXPECT_FALSE(details_of(created.error()).diagnostics);
}

TEST(pod_ready_timeout, a_server_without_diagnostics_leaves_the_failure_as_it_was) {
    embedded_server server{{.api_key = std::string(key), .diagnostics = false}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s,
                      .failure_diagnostics = {.fetch = true}}};
    server.inject(fault::pod_ready_timeout(fault::start_cause::quota));
    const auto created = sandboxes.try_create({});
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().code(), kind::provider_start_failed);
    EXPECT_EQ(details_of(created.error()).provider_status_reason, "QuotaExceeded");
    EXPECT_FALSE(details_of(created.error()).diagnostics);
}

TEST(pod_ready_timeout, on_docker_is_the_containers_failed_start_a_server_fault) {
    embedded_server server{{.api_key = std::string(key), .backend = ngfail::opensandbox::testing::backend::docker}};
    client sandboxes{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
    server.inject(fault::pod_ready_timeout(fault::start_cause::image_pull));
    const auto created = sandboxes.try_create({});
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().http_status(), 500);
    EXPECT_EQ(details_of(created.error()).provider_code, "DOCKER::SANDBOX_START_FAILED");
    // Only Kubernetes' 504 names the sandbox it made; Docker's 500 is read as it stands.
    EXPECT_EQ(created.error().code(), kind::provider_unavailable) << created.error().what();
    EXPECT_FALSE(details_of(created.error()).sandbox_id);
}

TEST(pod_ready_timeout_fault, takes_a_cause_and_a_wait_on_create_only) {
    namespace testing_ = ngfail::opensandbox::testing;
    const auto parsed = testing_::parse_fault(R"({"operation":"create","action":"pod_ready_timeout","cause":"pool","stall_ms":250})");
    ASSERT_TRUE(parsed) << parsed.error().what();
    EXPECT_EQ(parsed.value().cause, fault::start_cause::pool);
    EXPECT_EQ(parsed.value().stall_for, 250ms);
    EXPECT_EQ(testing_::to_json(parsed.value()),
              R"({"operation":"create","action":"pod_ready_timeout","times":1,"stall_ms":250,"cause":"pool"})");
    EXPECT_FALSE(testing_::parse_fault(R"({"operation":"exec","action":"pod_ready_timeout"})"));
    EXPECT_FALSE(testing_::parse_fault(R"({"operation":"create","action":"pod_ready_timeout","cause":"disk"})"));
    EXPECT_FALSE(testing_::parse_fault(R"({"operation":"create","action":"crash","cause":"pool"})"));
}

// ---- the diagnostics API, and its text attached but never evidence ------------------------------

TEST_F(field_failures, diagnostics_give_a_sandboxs_logs_and_events_as_text) {
    const auto logs = sandboxes.diagnostic_logs(id);
    EXPECT_EQ(logs.sandbox_id, id);
    EXPECT_EQ(logs.kind, "logs");
    EXPECT_EQ(logs.scope, "all");
    EXPECT_EQ(logs.delivery, "inline");
    EXPECT_THAT(logs.content_type, testing::StartsWith("text/plain"));
    ASSERT_TRUE(logs.content);
    EXPECT_THAT(*logs.content, testing::HasSubstr("execd started"));
    EXPECT_FALSE(logs.truncated);
    const auto events = sandboxes.diagnostic_events(id, "lifecycle");
    EXPECT_EQ(events.scope, "lifecycle");
    ASSERT_TRUE(events.content);
    EXPECT_THAT(*events.content, testing::HasSubstr("Created Sandbox " + id));
    EXPECT_THAT(*events.content, testing::HasSubstr("Running"));
    EXPECT_THAT(*sandboxes.diagnostic_events(id, "network").content, testing::IsEmpty());
}

TEST_F(field_failures, diagnostics_fail_as_any_call_does) {
    const auto gone = sandboxes.try_diagnostic_logs("no-such-sandbox");
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::provider_sandbox_lost);
    EXPECT_EQ(details_of(gone.error()).operation, "diagnostic_logs");
    const auto unscoped = sandboxes.try_diagnostic_events(id, "");
    ASSERT_FALSE(unscoped);
    EXPECT_EQ(details_of(unscoped.error()).delivery, delivery::not_sent);
    const auto unknown_scope = sandboxes.try_diagnostic_events(id, "kernel");
    ASSERT_FALSE(unknown_scope);
    EXPECT_EQ(unknown_scope.error().http_status(), 400);

    embedded_server without{{.api_key = std::string(key), .diagnostics = false}};
    client other{{.port = without.port(), .api_key = std::string(key), .timeout = 5s}};
    const std::string there = other.create({}).id;
    const auto unserved = other.try_diagnostic_logs(there);
    ASSERT_FALSE(unserved);
    EXPECT_EQ(unserved.error().http_status(), 501);
    EXPECT_EQ(unserved.error().code(), kind::provider_unavailable) << unserved.error().what();
}

TEST(failure_diagnostics, an_oom_named_only_in_the_diagnostics_never_decides_the_kind) {
    // Kubernetes reports an OOM kill as Failed/FAILED, naming OOMKilled only in its message:
    // the diagnostics repeat that message; the kind stays what the structured status proves.
    embedded_server server{{.api_key = std::string(key)}};
    client plain{{.port = server.port(), .api_key = std::string(key), .timeout = 5s}};
    client attaching{{.port = server.port(), .api_key = std::string(key), .timeout = 5s,
                      .failure_diagnostics = {.fetch = true, .max_bytes = 300}}};
    std::vector<ngfail::failure> seen;
    for (client* c : {&plain, &attaching}) {
        const std::string id = c->create({}).id;
        server.inject({.operation = "exec", .what = action::oom_kill, .shown_as = fault::surface::bare_502});
        const auto ran = c->try_exec(id, {.command = "python3 train.py"});
        ASSERT_FALSE(ran);
        seen.push_back(ran.error());
    }
    EXPECT_EQ(seen[0].code(), kind::provider_sandbox_lost);
    EXPECT_EQ(seen[1].code(), seen[0].code());
    EXPECT_EQ(details_of(seen[1]).evidence_row, details_of(seen[0]).evidence_row);
    EXPECT_EQ(details_of(seen[1]).delivery, details_of(seen[0]).delivery);
    ASSERT_TRUE(details_of(seen[1]).diagnostics);
    EXPECT_THAT(*details_of(seen[1]).diagnostics, testing::HasSubstr("OOMKilled"));
    EXPECT_LE(details_of(seen[1]).diagnostics->size(), 300u);
    EXPECT_FALSE(details_of(seen[0]).diagnostics);
}

TEST(failure_diagnostics, never_carry_the_api_key) {
    // A server whose diagnostics echo the request's key (as a request log might): a pause
    // refused 409 is read with the sandbox's status, then its diagnostics, scrubbed.
    const std::string secret = "sk-echoed-in-diagnostics";
    ngfail_test::raw_server server([&](int fd, const std::string& head) {
        using ngfail_test::raw_server;
        const std::string line = head.substr(0, head.find('\r'));
        const auto json_reply = [&](std::string status, std::string body) {
            raw_server::send_all(fd, raw_server::reply(std::move(status), body));
        };
        if (line.starts_with("POST /v1/sandboxes/sbx-1/pause")) {
            json_reply("409 Conflict", R"({"code":"KUBERNETES::INVALID_STATE","message":"not running"})");
        } else if (line.find("/diagnostics/") != std::string::npos) {
            const std::string kind = line.find("/logs") != std::string::npos ? "logs" : "events";
            json_reply("200 OK", R"({"sandboxId":"sbx-1","kind":")" + kind + R"(","scope":"all","delivery":"inline",)"
                                 R"("contentType":"text/plain","truncated":false,"content":"request with key )" + secret +
                                 R"( refused"})");
        } else {
            json_reply("200 OK", R"({"id":"sbx-1","status":{"state":"Running"},"createdAt":"2026-01-01T00:00:00Z",)"
                                 R"("metadata":{},"entrypoint":["sh"]})");
        }
    });
    client sandboxes{{.port = server.port(), .api_key = secret, .timeout = 5s, .failure_diagnostics = {.fetch = true}}};
    const auto paused = sandboxes.try_pause("sbx-1");
    ASSERT_FALSE(paused);
    EXPECT_EQ(paused.error().code(), kind::provider_state_conflict) << paused.error().what();
    ASSERT_TRUE(details_of(paused.error()).diagnostics);
    EXPECT_THAT(*details_of(paused.error()).diagnostics, testing::HasSubstr("request with key"));
    EXPECT_THAT(ngfail::encode_header(ngfail::report_for(paused.error())), testing::Not(testing::HasSubstr(secret)));
}

}  // namespace
