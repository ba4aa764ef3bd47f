// The CLI's OpenTelemetry: the SDK, OTLP/HTTP exporters, global providers for one run.
#include "telemetry.hpp"

#include "otel/attribute.hpp"

#include <ngfail/otel/client_instrumentation.hpp>

#include <opentelemetry/context/propagation/text_map_propagator.h>
#include <opentelemetry/context/runtime_context.h>
#include <opentelemetry/exporters/otlp/otlp_http_exporter_factory.h>
#include <opentelemetry/exporters/otlp/otlp_http_exporter_options.h>
#include <opentelemetry/exporters/otlp/otlp_http_metric_exporter_factory.h>
#include <opentelemetry/exporters/otlp/otlp_http_metric_exporter_options.h>
#include <opentelemetry/metrics/provider.h>
#include <opentelemetry/sdk/metrics/export/periodic_exporting_metric_reader_factory.h>
#include <opentelemetry/sdk/metrics/aggregation/aggregation_config.h>
#include <opentelemetry/sdk/metrics/view/instrument_selector_factory.h>
#include <opentelemetry/sdk/metrics/view/meter_selector_factory.h>
#include <opentelemetry/sdk/metrics/view/view_factory.h>
#include <opentelemetry/sdk/metrics/view/view_registry.h>
#include <opentelemetry/sdk/metrics/meter_provider.h>
#include <opentelemetry/sdk/metrics/meter_provider_factory.h>
#include <opentelemetry/sdk/common/global_log_handler.h>
#include <opentelemetry/sdk/resource/resource.h>
#include <opentelemetry/sdk/trace/batch_span_processor_factory.h>
#include <opentelemetry/sdk/trace/batch_span_processor_options.h>
#include <opentelemetry/sdk/trace/tracer_provider.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>
#include <opentelemetry/trace/propagation/http_trace_context.h>
#include <opentelemetry/trace/provider.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace ngfail::cli {

namespace {

namespace nostd = opentelemetry::nostd;
namespace sdk_trace = opentelemetry::sdk::trace;
namespace sdk_metrics = opentelemetry::sdk::metrics;
using otel::detail::attribute;
using otel::detail::ot;

bool set(const char* variable) {
    const char* value = std::getenv(variable);
    return value && *value;
}

// Any of the variables that point an exporter somewhere.
bool endpoint_configured() {
    return set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ||
           set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
}

constexpr long longest_interval_ms = 86'400'000;  // a day: the SDK's wait overflows far above

// OTEL_METRIC_EXPORT_INTERVAL in milliseconds, if it is one we honour.
std::optional<std::chrono::milliseconds> export_interval() {
    const char* value = std::getenv("OTEL_METRIC_EXPORT_INTERVAL");
    if (!value || !*value) return std::chrono::milliseconds(60000);  // the specification's default
    const std::string_view text(value);
    long parsed = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (ec != std::errc() || end != text.data() + text.size() || parsed <= 0 || parsed > longest_interval_ms) {
        return std::nullopt;
    }
    return std::chrono::milliseconds(parsed);
}

// The protocols the OTLP/HTTP exporters speak; another (grpc) would be sent as http/protobuf.
std::optional<std::string> unsupported_protocol() {
    for (const char* variable : {"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                                 "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}) {
        const char* value = std::getenv(variable);
        if (!value || !*value) continue;
        const std::string_view protocol(value);
        if (protocol != "http/protobuf" && protocol != "http/json") {
            return std::string(variable) + " is not http/protobuf or http/json (the protocols this build exports)";
        }
    }
    return std::nullopt;
}

bool sdk_disabled() {
    const char* value = std::getenv("OTEL_SDK_DISABLED");
    if (!value) return false;
    std::string lower(value);
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower == "true";
}

opentelemetry::sdk::resource::Resource resource_for(std::string_view service) {
    opentelemetry::sdk::resource::ResourceAttributes attributes;
    // OTEL_SERVICE_NAME, when set, is read by the SDK's own detector and wins.
    if (!set("OTEL_SERVICE_NAME")) attributes.SetAttribute("service.name", std::string(service));
    return opentelemetry::sdk::resource::Resource::Create(attributes);
}

class header_carrier final : public opentelemetry::context::propagation::TextMapCarrier {
public:
    explicit header_carrier(std::string_view traceparent) : traceparent_(traceparent) {}
    nostd::string_view Get(nostd::string_view key) const noexcept override {
        return key == "traceparent" ? ot(traceparent_) : nostd::string_view();
    }
    void Set(nostd::string_view, nostd::string_view) noexcept override {}

private:
    std::string_view traceparent_;
};

// What `ngfail serve --otlp` records of execd, as real execd's telemetry does
// (components/execd/pkg/telemetry): milliseconds, its attribute names.
class execd_instruments {
public:
    execd_instruments() {
        meter_ = opentelemetry::metrics::Provider::GetMeterProvider()->GetMeter("execd", "1");
        tracer_ = opentelemetry::trace::Provider::GetTracerProvider()->GetTracer("execd", "1");
        http_ = meter_->CreateDoubleHistogram("execd.http.request.duration", "HTTP request duration", "ms");
        execution_ = meter_->CreateDoubleHistogram("execd.execution.duration", "Command execution duration", "ms");
        filesystem_ = meter_->CreateDoubleHistogram("execd.filesystem.operations.duration",
                                                    "Filesystem operation duration", "ms");
    }

