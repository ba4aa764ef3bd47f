#include "opensandbox/emulator/process/process_runs.hpp"

#include "opensandbox/emulator/process/process_kernel.hpp"

#include "text/utf8.hpp"

#include <ngfail/event_id.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {

std::vector<std::string> output_lines::add(std::string_view bytes) {
    std::vector<std::string> events;
    for (const char b : bytes) {
        if (b == '\n' || b == '\r') {
            if (!line_.empty()) {
                events.push_back(std::move(line_));
                line_.clear();
            } else if (!(b == '\n' && after_cr_)) {
                events.emplace_back("\n");  // a blank line, as execd surfaces it
            }
            after_cr_ = b == '\r';
            continue;
        }
        after_cr_ = false;
        line_ += b;
        if (line_.size() >= max_line) {
            // No piece holds half of a character.
            std::size_t cut = ngfail::text::complete_prefix(line_);
            if (cut == 0) cut = line_.size();
            events.push_back(line_.substr(0, cut));
            line_.erase(0, cut);
        }
    }
    return events;
}

std::optional<std::string> output_lines::finish() {
    if (line_.empty()) return std::nullopt;
    return std::exchange(line_, {});
}

std::string single_quoted(std::string_view text) {
    std::string quoted = "'";
    for (const char ch : text) quoted += ch == '\'' ? std::string_view(R"('"'"')") : std::string_view(&ch, 1);
    return quoted + "'";
}

namespace {

// A prompt's variables, which execd does not carry from one run to the next.
bool carried_over(std::string_view name, std::string_view value) {
    static constexpr std::array<std::string_view, 5> prompts{"PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"};
    return is_shell_name(name) && std::find(prompts.begin(), prompts.end(), name) == prompts.end() &&
           value.size() <= session_run::max_kept_value;
}

// ANSI-C quoting's escapes (bash's $'…'): the character each letter stands for.
constexpr std::array<std::pair<char, char>, 11> c_escapes{{{'a', '\a'}, {'b', '\b'}, {'e', '\x1b'}, {'E', '\x1b'},
                                                          {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'},
                                                          {'v', '\v'}, {'\\', '\\'}, {'\'', '\''}}};

std::optional<std::string> ansi_c_quoted(std::string_view body) {
    std::string value;
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '\\') {
            value += body[i];
            continue;
        }
        if (++i == body.size()) return std::nullopt;
        const char e = body[i];
        if (const auto* known = std::find_if(c_escapes.begin(), c_escapes.end(), [&](const auto& c) { return c.first == e; });
            known != c_escapes.end()) {
            value += known->second;
        } else if (e == '"' || e == '?') {
            value += e;
        } else if (e >= '0' && e <= '7') {  // up to three octal digits
            int code = 0;
            std::size_t digits = 0;
            for (; digits < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++digits, ++i) code = code * 8 + (body[i] - '0');
            --i;
            value += static_cast<char>(code & 0xff);
        } else if (e == 'x') {  // up to two hex digits
            int code = 0;
            std::size_t digits = 0;
            for (++i; digits < 2 && i < body.size() && std::isxdigit(static_cast<unsigned char>(body[i])) != 0; ++digits, ++i) {
                code = code * 16 + (std::isdigit(static_cast<unsigned char>(body[i])) != 0 ? body[i] - '0' : (body[i] | 0x20) - 'a' + 10);
            }
            --i;
            if (digits == 0) return std::nullopt;
            value += static_cast<char>(code);
        } else {
            return std::nullopt;  // \u, \c and the like: bash does not write them here
        }
    }
    return value;
}

