// <ngfail/opensandbox/terminal_types.hpp> — interactive terminals' values: what
// `create_terminal` takes, a terminal's status, how to attach, and what an attached
// session reads (<ngfail/opensandbox/terminal.hpp>) (target ngfail::opensandbox_client).
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace ngfail::opensandbox {

// An interactive terminal (execd's PTY session): a shell that starts with the first attach
// and outlives its holders. `command`, when given, is what it runs (bash -c) before it exits.
struct terminal_request_ref;

struct terminal_request {
    std::optional<std::string> cwd{};
    std::optional<std::string> command{};

    operator terminal_request_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `terminal_request` borrowed, as `create_terminal` takes it.
struct terminal_request_ref {
    std::optional<std::string_view> cwd{};
    std::optional<std::string_view> command{};

    [[nodiscard]] terminal_request copy() const;
};

inline terminal_request::operator terminal_request_ref() const noexcept {
    terminal_request_ref borrowed;
    if (cwd) borrowed.cwd = *cwd;
    if (command) borrowed.command = *command;
    return borrowed;
}

struct terminal_info {
    std::string id{};
    bool running = false;            // its shell has started and not exited
    std::int64_t output_offset = 0;  // the bytes it has written: a re-attach's `since`
};

// How to attach: one client holds a terminal at a time; a second attach fails as
// `provider_state_conflict` (delivery `not_sent`) unless it takes over, which closes the
// holder's connection (its reads fail as `provider_state_conflict`). `since` replays the
// output from that byte offset (execd keeps the newest 1 MiB). `pipe` starts the shell with
// pipes instead of a terminal (stderr apart, no echo). A peer silent for `idle_timeout`
// (pings keep it alive) is gone.
struct attach_options {
    bool takeover = false;
    std::optional<std::int64_t> since{};
    bool pipe = false;
    std::chrono::milliseconds idle_timeout{60000};
};

// What a terminal sends: output as it comes (or replayed, at its offset), or its shell's exit.
enum class terminal_stream { stdout_bytes, stderr_bytes, replay };
struct terminal_output {
    terminal_stream stream = terminal_stream::stdout_bytes;
    std::int64_t offset = 0;  // of its first byte in the terminal's output
    std::string bytes{};
};
struct terminal_exit {
    int exit_code = 0;  // -1: killed (a delete, a signal)
};
using terminal_event = std::variant<terminal_output, terminal_exit>;

}  // namespace ngfail::opensandbox
