// <ngfail/failure_header.hpp> — a report in the `X-NG-Failure-Report` HTTP header (target
// ngfail::wire):
//
//   reply.set(ngfail::failure_header_name, ngfail::encode_header(report));   // fits its cap
//   auto report = ngfail::decode_header(reply[ngfail::failure_header_name]); // validated
//
// The header is sent on success and failure replies alike: a success reply still carries
// the failures it recovered from. <ngfail/request_failure_log.hpp> gathers what one request
// saw; <ngfail/http.hpp> has the Boost.Beast helpers.
#pragma once

#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>
#include <ngfail/result.hpp>

#include <string>
#include <string_view>

namespace ngfail {

inline constexpr std::string_view failure_header_name = "X-NG-Failure-Report";

// The report's compact JSON, printable ASCII only, at most `limits.max_header_bytes`. When
// the report is larger it is cut, in this order, until it fits: observed events outside the
// failure's cause chain are dropped (newest first), reasons are shortened, the deepest
// causes are dropped, and the remaining strings are shortened. The `failure_id` event is
// never dropped; `dropped_events` says how many events were.
[[nodiscard]] std::string encode_header(const failure_report& report, const limits& limits = {});

// Reads and validates a header value; any problem is a `protocol_violation` failure.
[[nodiscard]] result<failure_report> decode_header(std::string_view value, const limits& limits = {});

}  // namespace ngfail
