// A real command run in the process runtime's sandbox, as execd runs one: its output sent a
// line per event as it comes (execd tails its log files by line), its end as
// `execution_complete` or `error` with Go's text ("exit status 3", "signal: killed"); killed
// (its process group, SIGKILL) when its timeout passes or its request goes; an interrupt
// sends SIGTERM, then SIGKILL if it still runs. A kill the kernel counts as an OOM kill fails
// the sandbox as the backend reports one.
#pragma once

#include "opensandbox/emulator/run_stream.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

// Runs `work` as `run` once its stream has sent `init`. A foreground run streams to its end;
// a background one ends the stream and runs on, its output kept for `/command/{id}/logs`.
// True when it runs on.
boost::asio::awaitable<bool> stream_process(context& c, exchange& x, const std::string& sandbox_id,
                                            const command_run& run, const process_work& work, bool background,
                                            std::optional<std::chrono::milliseconds> timeout);

// A bash session's run, as execd runs one: a fresh `bash` given the session's exported
// variables and directory, its stderr joined to its stdout, then told to print what it
// leaves (`export -p`, `pwd`, its status) between markers that never reach the client. A
// command that ends the shell (`exit 3`) leaves the session as it was.
class session_run {
public:
    // The variables execd does not carry over (a prompt's), and the longest value it does.
    static constexpr std::size_t max_kept_value = 8 * 1024;

    explicit session_run(const shell_state& shell);
    // What bash is given to run `command` in the session.
    [[nodiscard]] std::string script(std::string_view command) const;
    // Whether an event of the run's output is the command's (else a marker's, kept here).
    // A line the command left without its end arrives with the first marker after it: its
    // text is returned for sending.
    [[nodiscard]] std::optional<std::string> command_output(std::string line);
    // The session after the run: its variables and directory as the run left them, or
    // `before` when the run never printed them.
    [[nodiscard]] shell_state after(const shell_state& before) const;

private:
    shell_state shell_;
    std::string marker_;  // unique to the run: no command's output imitates it
    enum class reading { output, variables, after } reading_ = reading::output;
    std::vector<std::string> exported_{};
    std::optional<std::string> cwd_{};
    bool complete_ = false;
};

// Output cut into the events execd sends: a line each, without its terminator (`\n`, `\r`
// or `\r\n`); an empty line as "\n". A line longer than `max_line` is sent in pieces (execd
// keeps any line whole; this keeps a server's memory bounded).
class output_lines {
public:
    static constexpr std::size_t max_line = 64 * 1024;
    // The events `bytes` completes.
    [[nodiscard]] std::vector<std::string> add(std::string_view bytes);
    // What is left once the output has ended: the last line, if it had no terminator.
    [[nodiscard]] std::optional<std::string> finish();

private:
    std::string line_;
    bool after_cr_ = false;
};

}  // namespace ngfail::opensandbox::testing::detail