    void record(const opensandbox::testing::execd_request_seen& r) {
        const double ms = std::chrono::duration<double, std::milli>(r.duration).count();
        const auto context = opentelemetry::context::RuntimeContext::GetCurrent();
        const std::array<attribute, 3> http{attribute{"http_method", ot(r.method)}, attribute{"http_route", ot(r.route)},
                                            attribute{"http_status_code", r.status}};
        http_->Record(ms, opentelemetry::common::KeyValueIterableView<std::array<attribute, 3>>(http), context);
        if (!r.metric_operation.empty() && !r.result.empty()) {
            const std::array<attribute, 2> work{attribute{"operation", ot(r.metric_operation)},
                                                attribute{"result", ot(r.result)}};
            (r.area == "filesystem" ? filesystem_ : execution_)
                ->Record(ms, opentelemetry::common::KeyValueIterableView<std::array<attribute, 2>>(work), context);
        }
        span_for(r);
    }

private:
    // A server span for the request, child of the client's attempt when it sent a traceparent.
    void span_for(const opensandbox::testing::execd_request_seen& r) {
        opentelemetry::trace::StartSpanOptions options;
        options.kind = opentelemetry::trace::SpanKind::kServer;
        options.start_system_time = opentelemetry::common::SystemTimestamp(
            std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(r.duration));
        options.start_steady_time = opentelemetry::common::SteadyTimestamp(std::chrono::steady_clock::now() - r.duration);
        if (!r.traceparent.empty()) {
            header_carrier carrier(r.traceparent);
            auto current = opentelemetry::context::RuntimeContext::GetCurrent();
            options.parent = opentelemetry::trace::propagation::HttpTraceContext().Extract(carrier, current);
        }
        const std::array<attribute, 3> attributes{attribute{"http.request.method", ot(r.method)},
                                                  attribute{"http.route", ot(r.route)},
                                                  attribute{"http.response.status_code", r.status}};
        // (the semantic conventions' name: the method alone when no route took the request,
        // "HTTP" for a method HTTP does not define)
        const std::string method(r.method == r.other_method ? "HTTP" : r.method);
        const std::string name = r.operation.empty() ? method : method + " " + std::string(r.route);
        auto span = tracer_->StartSpan(name, attributes, options);
        if (r.status >= 500 || r.status == 0) span->SetStatus(opentelemetry::trace::StatusCode::kError);
        span->End();
    }

    nostd::shared_ptr<opentelemetry::metrics::Meter> meter_;
    nostd::shared_ptr<opentelemetry::trace::Tracer> tracer_;
    nostd::unique_ptr<opentelemetry::metrics::Histogram<double>> http_, execution_, filesystem_;
};

// The SDK's default histogram buckets (0, 5, 10, 25, … 10000) suit milliseconds; the
// client's durations are in seconds, so they get the semantic conventions' buckets for
// durations in seconds (an application with its own SDK adds the same views: docs/fleet.md).
void add_seconds_buckets(sdk_metrics::MeterProvider& provider) {
    constexpr std::array<std::pair<std::string_view, std::string_view>, 2> histograms{
        std::pair{"ngfail.opensandbox", "ngfail.client.operation.duration"},
        std::pair{"nemo_gym.sandbox.observability", "nemo_gym.sandbox.operation.duration"}};
    for (const auto& [scope, name] : histograms) {
        auto buckets = std::make_shared<sdk_metrics::HistogramAggregationConfig>();
        buckets->boundaries_ = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 300};
        provider.AddView(sdk_metrics::InstrumentSelectorFactory::Create(sdk_metrics::InstrumentType::kHistogram,
                                                                        std::string(name), "s"),
                         sdk_metrics::MeterSelectorFactory::Create(std::string(scope), "", ""),
                         sdk_metrics::ViewFactory::Create(std::string(name), "", "s",
                                                          sdk_metrics::AggregationType::kHistogram, buckets));
    }
}

// How long ending a run waits for each signal's last export.
constexpr std::chrono::microseconds flush_within = std::chrono::seconds(2);

// One export's timeout, at most 10 s (SDK 1.19 reads OTEL_EXPORTER_OTLP_TIMEOUT as seconds where
// the specification says milliseconds: its "10000" would be hours).
template <class Duration>
Duration bounded(Duration timeout) {
    return std::min(timeout, std::chrono::duration_cast<Duration>(std::chrono::seconds(10)));
}

