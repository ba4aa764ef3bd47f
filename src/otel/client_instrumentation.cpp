#include <ngfail/otel/client_instrumentation.hpp>

#include <ngfail/details.hpp>
#include <ngfail/kind.hpp>

#include "otel/attribute.hpp"
#include "otel/traceparent.hpp"
#include "text/utf8.hpp"

#include <opentelemetry/context/runtime_context.h>
#include <opentelemetry/metrics/provider.h>
#include <opentelemetry/metrics/sync_instruments.h>
#include <opentelemetry/trace/provider.h>
#include <opentelemetry/trace/span.h>
#include <opentelemetry/trace/tracer.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace ngfail::otel {

namespace {

namespace nostd = opentelemetry::nostd;
namespace trace_api = opentelemetry::trace;
namespace metrics_api = opentelemetry::metrics;
using detail::attribute;
using detail::ot;
using opensandbox::operation;

constexpr std::string_view library_version = "1";
constexpr std::size_t max_id_bytes = 256;     // a sandbox id, a label's key
constexpr std::size_t max_label_bytes = 1024; // a label's value

// The names each naming writes; one row each, so that the code below never asks which.
struct names {
    std::string_view scope;
    std::string_view duration;       // histogram, seconds
    std::string_view failures;       // counter; empty: the events counter counts every call
    std::string_view events;         // counter of every call; empty: none
    std::string_view operation_key;  // the operation, on spans and metrics
    std::string_view error_key;      // the failure kind's wire name
    std::string_view status_key;     // "ok" / "error"; empty: none
    std::string_view sandbox_key;    // span attribute
    std::string_view duration_key;   // span attribute, seconds; empty: none
};

constexpr names ngfail_names{
    .scope = "ngfail.opensandbox",
    .duration = "ngfail.client.operation.duration",
    .failures = "ngfail.client.failures",
    .events = "",
    .operation_key = "ngfail.operation",
    .error_key = "error.type",
    .status_key = "",
    .sandbox_key = "ngfail.sandbox_id",
    .duration_key = "",
};

constexpr names nemo_gym_names{
    .scope = "nemo_gym.sandbox.observability",
    .duration = "nemo_gym.sandbox.operation.duration",
    .failures = "",
    .events = "nemo_gym.sandbox.events",
    .operation_key = "operation.name",
    .error_key = "error_type",
    .status_key = "status",
    .sandbox_key = "sandbox_id",
    .duration_key = "duration_s",
};

const names& names_of(naming n) noexcept { return n == naming::nemo_gym ? nemo_gym_names : ngfail_names; }

// NeMo Gym's span names for the operations its recorder names; the rest `sandbox.<op>`.
struct gym_span_name {
    operation op;
    std::string_view name;
};
constexpr std::array gym_span_names{
    gym_span_name{operation::create, "sandbox.create"},
    gym_span_name{operation::kill, "sandbox.cleanup"},
    gym_span_name{operation::exec, "exec"},
};

std::string span_name(naming n, operation op) {
    if (n == naming::ngfail) return "opensandbox." + std::string(name(op));
    for (const auto& row : gym_span_names) {
        if (row.op == op) return std::string(row.name);
    }
    return "sandbox." + std::string(name(op));
}

std::optional<std::string_view> domain_name(const failure& f) noexcept {
    for (const std::string_view candidate : ngfail::detail::domain_names) {
        if (const auto d = parse_domain(candidate); d && f.code() == *d) return candidate;
    }
    return std::nullopt;
}

// The first `n` of `attributes`, as the API takes a list of them (a view of a container
// keeps a pointer to it, so the list is one object with its own view of the array).
class attribute_list final : public opentelemetry::common::KeyValueIterable {
public:
    template <std::size_t N>
    attribute_list(const std::array<attribute, N>& attributes, std::size_t n) noexcept
        : first_(attributes.data()), size_(std::min(n, N)) {}

