// <ngfail/sse_report_reader.hpp> — the failure report at the end of a server-sent-events
// stream, found while the stream is relayed unchanged (target ngfail::wire):
//
//   ngfail::sse_report_reader reader;
//   downstream.write(reader.relay(chunk));           // for every chunk, as it arrives
//   if (const auto& report = reader.report()) use(*report);   // once the event has ended
#pragma once

#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>
#include <ngfail/result.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace ngfail {

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
