// Reads execd's command event stream in any chunking: the SSE grammar (`data:` lines, a
// JSON object possibly spanning several, ended by a blank line; comments and other fields
// ignored) and execd's own framing (a bare JSON object per line). An event without a
// `type` is skipped, as the spec makes the field optional.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include <string>
#include <string_view>

namespace ngfail::opensandbox::detail {

class execd_stream {
public:
    explicit execd_stream(std::size_t max_output) : max_output_(max_output) {}

    // Reads more of the stream. Throws std::system_error(errc::malformed_response) on an
    // event that is not a JSON object, or on a line or event over the limit.
    void feed(std::string_view bytes);

    // The stream ended: reads a last unterminated line.
    void finish();

    // An `error` or `execution_complete` event was read.
    [[nodiscard]] bool terminal() const noexcept { return terminal_; }
    [[nodiscard]] const exec_result& result() const noexcept { return result_; }
    [[nodiscard]] exec_result take_result() { return std::move(result_); }

private:
    void take_line(std::string_view line);
    void take_event(std::string_view text);
    void append_output(std::string& to, std::string_view text);

    std::size_t max_output_;
    std::string line_;
    std::string data_;  // the `data:` lines of the event being read
    bool terminal_ = false;
    exec_result result_;
};

}  // namespace ngfail::opensandbox::detail
