// <ngfail/opensandbox/code_types.hpp> — code contexts and code runs: what `run_code` runs and
// what it did (target ngfail::opensandbox_client; no Asio).
#pragma once

#include <ngfail/opensandbox/borrowed.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox {

struct code_run_ref;

// Code to run in a code context (a kernel that keeps its state between runs, execd's
// Jupyter session): in the context named, or, with none, in the language's default context
// (made on first use). With no language, execd runs the code as a command.
struct code_run {
    std::string code{};
    std::string context_id{};
    std::string language{};  // "python", "bash", "java", "javascript", "typescript", "go"
    // As for a command: the stream may be silent this long, and the whole run must end
    // within `total_timeout` when set.
    std::chrono::milliseconds idle_timeout{60000};
    std::optional<std::chrono::milliseconds> total_timeout{};
    output_callback on_stdout{};
    output_callback on_stderr{};

    operator code_run_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `code_run` borrowed, as `run_code` takes it (<ngfail/opensandbox/borrowed.hpp>).
struct code_run_ref {
    std::string_view code{};
    std::string_view context_id{};
    std::string_view language{};
    std::chrono::milliseconds idle_timeout{60000};
    std::optional<std::chrono::milliseconds> total_timeout{};
    callback_ref on_stdout{};
    callback_ref on_stderr{};

    [[nodiscard]] code_run copy() const;
};

inline code_run::operator code_run_ref() const noexcept {
    return {.code = code,
            .context_id = context_id,
            .language = language,
            .idle_timeout = idle_timeout,
            .total_timeout = total_timeout,
            .on_stdout = on_stdout,
            .on_stderr = on_stderr};
}

// What code raised, as the kernel reported it (`ename`, `evalue`, `traceback`).
struct code_error {
    std::string name{};
    std::string value{};
    std::vector<std::string> traceback{};
};

// What a code run did. Code that raised is a normal result (`error`), not a failure, as a
// command's non-zero exit is.
struct code_result {
    std::string context_id{};  // the context it ran in (a command run: the command's id)
    std::string stdout_text{};
    std::string stderr_text{};
    std::optional<int> execution_count{};  // the kernel's cell number
    // The last expression's value by MIME type, as execd sends it ("text" for text/plain);
    // a value that is not text is kept as its JSON.
    std::map<std::string, std::string> results{};
    std::optional<code_error> error{};
    bool output_truncated = false;  // more than `max_body_bytes` was produced
};

// A code context: its id, its kernel's language, and the directory it was made in.
struct code_context_info {
    std::string id{};
    std::string language{};
    std::optional<std::string> cwd{};
};

}  // namespace ngfail::opensandbox
