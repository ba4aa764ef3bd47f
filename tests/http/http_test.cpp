// Failures across real HTTP hops: client → server A → server B, all Beast on loopback.
#include <ngfail/http.hpp>
#include <ngfail/sandbox.hpp>

#include "support/loopback_http.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <sstream>
#include <stdexcept>

namespace {

using ngfail::kind;
using ngfail_test::beast_http::status;
using ngfail_test::http_get;
using ngfail_test::loopback_server;
using ngfail_test::request;
using ngfail_test::response;

response reply(status s, const ngfail::failure_report& report, std::string body) {
    response res(s, 11);
    ngfail::http::attach(res, report);
    res.body() = std::move(body);
    return res;
}

// What a server saw, for the test to compare with what the client rebuilds.
struct recorded {
    std::mutex mutex;
    ngfail::failure_report report;

    void set(const ngfail::failure_report& r) {
        const std::lock_guard lock(mutex);
        report = r;
    }
    ngfail::failure_report get() {
        const std::lock_guard lock(mutex);
        return report;
    }
};

// B: a sandbox failure raised from a foreign (SDK) exception.
response serve_b(const request&, recorded& seen) {
    try {
        try {
            throw std::runtime_error("sdk: connection reset by peer");
        } catch (...) {
            std::throw_with_nested(ngfail::sandbox_failure({.operation = "exec",
                                                            .kind = kind::transport_peer_drop,
                                                            .sandbox_id = "sbx-1",
                                                            .boundary = ngfail::boundary::resources_server}));
        }
    } catch (...) {
        const auto report = ngfail::report_for(std::current_exception());
        seen.set(report);
        return reply(status::bad_gateway, report, "B failed");
    }
}

// A: raises an agent failure from B's rebuilt failure.
response serve_a(unsigned short b_port, recorded& seen) {
    try {
        try {
            ngfail::http::raise_boundary_failure(http_get(b_port, "/exec"));
            return reply(status::ok, {}, "ok");
        } catch (...) {
            std::throw_with_nested(ngfail::failure_event(
                {.kind = kind::agent_run_error, .reason = "agent run failed", .boundary = ngfail::boundary::agent}));
        }
    } catch (...) {
        const auto report = ngfail::report_for(std::current_exception());
        seen.set(report);
        return reply(status::internal_server_error, report, "A failed");
    }
}

TEST(http_two_hops, the_client_rebuilds_the_whole_chain_with_the_original_ids) {
    recorded seen_by_b;
    recorded seen_by_a;
    loopback_server b([&](const request& r) { return serve_b(r, seen_by_b); });
    loopback_server a([&](const request&) { return serve_a(b.port(), seen_by_a); });

    const response res = http_get(a.port(), "/run");
    EXPECT_EQ(res.result(), status::internal_server_error);
    try {
        ngfail::http::raise_boundary_failure(res);
        FAIL() << "nothing raised";
    } catch (const ngfail::failure_event& e) {
        const auto* hop = dynamic_cast<const ngfail::http::remote_failure*>(&e);
        ASSERT_NE(hop, nullptr);
        EXPECT_EQ(hop->status(), 500u) << "this hop's status, kept apart";
        EXPECT_EQ(hop->body(), "A failed");
        EXPECT_EQ(e.code(), kind::agent_run_error);
        EXPECT_EQ(e.boundary(), ngfail::boundary::agent);

        const auto chain = ngfail::cause_chain(e);
        ASSERT_GE(chain.size(), 3u);
        const auto a_report = seen_by_a.get();
        const auto b_report = seen_by_b.get();
        EXPECT_EQ(chain[0].id(), *a_report.failure_id);
        EXPECT_EQ(chain[1].id(), *b_report.failure_id);
        EXPECT_EQ(chain[1].code(), kind::transport_peer_drop);
        EXPECT_EQ(std::get<ngfail::sandbox_details>(chain[1].details()).sandbox_id, "sbx-1");
        EXPECT_EQ(chain[2].id(), *b_report.events.at(*b_report.failure_id).cause_id);
        EXPECT_EQ(std::get<ngfail::sdk_error_details>(chain[2].details()).message, "sdk: connection reset by peer");
        EXPECT_EQ(ngfail::report_for(std::current_exception()), a_report) << "the client sees what A sent";

        try {
            std::rethrow_if_nested(e);
            FAIL() << "no cause";
        } catch (const ngfail::sandbox_failure& b_failure) {
            EXPECT_EQ(b_failure.id(), *b_report.failure_id) << "B's level is a sandbox_failure again";
        }
    }
}

TEST(http_two_hops, a_recovered_success_carries_the_failed_attempt_without_failure_id) {
    recorded seen_by_b;
    loopback_server b([&](const request& r) { return serve_b(r, seen_by_b); });
    loopback_server b_ok([](const request&) { return reply(status::ok, {}, "done"); });
    loopback_server a([&](const request&) {
        ngfail::request_failure_log log;
        for (const unsigned short port : {b.port(), b_ok.port()}) {
            const response attempt = http_get(port, "/exec");
            log.observe_reply(ngfail::http::report_of(attempt).value());
            if (attempt.result() == status::ok) break;
        }
        return reply(status::ok, log.finish(), "recovered");
    });

    const response res = http_get(a.port(), "/run");
    EXPECT_EQ(res.result(), status::ok);
    EXPECT_NO_THROW(ngfail::http::raise_boundary_failure(res));
    const auto report = ngfail::http::report_of(res);
    ASSERT_TRUE(report);
    EXPECT_FALSE(report.value().failure_id);
    const auto b_report = seen_by_b.get();
    ASSERT_FALSE(b_report.events.empty());
    EXPECT_EQ(report.value().events, b_report.events) << "the failed attempt, with its cause, ids unchanged";
}

TEST(http, report_of_a_reply_without_the_header_is_the_success_report) {
    const response res(status::ok, 11);
    const auto report = ngfail::http::report_of(res);
    ASSERT_TRUE(report);
    EXPECT_EQ(report.value(), ngfail::failure_report{});
    EXPECT_NO_THROW(ngfail::http::raise_boundary_failure(res));
}

TEST(http, a_malformed_header_raises_a_protocol_violation_with_the_hops_status) {
    response res(status::bad_gateway, 11);
    res.set(ngfail::failure_header_name, "{\"events\":");
    try {
        ngfail::http::raise_boundary_failure(res);
        FAIL();
    } catch (const ngfail::http::remote_event<ngfail::failure_event>& e) {
        EXPECT_EQ(e.code(), kind::protocol_violation);
        EXPECT_EQ(e.status(), 502u);
    }
}

TEST(http, a_failed_reply_without_a_report_is_undetermined) {
    response res(status::service_unavailable, 11);
    res.body() = "down";
    try {
        ngfail::http::raise_boundary_failure(res);
        FAIL();
    } catch (const ngfail::http::remote_failure& hop) {
        EXPECT_EQ(hop.status(), 503u);
        EXPECT_EQ(hop.body(), "down");
        const auto& e = dynamic_cast<const ngfail::failure_event&>(hop);
        EXPECT_EQ(e.code(), kind::undetermined);
        EXPECT_EQ(e.http_status(), 503);
    }
}

TEST(http, attach_sets_the_encoded_header) {
    response res(status::ok, 11);
    const auto report = ngfail::report_for(ngfail::failure{ngfail::event_info{.kind = kind::cancelled, .reason = "x"}});
    ngfail::http::attach(res, report);
    EXPECT_EQ(res[ngfail::failure_header_name], ngfail::encode_header(report));
}

TEST(http, two_report_fields_on_one_reply_are_a_protocol_violation) {
    response res(status::ok, 11);
    res.insert(ngfail::failure_header_name, ngfail::encode_header(ngfail::failure_report{}));
    res.insert(ngfail::failure_header_name,
               ngfail::encode_header(ngfail::report_for(ngfail::failure(kind::cancelled, "the real outcome"))));
    const auto report = ngfail::http::report_of(res);
    ASSERT_FALSE(report) << "read as success";
    EXPECT_EQ(report.error().code(), kind::protocol_violation);
    EXPECT_THROW(ngfail::http::raise_boundary_failure(res), ngfail::http::remote_failure);
}

TEST(http, the_largest_default_header_is_read_by_a_beast_parser_with_default_limits) {
    ngfail::failure_report big;
    for (int i = 0; i < 64; ++i) {
        big.events.emplace_hint(big.events.end(), ngfail::event_id::generate(), ngfail::event_record{});
    }
    for (auto& [id, record] : big.events) record = {.id = id, .kind = "transport_timeout", .reason = std::string(500, 'r')};
    response res(status::ok, 11);
    res.set(boost::beast::http::field::server, std::string(200, 's'));
    ngfail::http::attach(res, big);
    ASSERT_GE(res[ngfail::failure_header_name].size(), 3800u) << "the test needs a header at the cap";
    res.prepare_payload();
    std::ostringstream wire;
    wire << res;
    const std::string text = wire.str();
    boost::beast::http::response_parser<boost::beast::http::string_body> parser;  // 8 KiB of headers
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(text), ec);
    ASSERT_FALSE(ec) << ec.message();
    const auto report = ngfail::http::report_of(parser.get());
    ASSERT_TRUE(report) << report.error().reason();
    EXPECT_EQ(report.value().events.size() + report.value().dropped_events, 64u);
}

}  // namespace
