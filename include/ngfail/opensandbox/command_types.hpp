// <ngfail/opensandbox/command_types.hpp> — commands: what `exec` runs (`command`), what it did
// (`exec_result`), a background command's logs and status (target
// ngfail::opensandbox_client; no Asio).
#pragma once

#include <ngfail/opensandbox/borrowed.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox {

struct command_ref;

struct command {
    std::string command{};
    std::optional<std::string> cwd{};
    std::optional<std::chrono::milliseconds> timeout{};  // enforced by execd
    std::map<std::string, std::string> envs{};
    // The command's event stream may be silent this long (execd sends a `ping` every few
    // seconds), and when `total_timeout` is set the whole exec must end within it. The
    // call's timeout covers only what comes before the stream, so a command may run longer
    // than it; a status probe after a failed stream gets at most the call's timeout.
    std::chrono::milliseconds idle_timeout{60000};
    std::optional<std::chrono::milliseconds> total_timeout{};
    // Output as it arrives, all of it (the result keeps at most `max_body_bytes`). A
    // callback that throws ends the exec as `cancelled`.
    output_callback on_stdout{};
    output_callback on_stderr{};
    // Run detached: `exec` returns once execd has started it (its `execution_id`, no exit
    // code); follow it with `exec_status`, `exec_logs` and `interrupt`.
    bool background = false;
    // Detached execution: the command starts in the background and `exec` follows it to its
    // end through its logs and status, so that a cut connection loses no command (a cut
    // stream kills a foreground one). The result is a streamed exec's, but for its output:
    // execd's log interleaves stdout and stderr as written, and all of it is `stdout_text`
    // (and goes to `on_stdout`). Unset: `client_options::detached.by_default`. Not with
    // `background`, which returns once started.
    std::optional<bool> detached{};

    operator command_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `command` borrowed, as `exec` and `run_in_session` take it in each face
// (<ngfail/opensandbox/borrowed.hpp> says why): the same fields and defaults, owning nothing,
// so that `co_await sandboxes.async_exec(id, {.command = "make " + target})` is safe with
// every compiler. Output callbacks are copied when the operation is made.
struct command_ref {
    std::string_view command{};
    std::optional<std::string_view> cwd{};
    std::optional<std::chrono::milliseconds> timeout{};
    string_map_ref envs{};
    std::chrono::milliseconds idle_timeout{60000};
    std::optional<std::chrono::milliseconds> total_timeout{};
    callback_ref on_stdout{};
    callback_ref on_stderr{};
    bool background = false;
    std::optional<bool> detached{};

    [[nodiscard]] struct command copy() const;
};

inline command::operator command_ref() const noexcept {
    std::optional<std::string_view> borrowed_cwd;
    if (cwd) borrowed_cwd = *cwd;
    return {.command = command,
            .cwd = borrowed_cwd,
            .timeout = timeout,
            .envs = envs,
            .idle_timeout = idle_timeout,
            .total_timeout = total_timeout,
            .on_stdout = on_stdout,
            .on_stderr = on_stderr,
            .background = background,
            .detached = detached};
}

// What a command did. A non-zero exit is a normal result, not a failure.
struct exec_result {
    std::string execution_id{};
    // Absent when execd could not say (a failed start), and for a background command, which
    // returns once started (`exec_status` gives its exit).
    std::optional<int> exit_code{};
    std::string stdout_text{};
    std::string stderr_text{};
    std::optional<std::string> error_value{};  // execd's `error.evalue`
    bool output_truncated = false;           // more than `max_body_bytes` was produced
};

// Background command output from a byte offset, and the offset to ask from next time.
struct command_logs {
    std::string content{};
    std::size_t cursor = 0;
};

struct command_status {
    std::string id{};
    bool running = false;
    std::optional<int> exit_code{};
    std::optional<std::string> error{};
};

}  // namespace ngfail::opensandbox
