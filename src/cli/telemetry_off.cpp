// A build without OpenTelemetry (NGFAIL_WITH_OTEL off, or opentelemetry-cpp not found).
#include "telemetry.hpp"

namespace ngfail::cli {

bool telemetry::available() noexcept { return false; }

std::optional<std::string> telemetry::configuration_problem() { return std::nullopt; }

std::unique_ptr<telemetry> telemetry::start(std::string_view, bool, std::ostream&) { return nullptr; }

}  // namespace ngfail::cli
