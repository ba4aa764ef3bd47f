#include <ngfail/event.hpp>
#include <ngfail/sandbox.hpp>

#include <boost/system/system_error.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace {

using ngfail::domain;
using ngfail::kind;
using testing::HasSubstr;

// An SDK's exception that carries its reply's facts as data (and a body it must not leak).
class sdk_http_error : public std::runtime_error, public ngfail::structured_error {
public:
    sdk_http_error() : std::runtime_error("HTTP 503 from provider") {}
    std::optional<int> http_status() const noexcept override { return 503; }
    std::optional<std::string> error_code_name() const override { return "DOCKER::INITIALIZATION_ERROR"; }
    std::optional<std::string> request_id() const override { return "req-7"; }
    std::string body = "{\"token\":\"secret-body\"}";
};

std::exception_ptr runtime_error_ptr(const char* what) { return std::make_exception_ptr(std::runtime_error(what)); }

// Runs `f`, which must throw, and returns what it threw.
template <class F>
std::exception_ptr thrown_by(F&& f) {
    try {
        f();
    } catch (...) {
        return std::current_exception();
    }
    ADD_FAILURE() << "nothing was thrown";
    return nullptr;
}

// The exception nested in `e`'s thrown object, via the standard mechanism only.
std::exception_ptr nested_of(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& caught) {
        try {
            std::rethrow_if_nested(caught);
        } catch (...) {
            return std::current_exception();
        }
    }
    return nullptr;
}

// The exception object `e` holds, as a T; it lives as long as `e` does.
template <class T>
const T* as(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const T& t) {
        return &t;
    } catch (...) {
    }
    return nullptr;
}

bool is_valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        if (len == 0 || i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
        }
        i += len;
    }
    return true;
}

// ---- the hierarchy -------------------------------------------------------------------------

TEST(failure_event, is_a_system_error_whose_code_is_the_kind) {
    static_assert(std::is_base_of_v<std::system_error, ngfail::failure_event>);
    static_assert(std::is_base_of_v<ngfail::failure_event, ngfail::sandbox_failure>);
    static_assert(std::is_base_of_v<ngfail::failure_event, ngfail::model_failure>);
    static_assert(std::is_base_of_v<ngfail::failure_event, ngfail::foreign_failure>);
    try {
        throw ngfail::failure_event(kind::provider_oom_killed, "exec in sbx-42 ended");
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), kind::provider_oom_killed);
        EXPECT_EQ(e.code(), domain::provider);
        EXPECT_NE(e.code(), domain::transport);
    }
}

// The base is copied from one made per core kind: every kind, core or not, must still be the
// code the std::system_error base carries, and copies must not share a what().
TEST(failure_event, the_base_carries_the_kind_for_every_core_kind_and_any_other) {
    for (int k = 1; k <= static_cast<int>(kind::undetermined); ++k) {
        const std::error_code code(k, ngfail::kind_category());
        const ngfail::failure_event e(code, "reason " + std::to_string(k));
        EXPECT_EQ(static_cast<const std::system_error&>(e).code(), code);
        EXPECT_EQ(std::string(e.what()), std::string(ngfail::kind_name(code)) + ": reason " + std::to_string(k));
    }
    const auto unknown = ngfail::kind_from_name("acme:thing");
    const ngfail::failure_event other(unknown, "r");
    EXPECT_EQ(static_cast<const std::system_error&>(other).code(), unknown);
}

TEST(failure_event, no_class_is_final_or_a_nested_exception) {
    static_assert(!std::is_final_v<ngfail::failure_event> && !std::is_final_v<ngfail::sandbox_failure> &&
                  !std::is_final_v<ngfail::model_failure> && !std::is_final_v<ngfail::foreign_failure>);
    static_assert(!std::is_base_of_v<std::nested_exception, ngfail::failure_event>);
    static_assert(!std::is_base_of_v<std::nested_exception, ngfail::sandbox_failure>);
    static_assert(!std::is_base_of_v<std::nested_exception, ngfail::model_failure>);
    static_assert(!std::is_base_of_v<std::nested_exception, ngfail::foreign_failure>);
}

