// Creating a failure never throws, even when `operator new` fails. This binary replaces the
// global allocation functions to count allocations and to make them fail on demand.
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>

namespace {
std::atomic<long> allocations{0};
std::atomic<bool> fail_allocations{false};
}  // namespace

// These replacements pair malloc with free by construction; g++ 12 at -O2 sees an operator
// new and a free and warns that they do not match.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
    if (fail_allocations.load()) throw std::bad_alloc();
    ++allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using ngfail::kind;

// Counts the allocations made while it lives.
struct allocation_counter {
    long start = allocations.load();
    [[nodiscard]] long count() const { return allocations.load() - start; }
};

// Makes every allocation fail while it lives.
struct out_of_memory {
    out_of_memory() { fail_allocations = true; }
    ~out_of_memory() { fail_allocations = false; }
    out_of_memory(const out_of_memory&) = delete;
    out_of_memory& operator=(const out_of_memory&) = delete;
};

__attribute__((noinline)) ngfail::result<int> deep(int depth) noexcept {
    if (depth == 0) return kind::transport_timeout;
    BOOST_OUTCOME_TRY(auto v, deep(depth - 1));
    return v + 1;
}

TEST(allocation, a_kind_only_failure_allocates_nothing) {
    const allocation_counter counter;
    ngfail::failure f = kind::provider_quota_exhausted;
    ngfail::failure copy = f;
    ngfail::failure moved = std::move(copy);
    const auto r = deep(10);
    EXPECT_EQ(counter.count(), 0);
    EXPECT_EQ(moved.code(), kind::provider_quota_exhausted);
    EXPECT_EQ(r.error().code(), kind::transport_timeout);
}

TEST(allocation, the_counter_sees_real_allocations) {
    const allocation_counter counter;
    const ngfail::failure f{ngfail::event_info{.kind = kind::cancelled, .reason = std::string(100, 'r')}};
    EXPECT_GT(counter.count(), 0) << "otherwise the test above proves nothing";
}

TEST(allocation, without_memory_a_failure_degrades_to_its_kind) {
    ngfail::event_info info{.kind = kind::provider_oom_killed, .reason = std::string(500, 'r')};
    ngfail::failure f;
    {
        const out_of_memory oom;
        f = ngfail::failure(std::move(info));
    }
    EXPECT_TRUE(f.is_kind_only());
    EXPECT_EQ(f.code(), kind::provider_oom_killed);
}

TEST(allocation, without_memory_a_non_core_kind_degrades_to_undetermined) {
    const auto acme = ngfail::kind_from_name("acme:oom_test");
    ngfail::failure f;
    {
        const out_of_memory oom;
        f = ngfail::failure(acme);
    }
    EXPECT_EQ(f.code(), kind::undetermined);
}

TEST(allocation, without_memory_a_sandbox_failure_degrades_to_its_kind) {
    ngfail::sandbox_facts facts{.operation = std::string(100, 'o'), .kind = kind::provider_sandbox_lost};
    ngfail::failure f;
    {
        const out_of_memory oom;
        f = ngfail::make_sandbox_failure(std::move(facts));
    }
    EXPECT_EQ(f.code(), kind::provider_sandbox_lost);
}

TEST(allocation, without_memory_capture_still_returns_a_failure) {
    const std::runtime_error error(std::string(100, 'e'));
    ngfail::result<int> r = 0;
    {
        const out_of_memory oom;
        r = ngfail::capture([&]() -> int { throw error; }, kind::judge_failed);
    }
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::judge_failed);
}

TEST(allocation, a_kind_and_a_reason_view_degrade_to_the_kind_without_memory) {
    // `failure{event_info{.reason = "…"}}` builds its std::string in the caller, where a failed
    // allocation throws through noexcept code; this constructor copies inside.
    ngfail::failure f;
    {
        const out_of_memory oom;
        f = ngfail::failure(kind::judge_failed, "judge timed out after 30 s, a reason too long for any small buffer");
    }
    EXPECT_EQ(f.code(), kind::judge_failed);
    EXPECT_TRUE(f.is_kind_only());
    const ngfail::failure with_memory(kind::judge_failed, "judge timed out after 30 s");
    EXPECT_EQ(with_memory.reason(), "judge timed out after 30 s");
    EXPECT_FALSE(with_memory.id().is_nil());
}

}  // namespace

TEST(allocation, choosing_an_action_allocates_nothing) {
    const auto& policy = ngfail::policy::outcome_policy::defaults();  // built (and allocated) once
    const ngfail::failure f = kind::provider_unavailable;
    const ngfail::policy::failure_evidence e{.kind = make_error_code(kind::judge_failed),
                                             .http_status = 503,
                                             .stage = ngfail::stage::verification,
                                             .delivery = ngfail::delivery::possibly_delivered};
    const allocation_counter counter;
    const auto a = ngfail::policy::choose_action(policy, f, {.replay = ngfail::replay_policy::before_delivery});
    const auto b = ngfail::policy::choose_action(policy, e, {.saved_answer = true});
    EXPECT_EQ(counter.count(), 0);
    EXPECT_EQ(a.action, ngfail::policy::outcome_action::fail) << "a kind-only failure has no delivery to replay on";
    EXPECT_EQ(b.action, ngfail::policy::outcome_action::retry);
}
