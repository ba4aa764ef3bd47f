// The client's spans and metrics through the OpenTelemetry SDK's in-memory exporters, the
// client calling the embedded server on loopback: what a fleet's collector would receive.
#include "support/recorded_heads.hpp"

#include <ngfail/opensandbox.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>
#include <ngfail/otel/client_instrumentation.hpp>
#include <ngfail/otel/policy_decisions.hpp>
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/outcome_policy.hpp>

#include <opentelemetry/exporters/memory/in_memory_metric_data.h>
#include <opentelemetry/exporters/memory/in_memory_metric_exporter_factory.h>
#include <opentelemetry/exporters/memory/in_memory_span_data.h>
#include <opentelemetry/exporters/memory/in_memory_span_exporter_factory.h>
#include <opentelemetry/sdk/metrics/export/periodic_exporting_metric_reader_factory.h>
#include <opentelemetry/sdk/metrics/meter_provider.h>
#include <opentelemetry/sdk/metrics/meter_provider_factory.h>
#include <opentelemetry/sdk/trace/simple_processor_factory.h>
#include <opentelemetry/sdk/trace/span_data.h>
#include <opentelemetry/sdk/trace/tracer_provider.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>
#include <opentelemetry/trace/context.h>
#include <opentelemetry/trace/propagation/http_trace_context.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ngfail::opensandbox::client;
using ngfail::opensandbox::trace_label;
using ngfail::opensandbox::testing::embedded_server;
using ngfail::opensandbox::testing::fault;
using ngfail::otel::naming;
using testing::ElementsAre;
using testing::UnorderedElementsAre;

namespace nostd = opentelemetry::nostd;
namespace memory = opentelemetry::exporter::memory;
namespace sdk_trace = opentelemetry::sdk::trace;
namespace sdk_metrics = opentelemetry::sdk::metrics;

constexpr std::string_view key = "sk-otel-instrumentation-secret";

// Any attribute value as text, for comparisons and the secrets check.
std::string text_of(const opentelemetry::sdk::common::OwnedAttributeValue& v) {
    if (nostd::holds_alternative<std::string>(v)) return nostd::get<std::string>(v);
    if (nostd::holds_alternative<bool>(v)) return nostd::get<bool>(v) ? "true" : "false";
    if (nostd::holds_alternative<std::int32_t>(v)) return std::to_string(nostd::get<std::int32_t>(v));
    if (nostd::holds_alternative<std::int64_t>(v)) return std::to_string(nostd::get<std::int64_t>(v));
    if (nostd::holds_alternative<std::uint32_t>(v)) return std::to_string(nostd::get<std::uint32_t>(v));
    if (nostd::holds_alternative<std::uint64_t>(v)) return std::to_string(nostd::get<std::uint64_t>(v));
    if (nostd::holds_alternative<double>(v)) return std::to_string(nostd::get<double>(v));
    return "<array>";
}

template <class Map>
std::map<std::string, std::string> texts_of(const Map& attributes) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : attributes) out[k] = text_of(v);
    return out;
}

std::string hex_of(const opentelemetry::trace::SpanId& id) {
    char buffer[16];
    id.ToLowerBase16(buffer);
    return std::string(buffer, sizeof buffer);
}
std::string hex_of(const opentelemetry::trace::TraceId& id) {
    char buffer[32];
    id.ToLowerBase16(buffer);
    return std::string(buffer, sizeof buffer);
}

// One span as a test reads it.
struct span_seen {
    std::string name;
    opentelemetry::trace::StatusCode status;
    std::string description;
    std::map<std::string, std::string> attributes;
    std::string span_id, parent_id, trace_id;
    std::vector<std::map<std::string, std::string>> events;  // each event's attributes, its name as "event"
    std::chrono::system_clock::time_point start{};
    std::chrono::nanoseconds duration{};
    [[nodiscard]] std::chrono::system_clock::time_point end() const {
        return start + std::chrono::duration_cast<std::chrono::system_clock::duration>(duration);
    }
};

// An SDK with in-memory exporters: what the application would install, the spans and
// metrics then read back.
class telemetry {
public:
    telemetry() {
        auto exporter = memory::InMemorySpanExporterFactory::Create(spans_);
        tracer_provider_ = sdk_trace::TracerProviderFactory::Create(
            sdk_trace::SimpleSpanProcessorFactory::Create(std::move(exporter)));
        metric_data_ = std::make_shared<memory::SimpleAggregateInMemoryMetricData>();
        meter_provider_ = sdk_metrics::MeterProviderFactory::Create();
        reader_ = sdk_metrics::PeriodicExportingMetricReaderFactory::Create(
            memory::InMemoryMetricExporterFactory::Create(metric_data_), {.export_interval_millis = 3600s,
                                                                          .export_timeout_millis = 5s});
        meter_provider_->AddMetricReader(reader_);
    }