TEST(failure_event, what_is_kind_colon_reason) {
    const ngfail::failure_event e({.kind = kind::judge_failed, .reason = "judge timed out"});
    EXPECT_STREQ(e.what(), "judge_failed: judge timed out");
    EXPECT_EQ(e.kind_name(), "judge_failed");
    EXPECT_EQ(e.reason(), "judge timed out");
    EXPECT_STREQ(ngfail::failure_event(kind::shutdown, "").what(), "shutdown");
}

TEST(failure_event, prints_as_its_failure_does_whatever_class_caught_it) {
    try {
        throw ngfail::sandbox_failure({.operation = "exec", .kind = kind::provider_oom_killed, .reason = "exec ended"});
    } catch (const ngfail::failure_event& e) {
        std::ostringstream printed;
        printed << e;
        EXPECT_EQ(printed.str(), "provider_oom_killed: exec ended (" + to_string(e.id()) + ")");
    }
}

TEST(failure_event, is_caught_by_its_own_class_and_every_base) {
    const auto thrown = thrown_by([] {
        throw ngfail::model_failure({.kind = kind::agent_timeout, .reason = "slow"}, {.model = "m"});
    });
    EXPECT_NE(as<std::exception>(thrown), nullptr);
    EXPECT_NE(as<std::system_error>(thrown), nullptr);
    EXPECT_NE(as<ngfail::failure_event>(thrown), nullptr);
    EXPECT_NE(as<ngfail::model_failure>(thrown), nullptr);
    EXPECT_EQ(as<ngfail::sandbox_failure>(thrown), nullptr);
}

TEST(failure_event, reason_is_cut_at_2000_bytes_on_a_utf8_boundary) {
    std::string reason;
    for (int i = 0; i < 1500; ++i) reason += "\xc3\xa9";  // é, 3000 bytes
    const ngfail::failure_event e(kind::verifier_error, reason);
    EXPECT_LE(e.reason().size(), 2000u);
    EXPECT_GE(e.reason().size(), 1990u);
    EXPECT_TRUE(is_valid_utf8(e.reason()));
    EXPECT_THAT(std::string(e.reason()), testing::EndsWith("\xe2\x80\xa6"));
    EXPECT_EQ(std::string(e.what()), "verifier_error: " + std::string(e.reason()));
}

TEST(failure_event, a_reason_within_the_limit_is_kept_exactly) {
    const std::string reason(2000, 'r');
    EXPECT_EQ(ngfail::failure_event(kind::verifier_error, reason).reason(), reason);
}

TEST(failure_event, fields_are_kept) {
    const ngfail::failure_event e({.kind = kind::agent_request_failed,
                                   .reason = "proxy said no",
                                   .boundary = ngfail::boundary::agent,
                                   .stage = ngfail::stage::seed,
                                   .http_status = 502});
    EXPECT_EQ(e.boundary(), ngfail::boundary::agent);
    EXPECT_EQ(e.stage(), ngfail::stage::seed);
    EXPECT_EQ(e.http_status(), 502);
    EXPECT_TRUE(std::holds_alternative<std::monostate>(e.details()));
    EXPECT_FALSE(e.id().is_nil());
}

TEST(failure_event, a_non_kind_code_becomes_undetermined) {
    const ngfail::failure_event e(std::make_error_code(std::errc::io_error), "disk");
    EXPECT_EQ(e.code(), kind::undetermined);
}

TEST(failure_event, an_empty_unknown_kind_is_kept_not_replaced) {
    const auto ec = ngfail::kind_from_name("");
    EXPECT_EQ(ngfail::failure_event(ec, "r").code(), ec);
}

TEST(failure_event, copies_share_one_record) {
    const ngfail::failure_event original(kind::cancelled, "stop");
    const ngfail::failure_event copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(copy.id(), original.id());
    EXPECT_EQ(copy.what(), original.what()) << "the same text, not a copy of it";
}

