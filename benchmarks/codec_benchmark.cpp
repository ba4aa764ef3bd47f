// The header codec on a 3-event chain, against plain Boost.JSON serialize + parse of the
// same value; and encode_header on reports of many observed events (it must stay linear).
#include <ngfail/json.hpp>
#include <ngfail/sandbox.hpp>
#include <ngfail/transport.hpp>

#include <benchmark/benchmark.h>
#include <boost/json.hpp>

#include <stdexcept>

namespace {

ngfail::failure_report three_event_report() {
    const ngfail::failure root = ngfail::failure_of(
        ngfail::foreign_failure(std::make_exception_ptr(std::runtime_error("sdk: connection reset by peer"))));
    const ngfail::failure sandbox = ngfail::make_sandbox_failure({.operation = "exec",
                                                                  .kind = ngfail::kind::transport_peer_drop,
                                                                  .sandbox_id = "sbx-42",
                                                                  .cause = root,
                                                                  .provider = "opensandbox",
                                                                  .delivery = ngfail::delivery::delivered});
    return ngfail::report_for(ngfail::failure(ngfail::event_info{.kind = ngfail::kind::agent_run_error,
                                                                 .reason = "the agent run failed",
                                                                 .boundary = ngfail::boundary::agent,
                                                                 .http_status = 500,
                                                                 .cause = sandbox}));
}

void header_encode_decode(benchmark::State& state) {
    const auto report = three_event_report();
    for (auto _ : state) {
        const std::string value = ngfail::encode_header(report);
        auto back = ngfail::decode_header(value);
        benchmark::DoNotOptimize(back);
    }
}

void plain_boost_json_serialize_parse(benchmark::State& state) {
    const boost::json::value value = boost::json::value_from(three_event_report());
    for (auto _ : state) {
        const std::string text = boost::json::serialize(value);
        auto back = boost::json::parse(text);
        benchmark::DoNotOptimize(back);
    }
}

// A reply's own failure and `n` failures it observed (as a peer's report might carry).
ngfail::failure_report observed_events(std::int64_t n) {
    ngfail::failure_report report = ngfail::report_for(ngfail::failure(ngfail::kind::transport_unreachable, "gave up"));
    for (std::int64_t i = 0; i < n; ++i) {
        const ngfail::failure attempt(ngfail::kind::transport_timeout, "attempt " + std::to_string(i));
        auto record = ngfail::record_of(attempt);
        report.events.emplace(record.id, std::move(record));
    }
    return report;
}

void encode_header_observed(benchmark::State& state) {
    const auto report = observed_events(state.range(0));
    for (auto _ : state) benchmark::DoNotOptimize(ngfail::encode_header(report));
}

}  // namespace

BENCHMARK(encode_header_observed)->Arg(1000)->Arg(2000)->Arg(4000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(header_encode_decode);
BENCHMARK(plain_boost_json_serialize_parse);

BENCHMARK_MAIN();