    [[nodiscard]] ngfail::otel::instrumentation_options options(naming n = naming::ngfail) {
        return {.names = n,
                .tracer_provider = nostd::shared_ptr<opentelemetry::trace::TracerProvider>(tracer_provider_),
                .meter_provider = nostd::shared_ptr<opentelemetry::metrics::MeterProvider>(meter_provider_)};
    }

    [[nodiscard]] std::vector<span_seen> spans() {
        std::vector<span_seen> out;
        for (const auto& s : spans_->GetSpans()) {
            span_seen seen{.name = std::string(s->GetName()),
                           .status = s->GetStatus(),
                           .description = std::string(s->GetDescription()),
                           .attributes = texts_of(s->GetAttributes()),
                           .span_id = hex_of(s->GetSpanId()),
                           .parent_id = hex_of(s->GetParentSpanId()),
                           .trace_id = hex_of(s->GetTraceId()),
                           .events = {},
                           .start = s->GetStartTime(),
                           .duration = s->GetDuration()};
            for (const auto& e : s->GetEvents()) {
                auto attributes = texts_of(e.GetAttributes());
                attributes["event"] = std::string(e.GetName());
                seen.events.push_back(std::move(attributes));
            }
            out.push_back(std::move(seen));
        }
        return out;
    }

    // Every point of `metric`: its attributes, and its count (a histogram's) or value (a sum's).
    [[nodiscard]] std::vector<std::pair<std::map<std::string, std::string>, double>> points(const std::string& scope,
                                                                                           const std::string& metric) {
        meter_provider_->ForceFlush();
        std::vector<std::pair<std::map<std::string, std::string>, double>> out;
        for (const auto& [attributes, point] : metric_data_->Get(scope, metric)) {
            double value = -1;
            if (nostd::holds_alternative<sdk_metrics::HistogramPointData>(point)) {
                value = static_cast<double>(nostd::get<sdk_metrics::HistogramPointData>(point).count_);
            } else if (nostd::holds_alternative<sdk_metrics::SumPointData>(point)) {
                const auto& sum = nostd::get<sdk_metrics::SumPointData>(point).value_;
                value = nostd::holds_alternative<std::int64_t>(sum) ? static_cast<double>(nostd::get<std::int64_t>(sum))
                                                                    : nostd::get<double>(sum);
            }
            out.emplace_back(texts_of(attributes), value);
        }
        return out;
    }

private:
    std::shared_ptr<memory::InMemorySpanData> spans_ = std::make_shared<memory::InMemorySpanData>(1000);
    std::shared_ptr<sdk_trace::TracerProvider> tracer_provider_;
    std::shared_ptr<memory::SimpleAggregateInMemoryMetricData> metric_data_;
    std::shared_ptr<sdk_metrics::MeterProvider> meter_provider_;
    std::shared_ptr<sdk_metrics::MetricReader> reader_;
};

const span_seen& only(const std::vector<span_seen>& spans, std::string_view name) {
    const span_seen* found = nullptr;
    for (const auto& s : spans) {
        if (s.name == name) {
            EXPECT_EQ(found, nullptr) << "two spans named " << name;
            found = &s;
        }
    }
    if (!found) throw std::runtime_error("no span named " + std::string(name));
    return *found;
}

std::vector<const span_seen*> children_of(const std::vector<span_seen>& spans, const span_seen& parent) {
    std::vector<const span_seen*> out;
    for (const auto& s : spans) {
        if (s.parent_id == parent.span_id) out.push_back(&s);
    }
    return out;
}

std::set<std::string> keys_of(const std::map<std::string, std::string>& attributes) {
    std::set<std::string> out;
    for (const auto& [k, v] : attributes) out.insert(k);
    return out;
}

class instrumented_client : public testing::Test {
protected:
    telemetry otel;
    embedded_server server{{.api_key = std::string(key)}};

    client make_client(naming n = naming::ngfail, int attempts = 1) {
        return client({.port = server.port(),
                       .api_key = std::string(key),
                       .timeout = 5s,
                       .retries = {.max_attempts = attempts, .backoff = 1ms},
                       .observer = ngfail::otel::instrument_client(otel.options(n))});
    }
};

