// The retry allowance: one budget of attempts and time, full-jitter backoff, Retry-After
// within what remains, and an exhausted request's report carrying every attempt.
#include <ngfail/policy/retry_allowance.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ngfail::kind;
using ngfail::policy::allowance_limits;
using ngfail::policy::retry_allowance;

TEST(retry_allowance, nested_layers_spend_one_budget) {
    retry_allowance shared({.attempts = 3, .elapsed = 10s, .base_delay = 0ms, .max_delay = 0ms});
    // A 429 seen by the outer layer, a drop by the transport layer, a 503 by the outer one.
    auto spend = [](retry_allowance& a) { return a.next_delay().has_value(); };
    EXPECT_TRUE(spend(shared));   // attempt 2
    EXPECT_TRUE(spend(shared));   // attempt 3
    EXPECT_FALSE(spend(shared));  // a fourth would exceed 3
    EXPECT_EQ(shared.attempts_made(), 3);
    EXPECT_TRUE(shared.spent());
}

TEST(retry_allowance, backoff_is_full_jitter_under_a_growing_cap) {
    retry_allowance a({.attempts = 12, .elapsed = 3600s, .base_delay = 100ms, .max_delay = 1000ms}, 42);
    std::vector<std::chrono::milliseconds> waits;
    for (int i = 0; i < 11; ++i) waits.push_back(*a.next_delay());
    for (std::size_t i = 0; i < waits.size(); ++i) {
        const auto cap = std::min(1000ms, 100ms * (1 << std::min<int>(static_cast<int>(i), 20)));
        EXPECT_LE(waits[i], cap) << "retry " << i;
        EXPECT_GE(waits[i], 0ms);
    }
    // Jitter: the capped retries do not all wait the same.
    EXPECT_NE(std::count(waits.begin() + 4, waits.end(), waits[4]), 7);
}

TEST(retry_allowance, retry_after_is_honoured_within_what_remains) {
    retry_allowance a({.attempts = 5, .elapsed = 2s});
    EXPECT_EQ(a.next_delay(500ms), 500ms) << "a server's Retry-After replaces the jitter";
    EXPECT_EQ(a.next_delay(1h), std::nullopt) << "a wait past the budget ends the call now";
    EXPECT_EQ(a.attempts_made(), 2) << "a refused wait takes no attempt";
}

TEST(retry_allowance, time_runs_out_as_well_as_attempts) {
    retry_allowance a({.attempts = 100, .elapsed = 20ms, .base_delay = 0ms, .max_delay = 0ms});
    std::this_thread::sleep_for(30ms);
    EXPECT_TRUE(a.spent());
    EXPECT_EQ(a.next_delay(), std::nullopt);
    EXPECT_EQ(a.remaining(), 0ms);
}

TEST(retry_allowance, an_exhausted_request_reports_every_attempt) {
    retry_allowance a({.attempts = 3, .base_delay = 0ms, .max_delay = 0ms});
    const ngfail::failure first(ngfail::event_info{.kind = make_error_code(kind::provider_quota_exhausted),
                                                   .reason = "429", .http_status = 429});
    const ngfail::failure second(ngfail::event_info{.kind = make_error_code(kind::transport_peer_drop), .reason = "reset"});
    const ngfail::failure third(ngfail::event_info{.kind = make_error_code(kind::provider_unavailable),
                                                   .reason = "503", .http_status = 503});
    a.record(first);
    ASSERT_TRUE(a.next_delay());
    a.record(second);
    ASSERT_TRUE(a.next_delay());
    a.record(third);
    ASSERT_FALSE(a.next_delay());

    const auto final = a.exhausted(third);
    EXPECT_EQ(final.code(), kind::provider_unavailable);
    EXPECT_EQ(final.http_status(), 503);
    EXPECT_EQ(final.reason().substr(0, 31), "no retry left after 3 attempts ");
    EXPECT_EQ(final.cause().as_failure().id(), third.id());

    const auto report = a.report(final);
    EXPECT_EQ(report.failure_id, final.id());
    for (const auto& attempt : {first, second, third}) {
        EXPECT_TRUE(report.events.contains(attempt.id())) << attempt.reason();
    }
    EXPECT_EQ(report.events.size(), 4U);
}

// A harness's one budget for 50 rollouts on a thread pool: every attempt is granted once,
// and no more than the budget holds (TSan checks the locking under the tsan preset).
TEST(retry_allowance, one_budget_shared_by_many_threads_grants_each_attempt_once) {
    retry_allowance shared({.attempts = 1001, .elapsed = 3600s, .base_delay = 0ms, .max_delay = 0ms});
    std::atomic<int> granted{0};
    std::vector<std::thread> rollouts;
    for (int t = 0; t < 8; ++t) {
        rollouts.emplace_back([&] {
            for (int i = 0; i < 200; ++i) {
                if (shared.next_delay()) ++granted;
                shared.record(ngfail::failure(ngfail::kind::transport_peer_drop));
                (void)shared.spent();
            }
        });
    }
    for (auto& r : rollouts) r.join();
    EXPECT_EQ(granted.load(), 1000) << "1,001 attempts: the first and 1,000 retries";
    EXPECT_EQ(shared.attempts_made(), 1001);
    EXPECT_EQ(shared.attempts().size(), 1600u) << "every record kept";
    const retry_allowance copy = shared;
    EXPECT_EQ(copy.attempts_made(), 1001) << "a copy starts where the original stood";
}

}  // namespace
