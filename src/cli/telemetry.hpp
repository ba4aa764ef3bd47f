// OpenTelemetry for one run of a command (`ngfail sandbox`, `ngfail demo`, `ngfail serve
// --otlp`): the SDK with OTLP/HTTP exporters, configured by the standard variables
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL = http/protobuf or http/json,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_METRIC_EXPORT_INTERVAL). What was recorded
// is exported when it ends. A build without OpenTelemetry has none (`available()` false).
#pragma once

#include <ngfail/opensandbox/call_observer.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace ngfail::cli {

class telemetry {
public:
    // True when this build can export (it was built with ngfail::otel).
    [[nodiscard]] static bool available() noexcept;

    // What in the OTEL_* variables this build cannot honour (a protocol but http/protobuf and
    // http/json, an export interval that is no number of milliseconds up to a day), said in
    // one line; nothing when they can be.
    [[nodiscard]] static std::optional<std::string> configuration_problem();

    // Exports when an OTLP endpoint variable is set, or always when `required` (then to the
    // default endpoint, http://localhost:4318, unless one is set); nullptr when it does not:
    // OTEL_SDK_DISABLED=true, a configuration problem (said on `err`), or a build without
    // OpenTelemetry. `service` is service.name unless OTEL_SERVICE_NAME says. Ending it
    // exports what is left within a few seconds, whether the collector answers or not.
    [[nodiscard]] static std::unique_ptr<telemetry> start(std::string_view service, bool required, std::ostream& err);

    virtual ~telemetry() = default;

    // An observer recording the client's spans and metrics (ngfail::otel's).
    [[nodiscard]] virtual std::shared_ptr<opensandbox::call_observer> client_observer() = 0;

    // What records execd's own metrics and a span for each execd request, as real execd
    // exports them: `execd.http.request.duration`, `execd.execution.duration`,
    // `execd.filesystem.operations.duration` (ms).
    [[nodiscard]] virtual std::function<void(const opensandbox::testing::execd_request_seen&)> execd_metrics() = 0;
};

}  // namespace ngfail::cli