TEST(failure_event, each_event_gets_its_own_id) {
    EXPECT_NE(ngfail::failure_event(kind::cancelled, "a").id(), ngfail::failure_event(kind::cancelled, "a").id());
}

// ---- causes ----------------------------------------------------------------------------------

TEST(causes, rethrow_if_nested_is_a_no_op_on_a_caught_root_event) {
    try {
        throw ngfail::failure_event(kind::shutdown, "bye");
    } catch (const ngfail::failure_event& e) {
        std::rethrow_if_nested(e);  // must neither throw nor terminate
        EXPECT_EQ(e.cause(), nullptr);
    }
}

TEST(causes, throw_with_nested_in_a_handler_makes_the_cause_reachable) {
    const auto thrown = thrown_by([] {
        try {
            throw std::runtime_error("sdk: connection reset");
        } catch (...) {
            std::throw_with_nested(ngfail::failure_event(kind::transport_peer_drop, "exec stream dropped"));
        }
    });
    const auto cause = nested_of(thrown);
    ASSERT_NE(as<std::runtime_error>(cause), nullptr);
    EXPECT_STREQ(as<std::runtime_error>(cause)->what(), "sdk: connection reset");
    EXPECT_EQ(as<ngfail::failure_event>(thrown)->cause(), cause) << "cause() gives the same pointer";
}

TEST(causes, raise_with_an_explicit_cause_is_the_same_as_throw_with_nested) {
    const auto original = runtime_error_ptr("sdk: connection reset");
    const auto thrown = thrown_by([&] {
        ngfail::raise(ngfail::failure_event({.kind = kind::transport_peer_drop, .reason = "dropped", .cause = original}));
    });
    EXPECT_EQ(nested_of(thrown), original);
    EXPECT_NE(as<std::nested_exception>(thrown), nullptr);
    EXPECT_NE(as<ngfail::failure_event>(thrown), nullptr);
}

TEST(causes, raise_keeps_the_static_class) {
    const auto thrown = thrown_by([] {
        ngfail::raise(ngfail::sandbox_failure(
            {.operation = "exec", .kind = kind::provider_oom_killed, .cause = runtime_error_ptr("x")}));
    });
    EXPECT_NE(as<ngfail::sandbox_failure>(thrown), nullptr);
}

TEST(causes, raise_without_a_cause_throws_plainly) {
    const auto thrown = thrown_by([] { ngfail::raise(ngfail::failure_event(kind::cancelled, "stop")); });
    EXPECT_EQ(as<std::nested_exception>(thrown), nullptr);
    EXPECT_NE(as<ngfail::failure_event>(thrown), nullptr);
}

TEST(causes, a_failure_cause_is_raised_as_its_own_event_with_its_id) {
    const ngfail::failure inner{ngfail::event_info{.kind = kind::transport_timeout, .reason = "inner"}};
    const auto thrown = thrown_by([&] {
        ngfail::raise(ngfail::failure_event({.kind = kind::agent_run_error, .reason = "outer", .cause = inner}));
    });
    const auto* cause = as<ngfail::failure_event>(nested_of(thrown));
    ASSERT_NE(cause, nullptr);
    EXPECT_EQ(cause->id(), inner.id());
    EXPECT_EQ(cause->code(), kind::transport_timeout);
}

TEST(causes, cause_gives_the_explicit_cause_without_rethrowing_the_event) {
    const auto original = runtime_error_ptr("root");
    const ngfail::failure_event e({.kind = kind::agent_run_error, .reason = "r", .cause = original});
    EXPECT_EQ(e.cause(), original);
    EXPECT_EQ(ngfail::failure_event(kind::agent_run_error, "r").cause(), nullptr);
}

