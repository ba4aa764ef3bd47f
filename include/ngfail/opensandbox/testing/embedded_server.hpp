// <ngfail/opensandbox/testing/embedded_server.hpp> — a local OpenSandbox: the lifecycle API and
// execd, with the faults real deployments show. A test tool, in ngfail::opensandbox::testing
// and a target of its own, ngfail::opensandbox_emulator, which no production program needs to
// link (nor ngfail::ngfail, nor <ngfail/opensandbox.hpp>, brings it): it is what `ngfail serve`
// runs, and what the official SDKs, `curl` or any client can be tested against:
//
//   namespace sandbox_testing = ngfail::opensandbox::testing;
//   sandbox_testing::embedded_server server({.api_key = "sk-test"});
//   server.inject({.operation = "exec", .what = sandbox_testing::fault::action::oom_kill});
//   ngfail::opensandbox::client c({.port = server.port(), .api_key = "sk-test"});
//
// It speaks the lifecycle API (`/v1/sandboxes…`, API key in `OPEN-SANDBOX-API-KEY`) and
// execd (`/ping`, `/command` with `ping` keep-alives, status, background logs, interrupt,
// files, metrics), reached through the server proxy (`/v1/sandboxes/{id}/proxy/{port}/…`) or
// a direct endpoint served by a listener of its own (`use_server_proxy=false`, the SDKs'
// default). A new sandbox is `Pending` for `pending_for`, then `Running`. Commands are
// simulated: `echo TEXT`, `exit N`, `sleep SECONDS`, `cat FILE`, anything else prints what it
// would have run. Connections run on `threads` threads; none outlives its connection.
//
// Its names were ngfail::opensandbox's until #42; they stay there as aliases for one release
// (the last block of this header).
#pragma once

#include <ngfail/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::testing {

// Which real backend the emulator shows faults as (what each really reports, see
// docs/opensandbox.md): a Kubernetes cluster or a Docker host.
enum class backend { kubernetes, docker };

[[nodiscard]] std::string_view name(backend b) noexcept;
[[nodiscard]] std::optional<backend> parse_backend(std::string_view text) noexcept;

// What runs behind the API. `simulated` (the default: deterministic, needs nothing of the
// host) interprets a few shell commands and keeps files in memory. `process` runs real
// commands in real sandboxes on this machine: each sandbox is a bubblewrap container with
// its own mount, PID, IPC, UTS, user and network namespaces, the host's /usr read-only, a
// private /home, /root, /tmp and /workspace, a non-root user, and a cgroup bounding its
// memory and processes (an OOM kill is the kernel's). It needs bubblewrap, user namespaces
// and a writable cgroup (root, on most machines): `process_runtime_unavailable()` says what
// is missing. docs/opensandbox.md says which routes it serves so far.
enum class runtime { simulated, process };

[[nodiscard]] std::string_view name(runtime r) noexcept;
[[nodiscard]] std::optional<runtime> parse_runtime(std::string_view text) noexcept;
// Empty when this host can run `runtime::process`; else one line: what is missing, and how
// to get it.
[[nodiscard]] std::string process_runtime_unavailable();

