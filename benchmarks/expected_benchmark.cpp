// std::expected<int, std::error_code> (C++23) through the same frames, as a peer.
#include "frames.hpp"

#include <ngfail/kind.hpp>

#include <expected>
#include <system_error>

namespace {

using ngfail_bench::frame_guard;
using ngfail_bench::guard_count;
using ngfail_bench::opaque;

__attribute__((noinline)) std::expected<int, std::error_code> expected_chain(int depth, bool fail) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) {
        if (fail) return std::unexpected(make_error_code(ngfail::kind::transport_timeout));
        return opaque(1);
    }
    auto v = expected_chain(depth - 1, fail);
    if (!v) return std::unexpected(v.error());
    return *v + 1;
}

void success_std_expected(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(*expected_chain(opaque(static_cast<int>(state.range(0))), false));
}
void failure_std_expected(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(expected_chain(opaque(static_cast<int>(state.range(0))), true).has_value());
}

}  // namespace

BENCHMARK(success_std_expected)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(failure_std_expected)->Arg(1)->Arg(10)->Arg(100);

BENCHMARK_MAIN();