TEST(causes, cause_chain_walks_outermost_first_to_the_foreign_root) {
    const auto thrown = thrown_by([] {
        try {
            try {
                throw std::runtime_error("sdk: eof");
            } catch (...) {
                std::throw_with_nested(ngfail::failure_event(kind::transport_peer_drop, "stream dropped"));
            }
        } catch (...) {
            std::throw_with_nested(ngfail::sandbox_failure({.operation = "exec", .kind = kind::agent_run_error}));
        }
    });
    const auto chain = ngfail::cause_chain(*as<std::exception>(thrown));
    ASSERT_EQ(chain.size(), 3u);
    EXPECT_EQ(chain[0].code(), kind::agent_run_error);
    EXPECT_EQ(chain[1].code(), kind::transport_peer_drop);
    EXPECT_EQ(chain[2].code(), kind::undetermined);
    const auto& root = std::get<ngfail::sdk_error_details>(chain[2].details());
    EXPECT_EQ(root.error_type, "std::runtime_error");
    EXPECT_EQ(root.message, "sdk: eof");
    EXPECT_EQ(chain[0].id(), as<ngfail::failure_event>(thrown)->id());
    EXPECT_EQ(ngfail::cause_chain(thrown).size(), 3u) << "from an exception_ptr too";
}

TEST(causes, a_foreign_failure_with_its_original_is_one_level) {
    const ngfail::foreign_failure f(runtime_error_ptr("boom"));
    const auto chain = ngfail::cause_chain(f);
    ASSERT_EQ(chain.size(), 1u);
    EXPECT_EQ(chain[0].id(), f.id());
}

TEST(causes, a_foreign_root_exception_is_a_one_level_chain) {
    const std::logic_error plain("not ngfail");
    const auto chain = ngfail::cause_chain(plain);
    ASSERT_EQ(chain.size(), 1u);
    EXPECT_EQ(std::get<ngfail::sdk_error_details>(chain[0].details()).error_type, "std::logic_error");
    EXPECT_EQ(chain[0].reason(), "not ngfail");
}

TEST(causes, find_boundary_failure_returns_the_outermost_level_naming_a_boundary) {
    const ngfail::failure deepest{ngfail::event_info{
        .kind = kind::provider_oom_killed, .reason = "oom", .boundary = ngfail::boundary::resources_server}};
    const ngfail::failure middle{ngfail::event_info{
        .kind = kind::agent_run_error, .reason = "agent", .boundary = ngfail::boundary::agent, .cause = deepest}};
    const auto thrown = thrown_by([&] {
        ngfail::raise(ngfail::failure_event({.kind = kind::cancelled, .reason = "outer", .cause = middle}));
    });
    EXPECT_EQ(ngfail::find_boundary_failure(thrown).id(), middle.id());
    EXPECT_FALSE(ngfail::find_boundary_failure(runtime_error_ptr("none")));
    EXPECT_FALSE(ngfail::find_boundary_failure(nullptr));
}

// ---- events and failures --------------------------------------------------------------------

TEST(conversions, ids_keep_through_event_failure_event) {
    const ngfail::sandbox_failure original({.operation = "kill", .kind = kind::provider_sandbox_lost});
    const ngfail::failure f = ngfail::failure_of(original);
    EXPECT_EQ(f.id(), original.id());
    const auto thrown = thrown_by([&] { ngfail::raise(f); });
    const auto* again = as<ngfail::sandbox_failure>(thrown);
    ASSERT_NE(again, nullptr) << "raised as its own class";
    EXPECT_EQ(again->id(), original.id());
    EXPECT_EQ(again->sandbox().operation, "kill");
}

TEST(conversions, failure_of_a_caught_nested_event_keeps_its_cause) {
    const auto thrown = thrown_by([] {
        try {
            throw std::runtime_error("root");
        } catch (...) {
            std::throw_with_nested(ngfail::failure_event(kind::transport_peer_drop, "outer"));
        }
    });
    const ngfail::failure f = ngfail::failure_of(*as<ngfail::failure_event>(thrown));
    ASSERT_TRUE(f.cause().as_exception());
    EXPECT_NE(as<std::runtime_error>(f.cause().as_exception()), nullptr);
    EXPECT_EQ(f.id(), as<ngfail::failure_event>(thrown)->id());
}

