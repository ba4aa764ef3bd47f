// What a command does in a simulated sandbox: `echo TEXT`, `exit N`, `sleep SECONDS`,
// `cat FILE` (from the sandbox's in-memory file system), and, given a shell (a bash
// session's, or a command's own with its `cwd` and `envs`), `cd DIR`, `pwd` and
// `export NAME=VALUE` (with `$NAME` expanded); commands joined by `&&` or `;` run in turn.
// Anything else prints what it would have run. No process is ever started.
#pragma once

#include "sandboxes.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::emulator {

// What a kernel reports when code raises (execd's `error` event: ename, evalue, traceback).
struct raised_error {
    std::string name{};
    std::string value{};
    std::vector<std::string> traceback{};
};

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
};

// What `command` does; `cat` reads the sandbox's files through `read_file` (none: no such
// file). `shell`, when given, is the session's state, which `cd` and `export` change.
using file_reader = std::function<std::shared_ptr<const std::string>(const std::string& path)>;
[[nodiscard]] simulated_run simulate(std::string_view command, const file_reader& read_file,
                                     shell_state* shell = nullptr);

}  // namespace ngfail::opensandbox::emulator
