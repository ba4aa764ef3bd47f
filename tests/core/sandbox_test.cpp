#include <ngfail/sandbox.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using ngfail::kind;

TEST(sandbox_failure, records_the_facts_it_is_given) {
    const ngfail::sandbox_failure e({.operation = "exec",
                                     .kind = kind::provider_oom_killed,
                                     .sandbox_id = "sbx-42",
                                     .reason = "exec in sbx-42 ended: container OOMKilled",
                                     .execution_id = "ex-1",
                                     .provider = "opensandbox",
                                     .provider_status_reason = "OOMKilled",
                                     .exit_code = -1,
                                     .http_status = 502,
                                     .provider_code = "KUBERNETES::SANDBOX_NOT_FOUND",
                                     .signal = "SIGKILL",
                                     .delivery = ngfail::delivery::delivered,
                                     .retry_after = std::chrono::seconds(3),
                                     .boundary = ngfail::boundary::resources_server,
                                     .stage = ngfail::stage::agent});
    EXPECT_STREQ(e.what(), "provider_oom_killed: exec in sbx-42 ended: container OOMKilled");
    EXPECT_EQ(e.http_status(), 502);
    EXPECT_EQ(e.boundary(), ngfail::boundary::resources_server);
    EXPECT_EQ(e.stage(), ngfail::stage::agent);
    const auto& d = e.sandbox();
    EXPECT_EQ(d.operation, "exec");
    EXPECT_EQ(d.sandbox_id, "sbx-42");
    EXPECT_EQ(d.execution_id, "ex-1");
    EXPECT_EQ(d.provider, "opensandbox");
    EXPECT_EQ(d.provider_status_reason, "OOMKilled");
    EXPECT_EQ(d.exit_code, -1);
    EXPECT_EQ(d.provider_code, "KUBERNETES::SANDBOX_NOT_FOUND");
    EXPECT_EQ(d.signal, "SIGKILL");
    EXPECT_EQ(d.delivery, ngfail::delivery::delivered);
    EXPECT_EQ(d.retry_after, std::chrono::seconds(3));
}

TEST(sandbox_failure, classifies_nothing) {
    // Evidence that would mean an OOM kill to a classifier does not change the given kind.
    const ngfail::sandbox_failure e({.operation = "exec",
                                     .kind = kind::transport_timeout,
                                     .provider_status_reason = "OOMKilled",
                                     .exit_code = 137});
    EXPECT_EQ(e.code(), kind::transport_timeout);
    EXPECT_EQ(e.sandbox().delivery, std::nullopt) << "nothing inferred";
}

TEST(sandbox_failure, missing_evidence_stays_absent) {
    const ngfail::sandbox_failure e({.operation = "get", .kind = kind::provider_unavailable});
    EXPECT_EQ(e.sandbox(), ngfail::sandbox_details{.operation = "get"});
    EXPECT_EQ(e.http_status(), std::nullopt);
}

TEST(sandbox_failure, default_reason_names_the_operation_and_sandbox) {
    EXPECT_EQ(ngfail::sandbox_failure({.operation = "renew", .kind = kind::provider_state_conflict, .sandbox_id = "s1"})
                  .reason(),
              "renew failed on s1");
    EXPECT_EQ(ngfail::sandbox_failure({.operation = "create", .kind = kind::provider_start_failed}).reason(),
              "create failed");
}

TEST(sandbox_failure, keeps_its_cause_for_raise) {
    const auto original = std::make_exception_ptr(std::runtime_error("refused"));
    try {
        ngfail::raise(ngfail::sandbox_failure({.operation = "create", .kind = kind::transport_unreachable,
                                               .cause = original}));
    } catch (const ngfail::sandbox_failure& e) {
        EXPECT_EQ(e.cause(), original);
        try {
            std::rethrow_if_nested(e);
            ADD_FAILURE() << "no nested cause";
        } catch (const std::runtime_error& cause) {
            EXPECT_STREQ(cause.what(), "refused");
        }
    }
}

