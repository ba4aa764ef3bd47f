// The OpenSandbox classifier on a full observation (no cause): no allocation, no regex.
#include <ngfail/opensandbox/classify.hpp>

#include <benchmark/benchmark.h>

#include <regex>

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

// A peer: classifying by reading the message with a regex, as pre-framework code did (and
// as ngfail refuses to: text is not evidence). Same observation, same answer wanted.
void classify_by_message_regex(benchmark::State& state) {
    static const std::regex patterns("OOMKilled|signal: killed|connection (reset|refused)|timed out|HTTP 5[0-9][0-9]");
    const std::string message = "exec stream closed: connection reset by peer (exit status 1)";
    for (auto _ : state) {
        std::smatch match;
        benchmark::DoNotOptimize(std::regex_search(message, match, patterns));
    }
}

}  // namespace

BENCHMARK(classify_full_observation);
BENCHMARK(classify_by_message_regex);
BENCHMARK(classify_nothing_matches);

BENCHMARK_MAIN();