// One scripted misbehaviour, applied to the next `times` requests of `operation` (create,
// get, list, kill, renew, pause, resume, endpoint, ping, exec, exec_status, exec_logs,
// interrupt, upload, download, metrics, create_terminal, terminal_status, delete_terminal,
// attach_terminal, …: docs/opensandbox.md lists every operation).
struct fault {
    enum class action {
        // Named for what happens; each shows what the configured backend really shows.
        oom_kill,            // the command dies by SIGKILL (-1); the sandbox fails as an OOM kill
        image_pull_failure,  // create: the image cannot be pulled
        expire,              // the sandbox expires: gone, as its backend reports expiry
        crash,               // the sandbox's main process dies; the sandbox fails
        // Raw reply shapes, one per evidence-table row.
        http_error,          // status with the {"code","message"} envelope (and Retry-After)
        drop_before_init,    // exec: 200, then the connection closes before any event
        drop_after_init,     // exec: `init` sent, then the connection closes
        no_terminal_event,   // exec: the stream ends cleanly without error/execution_complete
        signal_exit,         // exec: `error` event with evalue "-1", "signal: killed"
        stall,               // nothing is answered for `stall_for`
        malformed_json,      // a 200 whose body is not JSON
        sandbox_status,      // the reply reports the sandbox in `state` with `reason` (create, get)
        // A terminal's WebSocket (attach_terminal), after the first input's output:
        taken_over,          // closed with 4001 TAKEN_OVER, as when another client takes it over
        policy_close,        // closed with 1008 (policy violation), as a proxy closes it
        drop_mid_frame,      // half an output frame, then the connection closes
        // What users report (docs/opensandbox.md, "The failures users report"):
        // a reply cut mid-chunk, as a proxy cuts a long stream ("incomplete chunked read"): its
        // body ends after `cut_after_bytes` bytes, or with the first write after `cut_after_ms`,
        // and the connection closes. A streamed run's command dies with it, as execd's does.
        cut_stream,
        // the request is carried out (a command started, a sandbox made), but its reply is
        // lost on the way: nothing of it arrives, and the connection closes after it
        lose_reply,
        // create: the sandbox is made and waits `stall_for` for a start that never comes, then
        // the create fails as its backend fails it (Kubernetes: 504 POD_READY_TIMEOUT). The
        // sandbox stays, Failed, its status and diagnostics naming `cause`.
        pod_ready_timeout,
    };

    // Why a `pod_ready_timeout` sandbox never started, as users find it in the diagnostics:
    // a namespace quota refused its pod, the pool had no idle sandbox, its image was not pulled.
    enum class start_cause { quota, pool, image_pull };

    // How an `oom_kill` reaches the client (the sandbox fails as an OOM kill either way):
    // as its backend shows it (`backend`: exec's `error` event, exit -1), or as users report
    // it, a proxy's bare 502 without the API's JSON envelope (`bare_502`, any operation on a
    // sandbox), or a terminal's WebSocket closed with 1011 (`ws_1011`, attach_terminal, after
    // the first input's output).
    enum class surface { backend, bare_502, ws_1011 };

    std::string operation{};
    action what = action::http_error;
    int status = 500;
    std::string code{};
    std::string message{};
    std::optional<int> retry_after_s{};
    std::string state{};   // sandbox_status: "Failed", "Terminated", …
    std::string reason{};  // sandbox_status: "OOMKilled", "ImagePullBackOff", …
    std::chrono::milliseconds stall_for{0};
    std::optional<std::size_t> cut_after_bytes{};  // cut_stream: bytes of the body sent (chunk lines counted)
    std::optional<std::chrono::milliseconds> cut_after_ms{};  // cut_stream: time since the reply began
    fault::surface shown_as = surface::backend;                // oom_kill: "surface" in JSON
    fault::start_cause cause = start_cause::quota;             // pod_ready_timeout: "cause" in JSON
    int times = 1;

    static fault http_error(std::string operation, int status, std::string code, std::string message,
                            std::optional<int> retry_after_s = std::nullopt);
    static fault exec(action what);
    static fault stall(std::string operation, std::chrono::milliseconds how_long);
    static fault malformed(std::string operation);
    static fault sandbox_status(std::string operation, std::string state, std::string reason);
    // `times` replies of `operation` cut after `bytes` of their body.
    static fault cut_stream(std::string operation, std::size_t bytes, int times = 1);
    // A create that waits `how_long`, then fails for `cause`.
    static fault pod_ready_timeout(start_cause cause, std::chrono::milliseconds how_long = {});
};

[[nodiscard]] std::string_view name(fault::action a) noexcept;

