// The process's peak resident memory, for tests that bound what an operation may keep.
#pragma once

#include "core/sanitized.hpp"

#include <cstddef>

#include <sys/resource.h>

namespace ngfail_test {

// Under a sanitizer the process's memory is mostly the sanitizer's (shadow memory, ASan's
// quarantine of freed blocks), so bounds are checked in the uninstrumented builds only.
inline constexpr bool instrumented = ngfail::detail::sanitized;

// A test's work at scale: an eighth of it under a sanitizer, whose own work slows each step
// several times over. What the test proves (a bound, a linear cost, another sandbox never
// waiting) holds at any of these sizes; what a sanitizer looks for is on the same paths.
inline constexpr std::size_t scaled(std::size_t work) { return instrumented ? (work + 7) / 8 : work; }

// Peak resident memory in KiB (`getrusage`); 0 under a sanitizer, so bounds hold trivially.
inline long peak_rss_kib() {
    if (instrumented) return 0;
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace ngfail_test
