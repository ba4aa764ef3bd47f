// What a command does in a simulated sandbox, as bash would do it: the builtins `echo`,
// `true`, `false`, `:`, `cd` (into a directory of the sandbox's file tree or an image's
// usual one), `pwd`, `export` and `exit`, and `cat FILE` and `sleep SECONDS`, with bash's
// quoting and word splitting, `$NAME`, `${NAME}`, `$?` and `$(...)` (a subshell), joined by
// `;`, newlines, `&&` and `||`. The state they change is a shell's (a bash session's, or a
// command's own with its `cwd` and `envs`). Anything else (another program, a pipe, a
// redirection...) prints `ran: <command>`. No process is ever started; docs/opensandbox.md
// lists exactly what is simulated.
//
// Every run is bounded, whatever its line: work is linear in the line (times at most 33,
// the passes of substitutions nested 32 deep), a run prints at most
// `max_run_output` (then stops, exit status 1), a shell's variables hold at most
// `max_shell_variable_bytes`, a working directory is at most `max_path_bytes` long, and the
// sleeps of a run add up to at most `longest_wait`.
#pragma once

#include "sandboxes.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

// What a kernel reports when code raises (execd's `error` event: ename, evalue, traceback).
struct raised_error {
    std::string name{};
    std::string value{};
    std::vector<std::string> traceback{};
};

// What one run may print, stdout and stderr together.
inline constexpr std::size_t max_run_output = std::size_t{16} << 20;
// The longest path a shell resolves (Linux's PATH_MAX).
inline constexpr std::size_t max_path_bytes = 4096;

struct simulated_run {
    std::string stdout_text{};
    std::string stderr_text{};
    int exit_code = 0;
    std::chrono::milliseconds runs_for{0};
    // A code run in a kernel (simulated_interpreter.hpp) also has these: its cell number,
    // the value of its last expression (text/plain), and what it raised, which ends the
    // run in place of `execution_complete`; an interrupt ends it as KeyboardInterrupt.
    bool in_kernel = false;
    std::optional<int> execution_count{};
    std::optional<std::string> result_text{};
    std::optional<raised_error> raised{};

    // Makes the run take `more` longer, saturating at `longest_wait` (a sum of sleeps must
    // not wrap into a run that ends at once).
    void take_longer(std::chrono::milliseconds more) noexcept { runs_for = std::min(runs_for + std::min(more, longest_wait), longest_wait); }
};

// The sandbox's files as the shell asks after them, by absolute normal path: a file's content
// (none: no such file) and whether a directory exists. Either may be left empty: no files, no
// directories but an image's usual ones (see `cd`).
struct file_reader {
    std::function<std::shared_ptr<const std::string>(const std::string& path)> read_file{};
    std::function<bool(const std::string& path)> is_directory{};
};
// The shell's view of `tree`, asked where it stands: the caller holds it for the whole run.
[[nodiscard]] file_reader reader_of(const file_tree& tree);

// A variable's name as bash takes one: a letter or `_`, then letters, digits and `_`.
[[nodiscard]] bool is_shell_name(std::string_view name) noexcept;

// What `command` does; `cat` and `cd` ask the sandbox's files through `files`. `shell`, when
// given, is the session's state, which `cd` and `export` change.
[[nodiscard]] simulated_run simulate(std::string_view command, const file_reader& files,
                                     shell_state* shell = nullptr);

}  // namespace ngfail::opensandbox::testing::detail
