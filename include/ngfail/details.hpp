// <ngfail/details.hpp> — the structured evidence an event carries beside its kind.
//
// Every field but the noted ones is optional: missing evidence stays absent, and nothing
// is inferred from what is present. Each struct's type decides the event's class:
// `sandbox_details` → `sandbox_failure`, `model_details` → `model_failure`,
// `sdk_error_details` → `foreign_failure`, none → `failure_event`.
#pragma once

#include <ngfail/kind.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <variant>

namespace ngfail {

// What a sandbox provider reported about one operation.
struct sandbox_details {
    std::string operation{};  // required: create, get, kill, renew, endpoint, exec, ...
    std::optional<std::string> provider{};
    std::optional<std::string> sandbox_id{};
    std::optional<std::string> execution_id{};
    std::optional<std::string> provider_status_reason{};  // e.g. "OOMKilled", as reported
    std::optional<std::string> provider_code{};           // e.g. "KUBERNETES::SANDBOX_NOT_FOUND"
    std::optional<int> exit_code{};
    std::optional<std::string> signal{};  // as reported
    std::optional<ngfail::delivery> delivery{};
    std::optional<std::chrono::seconds> retry_after{};
    // The classifier's row that decided the kind (`oom_killed`, `start_failed`, …; the
    // OpenSandbox classifier's names, docs/opensandbox.md): why this kind, as data.
    std::optional<std::string> evidence_row{};
    // What the server's diagnostics said around the failure (display text, bounded and
    // scrubbed of secrets), for the person or agent who troubleshoots. Never evidence: no
    // classifier reads it.
    std::optional<std::string> diagnostics{};

    friend bool operator==(const sandbox_details&, const sandbox_details&) = default;
};

// What an adapter picked out of a third-party exception: never its request, headers or body.
struct sdk_error_details {
    std::string error_type{};  // required: the exception's (demangled) type name
    std::optional<std::string> message{};
    std::optional<int> http_status{};
    std::optional<std::string> code{};  // the SDK's structured error code, if it has one
    std::optional<std::string> request_id{};

    friend bool operator==(const sdk_error_details&, const sdk_error_details&) = default;
};

// Observed facts about a model request, independent of retry or scoring policy.
struct model_details {
    std::optional<std::string> operation{};
    std::optional<std::string> model{};
    std::optional<int> attempt{};
    std::optional<std::chrono::seconds> retry_after{};

    friend bool operator==(const model_details&, const model_details&) = default;
};

using event_details = std::variant<std::monostate, sandbox_details, sdk_error_details, model_details>;

}  // namespace ngfail
