// What every ngfail JSON reader shares, whatever it builds (a DOM, a report): the limits on
// input, one document and nothing after it, and errors that say where the text broke.
#pragma once

#include <ngfail/failure.hpp>
#include <ngfail/limits.hpp>

#include <boost/json/basic_parser.hpp>
#include <boost/json/error.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace ngfail::wire::detail {

inline failure protocol_violation(std::string reason) {
    return failure(event_info{.kind = kind::protocol_violation, .reason = std::move(reason)});
}

// The sizes Boost.JSON asks every handler for: its own maximums, as the handlers check the
// (smaller) limits themselves.
struct boost_json_sizes {
    static constexpr std::size_t max_object_size = boost::json::object::max_size();
    static constexpr std::size_t max_array_size = boost::json::array::max_size();
    static constexpr std::size_t max_key_size = boost::json::string::max_size();
    static constexpr std::size_t max_string_size = boost::json::string::max_size();
};

// The length limits a handler checks as strings and keys arrive (Boost.JSON reports the
// length so far with each part, so an oversized string stops at the limit).
class text_limits {
public:
    explicit text_limits(const limits& lim) noexcept
        : max_key_(lim.max_string_bytes), max_string_(std::max(lim.max_string_bytes, lim.max_reason_bytes)) {}

    // False, with the problem set, when over the limit.
    bool key_fits(std::size_t n, std::string& problem) const {
        return n <= max_key_ || too_long("a key", max_key_, problem);
    }
    bool string_fits(std::size_t n, std::string& problem) const {
        return n <= max_string_ || too_long("a string", max_string_, problem);
    }

private:
    [[gnu::noinline, gnu::cold]] static bool too_long(std::string_view what, std::size_t max, std::string& problem) {
        problem = std::string(what) + " is longer than " + std::to_string(max) + " bytes";
        return false;
    }
    std::size_t max_key_;
    std::size_t max_string_;
};

// Runs `parser` over the whole of `text` as one document. A handler that stops the parse
// sets `json_problem()` (or leaves it empty for a problem of its own, which its caller
// reports). The failure names the byte where reading stopped.
template <class Handler>
[[nodiscard]] result<void> parse_strict(boost::json::basic_parser<Handler>& parser, std::string_view text,
                                        const limits& lim) {
    if (text.size() > lim.max_json_bytes) {
        return protocol_violation("JSON: the document is " + std::to_string(text.size()) + " bytes; the limit is " +
                                  std::to_string(lim.max_json_bytes));
    }
    boost::json::error_code ec;
    const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
    if (!ec && consumed < text.size()) {
        return protocol_violation("JSON: trailing bytes after the document at byte " + std::to_string(consumed));
    }
    if (ec) {
        std::string problem = parser.handler().json_problem();
        if (problem.empty()) {
            problem = ec == boost::json::error::too_deep
                          ? "it nests deeper than " + std::to_string(lim.max_json_depth) + " levels"
                          : ec.message();
        }
        return protocol_violation("JSON: " + problem + " at byte " + std::to_string(consumed));
    }
    return boost::outcome_v2::success();
}

inline boost::json::parse_options strict_options(const limits& lim) noexcept {
    boost::json::parse_options options;
    options.max_depth = lim.max_json_depth;
    return options;
}

}  // namespace ngfail::wire::detail
