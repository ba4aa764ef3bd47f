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

// An error's text as Go prints it (execd's messages): lower case first ("no such file or
// directory", "signal: killed"), where strerror and sigdescr begin in upper case.
[[nodiscard]] std::string go_error_text(std::string text);

// Runs `work` as `run` once its stream has sent `init`. A foreground run streams to its end;
// a background one ends the stream and runs on, its output kept for `/command/{id}/logs`.
// True when it runs on.
boost::asio::awaitable<bool> stream_process(context& c, exchange& x, const std::string& sandbox_id,
                                            const command_run& run, const process_work& work, bool background,
                                            std::optional<std::chrono::milliseconds> timeout);

// A bash session's run, as execd runs one: a fresh `bash` given the session's exported
// variables and directory, its stderr joined to its stdout, then told to print what it
// leaves (`export -p`, its directory) between markers that never reach the client. A
// command that ends the shell (`exit 3`, `set -e`) leaves the session as it was.
//
// Unlike execd's, the script is a file (a session's variables, quoted, may pass the 128 KiB
// an argument may hold), the command is `eval`ed (an unclosed quote or heredoc is its own
// syntax error, not the trailer's), values of any bytes come back (bash's $'…' quoting is
// read), and the markers carry a random token.
class session_run {
public:
    // The longest value execd carries over to the next run.
    static constexpr std::size_t max_kept_value = 8 * 1024;

    session_run(const shell_state& shell, std::string_view command);
    // The script that runs the command in the session, where it goes in the sandbox (it
    // removes itself once started), and the command line that runs it.
    [[nodiscard]] const std::string& script() const noexcept { return script_; }
    [[nodiscard]] const std::string& script_path() const noexcept { return script_path_; }
    [[nodiscard]] std::string command_line() const;
    // The events of the run's output that are the command's (none, one, or a blank line held
    // back and then the next), taking the markers' lines for the session's next state.
    [[nodiscard]] std::vector<std::string> command_output(std::string line);
    // What is held back once the output has ended.
    [[nodiscard]] std::vector<std::string> finish();
    // The session after the run: its variables and directory as the run left them, or
    // `before` when the run never printed them all.
    [[nodiscard]] shell_state after(const shell_state& before) const;

private:
    std::string marker_;  // unique to the run: no command's output imitates it by chance
    std::string script_path_;
    std::string script_;
    enum class reading { output, variables, after } reading_ = reading::output;
    bool blank_held_ = false;  // a blank line that may be the trailer's own
    std::vector<std::pair<std::string, std::string>> exported_{};
    std::optional<std::string> cwd_{};
    bool complete_ = false;
};

// Bash's quoting of any text: in single quotes, each of its own as '"'"'.
[[nodiscard]] std::string single_quoted(std::string_view text);

// Bash's quoting of a value in `declare -p` and `export -p`: "…" (with \\, \", \$ and \`) or
// $'…' (ANSI-C escapes); none for anything else.
[[nodiscard]] std::optional<std::string> bash_quoted_value(std::string_view quoted);

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