    bool ForEachKeyValue(nostd::function_ref<bool(nostd::string_view, opentelemetry::common::AttributeValue)> each)
        const noexcept override {
        for (std::size_t i = 0; i < size_; ++i) {
            if (!each(first_[i].first, first_[i].second)) return false;
        }
        return true;
    }
    std::size_t size() const noexcept override { return size_; }

private:
    const attribute* first_;
    std::size_t size_;
};

// `text` as valid UTF-8 (text::valid_utf8), cut to `max_bytes` between characters: an
// exporter writes attributes as protobuf strings, and one invalid byte makes a collector
// refuse the whole batch it is in. Valid text that fits is a view.
class utf8_text {
public:
    explicit utf8_text(std::string_view text, std::size_t max_bytes = 4096) {
        if (text.size() <= max_bytes && ngfail::text::is_valid_utf8(text)) {
            view_ = text;
            return;
        }
        fixed_ = ngfail::text::valid_utf8(text);
        ngfail::text::truncate_utf8(fixed_, max_bytes);
        view_ = fixed_;
    }
    utf8_text(const utf8_text&) = delete;
    utf8_text& operator=(const utf8_text&) = delete;

    [[nodiscard]] nostd::string_view get() const noexcept { return ot(view_); }

private:
    std::string fixed_;
    std::string_view view_;
};

// A caller's label may not pose as one of the attributes this library records.
bool reserved_key(std::string_view key, const names& keys) noexcept {
    return key.empty() || key.starts_with("ngfail.") || key == "error.type" || key == keys.operation_key ||
           key == keys.error_key || key == keys.status_key || key == keys.sandbox_key || key == keys.duration_key;
}

const sandbox_details* sandbox_of(const failure& f) noexcept { return std::get_if<sandbox_details>(&f.details()); }

struct client_instruments {
    naming naming_used;
    const names& keys;
    std::array<std::string, opensandbox::operation_count> span_names;     // by operation
    std::array<std::string, opensandbox::operation_count> attempt_names;  // by operation
    nostd::shared_ptr<trace_api::Tracer> tracer;
    nostd::shared_ptr<metrics_api::Meter> meter;
    nostd::unique_ptr<metrics_api::Histogram<double>> duration;
    nostd::unique_ptr<metrics_api::Counter<std::uint64_t>> failures;  // or every call, under Gym's names
};

nostd::shared_ptr<trace_api::TracerProvider> tracer_provider_of(const instrumentation_options& o) {
    return o.tracer_provider ? o.tracer_provider : trace_api::Provider::GetTracerProvider();
}
nostd::shared_ptr<metrics_api::MeterProvider> meter_provider_of(const instrumentation_options& o) {
    return o.meter_provider ? o.meter_provider : metrics_api::Provider::GetMeterProvider();
}

class traced_call final : public opensandbox::observed_call {
public:
    traced_call(const client_instruments& in, operation op, std::string_view sandbox_id,
                std::span<const opensandbox::trace_label> labels)
        : in_(in), op_(op), started_(std::chrono::steady_clock::now()), started_at_(std::chrono::system_clock::now()) {
        trace_api::StartSpanOptions options;
        options.kind = trace_api::SpanKind::kInternal;
        options.start_steady_time = opentelemetry::common::SteadyTimestamp(started_);
        options.start_system_time = opentelemetry::common::SystemTimestamp(started_at_);
        named_sandbox_ = !sandbox_id.empty();
        const utf8_text sandbox(sandbox_id, max_id_bytes);
        const std::array<attribute, 2> attributes{attribute{ot(in_.keys.operation_key), ot(name(op))},
                                                  attribute{ot(in_.keys.sandbox_key), sandbox.get()}};
        span_ = in_.tracer->StartSpan(in_.span_names[static_cast<std::size_t>(op)],
                                      attribute_list(attributes, named_sandbox_ ? 2 : 1), options);
        for (const auto& label : labels) {
            if (reserved_key(label.key, in_.keys)) continue;
            span_->SetAttribute(utf8_text(label.key, max_id_bytes).get(), utf8_text(label.value, max_label_bytes).get());
        }
    }

    ~traced_call() override {
        // A call abandoned by its coroutine (its executor stopped) still ends its spans.
        if (attempt_) attempt_->End();
        if (span_) span_->End();
    }

