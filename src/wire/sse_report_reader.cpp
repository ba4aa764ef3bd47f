#include <ngfail/sse_report_reader.hpp>

#include "wire/strict_json.hpp"

#include <ngfail/json.hpp>

#include <algorithm>
#include <cstring>

namespace ngfail {

sse_report_reader::sse_report_reader(const limits& lim) : limits_(lim) {}

std::string_view sse_report_reader::relay(std::string_view chunk) {
    read(skip_bom(chunk));
    return chunk;
}

// A stream may start with a UTF-8 byte order mark, which the SSE grammar ignores; it may
// arrive split across chunks.
std::string_view sse_report_reader::skip_bom(std::string_view chunk) {
    static constexpr std::string_view bom = "\xEF\xBB\xBF";
    while (bom_matched_ < bom.size() && !chunk.empty()) {
        if (chunk.front() != bom[bom_matched_]) {
            read(bom.substr(0, bom_matched_));  // not a BOM after all: those bytes are the stream's
            bom_matched_ = bom.size();
            break;
        }
        ++bom_matched_;
        chunk.remove_prefix(1);
    }
    return chunk;
}

void sse_report_reader::read(std::string_view chunk) {
    const std::size_t max_line = limits_.max_json_bytes + 64;
    std::size_t i = 0;
    while (i < chunk.size()) {
        if (after_cr_) {
            after_cr_ = false;
            if (chunk[i] == '\n') {
                ++i;
                continue;
            }
        }
        const std::size_t end = chunk.find_first_of("\r\n", i);
        const std::string_view piece = chunk.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
        if (!line_too_long_ && line_.size() + piece.size() > max_line) {
            line_too_long_ = true;
            overlong_field_ = field_of_overlong(piece);
            line_.clear();
            line_.shrink_to_fit();
        }
        if (!line_too_long_) line_.append(piece);
        if (end == std::string_view::npos) break;
        if (line_too_long_) {
            take_overlong_line();
            line_too_long_ = false;
        } else {
            take_line(line_);
        }
        line_.clear();
        after_cr_ = chunk[end] == '\r';
        i = end + 1;
    }
}

// Which field a line over the limit was, from its first bytes: only an overlong `data` line
// may have been the report's (never half-read it); a comment or another field is skipped.
sse_report_reader::overlong sse_report_reader::field_of_overlong(std::string_view piece) const {
    std::string start = line_.substr(0, 6);
    start.append(piece.substr(0, 6 - start.size()));
    const auto is_field = [&](std::string_view name) {
        return start.starts_with(name) && (start.size() == name.size() || start[name.size()] == ':');
    };
    if (is_field("data")) return overlong::data;
    if (is_field("event")) return overlong::event;
    return overlong::other;
}

void sse_report_reader::take_overlong_line() {
    if (overlong_field_ == overlong::data) data_too_long_ = true;
    if (overlong_field_ == overlong::event) event_.assign("(an event name over the line limit)");
}

void sse_report_reader::take_line(std::string_view line) {
    if (line.empty()) {
        dispatch();
        return;
    }
    if (line.front() == ':') return;  // a comment
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "event") {
        event_.assign(value);
    } else if (field == "data" && !data_too_long_) {
        if (has_data_) data_ += '\n';
        data_.append(value);
        has_data_ = true;
        if (data_.size() > limits_.max_json_bytes) {
            data_too_long_ = true;
            data_.clear();
        }
    }
}

void sse_report_reader::dispatch() {
    if (event_ == sse_report_event) {
        report_ = data_too_long_ ? result<failure_report>(wire::detail::protocol_violation(
                                       "SSE failure report: the data is over " + std::to_string(limits_.max_json_bytes) +
                                       " bytes"))
                                 : report_from_json(data_, limits_);
    }
    event_.clear();
    data_.clear();
    has_data_ = false;
    data_too_long_ = false;
}

}  // namespace ngfail
