// A terminal as the emulator simulates execd's PTY sessions (`POST /pty`, the WebSocket at
// `/pty/{id}/ws`): a shell started by its first attach, which runs each input line as a
// simulated command (simulated_shell.hpp), one holder at a time, and a bounded history of
// its output that a re-attach replays from a byte offset. No I/O here: terminal_routes.cpp
// carries it over HTTP and WebSocket. Not thread-safe: the sandbox store holds it under its
// lock, as it holds the sandbox's files.
#pragma once

#include "file_tree.hpp"
#include "sandboxes.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::testing::detail {

// execd's binary frame types: the first byte of every binary WebSocket message.
enum class terminal_channel : std::uint8_t { stdin_bytes = 0x00, stdout_bytes = 0x01, stderr_bytes = 0x02, replay = 0x03 };

// What a terminal has written, by absolute byte offset: the newest `capacity` bytes are kept
// (execd keeps 1 MiB), older offsets are clamped to the oldest kept, as execd's replay
// buffer clamps them. Each byte remembers its channel (stderr is separate in pipe mode).
class output_history {
public:
    explicit output_history(std::size_t capacity) : capacity_(capacity) {}

    void append(std::string_view bytes, terminal_channel channel);
    [[nodiscard]] std::int64_t end() const noexcept { return end_; }
    [[nodiscard]] std::int64_t oldest() const noexcept;

    // Everything from `from` on (clamped to the oldest kept byte), and its offset.
    struct slice {
        std::int64_t offset = 0;
        std::string bytes{};
    };
    [[nodiscard]] slice since(std::int64_t from) const;
    // The next run of one channel from `from` on, at most `most` bytes.
    struct piece {
        terminal_channel channel = terminal_channel::stdout_bytes;
        std::int64_t offset = 0;
        std::string bytes{};
    };
    [[nodiscard]] piece next(std::int64_t from, std::size_t most) const;

private:
    [[nodiscard]] terminal_channel channel_at(std::int64_t offset) const noexcept;
    [[nodiscard]] std::string bytes(std::int64_t from, std::int64_t to) const;
    std::size_t capacity_;
    std::string ring_{};  // grows to `capacity_`, then wraps: byte o lives at o % capacity_
    std::int64_t end_ = 0;
    std::deque<std::pair<std::int64_t, terminal_channel>> changes_{};  // where the channel changes
};

// A terminal as the routes drive it, simulated or real (process/process_terminal.hpp): one
// holder at a time, a shell started by an attach, its output kept to replay. Not
// thread-safe: the sandbox store holds it under its lock, with the sandbox's files (which
// only the simulated shell reads).
class terminal_session {
public:
    static constexpr std::size_t history_bytes = std::size_t{1} << 20;  // execd's replayBufferSize

    terminal_session() = default;
    terminal_session(const terminal_session&) = delete;
    terminal_session& operator=(const terminal_session&) = delete;
    virtual ~terminal_session() = default;

    // The one holder: an attach gets a holder number, or none while another holds it
    // (unless `takeover`, which makes the newcomer the holder; the old one sees it lost).
    [[nodiscard]] std::optional<std::uint64_t> attach(bool takeover) noexcept;
    [[nodiscard]] bool held_by(std::uint64_t holder) const noexcept { return holder_ == holder; }
    [[nodiscard]] bool held() const noexcept { return holder_ != 0; }
    void release(std::uint64_t holder) noexcept;

    // Starts the shell when it is not running (an attach does): pipe mode splits stderr
    // and echoes nothing; a terminal echoes what is typed, with "\r\n" line ends.
    virtual void start(bool pipe, mono_clock::time_point now, const file_tree& files) = 0;
    [[nodiscard]] virtual bool running() const noexcept = 0;
    [[nodiscard]] virtual bool pipe_mode() const noexcept = 0;
    // Which run of the shell this is (each start counts), and how the last one ended (-1
    // while it runs, and for a shell a signal ended).
    [[nodiscard]] virtual std::uint64_t run_number() const noexcept = 0;
    [[nodiscard]] virtual int exit_code() const noexcept = 0;