    std::string_view attempt_began(int attempt) override {
        const auto now = std::chrono::steady_clock::now();
        if (attempt_) attempt_->End(ending_at(now));
        trace_api::StartSpanOptions options;
        options.kind = trace_api::SpanKind::kClient;
        options.parent = span_->GetContext();
        options.start_steady_time = opentelemetry::common::SteadyTimestamp(now);
        options.start_system_time = opentelemetry::common::SystemTimestamp(
            started_at_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(now - started_));
        const std::array<attribute, 1> attributes{attribute{"ngfail.attempt", attempt}};
        attempt_ = in_.tracer->StartSpan(in_.attempt_names[static_cast<std::size_t>(op_)], attributes, options);
        return traceparent_.of(attempt_->GetContext());
    }

    void attempt_failed(const failure& f) override {
        if (!attempt_) return;
        mark_failed(*attempt_, f);
        attempt_->End(ending_at(std::chrono::steady_clock::now()));
        attempt_ = nullptr;
    }

    void command_program(std::string_view program) override {
        if (in_.naming_used == naming::nemo_gym) span_->UpdateName("exec: " + std::string(program));
        else span_->SetAttribute("ngfail.program", ot(program));
    }

    void ended(const failure& f, std::string_view sandbox_id) override {
        const auto now = std::chrono::steady_clock::now();
        const double seconds = std::chrono::duration<double>(now - started_).count();
        if (attempt_) {
            if (f) mark_failed(*attempt_, f);
            attempt_->End(ending_at(now));
            attempt_ = nullptr;
        }
        // (a create learns its sandbox's id only now; an exporter may keep both of two values)
        if (!named_sandbox_ && !sandbox_id.empty()) {
            span_->SetAttribute(ot(in_.keys.sandbox_key), utf8_text(sandbox_id, max_id_bytes).get());
        }
        if (!in_.keys.duration_key.empty()) span_->SetAttribute(ot(in_.keys.duration_key), seconds);
        if (!in_.keys.status_key.empty()) span_->SetAttribute(ot(in_.keys.status_key), f ? "error" : "ok");
        if (f) mark_failed(*span_, f);
        span_->End(ending_at(now));
        span_ = nullptr;
        record_metrics(f, seconds);
    }

private:
    // Spans are given the times this call read already: a clock read per span's start and
    // end would be four more a call.
    static trace_api::EndSpanOptions ending_at(std::chrono::steady_clock::time_point t) noexcept {
        trace_api::EndSpanOptions options;
        options.end_steady_time = opentelemetry::common::SteadyTimestamp(t);
        return options;
    }

    void mark_failed(trace_api::Span& span, const failure& f) const {
        const std::string_view kind = f.kind_name();
        span.SetStatus(trace_api::StatusCode::kError, utf8_text(f.reason().empty() ? kind : f.reason()).get());
        span.SetAttribute(ot(in_.keys.error_key), ot(kind));
        if (const auto domain = domain_name(f)) span.SetAttribute("ngfail.domain", ot(*domain));
        if (const auto* d = sandbox_of(f)) {
            if (d->delivery) span.SetAttribute("ngfail.delivery", ot(name(*d->delivery)));
            if (d->evidence_row) span.SetAttribute("ngfail.evidence_row", ot(*d->evidence_row));
        }
        if (in_.naming_used == naming::nemo_gym) {
            const utf8_text message(f.what());
            const std::array<attribute, 2> exception{attribute{"exception.type", ot(kind)},
                                                     attribute{"exception.message", message.get()}};
            span.AddEvent("exception", exception);
        }
    }

