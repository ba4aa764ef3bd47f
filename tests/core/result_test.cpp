#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using ngfail::kind;
using ngfail::result;

static_assert(sizeof(ngfail::failure) == sizeof(void*));
static_assert(sizeof(result<int>) <= 16);
static_assert(std::is_nothrow_copy_constructible_v<ngfail::failure>);
static_assert(std::is_nothrow_move_constructible_v<ngfail::failure>);
static_assert(std::is_nothrow_copy_assignable_v<ngfail::failure>);
static_assert(std::is_nothrow_move_assignable_v<ngfail::failure>);

ngfail::failure oom_with_cause() {
    return ngfail::make_sandbox_failure({.operation = "exec",
                                         .kind = kind::provider_oom_killed,
                                         .cause = std::make_exception_ptr(std::runtime_error("sdk said oom"))});
}

result<int> parse(std::string_view text) noexcept {
    if (text.empty()) return kind::protocol_violation;
    return static_cast<int>(text.size());
}

result<int> twice(std::string_view text) noexcept {
    BOOST_OUTCOME_TRY(auto n, parse(text));
    return 2 * n;
}

result<void> check(std::string_view text) noexcept {
    BOOST_OUTCOME_TRY(twice(text));
    return boost::outcome_v2::success();
}

// ---- failure ---------------------------------------------------------------------------------

TEST(failure, kind_only_has_a_code_and_nothing_else) {
    const ngfail::failure f = kind::transport_timeout;
    EXPECT_TRUE(f);
    EXPECT_TRUE(f.is_kind_only());
    EXPECT_EQ(f.code(), kind::transport_timeout);
    EXPECT_EQ(f.code(), ngfail::domain::transport);
    EXPECT_TRUE(f.id().is_nil());
    EXPECT_EQ(f.reason(), "");
    EXPECT_EQ(f.what(), "transport_timeout");
    EXPECT_FALSE(f.cause());
}

TEST(failure, default_is_empty) {
    const ngfail::failure f;
    EXPECT_FALSE(f);
    EXPECT_FALSE(f.code());
}

TEST(failure, from_event_info_is_a_full_record) {
    const ngfail::failure f{ngfail::event_info{.kind = kind::judge_unparseable, .reason = "no verdict",
                                               .stage = ngfail::stage::verification, .http_status = 200}};
    EXPECT_FALSE(f.is_kind_only());
    EXPECT_FALSE(f.id().is_nil());
    EXPECT_EQ(f.what(), "judge_unparseable: no verdict");
    EXPECT_EQ(f.stage(), ngfail::stage::verification);
    EXPECT_EQ(f.http_status(), 200);
}

TEST(failure, extension_and_unknown_kinds_get_a_record) {
    const ngfail::failure f{ngfail::kind_from_name("acme:thing")};
    EXPECT_FALSE(f.is_kind_only());
    EXPECT_EQ(f.kind_name(), "acme:thing");
    EXPECT_EQ(ngfail::failure{std::error_code(kind::cancelled)}.is_kind_only(), true);
}

TEST(failure, restated_keeps_the_kind_and_evidence_with_a_reason_of_its_own_and_the_original_as_cause) {
    const ngfail::failure last = ngfail::make_sandbox_failure(
        {.kind = kind::provider_quota_exhausted, .reason = "429", .stage = ngfail::stage::admission, .http_status = 429},
        {.operation = "create", .retry_after = std::chrono::seconds(7)});
    const ngfail::failure said = ngfail::restated(last, "not resent");
    EXPECT_EQ(said.code(), kind::provider_quota_exhausted);
    EXPECT_EQ(said.reason(), "not resent");
    EXPECT_EQ(said.stage(), ngfail::stage::admission);
    EXPECT_EQ(said.http_status(), 429);
    EXPECT_EQ(std::get<ngfail::sandbox_details>(said.details()).retry_after, std::chrono::seconds(7));
    EXPECT_NE(said.id(), last.id()) << "an event of its own";
    EXPECT_EQ(said.cause().as_failure(), last);
}

TEST(failure, copies_are_the_same_failure) {
    const ngfail::failure a = oom_with_cause();
    ngfail::failure b = a;
    EXPECT_EQ(a, b);
    ngfail::failure c = std::move(b);
    EXPECT_EQ(c, a);
    EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_NE(a, oom_with_cause()) << "another event, another id";
}

// ---- result ----------------------------------------------------------------------------------

