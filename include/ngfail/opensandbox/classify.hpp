// <ngfail/opensandbox/classify.hpp> — OpenSandbox observations to failure kinds, from
// structured evidence only (target ngfail::opensandbox; no Beast, no Asio headers).
//
// An SDK wrapper on any HTTP stack describes what it saw and lets the classifier decide:
//
//   ngfail::opensandbox::observation seen{.operation = "exec", .sandbox_id = id,
//                                         .cause = std::current_exception(),
//                                         .execution_id = exec_id,
//                                         .transport_phase = ngfail::opensandbox::phase::receive};
//   throw ngfail::opensandbox::opensandbox_failure(seen);   // a sandbox_failure
//
// Only structured evidence counts: HTTP status, the provider's error code, status reasons,
// sandbox states, exit codes, transport error codes. Message text never does — "OOMKilled",
// "401 Unauthorized" or "signal: killed" in a message proves nothing. docs/opensandbox.md
// explains every row of the table, which lives in one array in classify.cpp.
#pragma once

#include <ngfail/kind.hpp>
#include <ngfail/opensandbox/operation.hpp>
#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace ngfail::opensandbox {

// Where a transport error happened: while connecting nothing was sent.
enum class phase { connect, send, receive };

// Transport conditions that have no errno. The classifier reads errno codes (the `generic`
// and `system` categories), these, and Asio's, Beast's and OpenSSL's transport codes, which
// it maps to these first (`portable_transport_error` below) by category name and value.
enum class errc {
    stream_incomplete = 1,  // an SSE stream ended with neither `error` nor `execution_complete`
    readiness_timeout,      // a created sandbox did not become ready in time
    malformed_response,     // a reply the API does not allow (bad JSON, wrong shape)
    cancelled,              // the caller cancelled the operation
    connection_closed,      // the peer closed the connection mid-exchange (EOF, a partial message)
    host_not_found,         // the server's name did not resolve
    tls_failed,             // a TLS handshake, certificate or session failure
};

// The category of `errc`; `name()` is "ngfail.opensandbox".
[[nodiscard]] const std::error_category& error_category() noexcept;
[[nodiscard]] inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// A transport code in the terms the classifier reads: errno codes as they are (ECANCELED as
// `errc::cancelled`); Asio's eof, Beast's end_of_stream and partial_message and a truncated
// TLS stream (`asio.misc`, `beast.http`, `asio.ssl.stream`) as `errc::connection_closed`; a
// failed name lookup (`asio.netdb` host_not_found, try_again) as `errc::host_not_found`; any
// other TLS error (`asio.ssl`, `asio.ssl.stream`) as `errc::tls_failed`; Beast's timeout
// (`boost.beast`) as ETIMEDOUT. Categories are told by name, so no Asio header is needed and
// a code converted from Boost to `std::error_code` is recognised too. Anything else is
// returned unchanged, and the classifier does not read it.
[[nodiscard]] std::error_code portable_transport_error(const std::error_code& ec) noexcept;

// What an SDK wrapper saw of one failed operation. Designated initialisers follow this order.
// Flat, so that `classify({.operation = "get", .http_status = 401})` reads as the evidence it
// is; the facts that go into the event's `sandbox_details` are copied by one table of member
// pairs (classify.cpp), which fails to compile while a details member has no row.
struct observation {
    std::string operation{};  // an operation's wire name (operation.hpp): create, get, exec, …
    std::optional<std::string> sandbox_id{};
    std::exception_ptr cause{};                 // read structurally: api_error, system_error
    std::optional<std::string> failure_kind{};  // an explicit kind decided elsewhere
    std::optional<std::string> reason{};
    std::optional<std::string> execution_id{};
    std::optional<std::string> provider_status_reason{};  // e.g. "OOMKilled"
    std::optional<int> exit_code{};
    std::optional<int> http_status{};
    std::optional<std::string> provider_code{};  // e.g. "KUBERNETES::SANDBOX_NOT_FOUND"
    std::optional<std::string> sandbox_state{};  // e.g. "Failed"
    std::optional<std::chrono::seconds> retry_after{};
    std::error_code transport_error{};
    std::optional<phase> transport_phase{};
    // An interactive terminal's WebSocket: the close code the peer sent (RFC 6455 §7.4; execd
    // closes a holder that another client takes over with 4001, a proxy's policy with 1008),
    // and whether input was written on the attachment before it failed.
    std::optional<int> close_code{};
    bool input_written = false;
    // The signal that ended the command, as the provider reported it (a structured field,
    // never read from a message): on an exec it establishes a death by signal, as exit -1 does.
    std::optional<std::string> signal{};
    std::optional<std::string> provider{"opensandbox"};  // the details' provider
    // Display text from the server's diagnostics API, attached for people: copied into the
    // details, never read by `classify` (the API's own spec: not a stable schema).
    std::optional<std::string> diagnostics{};
};

struct classification {
    std::error_code kind{};                   // a kind code; `undetermined` when nothing matched
    std::optional<ngfail::delivery> delivery{};  // only what the evidence establishes

    friend bool operator==(const classification&, const classification&) = default;
};

// The first matching row of the evidence table. Never throws, never reads text, no regex;
// allocates nothing unless the observation carries a cause (read by rethrowing it once) or
// an unknown explicit kind (interned).
[[nodiscard]] classification classify(const observation& seen) noexcept;

// The name of the evidence-table row that decides `classify(seen)`: what the evidence
// establishes (`oom_killed`, `sandbox_lost`, `peer_dropped`, …), `explicit_kind` when the
// observation names its kind, `nothing_matched` for `undetermined`. docs/opensandbox.md
// lists every row.
[[nodiscard]] std::string_view matching_rule(const observation& seen) noexcept;

// The event to throw: classified, the established delivery and the observation's facts in
// its details (provider "opensandbox" unless the observation names another), the cause as
// its cause.
[[nodiscard]] sandbox_failure opensandbox_failure(const observation& seen);

// The same as a `noexcept` failure.
[[nodiscard]] failure to_failure(const observation& seen) noexcept;

// The OpenSandbox client's exception for an HTTP error reply: the `{"code","message"}`
// envelope, the status and the request id as data. Never the request, its headers or body.
class api_error : public std::runtime_error, public structured_error {
public:
    api_error(int status, std::optional<std::string> code, const std::string& message,
              std::optional<std::string> request_id = std::nullopt,
              std::optional<std::chrono::seconds> retry_after = std::nullopt);

    [[nodiscard]] int status() const noexcept { return status_; }
    [[nodiscard]] const std::optional<std::string>& code() const noexcept { return code_; }
    [[nodiscard]] const std::optional<std::chrono::seconds>& retry_after() const noexcept { return retry_after_; }

    [[nodiscard]] std::optional<int> http_status() const noexcept override { return status_; }
    [[nodiscard]] std::optional<std::string> error_code_name() const override { return code_; }
    [[nodiscard]] std::optional<std::string> request_id() const override { return request_id_; }

private:
    int status_;
    std::optional<std::string> code_;
    std::optional<std::string> request_id_;
    std::optional<std::chrono::seconds> retry_after_;
};

}  // namespace ngfail::opensandbox

template <>
struct std::is_error_code_enum<ngfail::opensandbox::errc> : std::true_type {};