    void record_metrics(const failure& f, double seconds) const {
        const opentelemetry::context::Context no_context;  // (a measurement needs none of the caller's)
        std::array<attribute, 5> attributes{};
        std::size_t n = 0;
        attributes[n++] = {ot(in_.keys.operation_key), ot(name(op_))};
        if (!in_.keys.status_key.empty()) attributes[n++] = {ot(in_.keys.status_key), f ? "error" : "ok"};
        if (f) attributes[n++] = {ot(in_.keys.error_key), ot(f.kind_name())};
        in_.duration->Record(seconds, attribute_list(attributes, n), no_context);
        if (!in_.keys.events.empty()) {
            in_.failures->Add(1, attribute_list(attributes, n), no_context);
            return;
        }
        if (!f) return;
        if (const auto domain = domain_name(f)) attributes[n++] = {"ngfail.domain", ot(*domain)};
        if (const auto* d = sandbox_of(f); d && d->delivery) attributes[n++] = {"ngfail.delivery", ot(name(*d->delivery))};
        in_.failures->Add(1, attribute_list(attributes, n), no_context);
    }

    const client_instruments& in_;
    operation op_;
    std::chrono::steady_clock::time_point started_;
    std::chrono::system_clock::time_point started_at_;  // the same instant, for spans' start times
    bool named_sandbox_ = false;  // the call named its sandbox when it began
    nostd::shared_ptr<trace_api::Span> span_;
    nostd::shared_ptr<trace_api::Span> attempt_;
    detail::traceparent traceparent_;
};

class client_observer final : public opensandbox::call_observer {
public:
    explicit client_observer(const instrumentation_options& o)
        : in_{.naming_used = o.names, .keys = names_of(o.names), .span_names = {}, .attempt_names = {}, .tracer = {},
              .meter = {}, .duration = {}, .failures = {}} {
        for (const operation op : opensandbox::all_operations()) {
            const auto at = static_cast<std::size_t>(op);
            in_.span_names[at] = span_name(o.names, op);
            in_.attempt_names[at] = in_.span_names[at] + " attempt";
        }
        in_.tracer = tracer_provider_of(o)->GetTracer(ot(in_.keys.scope), ot(library_version));
        in_.meter = meter_provider_of(o)->GetMeter(ot(in_.keys.scope), ot(library_version));
        in_.duration = in_.meter->CreateDoubleHistogram(ot(in_.keys.duration), "How long a sandbox operation took", "s");
        in_.failures = in_.keys.events.empty()
                           ? in_.meter->CreateUInt64Counter(ot(in_.keys.failures), "Sandbox operations that failed for good")
                           : in_.meter->CreateUInt64Counter(ot(in_.keys.events), "Sandbox operations");
    }

    std::unique_ptr<opensandbox::observed_call> begin(operation op, std::string_view sandbox_id,
                                                      std::span<const opensandbox::trace_label> labels) override {
        return std::make_unique<traced_call>(in_, op, sandbox_id, labels);
    }

private:
    client_instruments in_;
};

}  // namespace

std::shared_ptr<opensandbox::call_observer> instrument_client(instrumentation_options options) {
    return std::make_shared<client_observer>(options);
}

struct decision_counter::instruments {
    nostd::shared_ptr<metrics_api::Meter> meter;
    nostd::unique_ptr<metrics_api::Counter<std::uint64_t>> decisions;
};

decision_counter::decision_counter(instrumentation_options options) : instruments_(std::make_unique<instruments>()) {
    instruments_->meter = meter_provider_of(options)->GetMeter(ot(names_of(options.names).scope), ot(library_version));
    instruments_->decisions =
        instruments_->meter->CreateUInt64Counter("ngfail.policy.decisions", "Decisions of the outcome policy");
}

decision_counter::~decision_counter() = default;
decision_counter::decision_counter(decision_counter&&) noexcept = default;
decision_counter& decision_counter::operator=(decision_counter&&) noexcept = default;

void decision_counter::record(std::string_view action, std::string_view failure_class) noexcept {
    if (!instruments_) return;  // moved from
    const std::array<attribute, 2> attributes{attribute{"ngfail.action", ot(action)},
                                              attribute{"ngfail.failure_class", ot(failure_class)}};
    instruments_->decisions->Add(1, opentelemetry::common::KeyValueIterableView<std::array<attribute, 2>>(attributes),
                                 opentelemetry::context::RuntimeContext::GetCurrent());
}

}  // namespace ngfail::otel