TEST_F(instrumented_client, a_failed_exec_is_one_span_with_status_error_and_its_kind_attempts_as_children) {
    client c = make_client();
    const std::string id = c.create({}).id;
    server.inject(fault::exec(fault::action::oom_kill));

    const auto ran = c.try_exec(id, {.command = "python3 -c 'x = bytearray(1 << 30)'"});
    ASSERT_FALSE(ran);

    const auto spans = otel.spans();
    const span_seen& exec = only(spans, "opensandbox.exec");
    EXPECT_EQ(exec.status, opentelemetry::trace::StatusCode::kError);
    EXPECT_EQ(exec.attributes.at("error.type"), ran.error().kind_name());
    EXPECT_EQ(exec.attributes.at("ngfail.operation"), "exec");
    EXPECT_EQ(exec.attributes.at("ngfail.sandbox_id"), id);
    EXPECT_EQ(exec.attributes.at("ngfail.domain"), "provider");
    EXPECT_EQ(exec.attributes.at("ngfail.program"), "python3");
    const auto& details = std::get<ngfail::sandbox_details>(ran.error().details());
    ASSERT_TRUE(details.evidence_row && details.delivery);
    EXPECT_EQ(exec.attributes.at("ngfail.evidence_row"), *details.evidence_row);
    EXPECT_EQ(exec.attributes.at("ngfail.delivery"), name(*details.delivery));
    EXPECT_EQ(exec.description, ran.error().reason());

    const auto attempts = children_of(spans, exec);
    ASSERT_EQ(attempts.size(), 1u);
    EXPECT_EQ(attempts[0]->name, "opensandbox.exec attempt");
    EXPECT_EQ(attempts[0]->status, opentelemetry::trace::StatusCode::kError);
    EXPECT_EQ(attempts[0]->attributes.at("error.type"), ran.error().kind_name());
    EXPECT_EQ(attempts[0]->attributes.at("ngfail.attempt"), "1");
    EXPECT_EQ(attempts[0]->trace_id, exec.trace_id);

    const span_seen& create = only(spans, "opensandbox.create");
    EXPECT_EQ(create.status, opentelemetry::trace::StatusCode::kUnset);
    EXPECT_EQ(create.attributes.at("ngfail.sandbox_id"), id) << "a new sandbox's id, once known";
    EXPECT_EQ(create.attributes.count("error.type"), 0u);
}

TEST_F(instrumented_client, a_retried_then_successful_call_is_not_marked_failed_its_failed_attempt_is) {
    client c = make_client(naming::ngfail, 3);
    const std::string id = c.create({}).id;
    server.inject(fault::http_error("get", 503, "UNAVAILABLE", "try again"));

    ASSERT_TRUE(c.try_get(id));

    const auto spans = otel.spans();
    const span_seen& get = only(spans, "opensandbox.get");
    EXPECT_EQ(get.status, opentelemetry::trace::StatusCode::kUnset);
    EXPECT_EQ(get.attributes.count("error.type"), 0u);
    const auto attempts = children_of(spans, get);
    ASSERT_EQ(attempts.size(), 2u);
    std::map<std::string, const span_seen*> by_number;
    for (const auto* a : attempts) by_number[a->attributes.at("ngfail.attempt")] = a;
    EXPECT_EQ(by_number.at("1")->status, opentelemetry::trace::StatusCode::kError);
    EXPECT_EQ(by_number.at("1")->attributes.at("error.type"), "provider_unavailable");
    EXPECT_EQ(by_number.at("2")->status, opentelemetry::trace::StatusCode::kUnset);
    // In time, the attempts lie within their call, one after the other (their backoff between).
    EXPECT_LE(get.start, by_number.at("1")->start);
    EXPECT_LE(by_number.at("1")->end(), by_number.at("2")->start);
    EXPECT_LE(by_number.at("2")->end(), get.end());
    EXPECT_GT(get.duration, 0ns);
    EXPECT_GT(get.start, std::chrono::system_clock::now() - 1min);

    // Metrics count the call as a success: its duration without error.type, no failure.
    const auto durations = otel.points("ngfail.opensandbox", "ngfail.client.operation.duration");
    EXPECT_THAT(durations, testing::Contains(std::pair(std::map<std::string, std::string>{{"ngfail.operation", "get"}}, 1.0)));
    for (const auto& [attributes, count] : otel.points("ngfail.opensandbox", "ngfail.client.failures")) {
        EXPECT_NE(attributes.at("ngfail.operation"), "get");
    }
}