// One line of `export -p` or `declare -p`: `declare -x NAME=VALUE`, `declare -- NAME=VALUE`
// or `declare -x NAME` (exported, no value). None for anything else.
std::optional<std::pair<std::string, std::string>> declared_variable(std::string_view line) {
    if (!line.starts_with("declare -")) return std::nullopt;
    const std::size_t space = line.find(' ', 9);
    if (space == std::string_view::npos) return std::nullopt;
    line.remove_prefix(space + 1);
    const std::size_t equals = line.find('=');
    std::string name(line.substr(0, equals));
    if (!is_shell_name(name)) return std::nullopt;
    if (equals == std::string_view::npos) return std::pair{std::move(name), std::string()};
    auto value = bash_quoted_value(line.substr(equals + 1));
    if (!value) return std::nullopt;
    return std::pair{std::move(name), std::move(*value)};
}

}  // namespace

std::string go_error_text(std::string text) {
    if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return text;
}

std::optional<std::string> bash_quoted_value(std::string_view quoted) {
    if (quoted.size() >= 3 && quoted.starts_with("$'") && quoted.back() == '\'') {
        return ansi_c_quoted(quoted.substr(2, quoted.size() - 3));
    }
    if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') return std::nullopt;
    quoted = quoted.substr(1, quoted.size() - 2);
    std::string value;
    for (std::size_t i = 0; i < quoted.size(); ++i) {
        if (quoted[i] == '\\' && i + 1 < quoted.size() && std::string_view("\\\"$`").find(quoted[i + 1]) != std::string_view::npos) ++i;
        value += quoted[i];
    }
    return value;
}

session_run::session_run(const shell_state& shell, std::string_view command)
    : marker_("__ngfail_" + to_string(event_id::generate())),
      // Named apart from the marker: bash names its script in its messages.
      script_path_("/tmp/.ngfail-session-" + to_string(event_id::generate()) + ".sh") {
    std::string& s = script_;
    s = "builtin command rm -f -- \"$0\"\nexec 2>&1\n";
    for (const auto& [name, value] : shell.env()) {
        if (carried_over(name, value)) s += "export " + name + "=" + single_quoted(value) + "\n";
    }
    if (!shell.cwd.empty()) s += "cd " + single_quoted(shell.cwd) + "\n";
    s += "__ngfail_command=" + single_quoted(command) + "\n";
    s += "eval \"$__ngfail_command\"\n";
    // The trailer: traced by none of the command's `set -x`, printed by bash's own builtins.
    s += "{ __ngfail_status=$?; set +xv; } 2>/dev/null\n";
    s += "builtin printf '\\n%s\\n' '" + marker_ + ":variables'\n";
    s += "builtin export -p\n";
    s += "__ngfail_directory=$(builtin pwd)\n";
    s += "builtin declare -p __ngfail_directory\n";
    s += "builtin printf '%s\\n' '" + marker_ + ":end'\n";
    s += "exit \"$__ngfail_status\"\n";
}

std::string session_run::command_line() const { return "exec bash --noprofile --norc " + script_path_; }

std::vector<std::string> session_run::command_output(std::string line) {
    std::vector<std::string> own;
    switch (reading_) {
    case reading::output:
        if (line == marker_ + ":variables") {
            // The blank line before it was the trailer's (its printf starts the marker's line)
            blank_held_ = false;
            reading_ = reading::variables;
            return own;
        }
        if (std::exchange(blank_held_, false)) own.emplace_back("\n");
        if (line == "\n") {
            blank_held_ = true;
        } else {
            own.push_back(std::move(line));
        }
        return own;
    case reading::variables:
        if (line == marker_ + ":end") {
            complete_ = true;
            reading_ = reading::after;
        } else if (auto variable = declared_variable(line)) {
            if (variable->first == "__ngfail_directory") {
                if (!variable->second.empty()) cwd_ = std::move(variable->second);
            } else if (line.starts_with("declare -x ")) {
                exported_.push_back(std::move(*variable));
            }
        }
        return own;
    case reading::after:
        return own;  // what a child it left running printed after the run
    }
    return own;
}

std::vector<std::string> session_run::finish() {
    std::vector<std::string> own;
    if (std::exchange(blank_held_, false)) own.emplace_back("\n");
    return own;
}