TEST(result, boost_outcome_try_propagates_failures_and_values) {
    EXPECT_EQ(twice("abc").value(), 6);
    const auto failed = twice("");
    ASSERT_TRUE(failed.has_error());
    EXPECT_EQ(failed.error().code(), kind::protocol_violation);
    EXPECT_TRUE(check("x"));
    EXPECT_EQ(check("").error().code(), kind::protocol_violation);
}

TEST(result, value_on_a_failure_throws_the_full_event_with_its_cause) {
    const ngfail::failure f = oom_with_cause();
    const result<int> r = f;
    try {
        (void)r.value();
        FAIL() << "value() did not throw";
    } catch (const ngfail::sandbox_failure& e) {
        EXPECT_EQ(e.id(), f.id());
        EXPECT_EQ(e.code(), kind::provider_oom_killed);
        try {
            std::rethrow_if_nested(e);
            FAIL() << "no nested cause";
        } catch (const std::runtime_error& cause) {
            EXPECT_STREQ(cause.what(), "sdk said oom");
        }
    }
}

TEST(result, value_on_a_kind_only_failure_throws_an_event_of_that_kind) {
    const result<int> r = kind::session_expired;
    try {
        (void)r.value();
        FAIL();
    } catch (const ngfail::failure_event& e) {
        EXPECT_EQ(e.code(), kind::session_expired);
        EXPECT_FALSE(e.id().is_nil());
        std::rethrow_if_nested(e);  // no cause: a no-op
    }
}

TEST(result, error_on_a_value_is_bad_result_access) {
    const result<int> r = 5;
    EXPECT_THROW((void)r.error(), boost::outcome_v2::bad_result_access);
}

// ---- capture and raise -------------------------------------------------------------------------

TEST(capture, returns_the_value) {
    const auto r = ngfail::capture([] { return 42; });
    EXPECT_EQ(r.value(), 42);
    EXPECT_TRUE(ngfail::capture([] {}));
    EXPECT_EQ(ngfail::capture([]() -> result<int> { return 7; }).value(), 7) << "a result passes through";
}

TEST(capture, keeps_an_ngfail_event_and_its_nested_cause) {
    ngfail::event_id thrown_id;
    const auto r = ngfail::capture([&]() -> int {
        try {
            throw std::runtime_error("root");
        } catch (...) {
            ngfail::failure_event e(kind::agent_timeout, "slow");
            thrown_id = e.id();
            std::throw_with_nested(e);
        }
    });
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().id(), thrown_id);
    EXPECT_EQ(r.error().code(), kind::agent_timeout);
    const auto chain = ngfail::cause_chain(r.error());
    ASSERT_EQ(chain.size(), 2u);
    EXPECT_EQ(std::get<ngfail::sdk_error_details>(chain[1].details()).message, "root");
}

TEST(capture, wraps_a_foreign_exception_as_foreign_failure_with_the_original_as_cause) {
    const auto r = ngfail::capture([]() -> int { throw std::out_of_range("index 9"); });
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::undetermined);
    const auto& d = std::get<ngfail::sdk_error_details>(r.error().details());
    EXPECT_EQ(d.error_type, "std::out_of_range");
    try {
        (void)r.value();
        FAIL();
    } catch (const ngfail::foreign_failure& e) {
        try {
            std::rethrow_if_nested(e);
            FAIL() << "the original is not nested";
        } catch (const std::out_of_range& original) {
            EXPECT_STREQ(original.what(), "index 9");
        }
    }
}

TEST(capture, gives_foreign_exceptions_the_callers_kind) {
    const auto r = ngfail::capture([] { throw std::runtime_error("judge died"); }, kind::judge_failed);
    EXPECT_EQ(r.error().code(), kind::judge_failed);
}

TEST(raise, keeps_ids_through_failure_event_failure) {
    const ngfail::failure f = oom_with_cause();
    try {
        ngfail::raise(f);
    } catch (const ngfail::failure_event& e) {
        EXPECT_EQ(ngfail::failure_of(e).id(), f.id());
        EXPECT_EQ(ngfail::failure_of(e).reason(), f.reason());
    }
}

TEST(raise, an_empty_failure_raises_an_undetermined_event_that_says_so) {
    try {
        ngfail::raise(ngfail::failure{});
    } catch (const ngfail::failure_event& e) {
        EXPECT_EQ(e.code(), kind::undetermined);
        EXPECT_THAT(e.what(), testing::HasSubstr("empty"));
    }
}

}  // namespace
