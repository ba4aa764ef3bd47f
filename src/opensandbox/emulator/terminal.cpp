// The simulated terminal (see terminal.hpp).
#include "terminal.hpp"

#include "simulated_shell.hpp"

#include <algorithm>
#include <charconv>

namespace ngfail::opensandbox::testing::detail {

// ---- output_history ---------------------------------------------------------------------------

std::int64_t output_history::oldest() const noexcept {
    const auto kept = static_cast<std::int64_t>(capacity_);
    return end_ > kept ? end_ - kept : 0;
}

void output_history::append(std::string_view bytes, terminal_channel channel) {
    if (bytes.empty() || capacity_ == 0) return;
    if (changes_.empty() || changes_.back().second != channel) changes_.emplace_back(end_, channel);
    if (bytes.size() > capacity_) {  // only the newest `capacity_` bytes can be kept
        end_ += static_cast<std::int64_t>(bytes.size() - capacity_);
        bytes.remove_prefix(bytes.size() - capacity_);
        ring_.resize(capacity_);
    }
    while (!bytes.empty()) {
        const std::size_t at = static_cast<std::size_t>(end_) % capacity_;
        const std::size_t n = std::min(bytes.size(), capacity_ - at);
        if (at == ring_.size()) {
            ring_.append(bytes.substr(0, n));  // still growing
        } else {
            ring_.replace(at, n, bytes.substr(0, n));
        }
        end_ += static_cast<std::int64_t>(n);
        bytes.remove_prefix(n);
    }
    while (changes_.size() >= 2 && changes_[1].first <= oldest()) changes_.pop_front();
}

terminal_channel output_history::channel_at(std::int64_t offset) const noexcept {
    terminal_channel channel = terminal_channel::stdout_bytes;
    for (const auto& [from, which] : changes_) {
        if (from > offset) break;
        channel = which;
    }
    return channel;
}

// Kept bytes [from, to): at most two runs of the ring.
std::string output_history::bytes(std::int64_t from, std::int64_t to) const {
    std::string out;
    out.reserve(static_cast<std::size_t>(to - from));
    for (std::int64_t o = from; o < to;) {
        const std::size_t at = static_cast<std::size_t>(o) % capacity_;
        const std::size_t n = std::min(static_cast<std::size_t>(to - o), capacity_ - at);
        out.append(ring_, at, n);
        o += static_cast<std::int64_t>(n);
    }
    return out;
}

output_history::slice output_history::since(std::int64_t from) const {
    from = std::clamp(from, oldest(), end_);
    return {.offset = from, .bytes = bytes(from, end_)};
}

output_history::piece output_history::next(std::int64_t from, std::size_t most) const {
    from = std::clamp(from, oldest(), end_);
    std::int64_t to = std::min(end_, from + static_cast<std::int64_t>(most));
    for (const auto& change : changes_) {
        if (change.first > from) {
            to = std::min(to, change.first);
            break;
        }
    }
    return {.channel = channel_at(from), .offset = from, .bytes = bytes(from, to)};
}

// ---- simulated_terminal -----------------------------------------------------------------------

namespace {

// What a terminal's line discipline makes of output (ONLCR): "\n" goes out as "\r\n".
std::string on_a_terminal(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    for (const char ch : text) {
        if (ch == '\n') out += '\r';
        out += ch;
    }
    return out;
}

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// `exit` or `exit N`: the shell's own end, not a command's.
std::optional<int> shell_exit(std::string_view line) {
    if (line == "exit") return 0;
    if (!line.starts_with("exit ")) return std::nullopt;
    const std::string_view code = trimmed(line.substr(5));
    int n = 0;
    const auto [end, ec] = std::from_chars(code.data(), code.data() + code.size(), n);
    if (ec != std::errc() || end != code.data() + code.size()) return std::nullopt;
    return n & 0xff;  // as a process's exit status
}

}  // namespace

std::optional<std::uint64_t> terminal_session::attach(bool takeover) noexcept {
    if (holder_ != 0 && !takeover) return std::nullopt;
    holder_ = ++holders_;
    return holder_;
}

void terminal_session::release(std::uint64_t holder) noexcept {
    if (holder_ == holder) holder_ = 0;
}

simulated_terminal::simulated_terminal(std::string cwd, std::string command, std::size_t history)
    : command_(std::move(command)), output_(history), history_(history) {
    if (!cwd.empty()) shell_.cwd = file_tree::normal(cwd);
}


void simulated_terminal::write(std::string_view text, terminal_channel channel) {
    if (text.size() > history_) text.remove_prefix(text.size() - history_);
    if (pipe_) {
        output_.append(text, channel);
    } else {
        output_.append(on_a_terminal(text), terminal_channel::stdout_bytes);  // one stream on a terminal
    }
}

void simulated_terminal::prompt() {
    if (!pipe_ && command_.empty()) write("$ ", terminal_channel::stdout_bytes);  // bash --norc's, shortened
}

void simulated_terminal::start(bool pipe, mono_clock::time_point now, const file_tree& files) {
    if (running_) return;
    running_ = true;
    pipe_ = pipe;
    ++runs_;
    exit_code_ = -1;
    busy_.reset();
    clear_input();
    if (!command_.empty()) {
        typed_ = command_ + "\n";  // bash -c: the command, then the shell's end
        advance(now, files);
    } else {
        prompt();
    }
}

void simulated_terminal::type(std::string_view bytes, mono_clock::time_point now, const file_tree& files) {
    if (!running_) return;
    std::string echo;  // a terminal echoes what is typed; a pipe does not
    for (const char ch : bytes) {
        if (!pipe_ && ch == '\x03') {  // ^C: the terminal's interrupt character (ISIG)
            write(echo + "^C", terminal_channel::stdout_bytes);
            echo.clear();
            const bool at_the_prompt = !busy_;
            signal("SIGINT", now, files);
            if (at_the_prompt) {  // bash drops the line and prompts again
                write("\n", terminal_channel::stdout_bytes);
                prompt();
            }
            continue;
        }
        if (typed_.size() - typed_from_ >= typed_ahead_bytes) continue;
        const char as_typed = ch == '\r' ? '\n' : ch;  // ICRNL: Enter sends CR, the shell reads LF
        if (!pipe_) echo += as_typed;
        typed_ += as_typed;
    }
    write(echo, terminal_channel::stdout_bytes);
    advance(now, files);
}

void simulated_terminal::signal(std::string_view name, mono_clock::time_point now, const file_tree& files) {
    if (!running_) return;
    if (name == "SIGKILL" || name == "SIGHUP") {
        exit_with(-1);  // killed by a signal: Go's ExitCode() is -1
        return;
    }
    if (name != "SIGINT" && name != "SIGTERM" && name != "SIGQUIT") return;
    clear_input();
    if (busy_) {
        busy_.reset();
        if (!command_.empty()) {
            exit_with(-1);
            return;
        }
        if (!pipe_) write("\n", terminal_channel::stdout_bytes);
        prompt();
    }
    advance(now, files);
}

void simulated_terminal::resize(int cols, int rows) noexcept {
    cols_ = cols;
    rows_ = rows;
}

void simulated_terminal::kill() noexcept {
    if (running_) exit_with(-1);
}

void simulated_terminal::exit_with(int code) {
    running_ = false;
    exit_code_ = code;
    busy_.reset();
    clear_input();
}

void simulated_terminal::run_next(mono_clock::time_point now, const file_tree& files) {
    const std::string_view pending = pending_input();
    const auto newline = pending.find('\n');
    const std::string line(trimmed(pending.substr(0, newline)));
    typed_from_ += newline + 1;
    if (typed_from_ * 2 >= typed_.size()) {
        typed_.erase(0, typed_from_);
        typed_from_ = 0;
    }
    line_run next{.done_at = now};
    if (const auto code = shell_exit(line)) {
        next.shell_exit = code;
    } else if (line == "stty size") {
        next.out = std::to_string(rows_) + " " + std::to_string(cols_) + "\n";
    } else if (!line.empty()) {
        simulated_run ran = simulate(line, reader_of(files), &shell_);
        next.out = std::move(ran.stdout_text);
        next.err = std::move(ran.stderr_text);
        next.exit_code = ran.exit_code;
        next.done_at = now + ran.runs_for;
    }
    busy_ = std::move(next);
}

void simulated_terminal::advance(mono_clock::time_point now, const file_tree& files) {
    while (running_) {
        if (busy_) {
            if (now < busy_->done_at) return;
            line_run done = std::move(*busy_);
            busy_.reset();
            write(done.out, terminal_channel::stdout_bytes);
            write(done.err, terminal_channel::stderr_bytes);
            if (done.shell_exit) {
                exit_with(*done.shell_exit);
                return;
            }
            if (!command_.empty() && pending_input().find('\n') == std::string_view::npos) {
                exit_with(done.exit_code);  // bash -c ends with its command
                return;
            }
            prompt();
        }
        if (pending_input().find('\n') == std::string_view::npos) return;
        run_next(now, files);
    }
}

}  // namespace ngfail::opensandbox::testing::detail
