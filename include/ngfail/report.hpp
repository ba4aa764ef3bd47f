// <ngfail/report.hpp> — failures as data: what one reply forwards.
//
// A report holds the reply's own failure (`failure_id`, absent on success) and every
// failure observed while serving it (say, an attempt a retry recovered), each with its
// causes, as plain records linked by `cause_id`:
//
//   catch (...) {
//       ngfail::failure_report report = ngfail::report_for(std::current_exception());
//       ngfail::merge(report, observed).value();    // recovered attempts ride along
//       send(ngfail::encode_header(report));         // <ngfail/failure_header.hpp>
//   }
//   …
//   if (auto chain = ngfail::rebuild(report)) std::rethrow_exception(chain);   // same ids
//
// `validate` checks what arrives from the wire; `rebuild` turns a report back into the same
// exception chain, each level its own class.
#pragma once

#include <ngfail/details.hpp>
#include <ngfail/event_id.hpp>
#include <ngfail/limits.hpp>
#include <ngfail/result.hpp>

#include <cstddef>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <system_error>

namespace ngfail {

// The plain data of one event.
struct event_record {
    event_id id{};
    std::string kind{};        // the wire name, verbatim (unknown kinds are kept)
    std::error_code code{};    // `kind_from_name(kind)`
    std::string reason{};
    std::optional<ngfail::boundary> boundary{};
    std::optional<ngfail::stage> stage{};
    std::optional<int> http_status{};
    std::optional<event_id> cause_id{};
    event_details details{};

    friend bool operator==(const event_record&, const event_record&) = default;
};

struct failure_report {
    std::optional<event_id> failure_id{};          // the reply's own failure; absent on success
    std::map<event_id, event_record> events{};     // ordered by id, so output is deterministic
    std::size_t dropped_events = 0;                // dropped by a sender to fit its limits

    friend bool operator==(const failure_report&, const failure_report&) = default;
};

// One record per level of the explicit chain (`cause_chain`), linked by `cause_id`;
// `failure_id` is the outermost. Null or empty input gives the empty (success) report.
// A kind-only level has no id of its own, so it gets a fresh one here. A chain rebuilt
// from a report keeps that report's `dropped_events`, so the count travels on.
[[nodiscard]] failure_report report_for(const std::exception_ptr& e);
[[nodiscard]] failure_report report_for(const failure& f);

// The record of one event, without `cause_id`.
[[nodiscard]] event_record record_of(const failure& f);

// Adds the events of `observed` that `report` lacks, and its `dropped_events`; never changes
// `failure_id`. An id present in both with different records is two events claiming one
// identity: a `protocol_violation`, and `report` is left unchanged (nothing is overwritten).
[[nodiscard]] result<void> merge(failure_report& report, const failure_report& observed);

// Every key is a non-nil id equal to its record's, every `cause_id` resolves inside the map,
// no cycles, `failure_id` (if present) is in the map, numbers are in range (`http_status`
// 0–999, `retry_after` and `attempt` not negative), and the limits hold. The failure is a
// `protocol_violation` whose reason names the broken rule. Every reader applies it.
[[nodiscard]] result<void> validate(const failure_report& report, const limits& limits = {});

// The report as a writer sends it, so that `validate(truncate_to_limits(r, l), l)` always
// holds and every reader accepts what a writer wrote. In order: records with a nil or
// mismatched key are dropped; a missing `failure_id` record is replaced by an
// `undetermined` placeholder; out-of-range numbers are removed and strings cut (on a UTF-8
// boundary) to their limits; dangling links are removed and cycles opened; levels deeper
// than `max_chain_depth` are dropped; then, over `max_events`, observed events outside the
// failure's chain (newest first) and then its deepest causes. Every dropped event is
// counted in `dropped_events`; the `failure_id` event is never dropped.
[[nodiscard]] failure_report truncate_to_limits(failure_report report, const limits& limits = {});

// The exception chain of the `failure_id` event, each level its own class, ids unchanged,
// each cause nested; null for a success report. Reads only what `validate` accepts; an
// invalid report rebuilds as far as its links allow.
[[nodiscard]] std::exception_ptr rebuild(const failure_report& report);

// The same chain as a failure (the outermost level); empty for a success report.
[[nodiscard]] failure rebuild_failure(const failure_report& report);

}  // namespace ngfail
