// One attribute as the OpenTelemetry API takes a list of them, and std::string_view made
// its string (internal to ngfail::otel and the CLI's exporters).
#pragma once

#include <opentelemetry/common/attribute_value.h>
#include <opentelemetry/nostd/string_view.h>

#include <string_view>
#include <utility>

namespace ngfail::otel::detail {

using attribute = std::pair<opentelemetry::nostd::string_view, opentelemetry::common::AttributeValue>;

// OpenTelemetry's own string_view, which std::string_view does not convert to.
inline opentelemetry::nostd::string_view ot(std::string_view s) noexcept { return {s.data(), s.size()}; }

}  // namespace ngfail::otel::detail
