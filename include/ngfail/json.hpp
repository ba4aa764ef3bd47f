// <ngfail/json.hpp> — the JSON wire format of events and reports (docs/wire-format.md).
//
//   std::string text = ngfail::to_json(report);      // compact, deterministic, ASCII only
//   auto back = ngfail::report_from_json(text);      // result<failure_report>, validated
//
//   boost::json::value v = boost::json::value_from(report);          // tag_invoke
//   auto r = boost::json::value_to<ngfail::failure_report>(v);       // not validated; a bad
//                                // shape throws boost::system::system_error (code: its kind)
//
// An event record: {"event_id", "failure_kind", "failure_reason", "boundary", "stage",
// "http_status", "cause_id", "details": {"type": "sandbox" | "sdk_error" | "model", …}};
// a report: {"failure_id", "events": {"<id>": {…}}, "dropped_events"}. Absent optional
// fields are omitted, never null; `retry_after` travels as `retry_after_s` (seconds).
// Readers ignore unknown fields and keep unknown kind strings; they reject duplicate keys,
// invalid UTF-8, trailing bytes, and anything over `limits`. docs/wire-format.md has it all.
#pragma once

#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>
#include <ngfail/result.hpp>

#include <boost/json/fwd.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

namespace ngfail {

// ---- text ---------------------------------------------------------------------------------

// Compact JSON with events in ascending id order and fields in the documented order, so
// one report always gives the same bytes. ASCII only: other text is escaped as \uXXXX
// (invalid UTF-8 as \ufffd), control characters too. A report that `validate` would reject
// is written as `truncate_to_limits` makes it, so every reader accepts what is written.
[[nodiscard]] std::string to_json(const failure_report& report, const limits& limits = {});
[[nodiscard]] std::string to_json(const event_record& record);

// Parses, converts and validates (`validate`); any problem is a `protocol_violation`
// failure whose reason names it. Never crashes, hangs or allocates without bound.
[[nodiscard]] result<failure_report> report_from_json(std::string_view text, const limits& limits = {});

// Parses one JSON document with the limits and strictness of `report_from_json` (no
// duplicate keys, no trailing bytes, bounded depth, size and strings).
[[nodiscard]] result<boost::json::value> parse_json(std::string_view text, const limits& limits = {});

// Boost.JSON's compact serialisation of `value` with every character outside printable
// ASCII escaped as \uXXXX (DEL and the C1 controls included; invalid UTF-8 as \ufffd):
// valid JSON, whatever bytes its strings hold, that is safe to print on a terminal.
[[nodiscard]] std::string serialize_ascii(const boost::json::value& value);

// Converts and validates a parsed report value.
[[nodiscard]] result<failure_report> report_from_value(const boost::json::value& value, const limits& limits = {});

// ---- rollout rows -------------------------------------------------------------------------

// The keys under which NeMo Gym's collection stores a report beside a rollout's outcome.
inline constexpr std::string_view rollout_failure_id_key = "_ng_failure_id";
inline constexpr std::string_view rollout_failure_events_key = "_ng_failure_events";
// ngfail's own addition: how many events a writer dropped to fit the limits (when any).
inline constexpr std::string_view rollout_dropped_events_key = "_ng_failure_dropped_events";

// Adds the report to a rollout row (`_ng_failure_id` only when it failed), cut to `limits`
// as `truncate_to_limits` says, so that `rollout_report` reads back what was written.
void set_rollout_report(boost::json::object& row, const failure_report& report, const limits& limits = {});

// The report stored in a rollout row; the empty report when the row has none.
[[nodiscard]] result<failure_report> rollout_report(const boost::json::object& row, const limits& limits = {});

// ---- Boost.JSON conversions -------------------------------------------------------------------

void tag_invoke(const boost::json::value_from_tag&, boost::json::value& out, const event_record& record);
event_record tag_invoke(const boost::json::value_to_tag<event_record>&, const boost::json::value& in);
void tag_invoke(const boost::json::value_from_tag&, boost::json::value& out, const failure_report& report);
failure_report tag_invoke(const boost::json::value_to_tag<failure_report>&, const boost::json::value& in);

}  // namespace ngfail