TEST_F(instrumented_client, metrics_carry_exactly_the_documented_low_cardinality_attributes) {
    client c = make_client();
    const std::string id = c.create({}).id;
    ASSERT_TRUE(c.try_exec(id, {.command = "echo fine"}));
    server.inject(fault::exec(fault::action::oom_kill));
    const auto failed = c.try_exec(id, {.command = "echo dies"});
    ASSERT_FALSE(failed);
    ASSERT_FALSE(c.try_get("no-such-sandbox"));

    std::set<std::set<std::string>> duration_keys;
    for (const auto& [attributes, count] : otel.points("ngfail.opensandbox", "ngfail.client.operation.duration")) {
        duration_keys.insert(keys_of(attributes));
        EXPECT_GE(count, 1.0);
    }
    EXPECT_EQ(duration_keys, (std::set<std::set<std::string>>{{"ngfail.operation"},
                                                              {"ngfail.operation", "error.type"}}));

    const auto failures = otel.points("ngfail.opensandbox", "ngfail.client.failures");
    ASSERT_EQ(failures.size(), 2u);
    for (const auto& [attributes, count] : failures) {
        EXPECT_EQ(count, 1.0);
        EXPECT_THAT(keys_of(attributes), testing::IsSubsetOf(std::set<std::string>{
                                             "ngfail.operation", "error.type", "ngfail.domain", "ngfail.delivery"}));
        EXPECT_TRUE(attributes.count("error.type") && attributes.count("ngfail.domain"));
        for (const auto& [k, v] : attributes) {
            EXPECT_EQ(v.find(id), std::string::npos) << k << " carries an id";
            EXPECT_EQ(v.find("no-such-sandbox"), std::string::npos) << k << " carries an id";
        }
    }
    const auto exec_failure = std::find_if(failures.begin(), failures.end(),
                                           [](const auto& p) { return p.first.at("ngfail.operation") == "exec"; });
    ASSERT_NE(exec_failure, failures.end());
    EXPECT_EQ(exec_failure->first.at("error.type"), failed.error().kind_name());
}

TEST_F(instrumented_client, no_secret_reaches_an_attribute_a_status_or_an_event) {
    client c = make_client(naming::nemo_gym);
    const std::string id = c.create({}).id;
    // A server that echoes the key into its error; a command whose first words carry it.
    server.inject(fault::http_error("get", 400, "BAD", "rejected key " + std::string(key)));
    ASSERT_FALSE(c.try_get(id));
    ASSERT_TRUE(c.try_exec(id, {.command = "TOKEN=" + std::string(key) + " echo hi"}));
    (void)c.try_exec(id, {.command = std::string(key) + " --flag"});  // a program named as the key

    const auto spans = otel.spans();
    std::size_t looked_at = 0;
    for (const auto& s : spans) {
        ++looked_at;
        EXPECT_EQ(s.name.find(key), std::string::npos) << s.name;
        EXPECT_EQ(s.description.find(key), std::string::npos) << s.description;
        for (const auto& [k, v] : s.attributes) EXPECT_EQ(v.find(key), std::string::npos) << k;
        for (const auto& e : s.events) {
            for (const auto& [k, v] : e) EXPECT_EQ(v.find(key), std::string::npos) << k;
        }
    }
    EXPECT_GE(looked_at, 8u);
    EXPECT_THAT(spans, testing::Contains(testing::Field(&span_seen::name, "exec: echo")))
        << "the program after the assignment";
    EXPECT_THAT(spans, testing::Contains(testing::Field(&span_seen::name, "exec: [redacted]")));
    for (const auto& [attributes, count] :
         otel.points("nemo_gym.sandbox.observability", "nemo_gym.sandbox.operation.duration")) {
        for (const auto& [k, v] : attributes) EXPECT_EQ(v.find(key), std::string::npos) << k;
    }
}

