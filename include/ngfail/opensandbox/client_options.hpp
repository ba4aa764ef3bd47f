// <ngfail/opensandbox/client_options.hpp> — how a client reaches its server (`client_options`)
// and what one call may change (`call_options`) (target ngfail::opensandbox_client).
#pragma once

#include <ngfail/opensandbox/call_observer.hpp>
#include <ngfail/policy/retry_allowance.hpp>
#include <ngfail/transport.hpp>  // the log in call_options; and what code written against it used

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ngfail::opensandbox {

// The client's own retry budget for each call, unless `call_options::allowance` brings the
// caller's. Waits are full jitter: uniform in [0, min(max_backoff, backoff · 2^retries)], or
// what the server's Retry-After asks (capped at max_backoff).
struct retry_policy {
    int max_attempts = 1;                          // 1: no retries
    std::chrono::milliseconds backoff{50};         // the first wait's ceiling; doubles with each retry
    // The longest wait between attempts: jitter is capped here, and a server's Retry-After
    // longer than this ends the call unsent instead of being cut short.
    std::chrono::milliseconds max_backoff{2000};
};

// Detached execution (`command::detached`): how a detached command is followed.
struct detached_options {
    // Commands run detached unless they say otherwise. Off: a streamed exec keeps stdout and
    // stderr apart and costs no polling (docs/opensandbox.md, "Detached execution", says when
    // to turn it on).
    bool by_default = false;
    // The longest wait between two reads of a detached command's status and logs: the first
    // come 5 ms apart, the wait doubling while nothing new arrives, back to 5 ms when output
    // does (under 1 ms counts as 1 ms).
    std::chrono::milliseconds max_poll_interval{50};
    // Failed reads (a cut reply, a refused connection, a 502) that one detached exec resumes
    // from, each from the cursor it had, when its call brings no allowance of its own
    // (`call_options::allowance`, which its reads then spend). Each resumed read goes to
    // `call_options::log` as a failure the exec recovered from. Negative counts as none.
    int resumes = 8;
};

// The server's diagnostics (its logs and events as text) attached to a failure the
// structured evidence leaves ambiguous: a 5xx on create, a bare 502 on a command, a
// terminal closed 1011, a stream cut before it began. Fetched after the sandbox's status,
// within the call's deadline; attached to `sandbox_details::diagnostics`, scrubbed of the
// client's secrets and cut to `max_bytes`. Only for people: the kind never follows it.
struct failure_diagnostics_options {
    bool fetch = false;  // off: two more requests after such a failure, for text
    std::string scope = "all";
    std::size_t max_bytes = 2048;  // the whole attachment; a report keeps 4096 bytes a field
};

struct tls_options {
    bool verify_peer = true;  // false: any machine on the path can read the API key
    std::string ca_file{};    // PEM certificates to trust instead of the system store
};

struct client_options {
    std::string host = "127.0.0.1";
    unsigned short port = 8080;
    // The server as the official SDKs take it: `https://api.example.com/prefix`,
    // `http://localhost:8080`, or `host[:port][/prefix]` (http). When set it replaces host
    // and port; a trailing `/v1` is dropped, as `/v1` is added to every lifecycle path. A
    // base URL that cannot be parsed fails every call as `provider_request_rejected`.
    std::string base_url{};
    std::string api_key{};
    std::chrono::milliseconds timeout{30000};  // per call, unless call_options says otherwise
    retry_policy retries{};
    std::size_t max_body_bytes = 8 << 20;      // a reply body, or an exec stream's output
    // Reach execd through the lifecycle server's proxy instead of the sandbox's direct
    // endpoint (the `use_server_proxy` query parameter; off by default, as in the SDKs).
    bool use_server_proxy = false;
    // Endpoint headers whose values are credentials: scrubbed, like the API key, from every
    // failure the client records (X-EXECD-ACCESS-TOKEN always is).
    std::vector<std::string> secret_headers{};
    tls_options tls{};
    detached_options detached{};
    failure_diagnostics_options failure_diagnostics{};
    std::size_t max_idle_connections = 64;        // kept alive per server for reuse
    std::size_t max_kept_connections = 256;       // kept alive in all (each direct endpoint is a server)
    // An idle connection older is closed, whichever server it belongs to (at the client's
    // next request at the latest: the client runs no timer of its own on your executor).
    std::chrono::milliseconds max_idle_time{15000};
    std::size_t endpoint_cache_size = 1024;       // execd endpoints remembered (0: none)
    std::chrono::milliseconds endpoint_cache_ttl{600000};
    // Told of every call's attempts and outcome, for traces and metrics (none: nothing is
    // recorded and nothing costs). `ngfail::otel::instrument_client` makes an OpenTelemetry one.
    std::shared_ptr<call_observer> observer{};
};

struct call_options {
    std::optional<std::chrono::milliseconds> timeout{};
    request_failure_log* log = nullptr;  // receives every failed attempt that was retried
    // The caller's budget for this logical request, shared with the caller's own retry loop
    // (<ngfail/policy/retry_allowance.hpp>): the client's retries spend it instead of
    // `client_options::retries`, record each failed attempt in it, and a Retry-After longer
    // than what it has left ends the call now. Whatever it allows, the client repeats only
    // what the operation's replay policy and the failure's delivery make safe.
    policy::retry_allowance* allowance = nullptr;
    // Attributes for this call's spans (a trajectory's id, a run's), read while the call
    // runs: what they point to must outlive it. Never on a metric.
    std::span<const trace_label> trace_labels{};
};

}  // namespace ngfail::opensandbox