// A fault from its JSON form, as `ngfail serve --fault` and `POST /_ngfail/faults` take it:
//   {"operation":"create","action":"http_error","status":502,"code":"BACKEND_CONNECTION_FAILED",
//    "message":"...","retry_after_s":7,"times":1}
// (`stall_ms` for stall; `state` and `reason` for sandbox_status; `cut_after_bytes` and
// `cut_after_ms` for cut_stream, whichever comes first; `surface`, "bare_502" or "ws_1011",
// for oom_kill; `cause`, "quota", "pool" or "image_pull", and `stall_ms` for
// pod_ready_timeout). A bad document is a
// `provider_request_rejected` failure whose reason names the problem: an unknown operation
// or an unknown (misspelt) field is refused, never ignored.
[[nodiscard]] result<fault> parse_fault(std::string_view json);

// The fault as JSON, every field it acts with (what `POST /_ngfail/faults` and `ngfail serve`
// echo, so that a chaos test can see what was understood).
[[nodiscard]] std::string to_json(const fault& f);

// One request execd answered, as real execd's telemetry records it (`ngfail serve --otlp`
// exports these as execd's metrics). The views live for the call only.
struct execd_request_seen {
    // "POST"; `other_method` for a method HTTP does not define, as OpenTelemetry's HTTP
    // conventions name it (a stranger's inventions open no metric series of their own).
    static constexpr std::string_view other_method = "_OTHER";
    std::string_view method;
    // The route as execd's router names it (its telemetry's `http_route`): "/command",
    // "/command/status/:id"; "unknown" for a request no route took.
    std::string_view route;
    std::string_view operation;  // the client's name for it: "exec", "exec_status"; empty when none
    std::string_view area;       // "command", "filesystem", "code" or "terminal"; empty when none
    int status = 0;              // the reply's status; 0 when none was sent
    std::chrono::nanoseconds duration{};  // from routing to the reply's end (a stream's too)
    std::string_view traceparent{};       // the request's W3C traceparent header, if any
    // execd's name for the work on its execution or filesystem metric ("run_command",
    // "run_code", "run_in_session"; "info", "upload", "listdir", …), empty for other requests;
    // and how it ended, "success" or "failure": a run by its last event (a background
    // command's once started), a file operation by its status; empty when its handler did not
    // run (a refused token) or said nothing (a run refused as invalid).
    std::string_view metric_operation{};
    std::string_view result{};
};

struct server_options {
    std::string host = "127.0.0.1";
    unsigned short port = 0;          // 0: an ephemeral port
    std::string api_key{};            // required on lifecycle routes when not empty
    ngfail::opensandbox::testing::backend backend = backend::kubernetes;
    std::chrono::milliseconds pending_for{0};  // a new sandbox is Pending this long
    // A pause or a resume takes this long on a backend that shows it happening (Kubernetes:
    // Pausing, then Paused; Resuming, then Running, execd unreachable until then).
    std::chrono::milliseconds transition_for{0};
    std::chrono::milliseconds ping_every{3000};  // execd's keep-alive events on a command stream
    std::chrono::milliseconds metrics_every{1000};  // a sample on GET /metrics/watch, as execd's
    unsigned threads = 2;             // serving every connection
    // Bounds against a network of strangers. A request's head (and a TLS handshake) must
    // arrive within `read_timeout` of the previous reply, its body within five minutes;
    // past `max_connections` open connections (or the descriptors the process may open,
    // less a reserve) the longest-idle connection is closed to make room, or the new one
    // when none is idle.
    std::chrono::milliseconds read_timeout{30000};
    std::size_t max_connections = 1024;
    // What one sandbox keeps: this many commands and 64 MiB of their output (past either the
    // oldest finished go), and at most this many running in the background (one more is a 429).
    std::size_t commands_per_sandbox = 256;
    // Snapshots kept at once in the whole server (each holds its sandbox's files as they were);
    // one more is a 409 SNAPSHOT::LIMIT_EXCEEDED until one is deleted.
    std::size_t max_snapshots = 256;
    // Sandboxes alive at once (one more is a 409 SANDBOX::LIMIT_EXCEEDED), and what every
    // sandbox's and snapshot's files may take together, paths and a fixed cost per entry
    // included: past it an upload, a directory or a replacement fails as on a full disk
    // (execd's 500 "no space left on device").
    std::size_t max_sandboxes = 4096;
    std::size_t max_file_bytes = std::size_t{1} << 30;
    // Faults waiting for their operations (one more is a 409 FAULT::LIMIT_EXCEEDED, and
    // `inject` throws std::length_error) until one has fired.
    std::size_t max_faults = 1024;
    // Called after each execd request, on the server's threads (any of them, concurrently):
    // for metrics. It must not throw or block.
    std::function<void(const execd_request_seen&)> on_execd_request{};
    // What runs behind the API (see `runtime`); the constructor throws std::runtime_error with
    // `process_runtime_unavailable()`'s line when `process` cannot run here.
    ngfail::opensandbox::testing::runtime runtime = runtime::simulated;
    // The process runtime: where each sandbox's folder goes (empty: a fresh folder under
    // $TMPDIR or /tmp, removed when the server stops), and what bounds a sandbox whose create
    // request sets no `resourceLimits.memory`; its processes (pids) are always bounded.
    std::string state_dir{};
    std::int64_t sandbox_memory_bytes = std::int64_t{512} << 20;
    std::int64_t sandbox_max_processes = 512;
    // What a sandbox's writable folders hold in all (0: no bound). A server run as root makes
    // them one tmpfs of this size, whose pages count toward the sandbox's memory when its own
    // processes write them; past it a write fails as on a full disk (ENOSPC). A server that
    // is not root cannot mount, and leaves them unbounded.
    std::int64_t sandbox_disk_bytes = std::int64_t{1} << 30;
    // Serve HTTPS on both listeners with this certificate chain and private key (PEM files);
    // plain HTTP when empty. Endpoints keep their form: clients reach them with the scheme
    // they reached the server with, as the official SDKs do.
    std::string tls_certificate_file{};
    std::string tls_key_file{};
    // The diagnostics API (`/sandboxes/{id}/diagnostics/logs` and `/events`): off, it answers
    // 501 NOT_IMPLEMENTED, as a server without it does.
    bool diagnostics = true;
};