class otlp_telemetry final : public telemetry {
public:
    explicit otlp_telemetry(std::string_view service) {
        const auto resource = resource_for(service);
        // Each exporter's options read the endpoint, protocol and headers from OTEL_*.
        // The SDK's warnings (a span dropped from a full queue, each one) would flood stderr
        // while a collector is down; its errors (a failed export) still show.
        opentelemetry::sdk::common::internal_log::GlobalLogHandler::SetLogLevel(
            opentelemetry::sdk::common::internal_log::LogLevel::Error);
        opentelemetry::exporter::otlp::OtlpHttpExporterOptions span_options;
        span_options.timeout = bounded(span_options.timeout);
        auto spans = opentelemetry::exporter::otlp::OtlpHttpExporterFactory::Create(span_options);
        tracer_provider_ = std::shared_ptr<sdk_trace::TracerProvider>(sdk_trace::TracerProviderFactory::Create(
            sdk_trace::BatchSpanProcessorFactory::Create(std::move(spans), sdk_trace::BatchSpanProcessorOptions()),
            resource));
        opentelemetry::exporter::otlp::OtlpHttpMetricExporterOptions metric_options;
        metric_options.timeout = bounded(metric_options.timeout);
        auto metrics = opentelemetry::exporter::otlp::OtlpHttpMetricExporterFactory::Create(metric_options);
        sdk_metrics::PeriodicExportingMetricReaderOptions reading;
        reading.export_interval_millis = export_interval().value_or(std::chrono::milliseconds(60000));
        // (the SDK wants the timeout below the interval: half of it, 30 s at most)
        reading.export_timeout_millis = std::clamp(reading.export_interval_millis / 2, std::chrono::milliseconds(1),
                                                   std::chrono::milliseconds(30000));
        meter_provider_ = std::shared_ptr<sdk_metrics::MeterProvider>(sdk_metrics::MeterProviderFactory::Create(
            std::make_unique<sdk_metrics::ViewRegistry>(), resource));
        meter_provider_->AddMetricReader(sdk_metrics::PeriodicExportingMetricReaderFactory::Create(std::move(metrics), reading));
        add_seconds_buckets(*meter_provider_);
        opentelemetry::trace::Provider::SetTracerProvider(
            nostd::shared_ptr<opentelemetry::trace::TracerProvider>(tracer_provider_));
        opentelemetry::metrics::Provider::SetMeterProvider(
            nostd::shared_ptr<opentelemetry::metrics::MeterProvider>(meter_provider_));
    }

    ~otlp_telemetry() override {
        // Export what is left, within a bound; then leave the globals as they were (no-op).
        const bool spans_out = tracer_provider_->ForceFlush(flush_within);
        const bool metrics_out = meter_provider_->ForceFlush(flush_within);
        opentelemetry::trace::Provider::SetTracerProvider(nostd::shared_ptr<opentelemetry::trace::TracerProvider>());
        opentelemetry::metrics::Provider::SetMeterProvider(nostd::shared_ptr<opentelemetry::metrics::MeterProvider>());
        if (!spans_out || !metrics_out) {
            // A collector that does not answer holds the exporters' threads in a request: their
            // shutdown would wait for it. The process is ending; they are left to it.
            // (reachable from here, so that no leak checker reports them; never destroyed)
            static auto* const abandoned = new std::vector<std::shared_ptr<void>>();
            abandoned->push_back(std::move(tracer_provider_));
            abandoned->push_back(std::move(meter_provider_));
        }
    }

    std::shared_ptr<opensandbox::call_observer> client_observer() override { return otel::instrument_client(); }

    std::function<void(const opensandbox::testing::execd_request_seen&)> execd_metrics() override {
        auto instruments = std::make_shared<execd_instruments>();
        return [instruments](const opensandbox::testing::execd_request_seen& r) { instruments->record(r); };
    }

private:
    std::shared_ptr<sdk_trace::TracerProvider> tracer_provider_;
    std::shared_ptr<sdk_metrics::MeterProvider> meter_provider_;
};

}  // namespace

bool telemetry::available() noexcept { return true; }

std::optional<std::string> telemetry::configuration_problem() {
    if (auto protocol = unsupported_protocol()) return protocol;
    if (!export_interval()) {
        return "OTEL_METRIC_EXPORT_INTERVAL is not a number of milliseconds from 1 to " +
               std::to_string(longest_interval_ms);
    }
    return std::nullopt;
}

std::unique_ptr<telemetry> telemetry::start(std::string_view service, bool required, std::ostream& err) {
    if (sdk_disabled() || (!required && !endpoint_configured())) return nullptr;
    if (const auto problem = configuration_problem()) {
        err << "ngfail: " << *problem << "; nothing is exported\n";
        return nullptr;
    }
    return std::make_unique<otlp_telemetry>(service);
}

}  // namespace ngfail::cli
