// <ngfail/request_failure_log.hpp> — the failures one request observed while being served,
// and the report its reply carries (target ngfail::wire):
//
//   ngfail::request_failure_log log;                 // one per request
//   log.observe_failure(attempt_failure);            // a retry may still recover it
//   log.observe_reply(ngfail::decode_header(h).value());   // what another server sent
//   reply.set(ngfail::failure_header_name, ngfail::encode_header(log.finish(own_failure)));
#pragma once

#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>

#include <mutex>

namespace ngfail {

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

}  // namespace ngfail
