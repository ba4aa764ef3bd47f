// Success and failure through 1/10/100 frames: ngfail's result and events against plain
// returns, std::error_code, Boost.Outcome's own result, Boost.LEAF and exceptions.
#include "frames.hpp"

#include <ngfail/result.hpp>

#include <boost/leaf.hpp>
#include <boost/outcome/std_result.hpp>

#include <system_error>

namespace {

using ngfail_bench::frame_guard;
using ngfail_bench::guard_count;
using ngfail_bench::opaque;

// ---- success ------------------------------------------------------------------------------------

__attribute__((noinline)) int plain_int(int depth) {
    frame_guard g{&guard_count};
    if (depth == 0) return opaque(1);
    return plain_int(depth - 1) + 1;
}

__attribute__((noinline)) ngfail::result<int> ngfail_success(int depth) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) return opaque(1);
    BOOST_OUTCOME_TRY(const int v, ngfail_success(depth - 1));
    return v + 1;
}

__attribute__((noinline)) boost::outcome_v2::std_result<int> outcome_success(int depth) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) return opaque(1);
    BOOST_OUTCOME_TRY(const int v, outcome_success(depth - 1));
    return v + 1;
}

__attribute__((noinline)) boost::leaf::result<int> leaf_success(int depth) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) return opaque(1);
    BOOST_LEAF_AUTO(v, leaf_success(depth - 1));
    return v + 1;
}

// ---- failure ------------------------------------------------------------------------------------

__attribute__((noinline)) std::error_code error_code_failure(int depth, int& out) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) return make_error_code(static_cast<ngfail::kind>(opaque(static_cast<int>(ngfail::kind::transport_timeout))));
    if (const auto ec = error_code_failure(depth - 1, out)) return ec;
    ++out;
    return {};
}

__attribute__((noinline)) ngfail::result<int> ngfail_failure(int depth) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) return static_cast<ngfail::kind>(opaque(static_cast<int>(ngfail::kind::transport_timeout)));
    BOOST_OUTCOME_TRY(const int v, ngfail_failure(depth - 1));
    return v + 1;
}

__attribute__((noinline)) boost::leaf::result<int> leaf_failure(int depth) noexcept {
    frame_guard g{&guard_count};
    if (depth == 0) return boost::leaf::new_error(static_cast<ngfail::kind>(opaque(3)));
    BOOST_LEAF_AUTO(v, leaf_failure(depth - 1));
    return v + 1;
}

__attribute__((noinline)) int throw_event(int depth) {
    frame_guard g{&guard_count};
    if (depth == 0) throw ngfail::failure_event(ngfail::kind::transport_timeout, "timed out");
    return throw_event(depth - 1) + 1;
}

__attribute__((noinline)) int throw_system_error(int depth) {
    frame_guard g{&guard_count};
    if (depth == 0) throw std::system_error(make_error_code(ngfail::kind::transport_timeout), "timed out");
    return throw_system_error(depth - 1) + 1;
}

// ---- the benchmarks ---------------------------------------------------------------------------------

void success_plain_int(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(plain_int(opaque(static_cast<int>(state.range(0)))));
}
void success_ngfail_result(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(ngfail_success(opaque(static_cast<int>(state.range(0)))).value());
}
void success_outcome_std_result(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(outcome_success(opaque(static_cast<int>(state.range(0)))).value());
}
void success_leaf_result(benchmark::State& state) {
    for (auto _ : state) {
        auto r = leaf_success(opaque(static_cast<int>(state.range(0))));
        benchmark::DoNotOptimize(r.value());
    }
}
void failure_error_code(benchmark::State& state) {
    for (auto _ : state) {
        int out = 0;
        benchmark::DoNotOptimize(error_code_failure(opaque(static_cast<int>(state.range(0))), out));
    }
}
void failure_ngfail_kind_only(benchmark::State& state) {
    for (auto _ : state) {
        auto r = ngfail_failure(opaque(static_cast<int>(state.range(0))));
        benchmark::DoNotOptimize(r.has_error());
    }
}
void failure_leaf(benchmark::State& state) {
    for (auto _ : state) {
        auto r = boost::leaf::try_handle_some([&] { return leaf_failure(opaque(static_cast<int>(state.range(0)))); },
                                              [](ngfail::kind) -> boost::leaf::result<int> { return 0; });
        benchmark::DoNotOptimize(r);
    }
}
void failure_throw_failure_event(benchmark::State& state) {
    for (auto _ : state) {
        try {
            benchmark::DoNotOptimize(throw_event(opaque(static_cast<int>(state.range(0)))));
        } catch (const ngfail::failure_event& e) {
            benchmark::DoNotOptimize(&e);
        }
    }
}
void failure_throw_system_error(benchmark::State& state) {
    for (auto _ : state) {
        try {
            benchmark::DoNotOptimize(throw_system_error(opaque(static_cast<int>(state.range(0)))));
        } catch (const std::system_error& e) {
            benchmark::DoNotOptimize(&e);
        }
    }
}

}  // namespace

BENCHMARK(success_plain_int)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(success_ngfail_result)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(success_outcome_std_result)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(success_leaf_result)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(failure_error_code)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(failure_ngfail_kind_only)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(failure_leaf)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(failure_throw_failure_event)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(failure_throw_system_error)->Arg(1)->Arg(10)->Arg(100);

BENCHMARK_MAIN();