TEST_F(instrumented_client, nemo_gym_names_fill_gyms_dashboard) {
    client c = make_client(naming::nemo_gym);
    const std::string id = c.create({}).id;
    server.inject(fault::exec(fault::action::oom_kill));
    const std::vector<trace_label> labels{{"trajectory_id", "traj-7"}, {"run_id", "run-3"}};
    const auto ran = c.try_exec(id, {.command = "  python3 train.py --epochs 3"}, {.trace_labels = labels});
    ASSERT_FALSE(ran);
    ASSERT_TRUE(c.try_kill(id));

    const auto spans = otel.spans();
    const span_seen& create = only(spans, "sandbox.create");
    EXPECT_EQ(create.attributes.at("status"), "ok");
    EXPECT_EQ(create.attributes.at("operation.name"), "create");
    const span_seen& exec = only(spans, "exec: python3");
    EXPECT_EQ(exec.status, opentelemetry::trace::StatusCode::kError);
    EXPECT_EQ(exec.attributes.at("status"), "error");
    EXPECT_EQ(exec.attributes.at("error_type"), ran.error().kind_name());
    EXPECT_EQ(exec.attributes.at("sandbox_id"), id);
    EXPECT_EQ(exec.attributes.at("trajectory_id"), "traj-7");
    EXPECT_EQ(exec.attributes.at("run_id"), "run-3");
    EXPECT_GT(std::stod(exec.attributes.at("duration_s")), 0.0);
    ASSERT_EQ(exec.events.size(), 1u);
    EXPECT_EQ(exec.events[0].at("event"), "exception");
    EXPECT_EQ(exec.events[0].at("exception.type"), ran.error().kind_name());
    EXPECT_EQ(only(spans, "sandbox.cleanup").attributes.at("status"), "ok");

    const auto durations = otel.points("nemo_gym.sandbox.observability", "nemo_gym.sandbox.operation.duration");
    EXPECT_THAT(durations, testing::Contains(std::pair(
                               std::map<std::string, std::string>{{"operation.name", "exec"},
                                                                  {"status", "error"},
                                                                  {"error_type", std::string(ran.error().kind_name())}},
                               1.0)));
    EXPECT_THAT(durations, testing::Contains(std::pair(
                               std::map<std::string, std::string>{{"operation.name", "kill"}, {"status", "ok"}}, 1.0)));
    const auto events = otel.points("nemo_gym.sandbox.observability", "nemo_gym.sandbox.events");
    EXPECT_THAT(events, testing::Contains(std::pair(
                            std::map<std::string, std::string>{{"operation.name", "create"}, {"status", "ok"}}, 1.0)));
}

TEST_F(instrumented_client, each_attempts_requests_carry_its_w3c_traceparent) {
    ngfail_test::recorded_heads lifecycle;
    client c({.port = lifecycle.port(), .api_key = std::string(key), .timeout = 5s,
              .observer = ngfail::otel::instrument_client(otel.options())});

    ASSERT_TRUE(c.try_get("sbx-1"));

    const auto spans = otel.spans();
    const auto attempts = children_of(spans, only(spans, "opensandbox.get"));
    ASSERT_EQ(attempts.size(), 1u);
    const auto heads = lifecycle.heads();
    ASSERT_EQ(heads.size(), 1u);
    EXPECT_THAT(heads[0], testing::HasSubstr("traceparent: 00-" + attempts[0]->trace_id + "-" +
                                             attempts[0]->span_id + "-01\r\n"));
    // And OpenTelemetry's own W3C propagator reads it back as the attempt's span.
    struct head_carrier final : opentelemetry::context::propagation::TextMapCarrier {
        std::string value;
        nostd::string_view Get(nostd::string_view k) const noexcept override {
            return k == "traceparent" ? nostd::string_view(value) : nostd::string_view();
        }
        void Set(nostd::string_view, nostd::string_view) noexcept override {}
    } carrier;
    carrier.value = ngfail_test::raw_server::header(heads[0], "traceparent");
    auto none = opentelemetry::context::Context{};
    const auto extracted = opentelemetry::trace::GetSpan(
        opentelemetry::trace::propagation::HttpTraceContext().Extract(carrier, none))->GetContext();
    ASSERT_TRUE(extracted.IsValid()) << carrier.value;
    EXPECT_EQ(hex_of(extracted.trace_id()), attempts[0]->trace_id);
    EXPECT_EQ(hex_of(extracted.span_id()), attempts[0]->span_id);
    EXPECT_TRUE(extracted.IsSampled());
}

