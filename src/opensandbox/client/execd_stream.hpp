// Reads execd's command event stream in any chunking: the SSE grammar (`data:` lines, a
// JSON object possibly spanning several, ended by a blank line; comments and other fields
// ignored) and execd's own framing (a bare JSON object per line). An event without a
// `type` is skipped, as the spec makes the field optional.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include <boost/json/object.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::detail {

// Receive the command's output as it arrives.
struct output_callbacks {
    std::function<void(std::string_view)> on_stdout{};
    std::function<void(std::string_view)> on_stderr{};
};

// What a code run's stream says beyond a command's: the kernel's cell number, the last
// expression's value by MIME type, and what the code raised.
struct code_parts {
    std::optional<int> execution_count{};
    std::map<std::string, std::string> results{};
    std::optional<std::string> error_name{};  // the error event's `ename`
    std::vector<std::string> traceback{};
};

class execd_stream {
public:
    explicit execd_stream(std::size_t max_output, output_callbacks callbacks = {})
        : max_output_(max_output), callbacks_(std::move(callbacks)) {}

    // Reads more of the stream. Throws std::system_error(errc::malformed_response) on an
    // event that is not a JSON object, or on a line or event over the limit, and
    // std::system_error(errc::cancelled) when an output callback throws.
    void feed(std::string_view bytes);

    // The stream ended: reads a last unterminated line.
    void finish();

    // An `error` or `execution_complete` event was read.
    [[nodiscard]] bool terminal() const noexcept { return terminal_; }
    [[nodiscard]] const exec_result& result() const noexcept { return result_; }
    [[nodiscard]] exec_result take_result() { return std::move(result_); }
    [[nodiscard]] code_parts take_code() { return std::move(code_); }
    void clear_exit_code() noexcept { result_.exit_code.reset(); }

private:
    void take_line(std::string_view line);
    class event_head;  // a parser handler reading an event's type and text
    void take_event(std::string_view text);
    // An event exactly as execd writes its simple ones, read without a parser; false (and
    // nothing taken) for anything else.
    bool take_plain_event(std::string_view text);
    // An event whose type and text are all it is made of (init, stdout, stderr,
    // execution_complete; ping and status carry nothing to keep).
    void take_simple_event(std::string_view type, std::string_view text);
    void append_output(std::string& to, std::string_view text);
    void append_line(std::string& to, std::string_view text);  // one stdout or stderr event
    void take_results(const boost::json::object& results);
    void take_error(const boost::json::object& error);
    static void deliver(const std::function<void(std::string_view)>& callback, std::string_view text);

    std::size_t max_output_;
    output_callbacks callbacks_;
    std::string line_;
    std::string data_;  // the `data:` lines of the event being read
    std::string unescaped_;  // a plain event's text, when it had escapes
    bool terminal_ = false;
    exec_result result_;
    code_parts code_;
    std::size_t results_bytes_ = 0;  // the types and values in code_.results
};

}  // namespace ngfail::opensandbox::detail
