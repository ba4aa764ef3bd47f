// <ngfail/otel/client_instrumentation.hpp> — OpenTelemetry spans and metrics for the
// OpenSandbox client and the outcome policy (target ngfail::otel; built when CMake finds
// opentelemetry-cpp and `NGFAIL_WITH_OTEL` is on).
//
// The target links only the OpenTelemetry API: your application installs the SDK and the
// exporter it wants (OTLP to a collector, say), globally or as providers given here. Then:
//
//   ngfail::opensandbox::client c({.base_url = "http://localhost:8080",
//                                  .observer = ngfail::otel::instrument_client()});
//
// Every call of `c` is then one span (`opensandbox.exec`, …) with one child span per attempt,
// and one measurement of its duration:
//
// - a call that fails for good: span status Error, `error.type` = the failure kind's wire
//   name ("provider_oom_killed"), and as span attributes `ngfail.domain`, `ngfail.delivery`,
//   `ngfail.evidence_row`, `ngfail.operation`, `ngfail.sandbox_id`;
// - an attempt the client retried carries its failure on the attempt's span; the call's span
//   is marked failed only by its final outcome;
// - each attempt's requests carry the W3C `traceparent` of its span.
//
// Metrics carry low-cardinality attributes only (never an id, a reason or a label):
//   ngfail.client.operation.duration  histogram, s   ngfail.operation, error.type (failures)
//   ngfail.client.failures            counter         ngfail.operation, error.type,
//                                                     ngfail.domain, ngfail.delivery
//   ngfail.policy.decisions           counter         ngfail.action, ngfail.failure_class
//
// `naming::nemo_gym` writes NeMo Gym's own names instead (scope
// `nemo_gym.sandbox.observability`): spans `sandbox.create`, `exec: <program>`,
// `sandbox.cleanup` (a kill), `sandbox.<operation>`, attributes `operation.name`, `status`
// (ok, error), `error_type`, `duration_s`, `sandbox_id`; metrics
// `nemo_gym.sandbox.operation.duration` (s) and `nemo_gym.sandbox.events`, attributes
// `operation.name`, `status`, `error_type`. A call's `call_options::trace_labels`
// (`trajectory_id`, `run_id`) go on its spans in both namings.
//
// Text on a span (a status description, the program an exec runs) has the client's secrets
// scrubbed, as a report's has. docs/fleet.md says how to run a fleet on these.
#pragma once

#include <ngfail/opensandbox/call_observer.hpp>

#include <opentelemetry/metrics/meter_provider.h>
#include <opentelemetry/nostd/shared_ptr.h>
#include <opentelemetry/trace/tracer_provider.h>

#include <memory>
#include <string_view>

namespace ngfail::otel {

// Whose names the spans and metrics take.
enum class naming {
    ngfail,    // this library's (the header comment lists them)
    nemo_gym,  // NeMo Gym's sandbox recorder's, for a fleet of Python and C++ workers
};

struct instrumentation_options {
    naming names = naming::ngfail;
    // The providers to record with; null: the global ones (`opentelemetry::trace::Provider`,
    // `opentelemetry::metrics::Provider`) as they are when the instrumentation is made.
    opentelemetry::nostd::shared_ptr<opentelemetry::trace::TracerProvider> tracer_provider{};
    opentelemetry::nostd::shared_ptr<opentelemetry::metrics::MeterProvider> meter_provider{};
};

// An observer for `client_options::observer` that records spans and metrics; one may serve
// many clients.
[[nodiscard]] std::shared_ptr<opensandbox::call_observer> instrument_client(instrumentation_options options = {});

// Counts the outcome policy's decisions (`ngfail.policy.decisions`, by the action taken and
// the failure's class). Use <ngfail/otel/policy_decisions.hpp> to count an `outcome_decision`.
class decision_counter {
public:
    explicit decision_counter(instrumentation_options options = {});
    ~decision_counter();
    decision_counter(decision_counter&&) noexcept;
    decision_counter& operator=(decision_counter&&) noexcept;

    // One decision: `action` as the policy names it ("retry"), `failure_class` the class's
    // name ("" when the failure had none). Thread-safe.
    void record(std::string_view action, std::string_view failure_class) noexcept;

private:
    struct instruments;
    std::unique_ptr<instruments> instruments_;
};

}  // namespace ngfail::otel
