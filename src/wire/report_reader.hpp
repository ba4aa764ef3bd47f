// Reads a report's JSON text straight into a `failure_report`: Boost.JSON's SAX parser
// drives a reader that knows the schema, so no DOM is built and copied from.
//
// Checked while reading: the JSON limits (`max_json_bytes`, `max_json_depth`, string and
// key lengths), strict JSON (UTF-8, no comments, one document), no duplicate key anywhere
// (unknown members included), and each field's type and presence. Not checked: the report's
// own rules (links, ranges, counts), which `validate` applies; kinds are not interned.
#pragma once

#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>
#include <ngfail/result.hpp>

#include <boost/json/value.hpp>

#include <string_view>

namespace ngfail::wire::detail {

// What the caller has already checked of a text: text known to be printable ASCII (a header
// value) cannot hold invalid UTF-8, so the parser skips that check.
enum class text_check { none, printable_ascii };

// A `protocol_violation` names what broke: "JSON: …" for the text, "failure report: <path>: …"
// for the schema.
[[nodiscard]] result<failure_report> read_report(std::string_view text, const limits& limits,
                                                 text_check checked = text_check::none);

// One event record on its own, as `to_json(const event_record&)` writes it.
[[nodiscard]] result<event_record> read_record(std::string_view text, const limits& limits);

// The same from a parsed value, with no text between: the reader walks the DOM. The same
// rules hold but the byte count (a DOM has no text to count; its strings and depth are
// bounded as the text's are), so a document and its parsed value read the same.
[[nodiscard]] result<failure_report> read_report(const boost::json::value& value, const limits& limits);
[[nodiscard]] result<event_record> read_record(const boost::json::value& value, const limits& limits);

// `report_from_json` for a text whose bytes the caller has checked.
[[nodiscard]] result<failure_report> report_from_json(std::string_view text, const limits& limits, text_check checked);

}  // namespace ngfail::wire::detail
