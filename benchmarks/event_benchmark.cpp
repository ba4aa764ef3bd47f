// Creating events and ids: a sandbox_failure with three strings against a std::system_error
// with the same message; event ids.
#include <ngfail/sandbox.hpp>

#include <benchmark/benchmark.h>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid.hpp>

#include <string>
#include <system_error>

namespace {

const std::string operation = "exec";
const std::string sandbox_id = "sbx-42-0123456789";
const std::string reason = "exec in sbx-42 ended: the container was OOMKilled";

void create_sandbox_failure(benchmark::State& state) {
    for (auto _ : state) {
        ngfail::sandbox_failure e({.operation = operation, .kind = ngfail::kind::provider_oom_killed,
                                   .sandbox_id = sandbox_id, .reason = reason});
        benchmark::DoNotOptimize(e.what());
    }
}

void create_system_error(benchmark::State& state) {
    for (auto _ : state) {
        std::system_error e(make_error_code(ngfail::kind::provider_oom_killed), reason);
        benchmark::DoNotOptimize(e.what());
    }
}

void create_failure_noexcept(benchmark::State& state) {
    for (auto _ : state) {
        auto f = ngfail::make_sandbox_failure({.operation = operation, .kind = ngfail::kind::provider_oom_killed,
                                               .sandbox_id = sandbox_id, .reason = reason});
        benchmark::DoNotOptimize(f);
    }
}

void generate_event_id(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(ngfail::event_id::generate());
}

// A peer: Boost.UUID's random (version 4) generator, one per thread as ids are made.
void generate_boost_uuid(benchmark::State& state) {
    boost::uuids::random_generator generate;
    for (auto _ : state) benchmark::DoNotOptimize(generate());
}

}  // namespace

BENCHMARK(create_sandbox_failure);
BENCHMARK(create_system_error);
BENCHMARK(create_failure_noexcept);
BENCHMARK(generate_event_id);
BENCHMARK(generate_boost_uuid);

BENCHMARK_MAIN();
