// Recursion the optimiser cannot flatten: every frame is a noinline call with a local
// object whose destructor has a visible effect, on an input it cannot see through.
#pragma once

#include <benchmark/benchmark.h>

namespace ngfail_bench {

// A frame's local with a non-trivial destructor (what unwinding and early returns must run).
struct frame_guard {
    int* counter;
    ~frame_guard() { ++*counter; }
};

// The depth as the benchmark gives it, hidden from the optimiser.
inline int opaque(int value) {
    benchmark::DoNotOptimize(value);
    return value;
}

inline int guard_count = 0;

}  // namespace ngfail_bench
