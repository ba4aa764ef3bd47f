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

namespace ngfail::detail {

// A `protocol_violation` names what broke: "JSON: …" for the text, "failure report: <path>: …"
// for the schema.
[[nodiscard]] result<failure_report> read_report(std::string_view text, const limits& limits);

// One event record on its own, as `to_json(const event_record&)` writes it.
[[nodiscard]] result<event_record> read_record(std::string_view text, const limits& limits);

// The same from a parsed value, with no text between: the reader walks the DOM. The same
// rules hold but the byte count (a DOM has no text to count; its strings and depth are
// bounded as the text's are), so a document and its parsed value read the same.
[[nodiscard]] result<failure_report> read_report(const boost::json::value& value, const limits& limits);
[[nodiscard]] result<event_record> read_record(const boost::json::value& value, const limits& limits);

}  // namespace ngfail::detail