shell_state session_run::after(const shell_state& before) const {
    if (!complete_) return before;  // it never got to the end of its script
    shell_state next;
    next.cwd = cwd_.value_or(before.cwd);
    for (const auto& [name, value] : exported_) {
        if (carried_over(name, value)) (void)next.set(name, value);  // past 64 KiB in all: not kept
    }
    return next;
}

namespace {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;
using boost::asio::awaitable;
using descriptor = asio::posix::stream_descriptor;
using std::chrono::milliseconds;

// Linux's bound on one argument (MAX_ARG_STRLEN, its NUL included): bash -c gets the command
// as one.
constexpr std::size_t max_argument_bytes = 128 * 1024;
// How long an interrupted command has between SIGTERM and SIGKILL.
constexpr milliseconds interrupt_grace{3000};
// How often a run looks at its sandbox, its deadline and its peer while it prints nothing.
constexpr milliseconds look_every{50};

// A command's end as execd reports it, Go's way (exec.ExitError): its exit code and "exit
// status N", or -1 and "signal: killed" (os.ProcessState names signals in lower case).
struct reported_end {
    int exit_code = 0;
    std::string error{};
};

reported_end end_of(int status) {
    if (WIFSIGNALED(status)) {
        const char* said = ::sigdescr_np(WTERMSIG(status));
        return {-1, "signal: " + go_error_text(said ? said : "signal " + std::to_string(WTERMSIG(status)))};
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return {code, code == 0 ? "" : "exit status " + std::to_string(code)};
}

// A started command: its streams and its end event, owned; killed (its process group) if it
// is given up before it ended, and its exit then forgotten.
struct running_command {
    std::shared_ptr<process_sandbox> box;
    int id;
    descriptor out, err, ended;
    bool over = false;
    // A kernel outlives its cells: a run follows copies of its descriptors, leaves it
    // running, and interrupts it as Jupyter does (SIGINT, never a kill).
    bool kernel = false;

    running_command(std::shared_ptr<process_sandbox> b, const process_sandbox::started& s,
                    const asio::any_io_executor& ex, bool of_kernel = false)
        : box(std::move(b)), id(s.id), out(ex, s.stdout_fd), err(ex, s.stderr_fd), ended(ex, s.exit_fd),
          kernel(of_kernel) {
        if (s.stdin_fd >= 0) ::close(s.stdin_fd);
        for (descriptor* d : {&out, &err, &ended}) d->non_blocking(true);
    }
    running_command(const running_command&) = delete;
    running_command& operator=(const running_command&) = delete;
    ~running_command() {
        if (over || kernel) return;
        box->signal(id, SIGKILL);
        box->forget(id);
    }

    // Whether its end has come (the event is read, once).
    bool has_ended() {
        std::uint64_t count = 0;
        boost::system::error_code ec;
        return ended.read_some(asio::buffer(&count, sizeof count), ec) == sizeof count && !ec;
    }
};

// Done when `d` has something to read (or has closed); never when it is closed already.
awaitable<void> readable(descriptor& d) {
    if (d.is_open()) {
        co_await d.async_wait(descriptor::wait_read, asio::use_awaitable);
    } else {
        asio::steady_timer never(d.get_executor(), asio::steady_timer::time_point::max());
        co_await never.async_wait(asio::use_awaitable);
    }
}

// Where a followed command's output goes: a foreground run's stream (as events, a line each),
// or a background one's record in the store (raw, for its logs).
struct output_sink {
    context& c;
    exchange* x;  // none: a background run
    const std::string& sandbox_id;
    const std::string& run_id;
    session_run* session = nullptr;  // a session's run: its markers are taken out
    const std::function<void()>* before_last_event = nullptr;
    kernel_output* kernel = nullptr;  // a kernel's cell: its output as Jupyter streams it, its end taken out
    output_lines stdout_lines{}, stderr_lines{};

    awaitable<bool> send_events(std::string_view type, const std::vector<std::string>& events) {
        for (const std::string& event : events) {
            if (!co_await x->chunk(text_frame(type, event))) co_return false;
        }
        co_return true;
    }

    // A kernel gone quiet: what it printed so far goes out. False once the peer has gone.
    awaitable<bool> idle() {
        if (!kernel || !x) co_return true;
        co_return co_await send_events("stdout", kernel->idle(true)) && co_await send_events("stderr", kernel->idle(false));
    }

    // False once the peer has gone.
    awaitable<bool> send(std::string_view type, std::string_view bytes, bool last) {
        if (!x) {  // only a background command's output is asked for again (its logs)
            c.sandboxes.append_output(sandbox_id, run_id, bytes);
            co_return true;
        }
        if (kernel) {
            std::vector<std::string> events = kernel->add(type == "stdout", bytes);
            if (last) std::ranges::move(kernel->finish(type == "stdout"), std::back_inserter(events));
            co_return co_await send_events(type, events);
        }
        output_lines& lines = type == "stdout" ? stdout_lines : stderr_lines;
        std::vector<std::string> events = lines.add(bytes);
        if (last) {
            if (auto rest = lines.finish()) events.push_back(std::move(*rest));
        }
        if (session && type == "stdout") {
            std::vector<std::string> own;
            for (std::string& event : events) {
                for (std::string& e : session->command_output(std::move(event))) own.push_back(std::move(e));
            }
            if (last) {
                for (std::string& e : session->finish()) own.push_back(std::move(e));
            }
            events = std::move(own);
        }
        co_return co_await send_events(type, events);
    }
};

// Reads what `d` has now, at most 256 KiB (a command that fills its pipe without end must
// not keep the run from its timeout, its interrupt or its sandbox's going), to `sink`;
// closes `d` at its end. False once the peer has gone.
awaitable<bool> drain(descriptor& d, std::string_view type, output_sink& sink, bool last) {
    std::array<char, 64 * 1024> chunk{};
    for (int pieces = 0; d.is_open() && pieces < 4; ++pieces) {
        boost::system::error_code ec;
        const std::size_t n = d.read_some(asio::buffer(chunk), ec);
        if (ec == asio::error::would_block || ec == asio::error::try_again) break;
        const bool closed = ec || n == 0;
        if (closed) d.close();
        if (!co_await sink.send(type, std::string_view(chunk.data(), n), last || closed)) co_return false;
        if (closed || n < chunk.size()) break;
    }
    co_return true;
}

// The command started in `box`, its start awaited here rather than on a thread: a
// supervisor starved of CPU (a sandbox of 10m) answers in seconds, and a thread waiting for
// it is one no other sandbox has. Its answer's deadline is 10 s, as `start`'s.
awaitable<process_sandbox::started> started_command(process_sandbox& box, const process_command& command) {
    const process_sandbox::start_request asked = box.request_start(command);
    auto executor = co_await asio::this_coro::executor;
    descriptor ready(executor, asked.ready_fd);
    asio::steady_timer deadline(executor, std::chrono::seconds(10));
    co_await (readable(ready) || deadline.async_wait(asio::use_awaitable));
    auto out = box.finish_start(asked.id);
    if (!out) {
        box.abandon_start(asked.id);
        throw std::system_error(ETIMEDOUT, std::generic_category(), "the sandbox's supervisor does not answer");
    }
    co_return *out;
}

enum class followed { ended, cell_done, peer_gone, sandbox_gone };

// Follows `cmd` to its end, acting on its timeout, an interrupt and its sandbox's going as
// execd does, and sending pings on a foreground stream.
awaitable<followed> follow(context& c, running_command& cmd, output_sink& sink, std::optional<milliseconds> timeout) {
    const auto start = mono_clock::now();
    auto next_ping = start + c.options.ping_every;
    std::optional<mono_clock::time_point> kill_at;  // SIGKILL then: its timeout, or an interrupt's grace
    if (timeout) kill_at = start + *timeout;
    bool terminated = false;
    asio::steady_timer tick(co_await asio::this_coro::executor);
    for (;;) {
        const bool over = cmd.has_ended();
        // What it wrote before it ended is in the pipes now; what a child left running writes
        // later is not waited for (execd's stream ends when the command does).
        if (!co_await drain(cmd.out, "stdout", sink, over) || !co_await drain(cmd.err, "stderr", sink, over)) {
            co_return followed::peer_gone;
        }
        if (sink.x && (!co_await sink.x->flush() || sink.x->stream().peer_left())) co_return followed::peer_gone;
        if (over) co_return followed::ended;
        if (sink.kernel && sink.kernel->complete()) co_return followed::cell_done;
        const auto now = mono_clock::now();
        const command_fate fate = c.sandboxes.fate(sink.sandbox_id, sink.run_id);
        if (fate == command_fate::gone) co_return followed::sandbox_gone;
        if (fate == command_fate::interrupted && !terminated) {
            // A kernel that has not stopped its cell by the grace's end is killed as a command
            // is: its cell may trap SIGINT, or have broken the driver's loop.
            terminated = true;
            cmd.box->signal(cmd.id, cmd.kernel ? SIGINT : SIGTERM);
            kill_at = std::min(kill_at.value_or(now + interrupt_grace), now + interrupt_grace);
        }
        if (kill_at && now >= *kill_at) {
            cmd.box->signal(cmd.id, SIGKILL);
            kill_at.reset();
        }
        if (sink.x && now >= next_ping) {
            if (!co_await sink.x->chunk(ping_frame())) co_return followed::peer_gone;
            next_ping += c.options.ping_every;
        }
        auto until = now + look_every;
        if (sink.x) until = std::min(until, next_ping);
        if (kill_at) until = std::min(until, *kill_at);
        tick.expires_at(until);
        const auto woke = co_await (readable(cmd.out) || readable(cmd.err) || readable(cmd.ended) ||
                                    tick.async_wait(asio::use_awaitable));
        if (woke.index() == 3 && !co_await sink.idle()) co_return followed::peer_gone;
    }
}

// The command's end, recorded and (for a foreground run) sent; an OOM kill fails the sandbox.
awaitable<void> finish(context& c, running_command& cmd, output_sink& sink, std::int64_t oom_kills_before,
                       mono_clock::time_point started) {
    cmd.over = true;
    const int status = cmd.box->wait_status(cmd.id);  // at once: its end has come
    const reported_end end = end_of(status);
    // The kernel's count is the evidence, whoever it killed: a session's bash outlives the
    // command it ran, and reports the kill as status 137.
    if (cmd.box->oom_kills() > oom_kills_before) {
        fail_sandbox(c, sink.sandbox_id, c.profile.oom_killed);
        cmd.box->kill_all();
    }
    c.sandboxes.finish_command(sink.sandbox_id, sink.run_id, end.exit_code, end.error);
    if (sink.before_last_event && *sink.before_last_event) (*sink.before_last_event)();
    if (!sink.x) co_return;
    if (end.exit_code == 0) {
        co_await end_run(*sink.x, complete_frame(started));
    } else {
        co_await end_run(*sink.x, error_frame(std::to_string(end.exit_code), end.error));
    }
}

awaitable<void> run_in_background(context& c, std::shared_ptr<running_command> cmd, std::string sandbox_id,
                                  std::string run_id, std::int64_t oom_kills_before,
                                  std::optional<milliseconds> timeout) {
    output_sink sink{.c = c, .x = nullptr, .sandbox_id = sandbox_id, .run_id = run_id};
    const auto started = mono_clock::now();
    if (co_await follow(c, *cmd, sink, timeout) == followed::ended) {
        co_await finish(c, *cmd, sink, oom_kills_before, started);
    }
}

// What a cell whose kernel died (or never started) ends with.
end_frame dead_kernel_frame(std::string_view why) { return raised_frame({"DeadKernelError", std::string(why), {}}); }

// Sends `code` to the kernel, NUL-ended, within 10 s (a kernel that reads no cell, one
// frozen by a pause, does not hold the run for ever); EPIPE when it has gone.
awaitable<void> send_cell(descriptor& in, std::string_view code) {
    std::string cell(code);
    cell += '\0';
    asio::steady_timer deadline(in.get_executor(), std::chrono::seconds(10));
    const auto done = co_await (asio::async_write(in, asio::buffer(cell), asio::as_tuple(asio::use_awaitable)) ||
                                deadline.async_wait(asio::use_awaitable));
    if (done.index() == 1) throw std::system_error(ETIMEDOUT, std::generic_category(), "the kernel reads no cell");
    if (const auto [ec, n] = std::get<0>(done); ec) throw std::system_error(ec.value(), std::generic_category(), "the kernel's stdin");
}

// A cell in its context's kernel, as execd streams a Jupyter kernel's run: what the cell
// prints as it comes, then `execution_count`, the `result` if there is one, and `error`
// (what it raised) or `execution_complete`. The kernel starts at its context's first cell.
// A kernel that dies in a cell (its own exit, the OOM killer) ends the cell with
// `DeadKernelError` and the next cell has a new one; so does a cell whose request goes
// (execd would interrupt it and keep the kernel; here what the cell left behind must not
// reach the next one's stream).
awaitable<void> stream_cell(context& c, exchange& x, const std::string& sandbox_id, const command_run& run,
                            const process_work& work) {
    process_kernel& kernel = *work.kernel;
    const std::int64_t oom_kills_before = work.box->oom_kills();
    const auto started_at = mono_clock::now();
    std::shared_ptr<running_command> cmd;
    std::string why_not;
    try {
        const auto deleted = [] { return std::system_error(ECANCELED, std::generic_category(), "its context was deleted"); };
        if (!kernel.is_started() && !kernel.started(co_await started_command(*work.box, kernel.command()))) throw deleted();
        auto streams = kernel.streams();
        if (!streams) throw deleted();
        auto executor = co_await asio::this_coro::executor;
        descriptor in(executor, std::exchange(streams->stdin_fd, -1));
        cmd = std::make_shared<running_command>(work.box, *streams, executor, true);
        co_await send_cell(in, work.command.command);
    } catch (const std::exception& e) {
        cmd.reset();
        why_not = e.what();
    }
    if (!cmd) {
        kernel.kill();
        if (!work.box->alive()) fail_sandbox(c, sandbox_id, c.profile.crashed);
        c.sandboxes.finish_command(sandbox_id, run.id, -1, why_not);
        const end_frame last = dead_kernel_frame(why_not);  // not in the co_await: GCC 12
        co_await end_run(x, last);
        co_await x.end_stream();
        co_return;
    }
    kernel_output output(kernel.marker());
    output_sink sink{.c = c, .x = &x, .sandbox_id = sandbox_id, .run_id = run.id, .kernel = &output};
    const followed how = co_await follow(c, *cmd, sink, std::nullopt);
    if (how == followed::peer_gone || how == followed::sandbox_gone) {
        kernel.kill();
        x.close_connection();
        co_return;
    }
    // Its output is all in the pipes once its line has come (the driver flushed first).
    if (!co_await drain(cmd->out, "stdout", sink, true) || !co_await drain(cmd->err, "stderr", sink, true)) {
        kernel.kill();
        x.close_connection();
        co_return;
    }
    if (how == followed::ended || !output.outcome()) {
        const std::optional<int> status = kernel.reap();  // none: killed, its context deleted meanwhile
        const bool was_killed = !status;
        const reported_end end = end_of(status.value_or(SIGKILL));
        if (work.box->oom_kills() > oom_kills_before) {
            fail_sandbox(c, sandbox_id, c.profile.oom_killed);
            work.box->kill_all();
        }
        const bool interrupted = c.sandboxes.fate(sandbox_id, run.id) == command_fate::interrupted;
        const std::string why = was_killed     ? std::string("the kernel was shut down: its context was deleted")
                                : interrupted ? "the kernel did not stop at its interrupt within " +
                                                    std::to_string(interrupt_grace.count() / 1000) + " s, and was killed"
                                              : "the kernel died: " + (end.error.empty() ? "exit status 0" : end.error);
        c.sandboxes.finish_command(sandbox_id, run.id, end.exit_code == 0 ? -1 : end.exit_code, why);
        const end_frame last = dead_kernel_frame(why);
        co_await end_run(x, last);
        co_await x.end_stream();
        co_return;
    }
    const cell_outcome& outcome = *output.outcome();
    c.sandboxes.finish_command(sandbox_id, run.id, 0, "");
    co_await x.chunk(count_frame(outcome.execution_count));
    if (outcome.result) co_await x.chunk(result_frame(*outcome.result));
    if (outcome.raised) {
        co_await end_run(x, raised_frame(*outcome.raised));
    } else {
        co_await end_run(x, complete_frame(started_at));
    }
    co_await x.end_stream();
}

}  // namespace

awaitable<bool> stream_process(context& c, exchange& x, const std::string& sandbox_id, const command_run& run,
                               const process_work& work, bool background, std::optional<milliseconds> timeout) {
    if (!work.box) {  // the sandbox's processes went with it (a failed or expired sandbox)
        c.sandboxes.finish_command(sandbox_id, run.id, -1, "signal: killed");
        co_await end_run(x, error_frame("-1", "signal: killed"));
        co_await x.end_stream();
        co_return false;
    }
    if (work.kernel) {
        co_await stream_cell(c, x, sandbox_id, run, work);
        co_return false;
    }
    const std::int64_t oom_kills_before = work.box->oom_kills();
    const auto started_at = mono_clock::now();
    std::optional<process_sandbox::started> started;
    std::string why_not;
    if (work.command.command.size() >= max_argument_bytes) {
        why_not = "fork/exec /usr/bin/bash: argument list too long";  // Go's words for E2BIG
    } else {
        try {
            if (work.session) {
                co_await c.off_io([&] { work.box->write_file(work.session->script_path(), work.session->script(), 600); });
            }
            started = co_await started_command(*work.box, work.command);
        } catch (const std::exception& e) {
            why_not = e.what();
        }
    }
    if (!started && !work.box->alive()) fail_sandbox(c, sandbox_id, c.profile.crashed);  // its init died
    if (!started) {  // as execd reports a command that could not start: after `init`
        c.sandboxes.finish_command(sandbox_id, run.id, -1, why_not);
        co_await end_run(x, error_frame(why_not, why_not));
        co_await x.end_stream();
        co_return false;
    }
    auto cmd = std::make_shared<running_command>(work.box, *started, co_await asio::this_coro::executor);
    if (background) {  // execd completes a background command's run once it has started
        co_await end_run(x, complete_frame(started_at));
        co_await x.end_stream();
        asio::co_spawn(co_await asio::this_coro::executor,
                       run_in_background(c, std::move(cmd), sandbox_id, run.id, oom_kills_before, timeout),
                       asio::detached);
        co_return true;
    }
    output_sink sink{.c = c, .x = &x, .sandbox_id = sandbox_id, .run_id = run.id, .session = work.session.get(),
                     .before_last_event = &work.before_last_event};
    const followed how = co_await follow(c, *cmd, sink, timeout);
    if (how == followed::ended) {
        co_await finish(c, *cmd, sink, oom_kills_before, started_at);
        co_await x.end_stream();
    } else {
        x.close_connection();  // its peer or its pod is gone; `cmd` kills what it left running
    }
    co_return false;
}

}  // namespace ngfail::opensandbox::testing::detail