class embedded_server {
public:
    // Listens on `host:port` (the lifecycle API and the server proxy) and on an ephemeral
    // port of the same host (direct endpoints), and serves until stopped. A certificate or
    // key that cannot be loaded throws std::system_error.
    explicit embedded_server(server_options options = {});
    ~embedded_server();
    embedded_server(const embedded_server&) = delete;
    embedded_server& operator=(const embedded_server&) = delete;

    [[nodiscard]] unsigned short port() const noexcept;
    // The listener that serves direct endpoints (`/sandboxes/{id}/port/{port}/…`).
    [[nodiscard]] unsigned short direct_port() const noexcept;

    // Queues a fault; faults for one operation apply in the order given. Throws
    // std::invalid_argument when `f.operation` names no operation: a misspelt fault never fires.
    void inject(fault f);

    // Sets a sandbox's state and reason from now on (as a controller would after an OOM kill).
    void set_sandbox_status(std::string_view sandbox_id, std::string state, std::string reason);

    // Requests served so far (every route, faults included).
    [[nodiscard]] std::size_t requests() const noexcept;
    // Commands started so far (execs, in the background or not, and session runs): what a
    // test counts to prove that a start was never repeated.
    [[nodiscard]] std::size_t commands_started() const noexcept;

    // Connections open now, and the threads serving them all.
    [[nodiscard]] std::size_t open_connections() const noexcept;
    [[nodiscard]] std::size_t threads() const noexcept;

    // Stops listening and ends every connection; the ports are then closed.
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace ngfail::opensandbox::testing

// The names before #42, when the emulator was declared in ngfail::opensandbox: kept for one
// release so that code written with them compiles unchanged, removed in the release after
// (spell them ngfail::opensandbox::testing::…). Not [[deprecated]]: code built with -Werror,
// the examples among it, would stop compiling.
namespace ngfail::opensandbox {
using testing::backend;
using testing::embedded_server;
using testing::fault;
using testing::name;
using testing::parse_backend;
using testing::parse_fault;
using testing::server_options;
using testing::to_json;
}  // namespace ngfail::opensandbox
