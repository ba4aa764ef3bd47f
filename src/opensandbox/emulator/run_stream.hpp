// A run streamed as execd streams it, shared by every route that runs something: commands
// (POST /command), bash session runs (POST /session/{id}/run) and code runs (POST /code).
// The stream is one `init`, a `ping`, the output, then `execution_complete` or `error`;
// faults act at the points their names say.
#pragma once

#include "context.hpp"
#include "opensandbox/emulator/process/process_sandbox.hpp"
#include "simulated_shell.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

// execd's event frames: one JSON object and a blank line, stamped with the time.
[[nodiscard]] std::string ping_frame();
[[nodiscard]] std::string text_frame(std::string_view type, std::string_view text);  // stdout, stderr, init
// A run's last event, `execution_complete` or the error it ended with, and which of the two:
// sent with `end_run`, which tells the exchange how the run ended (execd's execution metric
// records it) and sends nothing when the exchange withholds the last event (a fault).
struct end_frame {
    std::string text;
    bool succeeded = false;
};
[[nodiscard]] end_frame complete_frame(std::chrono::steady_clock::time_point started);  // the run took since then
// A command's failure, as execd's command runner reports it (CommandExecError).
[[nodiscard]] end_frame error_frame(std::string_view evalue, std::string_view traceback);
// What a kernel's cell raised; its cell number; its last expression's value (execd renames
// Jupyter's "text/plain" to "text").
[[nodiscard]] end_frame raised_frame(const raised_error& raised);
boost::asio::awaitable<bool> end_run(exchange& x, const end_frame& last);
[[nodiscard]] std::string count_frame(int count);
[[nodiscard]] std::string result_frame(std::string_view text);

// The sandbox fails as `shape` says (an OOM kill, a crash), its own address with it.
void fail_sandbox(context& c, const std::string& sandbox_id, const status_shape& shape);

// What a run does once its stream has begun: a plan the simulated runtime works out, or a
// real command in the process runtime's sandbox.
class session_run;     // process/process_runs.hpp
class process_kernel;  // process/process_kernel.hpp
struct process_work {
    std::shared_ptr<process_sandbox> box;
    process_command command;
    std::shared_ptr<session_run> session{};  // a bash session's run: what it leaves is read here
    // A code context's cell: `command.command` is its code, which this kernel runs.
    std::shared_ptr<process_kernel> kernel{};
    // Called once the command has ended, before its last event goes out: a session's state is
    // kept then, as the caller may send its next run the moment it reads that event.
    std::function<void()> before_last_event{};
};
// A plan is worked out on a worker thread unless it is `light`: a worker's round trip costs
// more than a short command's whole run, and most commands are short.
struct simulated_work {
    std::function<simulated_run()> plan;
    bool light = false;
};
using run_work = std::variant<simulated_work, process_work>;

// A shell's command line up to this size, with at most a few expansions, no command
// substitution and no `cat`, is light: a few copies of the shell's 64 KiB of variables,
// microseconds on any build. Each `$` may copy 64 KiB (120 of them made 7.7 MB four times
// over); `cat` may print a 16 MiB file, whose fresh pages alone took 100 ms of the
// connection's thread on these machines; a substitution splits what it substitutes (up to
// 16 MiB, each level again: seconds); a kernel's code is never light (its names are
// unbounded copies). Erring on the heavy side costs only a worker's round trip.
inline constexpr std::size_t light_command_bytes = 256;
inline constexpr std::size_t light_expansions = 8;
[[nodiscard]] inline simulated_work shell_work(std::string_view command, std::function<simulated_run()> plan) {
    if (command.size() > light_command_bytes) return {.plan = std::move(plan)};  // never scanned here: it may be 64 MB
    const bool substitutes = command.find("$(") != std::string_view::npos || command.find('`') != std::string_view::npos;
    const bool reads_files = command.find("cat") != std::string_view::npos;
    const auto expansions = static_cast<std::size_t>(std::count(command.begin(), command.end(), '$'));
    return {.plan = std::move(plan), .light = !substitutes && !reads_files && expansions <= light_expansions};
}

[[nodiscard]] std::int64_t now_ms();

// What the process runtime can give a process: no NUL, which ends the string a process is
// given (what follows it would be lost, or misread), and a directory Linux can name. Anything
// else is refused with a 400 (`unpassable`) before anything starts.
[[nodiscard]] bool passable(std::string_view cwd, std::initializer_list<std::string_view> texts,
                            const std::vector<std::string>& envs = {});
inline constexpr std::string_view unpassable =
    "error parsing request. command, cwd and envs may not hold a NUL byte, nor cwd pass 4096 bytes";

// Makes `directory` (as mkdir -p; nothing for an empty one) in the process runtime's sandbox,
// as execd makes a session's or a context's: empty when made, else Go's *PathError text.
boost::asio::awaitable<std::string> make_real_directory(context& c, const call& k, const std::string& directory);

// The request's body as JSON (null when it is not JSON); a large body is parsed off the
// connection threads, as a run's work is.
boost::asio::awaitable<boost::json::value> body_json(context& c, const exchange& x);

// execd's 400 for a body it cannot use.
[[nodiscard]] response invalid_request(const context& c, const exchange& x, std::string_view message);

// execd's `timeout` (milliseconds): none when absent, null or not positive; a huge one
// saturates at the longest wait; std::nullopt when it is not a whole number.
[[nodiscard]] std::optional<std::optional<std::chrono::milliseconds>> exec_timeout(const boost::json::object& o);

// The sandbox's files, as `simulate` reads them.
[[nodiscard]] file_reader files_of(context& c, const call& k);

// Starts a run of `text`; answers the refusal itself (no sandbox, too many running) and
// gives none.
boost::asio::awaitable<std::optional<command_run>> start_run(context& c, exchange& x, const call& k,
                                                             std::string_view text, bool background);

// Streams the started `run`: `init` carries `init_text` (the run's id, a session's, a code
// context's); `work` says what the run does, and is done only when the run gets that far
// (a fault may end the stream before). A background run ends the stream after `init` and
// runs on; a foreground one runs to its end, until its timeout kills it or an interrupt
// ends it.
boost::asio::awaitable<void> stream_run(context& c, exchange& x, call& k, const command_run& run,
                                        std::string_view init_text, const run_work& work, bool background,
                                        std::optional<std::chrono::milliseconds> timeout);

}  // namespace ngfail::opensandbox::testing::detail
