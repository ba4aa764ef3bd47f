// Reads execd's command event stream: one JSON object per line (with or without a
// `data:` prefix), blank lines between them, in any chunking.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include <string>
#include <string_view>

namespace ngfail::opensandbox::detail {

class execd_stream {
public:
    explicit execd_stream(std::size_t max_output) : max_output_(max_output) {}

    // Reads more of the stream. Throws std::system_error(errc::malformed_response) on an
    // event that is not a JSON object with a string `type`, or on a line over the limit.
    void feed(std::string_view bytes);

    // The stream ended: reads a last unterminated line.
    void finish();

    // An `error` or `execution_complete` event was read.
    [[nodiscard]] bool terminal() const noexcept { return terminal_; }
    [[nodiscard]] const exec_result& result() const noexcept { return result_; }
    [[nodiscard]] exec_result take_result() { return std::move(result_); }

private:
    void take_line(std::string_view line);
    void append_output(std::string& to, std::string_view text);

    std::size_t max_output_;
    std::string line_;
    bool terminal_ = false;
    exec_result result_;
};

}  // namespace ngfail::opensandbox::detail
