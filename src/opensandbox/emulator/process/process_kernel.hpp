// A code context's kernel in the process runtime: one long-lived interpreter in the sandbox
// (python3 for `python`, bash for `bash`, node for `javascript`) that runs the context's
// cells in turn, so that what one cell defines the next one uses, as execd's Jupyter
// kernels do.
//
// Its driver reads each cell from descriptor 3 (the kernel's stdin, moved there: the cell's
// own stdin is /dev/null), ended by a NUL byte; runs it; flushes what it printed; then
// writes one line of its own on stdout in one write: a newline, its marker, and the cell's
// outcome as JSON ({"count", "result", "ename", "evalue", "traceback"}; bash's: {"count",
// "status"}). `kernel_output` takes that line, and the newline before it, out of what the
// client sees.
#pragma once

#include "opensandbox/emulator/process/process_runtime.hpp"
#include "opensandbox/emulator/process/process_sandbox.hpp"
#include "opensandbox/emulator/simulated_shell.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

// The program that runs `language`'s kernel (python3, bash, node); none for a language the
// process runtime has no kernel for.
[[nodiscard]] std::optional<std::string_view> kernel_program(std::string_view language) noexcept;
// Whether this host has `language`'s kernel: the sandbox runs the host's /usr.
[[nodiscard]] bool has_process_kernel(std::string_view language);

// The command that starts a kernel of `language` (one `kernel_program` names) in `cwd`
// (empty: the user's home), its own lines marked with `marker`.
[[nodiscard]] process_command kernel_command(std::string_view language, std::string_view marker, std::string cwd);

// How a cell ended, as its kernel's line says: its number, its last expression's value
// (text/plain), what it raised (bash: a failed cell raises its status, unnamed).
struct cell_outcome {
    int execution_count = 0;
    std::optional<std::string> result{};
    std::optional<raised_error> raised{};
};
// The kernel's line, without its marker and newline; none when it is not one.
[[nodiscard]] std::optional<cell_outcome> outcome_of(std::string_view json) noexcept;

// A kernel's output during one cell, as execd's events: the text as the cell printed it, a
// line an event with its newline (Jupyter's stream messages keep theirs), a line past
// `max_line` in pieces, and the kernel's line taken out of stdout. A line that ends what
// has come so far is held back (it may be the newline before the kernel's line) until more
// comes or the kernel goes quiet (`idle`).
class kernel_output {
public:
    static constexpr std::size_t max_line = std::size_t{1} << 20;

    explicit kernel_output(std::string marker) : marker_(std::move(marker)) {}
    // The events `bytes` completes.
    [[nodiscard]] std::vector<std::string> add(bool is_stdout, std::string_view bytes);
    // What was held back, as the kernel has printed nothing for a while: the cell is
    // still running, and its output goes out as it comes.
    [[nodiscard]] std::vector<std::string> idle(bool is_stdout);
    // The cell has ended, or its kernel: whatever is left.
    [[nodiscard]] std::vector<std::string> finish(bool is_stdout);
    // The kernel's line has come, and its outcome.
    [[nodiscard]] bool complete() const noexcept { return outcome_.has_value(); }
    [[nodiscard]] const std::optional<cell_outcome>& outcome() const noexcept { return outcome_; }

private:
    struct stream {
        std::string pending{};  // bytes of a line not ended
        std::optional<std::string> held{};  // the last line, which may end in the kernel's newline
    };
    void take_line(bool is_stdout, std::string line, std::vector<std::string>& events);
    [[nodiscard]] bool may_begin_marker(std::string_view bytes) const noexcept;

    std::string marker_;
    stream out_{}, err_{};
    std::optional<cell_outcome> outcome_{};
};

// A kernel process and what owns it: started at its context's first cell, killed (its
// process group) when its context goes, or when a cell leaves it in a state no next cell
// should inherit (its request went mid-cell, it would not stop at an interrupt, it died).
// Safe to use from two threads: the cell's run, and the route that deletes its context.
class process_kernel {
public:
    // `place` is its place among the runtime's kernels (process_runtime::take_kernel_place).
    process_kernel(std::shared_ptr<process_sandbox> box, std::string language, std::string cwd,
                   std::unique_ptr<process_runtime::held_place> place);
    process_kernel(const process_kernel&) = delete;
    process_kernel& operator=(const process_kernel&) = delete;
    ~process_kernel();

    [[nodiscard]] const std::string& language() const noexcept { return language_; }
    [[nodiscard]] const std::string& marker() const noexcept { return marker_; }
    [[nodiscard]] const std::shared_ptr<process_sandbox>& box() const noexcept { return box_; }
    [[nodiscard]] process_command command() const { return kernel_command(language_, marker_, cwd_); }

    // Records its process, started; false (the process killed) when the kernel was killed
    // meanwhile (its context deleted).
    bool started(const process_sandbox::started& process);
    [[nodiscard]] bool is_started() const;
    // A copy of its process's descriptors for one cell, which the caller owns and closes;
    // none before it starts or once it is dead.
    [[nodiscard]] std::optional<process_sandbox::started> streams() const;
    // No cell may run in it again: it was killed, or it ended of itself (its exit read).
    [[nodiscard]] bool dead() const;
    // Whether its process has ended though nobody has said so yet (it died between cells).
    [[nodiscard]] bool has_ended() const;
    // Ends its process (its group).
    void kill() noexcept { release(true); }
    // Its process has ended (its exit event came): its wait status, and the kernel is dead;
    // none when it was killed (its context deleted), whose status nobody waits for.
    [[nodiscard]] std::optional<int> reap();

private:
    void release(bool kill) noexcept;
    void release_locked(bool kill) noexcept;

    std::shared_ptr<process_sandbox> box_;
    std::string language_;
    std::string cwd_;
    std::string marker_;
    mutable std::mutex mutex_;
    std::optional<process_sandbox::started> process_{};
    bool dead_ = false;
    std::unique_ptr<process_runtime::held_place> place_;
};

}  // namespace ngfail::opensandbox::testing::detail
