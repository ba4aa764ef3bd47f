// The client's `noexcept` faces survive running out of memory: whichever allocation of a
// `try_create` fails, the call returns a value or a failure, never `std::terminate`. This
// binary replaces the global allocation functions to make the Nth allocation of the calling
// thread fail (the server and the client's I/O thread allocate as they like).
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

namespace {
// Allocations made on this thread, and the one that is to fail (0: none); with `and_after`,
// every one after it fails too.
thread_local long made = 0;
thread_local long failing = 0;
thread_local bool and_after = false;
}  // namespace

// These replacements pair malloc with free by construction; g++ 12 at -O2 sees an operator
// new and a free and warns that they do not match.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
void* allocate(std::size_t size, std::size_t alignment) {
    if (++made == failing || (and_after && failing && made > failing)) throw std::bad_alloc();
    size = size == 0 ? 1 : size;
    void* p = alignment <= alignof(std::max_align_t)
                  ? std::malloc(size)
                  : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (!p) throw std::bad_alloc();
    return p;
}
}  // namespace

void* operator new(std::size_t size) { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t alignment) {
    return allocate(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using namespace std::chrono_literals;
using ngfail::opensandbox::client;
using ngfail::opensandbox::create_request;
using ngfail::opensandbox::embedded_server;

// Which allocation failed when the process ends in std::terminate, said before it aborts.
const char* case_name = "";
long case_failing = 0;
bool case_and_after = false;
[[noreturn]] void say_where_and_abort() noexcept {
    std::fprintf(stderr, "std::terminate: %s, allocation %ld failed%s\n", case_name, case_failing,
                 case_and_after ? ", and every one after it" : "");
    std::abort();
}

// Fails the `n`th allocation of this thread while it lives (and every one after it).
struct failing_allocation {
    failing_allocation(long n, bool after) noexcept {
        made = 0;
        failing = n;
        and_after = after;
    }
    ~failing_allocation() {
        failing = 0;
        and_after = false;
    }
    failing_allocation(const failing_allocation&) = delete;
    failing_allocation& operator=(const failing_allocation&) = delete;
};

constexpr std::string_view key = "sk-alloc-test";
// Without memory every readiness poll fails, and the wait for readiness goes on to its end:
// a short one.
const create_request quick{.ready_timeout = 100ms, .ready_poll = 10ms};

// The allocations one try_create of a new client makes on this thread.
long allocations_of_one_create(const ngfail::opensandbox::client_options& options) {
    client c(options);
    const failing_allocation none(0, false);
    (void)c.try_create(quick);
    return made;
}

// For each allocation of one try_create in turn, a new client's try_create with that one
// failing, then with every one from it on failing: it returns (a value or a failure) every
// time.
void every_allocation_may_fail(const char* name, const ngfail::opensandbox::client_options& options) {
    const long total = allocations_of_one_create(options);
    ASSERT_GT(total, 10) << "the count sees the client's allocations";
    case_name = name;
    const auto previous = std::set_terminate(say_where_and_abort);
    for (const bool after : {false, true}) {
        long values = 0;
        long failures = 0;
        for (long n = 1; n <= total; ++n) {
            client c(options);
            case_failing = n;
            case_and_after = after;
            ngfail::result<ngfail::opensandbox::sandbox_info> got = ngfail::failure(ngfail::kind::undetermined);
            {
                const failing_allocation fail(n, after);
                got = c.try_create(quick);
            }
            ++(got ? values : failures);
        }
        EXPECT_EQ(values + failures, total);
        std::printf("%s%s: %ld allocations, %ld values, %ld failures\n", name, after ? " (and after)" : "", total,
                    values, failures);
    }
    std::set_terminate(previous);
}

TEST(out_of_memory, a_try_create_answered_401_returns_whichever_allocation_fails) {
    embedded_server server({.api_key = std::string(key)});
    every_allocation_may_fail("401", {.port = server.port(), .api_key = "wrong", .timeout = 5s});
}

TEST(out_of_memory, a_try_create_answered_200_returns_whichever_allocation_fails) {
    embedded_server server({.api_key = std::string(key)});
    every_allocation_may_fail("200", {.port = server.port(), .api_key = std::string(key), .timeout = 5s});
}

}  // namespace