TEST(conversions, raising_a_failure_chain_gives_each_level_its_own_class) {
    const ngfail::failure root = ngfail::failure_of(ngfail::foreign_failure(runtime_error_ptr("sdk")));
    const ngfail::failure model{ngfail::event_info{.kind = kind::agent_timeout, .reason = "m", .cause = root},
                                ngfail::model_details{.model = "gpt"}};
    const ngfail::failure sandbox = ngfail::make_sandbox_failure(
        {.operation = "exec", .kind = kind::provider_unavailable, .cause = model});
    const auto thrown = thrown_by([&] { ngfail::raise(sandbox); });
    ASSERT_NE(as<ngfail::sandbox_failure>(thrown), nullptr);
    const auto level2 = nested_of(thrown);
    ASSERT_NE(as<ngfail::model_failure>(level2), nullptr);
    EXPECT_EQ(as<ngfail::model_failure>(level2)->model().model, "gpt");
    const auto level3 = nested_of(level2);
    ASSERT_NE(as<ngfail::foreign_failure>(level3), nullptr);
    EXPECT_EQ(as<ngfail::foreign_failure>(level3)->id(), root.id());
    EXPECT_NE(as<std::runtime_error>(nested_of(level3)), nullptr) << "the original foreign exception is last";
}

// ---- foreign exceptions --------------------------------------------------------------------------

TEST(foreign_failure, keeps_the_original_as_its_cause) {
    const auto original = runtime_error_ptr("sdk exploded");
    const ngfail::foreign_failure f(original);
    EXPECT_EQ(f.code(), kind::undetermined);
    EXPECT_EQ(f.reason(), "sdk exploded");
    EXPECT_EQ(f.sdk_error().error_type, "std::runtime_error");
    EXPECT_EQ(f.cause(), original);
    const auto thrown = thrown_by([&] { ngfail::raise(f); });
    EXPECT_EQ(nested_of(thrown), original) << "rethrow_if_nested reaches the original type";
}

TEST(foreign_failure, takes_the_kind_the_caller_gives) {
    EXPECT_EQ(ngfail::foreign_failure(runtime_error_ptr("x"), kind::judge_failed).code(), kind::judge_failed);
}

TEST(sdk_error_details_of, reads_a_std_system_error_code_structurally) {
    const auto d = ngfail::sdk_error_details_of(
        std::make_exception_ptr(std::system_error(std::make_error_code(std::errc::connection_refused), "connect")));
    EXPECT_EQ(d.error_type, "std::system_error");
    EXPECT_EQ(d.code, "generic:" + std::to_string(ECONNREFUSED));
    EXPECT_THAT(d.message.value_or(""), HasSubstr("connect"));
    EXPECT_EQ(d.http_status, std::nullopt);
}

TEST(sdk_error_details_of, reads_a_boost_system_error_code_structurally) {
    const auto d = ngfail::sdk_error_details_of(std::make_exception_ptr(
        boost::system::system_error(boost::system::errc::make_error_code(boost::system::errc::timed_out))));
    EXPECT_EQ(d.error_type, "boost::system::system_error");
    EXPECT_EQ(d.code, "generic:" + std::to_string(ETIMEDOUT));
}

TEST(sdk_error_details_of, reads_status_code_and_request_id_from_a_structured_error) {
    const auto d = ngfail::sdk_error_details_of(std::make_exception_ptr(sdk_http_error()));
    EXPECT_THAT(d.error_type, HasSubstr("sdk_http_error"));
    EXPECT_EQ(d.http_status, 503);
    EXPECT_EQ(d.code, "DOCKER::INITIALIZATION_ERROR");
    EXPECT_EQ(d.request_id, "req-7");
    EXPECT_EQ(d.message, "HTTP 503 from provider");
}