TEST(make_sandbox_failure, gives_the_same_record_as_a_failure) {
    const ngfail::failure f = ngfail::make_sandbox_failure(
        {.operation = "exec", .kind = kind::provider_command_terminated, .sandbox_id = "s", .exit_code = -1});
    EXPECT_EQ(f.code(), kind::provider_command_terminated);
    EXPECT_EQ(f.reason(), "exec failed on s");
    EXPECT_EQ(std::get<ngfail::sandbox_details>(f.details()).exit_code, -1);
    EXPECT_FALSE(f.id().is_nil());
}

}  // namespace

namespace {

TEST(delivery, is_at_hand_on_the_event_and_on_the_failure) {
    const ngfail::sandbox_failure e({.operation = "exec", .kind = ngfail::kind::transport_peer_drop,
                                     .delivery = ngfail::delivery::possibly_delivered});
    EXPECT_EQ(e.delivery(), ngfail::delivery::possibly_delivered);
    const ngfail::failure f = ngfail::make_sandbox_failure(
        {.operation = "create", .kind = ngfail::kind::transport_unreachable, .delivery = ngfail::delivery::not_sent});
    EXPECT_EQ(ngfail::delivery_of(f), ngfail::delivery::not_sent);
    const ngfail::failure unknown = ngfail::make_sandbox_failure({.operation = "get", .kind = ngfail::kind::cancelled});
    EXPECT_EQ(ngfail::delivery_of(unknown), std::nullopt) << "nothing established, nothing said";
    EXPECT_EQ(ngfail::delivery_of(ngfail::failure(ngfail::kind::agent_timeout)), std::nullopt) << "not a sandbox failure";
}

}  // namespace

namespace {

// The two-part form: what every event has, and the whole of the sandbox's details.
TEST(sandbox_failure, takes_event_info_and_details_apart_and_keeps_both_whole) {
    const ngfail::sandbox_details details{.operation = "exec",
                                          .provider = "opensandbox",
                                          .sandbox_id = "s",
                                          .execution_id = "e",
                                          .provider_status_reason = "OOMKilled",
                                          .provider_code = "KUBERNETES::SANDBOX_NOT_FOUND",
                                          .exit_code = 137,
                                          .signal = "SIGKILL",
                                          .delivery = ngfail::delivery::delivered,
                                          .retry_after = std::chrono::seconds(3)};
    const ngfail::sandbox_failure e({.kind = ngfail::kind::provider_oom_killed, .http_status = 200}, details);
    EXPECT_EQ(e.code(), ngfail::kind::provider_oom_killed);
    EXPECT_EQ(e.sandbox(), details);
    EXPECT_EQ(e.http_status(), 200);
    EXPECT_EQ(e.reason(), "exec failed on s") << "an empty reason is the facts' default";

    const ngfail::failure f = ngfail::make_sandbox_failure({.kind = ngfail::kind::provider_oom_killed, .reason = "why"}, details);
    EXPECT_EQ(f.reason(), "why");
    EXPECT_EQ(std::get<ngfail::sandbox_details>(f.details()), details);
}

TEST(sandbox_failure, the_flat_facts_and_the_two_parts_make_the_same_record) {
    const ngfail::sandbox_failure flat({.operation = "renew", .kind = ngfail::kind::transport_peer_drop, .sandbox_id = "s",
                                        .http_status = 502, .delivery = ngfail::delivery::possibly_delivered});
    const ngfail::sandbox_failure split({.kind = ngfail::kind::transport_peer_drop, .http_status = 502},
                                        {.operation = "renew", .sandbox_id = "s", .delivery = ngfail::delivery::possibly_delivered});
    EXPECT_EQ(flat.sandbox(), split.sandbox());
    EXPECT_EQ(flat.reason(), split.reason());
    EXPECT_EQ(flat.http_status(), split.http_status());
}

}  // namespace
