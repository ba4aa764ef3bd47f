// The result path on one and two threads: no shared lock, so throughput should double.
#include "frames.hpp"

#include <ngfail/result.hpp>

namespace {

using ngfail_bench::opaque;

__attribute__((noinline)) ngfail::result<int> work(int depth) noexcept {
    if (depth == 0) return static_cast<ngfail::kind>(opaque(static_cast<int>(ngfail::kind::transport_timeout)));
    BOOST_OUTCOME_TRY(const int v, work(depth - 1));
    return v + 1;
}

__attribute__((noinline)) ngfail::result<int> full_failure(int depth) noexcept {
    if (depth == 0) {
        return ngfail::failure(ngfail::event_info{.kind = ngfail::kind::transport_timeout, .reason = "timed out"});
    }
    BOOST_OUTCOME_TRY(const int v, full_failure(depth - 1));
    return v + 1;
}

__attribute__((noinline)) int plain(int depth) noexcept {
    if (depth == 0) return opaque(1);
    return plain(depth - 1) + 1;
}

// The machine's own scaling on the same shape of work, with no ngfail in it.
void plain_path_threads(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(plain(opaque(10)));
    state.SetItemsProcessed(state.iterations());
}

void result_path_threads(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(work(opaque(10)).has_error());
    state.SetItemsProcessed(state.iterations());
}

// With a record (an id, an allocation) per failure.
void full_failure_threads(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(full_failure(opaque(10)).has_error());
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(plain_path_threads)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(result_path_threads)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(full_failure_threads)->Threads(1)->Threads(2)->UseRealTime();

BENCHMARK_MAIN();
