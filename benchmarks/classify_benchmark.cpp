// The OpenSandbox classifier on a full observation (no cause): no allocation, no regex.
#include <ngfail/opensandbox/classify.hpp>

#include <benchmark/benchmark.h>

namespace {

void classify_full_observation(benchmark::State& state) {
    const ngfail::opensandbox::observation seen{
        .operation = "exec",
        .sandbox_id = "sbx-42",
        .reason = "exec stream closed",
        .execution_id = "exec-9",
        .provider_status_reason = "RUNNING",
        .exit_code = 1,
        .http_status = 200,
        .provider_code = "KUBERNETES::SOMETHING_ELSE",
        .sandbox_state = "Running",
        .retry_after = std::chrono::seconds(3),
        .transport_error = std::make_error_code(std::errc::connection_reset),
        .transport_phase = ngfail::opensandbox::phase::receive};
    for (auto _ : state) benchmark::DoNotOptimize(ngfail::opensandbox::classify(seen));
}

// The last row to match, so every row is tried.
void classify_nothing_matches(benchmark::State& state) {
    const ngfail::opensandbox::observation seen{.operation = "exec", .exit_code = 137};
    for (auto _ : state) benchmark::DoNotOptimize(ngfail::opensandbox::classify(seen));
}

}  // namespace

BENCHMARK(classify_full_observation);
BENCHMARK(classify_nothing_matches);

BENCHMARK_MAIN();