    // Input as typed. What is typed ahead is bounded (`typed_ahead_bytes`).
    virtual void type(std::string_view bytes, mono_clock::time_point now, const file_tree& files) = 0;
    // execd's signal frames: SIGINT, SIGTERM, SIGQUIT, SIGKILL and SIGHUP to the shell's
    // process group; other names are ignored, as execd ignores them.
    virtual void signal(std::string_view name, mono_clock::time_point now, const file_tree& files) = 0;
    virtual void resize(int cols, int rows) = 0;
    // Lets time pass: output that came is kept, a shell that ended is seen to have ended.
    virtual void advance(mono_clock::time_point now, const file_tree& files) = 0;
    // Ends the shell as a kill does (exit -1): a DELETE, or its sandbox going.
    virtual void kill() noexcept = 0;

    [[nodiscard]] virtual const output_history& output() const noexcept = 0;

protected:
    static constexpr std::size_t typed_ahead_bytes = 64 * 1024;  // past it input is dropped, as a tty drops it

private:
    std::uint64_t holder_ = 0;
    std::uint64_t holders_ = 0;
};

// A shell that runs each input line as a simulated command (simulated_shell.hpp).
class simulated_terminal final : public terminal_session {
public:
    // `command`, when given, is what the shell runs (bash -c) before it exits.
    simulated_terminal(std::string cwd, std::string command, std::size_t history = history_bytes);

    void start(bool pipe, mono_clock::time_point now, const file_tree& files) override;
    [[nodiscard]] bool running() const noexcept override { return running_; }
    [[nodiscard]] bool pipe_mode() const noexcept override { return pipe_; }
    [[nodiscard]] std::uint64_t run_number() const noexcept override { return runs_; }
    [[nodiscard]] int exit_code() const noexcept override { return exit_code_; }

    // Whole lines run, one at a time, each when the one before is done. ^C on a terminal
    // interrupts, as its line discipline does.
    void type(std::string_view bytes, mono_clock::time_point now, const file_tree& files) override;
    // SIGINT (and SIGTERM, SIGQUIT) end the line running, as bash's foreground job ends;
    // SIGKILL and SIGHUP end the shell.
    void signal(std::string_view name, mono_clock::time_point now, const file_tree& files) override;
    void resize(int cols, int rows) noexcept override;
    // A line whose run is over writes its output and the next one starts.
    void advance(mono_clock::time_point now, const file_tree& files) override;
    void kill() noexcept override;

    [[nodiscard]] const output_history& output() const noexcept override { return output_; }

private:
    // Only what the history can keep is converted and kept: the newest `history` bytes.
    void write(std::string_view text, terminal_channel channel);
    void prompt();
    void run_next(mono_clock::time_point now, const file_tree& files);
    void exit_with(int code);

    std::string command_;
    shell_state shell_{};
    output_history output_;
    std::size_t history_;
    bool running_ = false;
    bool pipe_ = false;
    std::uint64_t runs_ = 0;
    int exit_code_ = -1;
    int cols_ = 80;
    int rows_ = 24;
    // Input not yet run (the line in progress, and lines typed ahead) is typed_ from
    // typed_from_ on: a line run moves the start, and the string is compacted only once half
    // of it is done, so many short lines cost no more than their bytes.
    std::string typed_{};
    std::size_t typed_from_ = 0;
    [[nodiscard]] std::string_view pending_input() const noexcept { return std::string_view(typed_).substr(typed_from_); }
    void clear_input() noexcept {
        typed_.clear();
        typed_from_ = 0;
    }
    struct line_run {
        std::string out{};
        std::string err{};
        int exit_code = 0;
        std::optional<int> shell_exit{};  // the line was `exit N`
        mono_clock::time_point done_at{};
    };
    std::optional<line_run> busy_{};
};

}  // namespace ngfail::opensandbox::testing::detail
