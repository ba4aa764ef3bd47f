// <ngfail/opensandbox/operation.hpp> — the OpenSandbox operations, named once
// (target ngfail::opensandbox).
//
// Each operation has one wire name (what `sandbox_details::operation`, an observation and
// `ngfail classify --operation` carry), one replay policy (when the client may send it
// again), and the facts the evidence table reads from it:
//
//   using ngfail::opensandbox::operation;
//   traits(operation::exec).name;             // "exec"
//   traits(operation::get).replay;            // replay_policy::idempotent
//   parse_operation("exec_status");           // operation::exec_status
//
// An observation names its operation as text, so that a wrapper may classify operations
// of its own; the classifier reads the ones it knows through this table.
#pragma once

#include <ngfail/replay.hpp>

#include <optional>
#include <span>
#include <string_view>

namespace ngfail::opensandbox {

enum class operation : int {
    // lifecycle server
    create, get, list, kill, renew, pause, resume, endpoint,
    // execd
    ping, exec, exec_status, exec_logs, interrupt, upload, download,
    file_info, delete_files, list_directory, create_directories, delete_directories,
    create_session, run_in_session, delete_session,
    move_files, set_permissions, search_files, replace_contents,
    // lifecycle server: snapshots
    create_snapshot, get_snapshot, list_snapshots, delete_snapshot,
    // execd: metrics
    metrics, watch_metrics,
    // lifecycle server: metadata
    metadata,
    // execd: code contexts and code runs
    create_code_context, get_code_context, list_code_contexts, delete_code_context, delete_code_contexts,
    run_code, interrupt_code,
    // execd: interactive terminals (PTY sessions)
    create_terminal, terminal_status, delete_terminal, attach_terminal,
    // lifecycle server: diagnostics (display text, specs/diagnostic-api.yml)
    diagnostic_logs, diagnostic_events,
    // (a new operation goes above, and `operation_count` below counts from it)
};

// How many operations there are: every table keyed by `operation` has this many rows.
inline constexpr std::size_t operation_count = static_cast<std::size_t>(operation::diagnostic_events) + 1;

struct operation_traits {
    std::string_view name;   // the wire name
    replay_policy replay;    // GETs idempotent; requests that start or change something before_delivery
    bool command_evidence;   // its failures speak of a command (exit codes, a lost stream): exec's rules
    bool creates_sandbox;    // its effect is a new sandbox: create's rules
    bool terminal_evidence;  // its failures speak of a terminal (WebSocket close codes, a gone session)
};

// Every operation, in enumerator order.
[[nodiscard]] std::span<const operation> all_operations() noexcept;

// The traits of `op`; `op` must be an enumerator.
[[nodiscard]] const operation_traits& traits(operation op) noexcept;

[[nodiscard]] inline std::string_view name(operation op) noexcept { return traits(op).name; }

// The operation with this wire name, if any.
[[nodiscard]] std::optional<operation> parse_operation(std::string_view name) noexcept;

}  // namespace ngfail::opensandbox
