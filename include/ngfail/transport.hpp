// <ngfail/transport.hpp> — reports across HTTP: the header, the per-request log, and
// reports at the end of server-sent-event streams.
//
//   // server: one log per request
//   ngfail::request_failure_log log;
//   log.observe_failure(attempt_failure);            // a retry may still recover it
//   log.observe_reply(ngfail::decode_header(h).value());   // what another server sent
//   reply.set(ngfail::failure_header_name, ngfail::encode_header(log.finish(own_failure)));
//
//   // client
//   auto report = ngfail::decode_header(reply[ngfail::failure_header_name]);  // validated
//
// The header is sent on success and failure replies alike: a success reply still carries
// the failures it recovered from. See <ngfail/http.hpp> for Boost.Beast helpers.
#pragma once

#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>
#include <ngfail/result.hpp>

#include <mutex>
#include <optional>
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

// The failures one request observed while being served, and its report. Thread-safe: the
// request's concurrent sub-calls may all record into it.
class request_failure_log {
public:
    // At most `limits.max_events` observed events are kept; the newest beyond them are
    // dropped and counted in the report's `dropped_events`, as the header would drop them.
    explicit request_failure_log(const limits& limits = {});

    // A failure that a retry may still recover (it is reported as observed, not as the
    // request's own failure).
    void observe_failure(const failure& f);

    // The report of a reply from another server. An event id it shares with a different
    // record already observed is not merged; a `protocol_violation` saying so is observed.
    void observe_reply(const failure_report& report);

    // The report to send: the request's own failure (empty on success) with its chain, and
    // every observed failure.
    [[nodiscard]] failure_report finish(const failure& own = {}) const;

private:
    void add(const failure_report& observed);

    limits limits_;
    mutable std::mutex mutex_;
    failure_report observed_;
};

// The event name of a terminal failure report in an SSE stream; its data is the report JSON.
inline constexpr std::string_view sse_report_event = "ng-failure-report";

// Finds the failure report in a relayed server-sent-events stream, without changing the
// stream, whatever the chunking, with bounded memory (one event's data, at most
// `limits.max_json_bytes`). A leading byte order mark is ignored, as the SSE grammar says;
// an overlong comment or other field is skipped, while an overlong `data` line voids its
// event (a report is never half-read).
class sse_report_reader {
public:
    explicit sse_report_reader(const limits& limits = {});

    // Reads `chunk` and returns it unchanged, so relaying code can forward its result.
    std::string_view relay(std::string_view chunk);

    // The last `ng-failure-report` event's report, decoded and validated; nothing until one
    // has been read in full (its terminating blank line included).
    [[nodiscard]] const std::optional<result<failure_report>>& report() const noexcept { return report_; }

private:
    enum class overlong { data, event, other };

    std::string_view skip_bom(std::string_view chunk);
    void read(std::string_view chunk);
    [[nodiscard]] overlong field_of_overlong(std::string_view piece) const;
    void take_overlong_line();
    void take_line(std::string_view line);
    void dispatch();

    limits limits_;
    std::size_t bom_matched_ = 0;  // bytes of a leading byte order mark seen so far
    std::string line_;             // the unterminated line so far
    bool line_too_long_ = false;
    overlong overlong_field_ = overlong::other;
    bool after_cr_ = false;     // a CR was the last byte: a following LF ends nothing
    std::string event_;
    std::string data_;
    bool data_too_long_ = false;
    bool has_data_ = false;
    std::optional<result<failure_report>> report_;
};

}  // namespace ngfail
