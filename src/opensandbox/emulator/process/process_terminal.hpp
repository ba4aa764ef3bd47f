// A terminal of a process sandbox (`ngfail serve --runtime process`): a real bash in the
// sandbox, on a PTY (or, in pipe mode, on three pipes), as execd's PTY sessions run one:
// `bash --noprofile --norc` (or `-c command`), 80 columns by 24 rows until resized, signal
// frames sent to its process group, its exit code as Go's ExitCode() gives it (-1 for a
// signal). Its output is read when time is let pass (`advance`: the routes do, and the
// server's sweep does every second while nobody is attached), and kept to replay, as
// execd's replay buffer keeps it.
#pragma once

#include "opensandbox/emulator/process/process_runtime.hpp"
#include "opensandbox/emulator/terminal.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace ngfail::opensandbox::testing::detail {

class process_terminal final : public terminal_session {
public:
    // `place` is its place among the server's terminals, given back when it goes.
    process_terminal(std::shared_ptr<process_sandbox> box, std::string cwd, std::string command,
                     std::unique_ptr<process_runtime::held_place> place, std::size_t history = history_bytes);
    // Kills the shell (and what it started in its process group).
    ~process_terminal() override;

    void start(bool pipe, mono_clock::time_point now, const file_tree& files) override;
    [[nodiscard]] bool running() const noexcept override { return id_ != 0; }
    [[nodiscard]] bool pipe_mode() const noexcept override { return pipe_; }
    [[nodiscard]] std::uint64_t run_number() const noexcept override { return runs_; }
    [[nodiscard]] int exit_code() const noexcept override { return exit_code_; }

    // Written to the shell's input as it takes it (never blocking the caller).
    void type(std::string_view bytes, mono_clock::time_point now, const file_tree& files) override;
    void signal(std::string_view name, mono_clock::time_point now, const file_tree& files) override;
    // TIOCSWINSZ: the kernel tells the foreground job (SIGWINCH); nothing in pipe mode.
    void resize(int cols, int rows) override;
    void advance(mono_clock::time_point now, const file_tree& files) override;
    void kill() noexcept override;

    [[nodiscard]] const output_history& output() const noexcept override { return output_; }

private:
    // The supervisor's answer to the start, once it has come (false until then, and when the
    // start failed or passed `start_deadline`: the terminal has then ended).
    bool take_start(mono_clock::time_point now);
    void could_not_start(const std::string& why);
    void apply_size();
    void read_output();  // what the shell wrote, up to `most_read_at_once`
    void write_input();  // what was typed, as far as the shell takes it now
    void ended(int code) noexcept;

    static constexpr std::size_t most_read_at_once = std::size_t{4} << 20;
    static constexpr std::chrono::seconds start_deadline{10};

    std::shared_ptr<process_sandbox> box_;
    std::unique_ptr<process_runtime::held_place> place_;
    std::string cwd_;
    std::string command_;
    output_history output_;
    bool pipe_ = false;
    std::uint64_t runs_ = 0;
    int exit_code_ = -1;
    int id_ = 0;  // the shell's command id in the sandbox; 0 when none runs
    std::optional<mono_clock::time_point> starting_until_{};  // asked for, not answered yet
    int cols_ = 80;
    int rows_ = 24;
    int output_fd_ = -1;  // the PTY's master, or stdout's pipe
    int error_fd_ = -1;   // stderr's pipe (pipe mode)
    int input_fd_ = -1;   // the master again, or stdin's pipe
    int exit_fd_ = -1;
    std::string typed_{};  // not yet taken by the shell
};

}  // namespace ngfail::opensandbox::testing::detail