TEST(sdk_error_details_of, never_reads_fields_it_does_not_know) {
    const auto d = ngfail::sdk_error_details_of(std::make_exception_ptr(sdk_http_error()));
    for (const auto& field : {d.error_type, d.message.value_or(""), d.code.value_or(""), d.request_id.value_or("")}) {
        EXPECT_THAT(field, testing::Not(HasSubstr("secret-body")));
    }
}

TEST(sdk_error_details_of, names_non_std_exceptions_by_type) {
    EXPECT_EQ(ngfail::sdk_error_details_of(std::make_exception_ptr(42)).error_type, "int");
    EXPECT_EQ(ngfail::sdk_error_details_of(std::make_exception_ptr(42)).message, std::nullopt);
}

TEST(sdk_error_details_of, cuts_a_huge_message) {
    const auto d = ngfail::sdk_error_details_of(runtime_error_ptr(std::string(100000, 'm').c_str()));
    EXPECT_LE(d.message->size(), 4096u);
}

// ---- model failures ------------------------------------------------------------------------------

TEST(model_failure, carries_model_details) {
    const ngfail::model_failure e({.kind = kind::agent_no_generation, .reason = "empty"},
                                  {.operation = "chat", .model = "m1", .attempt = 3,
                                   .retry_after = std::chrono::seconds(7)});
    EXPECT_EQ(e.model().model, "m1");
    EXPECT_EQ(e.model().attempt, 3);
    EXPECT_EQ(e.model().retry_after, std::chrono::seconds(7));
    EXPECT_TRUE(std::holds_alternative<ngfail::model_details>(e.details()));
}

// ---- deep chains (a retry loop links one level per attempt) -------------------------------------

ngfail::failure chain_of_depth(std::size_t depth) {
    ngfail::failure f;
    for (std::size_t i = 0; i < depth; ++i) {
        f = ngfail::failure(ngfail::event_info{.kind = kind::transport_timeout, .cause = f});
    }
    return f;
}

TEST(deep_chains, a_million_levels_are_destroyed_without_recursion) {
    ngfail::failure f = chain_of_depth(1'000'000);
    EXPECT_EQ(f.code(), kind::transport_timeout);
    f = ngfail::failure();  // recursive destruction overflowed the stack here
    EXPECT_FALSE(f);
}

TEST(deep_chains, a_shared_tail_outlives_the_deep_chain_above_it) {
    const ngfail::failure tail = chain_of_depth(3);
    ngfail::failure f = tail;
    for (int i = 0; i < 100'000; ++i) f = ngfail::failure(ngfail::event_info{.kind = kind::cancelled, .cause = f});
    f = ngfail::failure();
    EXPECT_EQ(ngfail::cause_chain(tail).size(), 3u) << "iterative destruction stops at a record still shared";
}

TEST(deep_chains, raising_is_bounded_and_says_where_it_cut) {
    const ngfail::failure f = chain_of_depth(100'000);
    try {
        ngfail::raise(f);
        FAIL() << "raise returned";
    } catch (const ngfail::failure_event& e) {
        EXPECT_EQ(e.id(), f.id());
        const auto levels = ngfail::cause_chain(std::current_exception());
        ASSERT_EQ(levels.size(), 32u);
        EXPECT_EQ(levels.back().code(), kind::undetermined);
        EXPECT_THAT(std::string(levels.back().reason()), HasSubstr("deeper than 32 levels"));
        EXPECT_EQ(levels[30].code(), kind::transport_timeout);
    }
}

TEST(deep_chains, walking_is_bounded_and_says_where_it_cut) {
    const auto levels = ngfail::cause_chain(chain_of_depth(100'000));
    ASSERT_EQ(levels.size(), 32u);
    EXPECT_EQ(levels.back().code(), kind::undetermined);
    const auto exact = ngfail::cause_chain(chain_of_depth(32));
    ASSERT_EQ(exact.size(), 32u);
    EXPECT_EQ(exact.back().code(), kind::transport_timeout) << "a chain at the limit is not cut";
}

}  // namespace
