// A span's W3C trace context as a request carries it (internal to ngfail::otel, and used
// by the client benchmark's baseline so that both write it alike).
#pragma once

#include <opentelemetry/trace/span_context.h>

#include <array>
#include <string_view>

namespace ngfail::otel::detail {

// "00-<trace id>-<span id>-<flags>", written in place: the propagator's way, through a
// context and a carrier, cost a call a microsecond.
class traceparent {
public:
    // Empty for an invalid context (a span that is not sampled still has a valid one).
    std::string_view of(const opentelemetry::trace::SpanContext& span) noexcept {
        if (!span.IsValid()) return {};
        char* at = text_.data();
        *at++ = '0', *at++ = '0', *at++ = '-';
        span.trace_id().ToLowerBase16(opentelemetry::nostd::span<char, 32>(at, 32));
        at += 32;
        *at++ = '-';
        span.span_id().ToLowerBase16(opentelemetry::nostd::span<char, 16>(at, 16));
        at += 16;
        *at++ = '-';
        span.trace_flags().ToLowerBase16(opentelemetry::nostd::span<char, 2>(at, 2));
        return {text_.data(), text_.size()};
    }

private:
    std::array<char, 55> text_{};
};

}  // namespace ngfail::otel::detail