TEST_F(instrumented_client, a_terminals_upgrade_carries_its_attempts_traceparent) {
    std::mutex lock;
    std::map<std::string, std::string> parents;  // by operation, as the server saw them
    std::map<std::string, int> statuses;
    embedded_server seen_server{{.api_key = std::string(key),
                                 .on_execd_request = [&](const ngfail::opensandbox::testing::execd_request_seen& r) {
                                     const std::scoped_lock hold(lock);
                                     parents[std::string(r.operation)] = std::string(r.traceparent);
                                     statuses[std::string(r.operation)] = r.status;
                                 }}};
    client c({.port = seen_server.port(), .api_key = std::string(key), .timeout = 5s,
              .observer = ngfail::otel::instrument_client(otel.options())});
    const std::string id = c.create({}).id;
    const std::string terminal = c.create_terminal(id);
    {
        auto session = c.attach_terminal(id, terminal);
        session.write("echo hi\r");
    }
    // The server sees the upgrade's request once its session has ended.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    for (;;) {
        {
            const std::scoped_lock hold(lock);
            if (parents.contains("attach_terminal")) break;
        }
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the server never reported the terminal's upgrade";
        std::this_thread::sleep_for(10ms);
    }
    const auto spans = otel.spans();
    const auto attempts = children_of(spans, only(spans, "opensandbox.attach_terminal"));
    ASSERT_EQ(attempts.size(), 1u);
    const std::scoped_lock hold(lock);
    EXPECT_EQ(parents["attach_terminal"], "00-" + attempts[0]->trace_id + "-" + attempts[0]->span_id + "-01");
    // As execd's middleware records an upgraded connection: Gin's writer keeps its 200.
    EXPECT_EQ(statuses["attach_terminal"], 200);
}

TEST_F(instrumented_client, without_an_sdk_the_global_no_op_providers_record_nothing_and_send_no_traceparent) {
    ngfail_test::recorded_heads lifecycle;
    client c({.port = lifecycle.port(), .api_key = std::string(key), .timeout = 5s,
              .observer = ngfail::otel::instrument_client()});  // the global providers: no SDK installed
    ASSERT_TRUE(c.try_get("sbx-1"));
    EXPECT_TRUE(otel.spans().empty());
    const auto heads = lifecycle.heads();
    ASSERT_EQ(heads.size(), 1u);
    EXPECT_THAT(heads[0], testing::Not(testing::HasSubstr("traceparent")));
}

TEST_F(instrumented_client, what_a_caller_or_a_server_says_reaches_a_span_as_valid_bounded_utf8) {
    client c = make_client();
    const std::string huge(5000, 'v');
    const std::vector<trace_label> labels{{"error.type", "forged"},    // would pose as the failure's kind
                                          {"ngfail.operation", "forged"},
                                          {"trajectory_id", "t\xff\xfe-1"},
                                          {"note", huge}};
    (void)c.try_get("sbx\xff\xfeZ", {.trace_labels = labels});

    const auto spans = otel.spans();
    const span_seen& get = only(spans, "opensandbox.get");
    EXPECT_EQ(get.attributes.at("ngfail.sandbox_id"), "sbx\xef\xbf\xbd\xef\xbf\xbdZ") << "U+FFFD for each invalid byte";
    EXPECT_EQ(get.attributes.at("trajectory_id"), "t\xef\xbf\xbd\xef\xbf\xbd-1");
    EXPECT_EQ(get.attributes.at("note").size(), 1024u) << "a label's value is bounded";
    EXPECT_EQ(get.attributes.at("ngfail.operation"), "get") << "a label cannot pose as the library's attribute";
    EXPECT_NE(get.attributes.at("error.type"), "forged");
}

TEST(decision_counter, counts_the_policys_decisions_by_action_and_class) {
    telemetry otel;
    ngfail::otel::decision_counter decisions(otel.options());
    const auto& policy = ngfail::policy::outcome_policy::defaults();
    ngfail::policy::retry_allowance allowance({.attempts = 3});
    for (const ngfail::kind k : {ngfail::kind::transport_timeout, ngfail::kind::transport_timeout,
                                 ngfail::kind::provider_oom_killed}) {
        const auto d = ngfail::policy::choose_action(policy, ngfail::failure(k),
                                                     {.replay = ngfail::replay_policy::idempotent, .allowance = &allowance});
        ngfail::otel::record(decisions, d, policy);
    }
    std::map<std::string, double> by_action;
    for (const auto& [attributes, count] : otel.points("ngfail.opensandbox", "ngfail.policy.decisions")) {
        EXPECT_EQ(keys_of(attributes), (std::set<std::string>{"ngfail.action", "ngfail.failure_class"}));
        by_action[attributes.at("ngfail.action") + " " + attributes.at("ngfail.failure_class")] += count;
    }
    // (the default policy's classes are named after the kinds they hold)
    EXPECT_EQ(by_action, (std::map<std::string, double>{{"retry transport_timeout", 2.0},
                                                        {"fail provider_oom_killed", 1.0}}));
}

}  // namespace
