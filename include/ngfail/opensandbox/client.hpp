// <ngfail/opensandbox/client.hpp> — an OpenSandbox client that speaks ngfail
// (target ngfail::opensandbox_client, Boost.Beast, HTTP/1.1 over TCP or TLS).
//
// Three faces over one implementation. Throwing methods raise classified `sandbox_failure`s
// with the underlying error (an `api_error` or a `connection_error`) nested as the cause;
// `noexcept` `try_*` methods return the same failures as `result<T>`; `async_*` methods
// return them as awaitables (below):
//
//   ngfail::opensandbox::client sandboxes({.port = 8080, .api_key = key});
//   auto box = sandboxes.create({.image = "python:3.11"});
//   auto run = sandboxes.exec(box.id, {.command = "pytest -q"});    // exit 1 is a result
//
//   auto r = sandboxes.try_exec(box.id, {.command = "make"});       // noexcept
//   if (!r && r.error().code() == ngfail::kind::provider_oom_killed) …
//
// Every call has a timeout, and nothing a call does (status probes, clean-up) outlives it,
// except an exec's event stream, bounded by silence instead (`command::idle_timeout`);
// durations saturate (`milliseconds::max()` means no deadline). Retries are off; when
// enabled, a failure proven `not_sent` is retried, and one that may have arrived only for
// an idempotent operation (operation.hpp) after a transport or server fault; each failed
// attempt goes to `call_options::log`. Arguments are checked before anything is sent: an
// empty id, or a value with CR, LF or NUL, is a `provider_request_rejected` failure (delivery
// `not_sent`); path parameters are percent-encoded. The API key travels only in the
// OPEN-SANDBOX-API-KEY header and is scrubbed, with endpoint credentials, from every failure
// (a server may echo a request into its replies). Interim 1xx replies are skipped.
//
// The asynchronous face is in Asio's idiom, for thousands of sandboxes from one thread:
// `co_await sandboxes.async_exec(id, cmd)` gives the same `result<T>` as `try_exec`, and a
// cancellation emitted on the awaiting coroutine's slot ends the call as a classified
// `cancelled` failure whose delivery says what the evidence shows. The blocking faces run
// the call on the calling thread (its callbacks, `on_stdout` and the like, are called
// there), each thread's calls on connections of their own; the asynchronous face runs on
// the client's executor: one thread the client owns when made from options alone, or the
// executor it was made on, whose threads must not call its blocking faces. Either way the
// client must outlive the operations it started, as Asio's I/O objects must. Deadlines are
// kept by one watcher thread per process, started with the first connection, which closes
// the socket of an operation past its deadline on that socket's executor. Connections are kept alive and reused per server
// (`max_idle_connections`), and execd endpoints are cached per sandbox until it is killed,
// paused or resumed, or a connection to its endpoint fails.
//
// `https://` servers are reached over TLS (OpenSSL) with SNI and the server's certificate
// verified against the system CA store (or `tls.ca_file`); verification is off only when
// `tls.verify_peer` is set false. A sandbox's execd is reached with the lifecycle server's
// scheme, as the official SDKs do.
#pragma once

#include <ngfail/opensandbox/asio_errors.hpp>
#include <ngfail/opensandbox/borrowed.hpp>
#include <ngfail/opensandbox/classify.hpp>
#include <ngfail/policy/retry_allowance.hpp>
#include <ngfail/result.hpp>
#include <ngfail/transport.hpp>  // the log in call_options; and what code written against it used

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace ngfail::opensandbox {

namespace detail {
struct client_state;  // what the operations share; defined with them

// Awaits the operation, then calls the handler on its own executor with the result.
template <class T, class Handler>
boost::asio::awaitable<void> finish(boost::asio::awaitable<result<T>> operation, Handler handler,
                                    boost::asio::any_io_executor fallback) {
    std::optional<result<T>> done;
    try {
        done.emplace(co_await std::move(operation));
    } catch (...) {  // the operations catch everything but a failure to allocate
        done.emplace(failure(kind::transport_local_resource));
    }
    auto on = boost::asio::get_associated_executor(handler, fallback);
    boost::asio::dispatch(on, [handler = std::move(handler), r = std::move(*done)]() mutable {
        std::move(handler)(std::move(r));
    });
}

// `client::complete` (below), for anything whose operations run on `executor`.
template <class T, class CompletionToken>
auto complete_on(boost::asio::any_io_executor executor, boost::asio::awaitable<result<T>> operation,
                 CompletionToken&& token) {
    if constexpr (std::is_same_v<std::decay_t<CompletionToken>, boost::asio::use_awaitable_t<>>) {
        return operation;  // awaited where it is awaited, as a coroutine's own call is
    } else {
        return boost::asio::async_initiate<CompletionToken, void(result<T>)>(
            [executor](auto handler, boost::asio::awaitable<result<T>> op) {
                auto slot = boost::asio::get_associated_cancellation_slot(handler);
                boost::asio::co_spawn(executor, finish(std::move(op), std::move(handler), executor),
                                      boost::asio::bind_cancellation_slot(slot, boost::asio::detached));
            },
            token, std::move(operation));
    }
}
}  // namespace detail

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
    std::size_t max_idle_connections = 64;        // kept alive per server for reuse
    std::size_t max_kept_connections = 256;       // kept alive in all (each direct endpoint is a server)
    // An idle connection older is closed, whichever server it belongs to (at the client's
    // next request at the latest: the client runs no timer of its own on your executor).
    std::chrono::milliseconds max_idle_time{15000};
    std::size_t endpoint_cache_size = 1024;       // execd endpoints remembered (0: none)
    std::chrono::milliseconds endpoint_cache_ttl{600000};
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
};

// What `create` asks for unless told otherwise, as the official SDKs do.
inline constexpr std::string_view default_image = "python:3.11";
inline constexpr std::array<std::string_view, 3> default_entrypoint{"tail", "-f", "/dev/null"};
inline constexpr std::array<string_pair, 2> default_resource_limits{{{"cpu", "500m"}, {"memory", "512Mi"}}};

struct create_request_ref;

struct create_request {
    std::string image{default_image};
    std::vector<std::string> entrypoint{default_entrypoint.begin(), default_entrypoint.end()};
    std::optional<int> timeout_s{};
    std::map<std::string, std::string> resource_limits{default_resource_limits.begin(), default_resource_limits.end()};
    std::map<std::string, std::string> metadata{};
    // `create` returns once the sandbox is usable, as the official SDK waits for it: the
    // sandbox Running and execd answering GET /ping, polled every `ready_poll` for at most
    // `ready_timeout` (and never past the call's timeout). A sandbox that does not become
    // ready is `errc::readiness_timeout`: `provider_start_failed`, delivery `delivered`.
    bool wait_until_ready = true;
    std::chrono::milliseconds ready_timeout{30000};
    std::chrono::milliseconds ready_poll{200};
    // A sandbox the create leaves Failed, Terminated or never ready is deleted, so that no
    // failed create leaves one behind; the failure's reason says whether the delete worked.
    bool delete_if_failed = true;
    // Restores the sandbox from a Ready snapshot (`create_snapshot`): its files as they were.
    // When set, `image` is not sent (the server runs the snapshot's image) and the entrypoint
    // may be left empty (the server's default for a restore is `tail -f /dev/null`).
    std::string snapshot_id{};

    operator create_request_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `create_request` borrowed, as `async_create` takes it (<ngfail/opensandbox/borrowed.hpp>
// says why): the same fields and defaults, owning nothing, so that
// `co_await sandboxes.async_create({.image = "python:3.12"})` is safe with every compiler.
struct create_request_ref {
    std::string_view image = default_image;
    strings_ref entrypoint{default_entrypoint};
    std::optional<int> timeout_s{};
    string_map_ref resource_limits{default_resource_limits};
    string_map_ref metadata{};
    bool wait_until_ready = true;
    std::chrono::milliseconds ready_timeout{30000};
    std::chrono::milliseconds ready_poll{200};
    bool delete_if_failed = true;
    std::string_view snapshot_id{};

    [[nodiscard]] create_request copy() const;
};

inline create_request::operator create_request_ref() const noexcept {
    return {image,         entrypoint, timeout_s,  resource_limits,  metadata, wait_until_ready,
            ready_timeout, ready_poll, delete_if_failed, snapshot_id};
}

struct sandbox_info {
    std::string id{};
    std::string state{};                  // Pending, Running, …, Terminated, Failed (or newer)
    std::optional<std::string> reason{};  // the status reason, as reported
    std::optional<std::string> expires_at{};
    std::optional<std::string> snapshot_id{};  // the snapshot it was restored from
    std::map<std::string, std::string> metadata{};
};

// What `patch_metadata` does to a sandbox's metadata (JSON Merge Patch, RFC 7396): a value
// adds or replaces its key, `std::nullopt` deletes it (a missing key is no error), and keys
// not named stay.
using metadata_patch = std::map<std::string, std::optional<std::string>>;

// A snapshot: a point-in-time capture of a sandbox that outlives it. `state` is Creating
// until the server has captured it, then Ready (a restore needs Ready) or Failed; newer
// servers may add states.
struct snapshot_info {
    std::string id{};
    std::string sandbox_id{};  // the sandbox it was taken from
    std::optional<std::string> name{};
    std::string state{};
    std::optional<std::string> reason{};   // machine-readable, e.g. "snapshot_runtime_ready"
    std::optional<std::string> message{};  // for people
    std::string created_at{};              // RFC 3339, as the server wrote it
};

// Which snapshots `list_snapshots` returns: of one sandbox, in any of the states (as the
// server writes them: "Ready", not "ready"), newest first, pages of 1 to 200.
struct snapshot_list_request {
    std::string sandbox_id{};           // empty: every sandbox's
    std::vector<std::string> states{};  // none: every state
    int page = 1;
    int page_size = 20;
};

// A sandbox's resource use as execd reports it (`get_metrics`, `watch_metrics`).
struct metrics_sample {
    double cpu_count = 0;
    double cpu_used_pct = 0;
    double mem_total_mib = 0;
    double mem_used_mib = 0;
    std::int64_t timestamp_ms = 0;  // when execd read it, Unix milliseconds
    // A watched sample execd could not read, as it said (its numbers are then 0): the watch
    // goes on, as execd's does.
    std::optional<std::string> error{};
};

// Receives each sample of `watch_metrics`; returning false ends the watch.
using metrics_callback = std::function<bool(const metrics_sample&)>;

struct endpoint_info {
    std::string endpoint{};  // host:port[/path]
    std::map<std::string, std::string> headers{};
};

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

    operator command_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `command` borrowed, as `async_exec` and `async_run_in_session` take it
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

    [[nodiscard]] struct command copy() const;
};

inline command::operator command_ref() const noexcept {
    std::optional<std::string_view> borrowed_cwd;
    if (cwd) borrowed_cwd = *cwd;
    return {command, borrowed_cwd, timeout, envs, idle_timeout, total_timeout, on_stdout, on_stderr, background};
}



// What a command did. A non-zero exit is a normal result, not a failure.
struct exec_result {
    std::string execution_id{};
    std::optional<int> exit_code{};  // absent when execd could not say (a failed start)
    std::string stdout_text{};
    std::string stderr_text{};
    std::optional<std::string> error_value{};  // execd's `error.evalue`
    bool output_truncated = false;           // more than `max_body_bytes` was produced
};

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

// A `code_run` borrowed, as `async_run_code` takes it (<ngfail/opensandbox/borrowed.hpp>).
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
    return {code, context_id, language, idle_timeout, total_timeout, on_stdout, on_stderr};
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

// Background command output from a byte offset, and the offset to ask from next time.
struct command_logs {
    std::string content{};
    std::size_t cursor = 0;
};

struct list_request_ref;

struct list_request {
    std::vector<std::string> states{};  // any of these, in any case (none: every state)
    std::map<std::string, std::string> metadata{};  // every pair must match
    int page = 1;
    int page_size = 20;

    operator list_request_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `list_request` borrowed, as `async_list` takes it (<ngfail/opensandbox/borrowed.hpp>).
struct list_request_ref {
    strings_ref states{};
    string_map_ref metadata{};
    int page = 1;
    int page_size = 20;

    [[nodiscard]] list_request copy() const;
};

inline list_request::operator list_request_ref() const noexcept { return {states, metadata, page, page_size}; }

// A file or directory as execd describes it (its FileInfo).
struct entry_info {
    std::string path{};
    std::string type{};  // file, directory, symlink, other
    std::int64_t size = 0;
    std::int64_t mode = 0;  // octal digits read as decimal, as execd writes them: 755
    std::string owner{};
    std::string group{};
    std::string modified_at{};  // RFC 3339
    std::string created_at{};
};

// One move of `move_files`: a file or directory to a path that does not exist yet (its
// parent directories are made).
struct file_move {
    std::string src{};
    std::string dest{};
};

// What `set_permissions` sets on a path: the mode unless 0, the owner and group unless empty.
struct file_permissions {
    int mode = 755;  // octal digits as a decimal number: 644
    std::string owner{};
    std::string group{};
};

// What `replace_contents` does to a file: every `old_text` (never empty) becomes `new_text`.
struct content_replacement {
    std::string old_text{};
    std::string new_text{};
};

struct command_status {
    std::string id{};
    bool running = false;
    std::optional<int> exit_code{};
    std::optional<std::string> error{};
};

// An interactive terminal (execd's PTY session): a shell that starts with the first attach
// and outlives its holders. `command`, when given, is what it runs (bash -c) before it exits.
struct terminal_request {
    std::optional<std::string> cwd{};
    std::optional<std::string> command{};
};

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

class terminal_session;  // an attached terminal: <ngfail/opensandbox/terminal.hpp>

// A transport failure, with the phase it happened in (connecting means nothing was sent).
class connection_error : public boost::system::system_error {
public:
    connection_error(boost::system::error_code ec, phase at)
        : boost::system::system_error(ec), at_(at) {}
    [[nodiscard]] phase at() const noexcept { return at_; }

private:
    phase at_;
};

class client {
public:
    // A client with one I/O thread of its own (for its asynchronous face and terminals).
    explicit client(client_options options);
    // A client whose I/O runs on `executor` (which the caller runs).
    client(boost::asio::any_io_executor executor, client_options options);
    ~client();
    client(client&&) noexcept;
    client& operator=(client&&) noexcept;

    [[nodiscard]] boost::asio::any_io_executor get_executor() const noexcept;
    // Connections kept alive for reuse now (across every server).
    [[nodiscard]] std::size_t idle_connections() const;

    sandbox_info create(const create_request& request, const call_options& options = {});
    sandbox_info get(std::string_view sandbox_id, const call_options& options = {});
    void kill(std::string_view sandbox_id, const call_options& options = {});
    std::string renew(std::string_view sandbox_id, std::string_view expires_at, const call_options& options = {});
    endpoint_info endpoint(std::string_view sandbox_id, int port = 44772, const call_options& options = {});
    exec_result exec(std::string_view sandbox_id, const command& cmd, const call_options& options = {});
    command_status exec_status(std::string_view sandbox_id, std::string_view execution_id,
                               const call_options& options = {});
    void ping(std::string_view sandbox_id, const call_options& options = {});
    // Bash sessions: a shell whose working directory and exported variables stay from one
    // run to the next (`cd`, `export`). A run streams as `exec` does (the result's
    // execution_id is the session's id) and is never in the background; `cmd.envs` is
    // refused (export them in the session).
    std::string create_session(std::string_view sandbox_id, std::optional<std::string> cwd = std::nullopt,
                               const call_options& options = {});
    exec_result run_in_session(std::string_view sandbox_id, std::string_view session_id, const command& cmd,
                               const call_options& options = {});
    void delete_session(std::string_view sandbox_id, std::string_view session_id, const call_options& options = {});
    std::vector<sandbox_info> list(const list_request& request = {}, const call_options& options = {});
    void pause(std::string_view sandbox_id, const call_options& options = {});
    void resume(std::string_view sandbox_id, const call_options& options = {});
    command_logs exec_logs(std::string_view sandbox_id, std::string_view execution_id, std::size_t cursor = 0,
                           const call_options& options = {});
    void interrupt(std::string_view sandbox_id, std::string_view execution_id, const call_options& options = {});
    void upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                const call_options& options = {});
    std::string download(std::string_view sandbox_id, std::string_view path, const call_options& options = {});
    // Bytes `first` to `last` of a file, both included (to its end without `last`), asked
    // with a Range header; a server that ignores it still gives only those bytes.
    std::string download_range(std::string_view sandbox_id, std::string_view path, std::uint64_t first,
                               std::optional<std::uint64_t> last = std::nullopt, const call_options& options = {});
    // Lines of a text file from `first_line` (counted from 1), at most `max_lines`, each
    // without its line end, joined by "\n" (execd's `offset` and `limit`).
    std::string read_lines(std::string_view sandbox_id, std::string_view path, std::int64_t first_line = 1,
                           std::optional<std::int64_t> max_lines = std::nullopt, const call_options& options = {});
    // Files and directories, as execd's filesystem API has them: info per path (a missing one
    // fails the call), delete files (a missing one is no error, a directory is), list a
    // directory `depth` levels down, create directories (mkdir -p, with `mode` for the ones
    // it creates) and delete them with everything in them.
    std::map<std::string, entry_info> file_info(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                                const call_options& options = {});
    void delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                      const call_options& options = {});
    std::vector<entry_info> list_directory(std::string_view sandbox_id, std::string_view path, int depth = 1,
                                           const call_options& options = {});
    void create_directories(std::string_view sandbox_id, const std::vector<std::string>& paths, int mode = 755,
                            const call_options& options = {});
    void delete_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                            const call_options& options = {});
    // Moves in turn, stopping at the first that fails (those before it stay done).
    void move_files(std::string_view sandbox_id, const std::vector<file_move>& moves, const call_options& options = {});
    void set_permissions(std::string_view sandbox_id, const std::map<std::string, file_permissions>& permissions,
                         const call_options& options = {});
    // The files (not directories) below `path` whose name matches a glob pattern (`*`, `?`,
    // `[a-z]`, `{a,b}`; `**` matches every name).
    std::vector<entry_info> search_files(std::string_view sandbox_id, std::string_view path,
                                         std::string_view pattern = "**", const call_options& options = {});
    // Changes a sandbox's metadata and returns the sandbox as it now is. Not repeated after it
    // may have arrived (two writers can interleave; the server takes no version).
    sandbox_info patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                const call_options& options = {});
    // Metrics: one sample, or execd's stream of them (about one a second) handed to
    // `on_sample` until it returns false; the number of samples read. The stream is bounded
    // by silence (60 s without a sample is `timeout`), not by the call's timeout.
    metrics_sample get_metrics(std::string_view sandbox_id, const call_options& options = {});
    std::size_t watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                              const call_options& options = {});
    // Snapshots. `create_snapshot` returns at once with the snapshot Creating (the sandbox must
    // be Running); poll `get_snapshot` until it is Ready, then restore it with
    // `create({.snapshot_id = …})`. A snapshot still Creating cannot be deleted (409).
    snapshot_info create_snapshot(std::string_view sandbox_id, std::optional<std::string> name = std::nullopt,
                                  const call_options& options = {});
    snapshot_info get_snapshot(std::string_view snapshot_id, const call_options& options = {});
    std::vector<snapshot_info> list_snapshots(const snapshot_list_request& request = {},
                                              const call_options& options = {});
    void delete_snapshot(std::string_view snapshot_id, const call_options& options = {});
    // How many replacements were made in each file.
    std::map<std::string, std::int64_t> replace_contents(std::string_view sandbox_id,
                                                        const std::map<std::string, content_replacement>& replacements,
                                                        const call_options& options = {});
    // Code contexts and code runs. A context is a kernel of one language that keeps what
    // the code defines between runs; `run_code` streams as `exec` does and is read by exec's
    // rules (a lost stream, a signal exit); code that raises completes with `error` set.
    // `interrupt_code` stops what runs in a context. `delete_code_contexts` deletes every
    // context of one language.
    code_context_info create_code_context(std::string_view sandbox_id, std::string_view language,
                                          std::optional<std::string> cwd = std::nullopt,
                                          const call_options& options = {});
    code_context_info get_code_context(std::string_view sandbox_id, std::string_view context_id,
                                       const call_options& options = {});
    std::vector<code_context_info> list_code_contexts(std::string_view sandbox_id, std::string_view language = {},
                                                      const call_options& options = {});
    void delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                             const call_options& options = {});
    void delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                              const call_options& options = {});
    code_result run_code(std::string_view sandbox_id, const code_run& run, const call_options& options = {});
    void interrupt_code(std::string_view sandbox_id, std::string_view context_id, const call_options& options = {});
    // Interactive terminals (execd's PTY sessions). `attach_terminal` opens the terminal's
    // WebSocket through the sandbox's execd endpoint (the server proxy or a direct endpoint,
    // TLS when the server is https, with the endpoint's headers and token) and returns once
    // the terminal says it is connected; the session then reads and writes (terminal.hpp).
    // A terminal another client holds, or one taken over, is `provider_state_conflict`; one
    // deleted or unknown is `session_lost`.
    std::string create_terminal(std::string_view sandbox_id, const terminal_request& request = {},
                                const call_options& options = {});
    terminal_info terminal_status(std::string_view sandbox_id, std::string_view terminal_id,
                                  const call_options& options = {});
    void delete_terminal(std::string_view sandbox_id, std::string_view terminal_id, const call_options& options = {});
    terminal_session attach_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                                     const attach_options& attach = {}, const call_options& options = {});

    result<sandbox_info> try_create(const create_request& request, const call_options& options = {}) noexcept;
    result<sandbox_info> try_get(std::string_view sandbox_id, const call_options& options = {}) noexcept;
    result<void> try_kill(std::string_view sandbox_id, const call_options& options = {}) noexcept;
    result<std::string> try_renew(std::string_view sandbox_id, std::string_view expires_at,
                                  const call_options& options = {}) noexcept;
    result<endpoint_info> try_endpoint(std::string_view sandbox_id, int port = 44772,
                                       const call_options& options = {}) noexcept;
    result<exec_result> try_exec(std::string_view sandbox_id, const command& cmd,
                                 const call_options& options = {}) noexcept;
    result<command_status> try_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                           const call_options& options = {}) noexcept;
    result<void> try_ping(std::string_view sandbox_id, const call_options& options = {}) noexcept;
    result<std::string> try_create_session(std::string_view sandbox_id, std::optional<std::string> cwd = std::nullopt,
                                           const call_options& options = {}) noexcept;
    result<exec_result> try_run_in_session(std::string_view sandbox_id, std::string_view session_id,
                                           const command& cmd, const call_options& options = {}) noexcept;
    result<void> try_delete_session(std::string_view sandbox_id, std::string_view session_id,
                                    const call_options& options = {}) noexcept;
    result<std::vector<sandbox_info>> try_list(const list_request& request = {},
                                               const call_options& options = {}) noexcept;
    result<void> try_pause(std::string_view sandbox_id, const call_options& options = {}) noexcept;
    result<void> try_resume(std::string_view sandbox_id, const call_options& options = {}) noexcept;
    result<command_logs> try_exec_logs(std::string_view sandbox_id, std::string_view execution_id,
                                       std::size_t cursor = 0, const call_options& options = {}) noexcept;
    result<void> try_interrupt(std::string_view sandbox_id, std::string_view execution_id,
                               const call_options& options = {}) noexcept;
    result<void> try_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                            const call_options& options = {}) noexcept;
    result<std::string> try_download(std::string_view sandbox_id, std::string_view path,
                                     const call_options& options = {}) noexcept;
    result<std::string> try_download_range(std::string_view sandbox_id, std::string_view path, std::uint64_t first,
                                           std::optional<std::uint64_t> last = std::nullopt,
                                           const call_options& options = {}) noexcept;
    result<std::string> try_read_lines(std::string_view sandbox_id, std::string_view path, std::int64_t first_line = 1,
                                       std::optional<std::int64_t> max_lines = std::nullopt,
                                       const call_options& options = {}) noexcept;
    result<std::map<std::string, entry_info>> try_file_info(std::string_view sandbox_id,
                                                            const std::vector<std::string>& paths,
                                                            const call_options& options = {}) noexcept;
    result<void> try_delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                  const call_options& options = {}) noexcept;
    result<std::vector<entry_info>> try_list_directory(std::string_view sandbox_id, std::string_view path, int depth = 1,
                                                       const call_options& options = {}) noexcept;
    result<void> try_create_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                        int mode = 755, const call_options& options = {}) noexcept;
    result<void> try_delete_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                        const call_options& options = {}) noexcept;
    result<void> try_move_files(std::string_view sandbox_id, const std::vector<file_move>& moves,
                                const call_options& options = {}) noexcept;
    result<void> try_set_permissions(std::string_view sandbox_id,
                                     const std::map<std::string, file_permissions>& permissions,
                                     const call_options& options = {}) noexcept;
    result<std::vector<entry_info>> try_search_files(std::string_view sandbox_id, std::string_view path,
                                                     std::string_view pattern = "**",
                                                     const call_options& options = {}) noexcept;
    result<sandbox_info> try_patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                            const call_options& options = {}) noexcept;
    result<metrics_sample> try_get_metrics(std::string_view sandbox_id, const call_options& options = {}) noexcept;
    result<std::size_t> try_watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                                          const call_options& options = {}) noexcept;
    result<snapshot_info> try_create_snapshot(std::string_view sandbox_id, std::optional<std::string> name = std::nullopt,
                                              const call_options& options = {}) noexcept;
    result<snapshot_info> try_get_snapshot(std::string_view snapshot_id, const call_options& options = {}) noexcept;
    result<std::vector<snapshot_info>> try_list_snapshots(const snapshot_list_request& request = {},
                                                          const call_options& options = {}) noexcept;
    result<void> try_delete_snapshot(std::string_view snapshot_id, const call_options& options = {}) noexcept;
    result<std::map<std::string, std::int64_t>> try_replace_contents(
        std::string_view sandbox_id, const std::map<std::string, content_replacement>& replacements,
        const call_options& options = {}) noexcept;
    result<code_context_info> try_create_code_context(std::string_view sandbox_id, std::string_view language,
                                                      std::optional<std::string> cwd = std::nullopt,
                                                      const call_options& options = {}) noexcept;
    result<code_context_info> try_get_code_context(std::string_view sandbox_id, std::string_view context_id,
                                                   const call_options& options = {}) noexcept;
    result<std::vector<code_context_info>> try_list_code_contexts(std::string_view sandbox_id,
                                                                  std::string_view language = {},
                                                                  const call_options& options = {}) noexcept;
    result<void> try_delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                         const call_options& options = {}) noexcept;
    result<void> try_delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                          const call_options& options = {}) noexcept;
    result<code_result> try_run_code(std::string_view sandbox_id, const code_run& run,
                                     const call_options& options = {}) noexcept;
    result<void> try_interrupt_code(std::string_view sandbox_id, std::string_view context_id,
                                    const call_options& options = {}) noexcept;
    result<std::string> try_create_terminal(std::string_view sandbox_id, const terminal_request& request = {},
                                            const call_options& options = {}) noexcept;
    result<terminal_info> try_terminal_status(std::string_view sandbox_id, std::string_view terminal_id,
                                              const call_options& options = {}) noexcept;
    result<void> try_delete_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                                     const call_options& options = {}) noexcept;
    result<terminal_session> try_attach_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                                                 const attach_options& attach = {},
                                                 const call_options& options = {}) noexcept;

    // The asynchronous face: the same calls as awaitables. Arguments are copied into the
    // operation when it is made, so the awaitable may be stored and awaited later. Requests
    // are taken borrowed (`command_ref`, `create_request_ref`, `list_request_ref`; a
    // `command` converts), so a braced request written inside the `co_await` is safe:
    //
    //   auto r = co_await sandboxes.async_exec(id, {.command = "make " + target, .envs = env});
    //
    // With g++ 12, a braced list *inside* such a request (`.envs = {{"A", "1"}}`, a path list
    // `{"/a", "/b"}`) does not compile in a `co_await` ("array used as initializer"); name it
    // first. Lambdas written there should capture by reference (g++ 12 destroys a lambda's
    // captured copies twice).
    //
    // Each takes an Asio completion token last (after the call's options, which may be
    // `{}`): `asio::use_awaitable` by default (an `awaitable<T>`, awaited where it is
    // awaited), or a callback taking `result<T>`, `asio::deferred` or `asio::use_future`,
    // with which the operation runs on the client's executor (see `complete` below):
    //
    //   sandboxes.async_exec(id, cmd, {}, [](ngfail::result<exec_result> r) { … });
    //   std::future<ngfail::result<sandbox_info>> f = sandboxes.async_get(id, {}, asio::use_future);
    template <class T>
    using awaitable = boost::asio::awaitable<result<T>>;
    using default_completion_token = boost::asio::use_awaitable_t<>;
    template <class CompletionToken = default_completion_token>
    auto async_create(const create_request_ref& request, const call_options& options = {},
                      CompletionToken&& token = {}) {
        return complete(make_create(request, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_get(std::string_view sandbox_id, const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_get(sandbox_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_kill(std::string_view sandbox_id, const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_kill(sandbox_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_renew(std::string_view sandbox_id, std::string_view expires_at, const call_options& options = {},
                     CompletionToken&& token = {}) {
        return complete(make_renew(sandbox_id, expires_at, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_endpoint(std::string_view sandbox_id, int port = 44772, const call_options& options = {},
                        CompletionToken&& token = {}) {
        return complete(make_endpoint(sandbox_id, port, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_exec(std::string_view sandbox_id, const command_ref& cmd, const call_options& options = {},
                    CompletionToken&& token = {}) {
        return complete(make_exec(sandbox_id, cmd, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                           const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_exec_status(sandbox_id, execution_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_ping(std::string_view sandbox_id, const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_ping(sandbox_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_create_session(std::string_view sandbox_id, std::optional<std::string> cwd = std::nullopt,
                              const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_create_session(sandbox_id, cwd, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_run_in_session(std::string_view sandbox_id, std::string_view session_id, const command_ref& cmd,
                              const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_run_in_session(sandbox_id, session_id, cmd, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_session(std::string_view sandbox_id, std::string_view session_id,
                              const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_delete_session(sandbox_id, session_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_list(const list_request_ref& request = {}, const call_options& options = {},
                    CompletionToken&& token = {}) {
        return complete(make_list(request, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_pause(std::string_view sandbox_id, const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_pause(sandbox_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_resume(std::string_view sandbox_id, const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_resume(sandbox_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_exec_logs(std::string_view sandbox_id, std::string_view execution_id, std::size_t cursor = 0,
                         const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_exec_logs(sandbox_id, execution_id, cursor, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_interrupt(std::string_view sandbox_id, std::string_view execution_id, const call_options& options = {},
                         CompletionToken&& token = {}) {
        return complete(make_interrupt(sandbox_id, execution_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                      const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_upload(sandbox_id, path, content, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_download(std::string_view sandbox_id, std::string_view path, const call_options& options = {},
                        CompletionToken&& token = {}) {
        return complete(make_download(sandbox_id, path, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_download_range(std::string_view sandbox_id, std::string_view path, std::uint64_t first,
                              std::optional<std::uint64_t> last = std::nullopt, const call_options& options = {},
                              CompletionToken&& token = {}) {
        return complete(make_download_range(sandbox_id, path, first, last, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_read_lines(std::string_view sandbox_id, std::string_view path, std::int64_t first_line = 1,
                          std::optional<std::int64_t> max_lines = std::nullopt, const call_options& options = {},
                          CompletionToken&& token = {}) {
        return complete(make_read_lines(sandbox_id, path, first_line, max_lines, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_file_info(std::string_view sandbox_id, const std::vector<std::string>& paths,
                         const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_file_info(sandbox_id, paths, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                            const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_delete_files(sandbox_id, paths, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_list_directory(std::string_view sandbox_id, std::string_view path, int depth = 1,
                              const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_list_directory(sandbox_id, path, depth, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_create_directories(std::string_view sandbox_id, const std::vector<std::string>& paths, int mode = 755,
                                  const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_create_directories(sandbox_id, paths, mode, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                  const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_delete_directories(sandbox_id, paths, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_move_files(std::string_view sandbox_id, const std::vector<file_move>& moves,
                          const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_move_files(sandbox_id, moves, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_set_permissions(std::string_view sandbox_id,
                               const std::map<std::string, file_permissions>& permissions,
                               const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_set_permissions(sandbox_id, permissions, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_search_files(std::string_view sandbox_id, std::string_view path, std::string_view pattern = "**",
                            const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_search_files(sandbox_id, path, pattern, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                              const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_patch_metadata(sandbox_id, patch, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_get_metrics(std::string_view sandbox_id, const call_options& options = {}, CompletionToken&& token = {}
                           ) {
        return complete(make_get_metrics(sandbox_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                             const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_watch_metrics(sandbox_id, on_sample, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_create_snapshot(std::string_view sandbox_id, std::optional<std::string> name = std::nullopt,
                               const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_create_snapshot(sandbox_id, name, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_get_snapshot(std::string_view snapshot_id, const call_options& options = {},
                            CompletionToken&& token = {}) {
        return complete(make_get_snapshot(snapshot_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_list_snapshots(const snapshot_list_request& request = {}, const call_options& options = {},
                              CompletionToken&& token = {}) {
        return complete(make_list_snapshots(request, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_snapshot(std::string_view snapshot_id, const call_options& options = {},
                               CompletionToken&& token = {}) {
        return complete(make_delete_snapshot(snapshot_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_replace_contents(std::string_view sandbox_id,
                                const std::map<std::string, content_replacement>& replacements,
                                const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_replace_contents(sandbox_id, replacements, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_create_code_context(std::string_view sandbox_id, std::string_view language,
                                   std::optional<std::string> cwd = std::nullopt, const call_options& options = {},
                                   CompletionToken&& token = {}) {
        return complete(make_create_code_context(sandbox_id, language, cwd, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_get_code_context(std::string_view sandbox_id, std::string_view context_id,
                                const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_get_code_context(sandbox_id, context_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_list_code_contexts(std::string_view sandbox_id, std::string_view language = {},
                                  const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_list_code_contexts(sandbox_id, language, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                   const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_delete_code_context(sandbox_id, context_id, options),
                        std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                    const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_delete_code_contexts(sandbox_id, language, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_run_code(std::string_view sandbox_id, const code_run_ref& run, const call_options& options = {},
                        CompletionToken&& token = {}) {
        return complete(make_run_code(sandbox_id, run, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_interrupt_code(std::string_view sandbox_id, std::string_view context_id,
                              const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_interrupt_code(sandbox_id, context_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_create_terminal(std::string_view sandbox_id, const terminal_request& request = {},
                               const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_create_terminal(sandbox_id, request, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_terminal_status(std::string_view sandbox_id, std::string_view terminal_id,
                               const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_terminal_status(sandbox_id, terminal_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_delete_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                               const call_options& options = {}, CompletionToken&& token = {}) {
        return complete(make_delete_terminal(sandbox_id, terminal_id, options), std::forward<CompletionToken>(token));
    }
    template <class CompletionToken = default_completion_token>
    auto async_attach_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                               const attach_options& attach = {}, const call_options& options = {},
                               CompletionToken&& token = {}) {
        return complete(make_attach_terminal(sandbox_id, terminal_id, attach, options),
                        std::forward<CompletionToken>(token));
    }

    // What every `async_*` does with its token: an operation completed through an Asio
    // completion token (a callback taking `result<T>`, `asio::deferred`, `asio::use_future`).
    // It also takes an operation already made, as code written before the token parameter
    // did: `sandboxes.complete(sandboxes.async_get(id), asio::use_future)`.
    //
    // The operation runs on the client's executor; the handler is called on its associated
    // executor (the client's when it has none), once, whatever happens; a cancellation slot
    // bound to it (`asio::bind_cancellation_slot`) cancels the operation, which then
    // completes as `cancelled`. With the default token the operation itself is returned.
    template <class T, class CompletionToken>
    auto complete(awaitable<T> operation, CompletionToken&& token) {
        return detail::complete_on(get_executor(), std::move(operation), std::forward<CompletionToken>(token));
    }

private:
    // Each operation of the asynchronous face, made (not started): defined in the operation's
    // own file, in src/opensandbox/client/.
    awaitable<sandbox_info> make_create(const create_request_ref& request, const call_options& options);
    awaitable<sandbox_info> make_get(std::string_view sandbox_id, const call_options& options);
    awaitable<void> make_kill(std::string_view sandbox_id, const call_options& options);
    awaitable<std::string> make_renew(std::string_view sandbox_id, std::string_view expires_at,
                                      const call_options& options);
    awaitable<endpoint_info> make_endpoint(std::string_view sandbox_id, int port, const call_options& options);
    awaitable<exec_result> make_exec(std::string_view sandbox_id, const command_ref& cmd, const call_options& options);
    awaitable<command_status> make_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                               const call_options& options);
    awaitable<void> make_ping(std::string_view sandbox_id, const call_options& options);
    awaitable<std::string> make_create_session(std::string_view sandbox_id, std::optional<std::string> cwd,
                                               const call_options& options);
    awaitable<exec_result> make_run_in_session(std::string_view sandbox_id, std::string_view session_id,
                                               const command_ref& cmd, const call_options& options);
    awaitable<void> make_delete_session(std::string_view sandbox_id, std::string_view session_id,
                                        const call_options& options);
    awaitable<std::vector<sandbox_info>> make_list(const list_request_ref& request, const call_options& options);
    awaitable<void> make_pause(std::string_view sandbox_id, const call_options& options);
    awaitable<void> make_resume(std::string_view sandbox_id, const call_options& options);
    awaitable<command_logs> make_exec_logs(std::string_view sandbox_id, std::string_view execution_id,
                                           std::size_t cursor, const call_options& options);
    awaitable<void> make_interrupt(std::string_view sandbox_id, std::string_view execution_id,
                                   const call_options& options);
    awaitable<void> make_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                                const call_options& options);
    awaitable<std::string> make_download(std::string_view sandbox_id, std::string_view path,
                                         const call_options& options);
    awaitable<std::string> make_download_range(std::string_view sandbox_id, std::string_view path,
                                               std::uint64_t first, std::optional<std::uint64_t> last,
                                               const call_options& options);
    awaitable<std::string> make_read_lines(std::string_view sandbox_id, std::string_view path,
                                           std::int64_t first_line, std::optional<std::int64_t> max_lines,
                                           const call_options& options);
    awaitable<std::map<std::string, entry_info>> make_file_info(std::string_view sandbox_id,
                                                                const std::vector<std::string>& paths,
                                                                const call_options& options);
    awaitable<void> make_delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                      const call_options& options);
    awaitable<std::vector<entry_info>> make_list_directory(std::string_view sandbox_id, std::string_view path,
                                                           int depth, const call_options& options);
    awaitable<void> make_create_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                            int mode, const call_options& options);
    awaitable<void> make_delete_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                            const call_options& options);
    awaitable<void> make_move_files(std::string_view sandbox_id, const std::vector<file_move>& moves,
                                    const call_options& options);
    awaitable<void> make_set_permissions(std::string_view sandbox_id,
                                         const std::map<std::string, file_permissions>& permissions,
                                         const call_options& options);
    awaitable<std::vector<entry_info>> make_search_files(std::string_view sandbox_id, std::string_view path,
                                                         std::string_view pattern, const call_options& options);
    awaitable<sandbox_info> make_patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                                const call_options& options);
    awaitable<metrics_sample> make_get_metrics(std::string_view sandbox_id, const call_options& options);
    awaitable<std::size_t> make_watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                                              const call_options& options);
    awaitable<snapshot_info> make_create_snapshot(std::string_view sandbox_id, std::optional<std::string> name,
                                                  const call_options& options);
    awaitable<snapshot_info> make_get_snapshot(std::string_view snapshot_id, const call_options& options);
    awaitable<std::vector<snapshot_info>> make_list_snapshots(const snapshot_list_request& request,
                                                              const call_options& options);
    awaitable<void> make_delete_snapshot(std::string_view snapshot_id, const call_options& options);
    awaitable<std::map<std::string, std::int64_t>> make_replace_contents(
        std::string_view sandbox_id, const std::map<std::string, content_replacement>& replacements,
        const call_options& options);
    awaitable<code_context_info> make_create_code_context(std::string_view sandbox_id, std::string_view language,
                                                          std::optional<std::string> cwd, const call_options& options);
    awaitable<code_context_info> make_get_code_context(std::string_view sandbox_id, std::string_view context_id,
                                                       const call_options& options);
    awaitable<std::vector<code_context_info>> make_list_code_contexts(
        std::string_view sandbox_id, std::string_view language, const call_options& options);
    awaitable<void> make_delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                             const call_options& options);
    awaitable<void> make_delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                              const call_options& options);
    awaitable<code_result> make_run_code(std::string_view sandbox_id, const code_run_ref& run,
                                         const call_options& options);
    awaitable<void> make_interrupt_code(std::string_view sandbox_id, std::string_view context_id,
                                        const call_options& options);
    awaitable<std::string> make_create_terminal(std::string_view sandbox_id, const terminal_request& request,
                                                const call_options& options);
    awaitable<terminal_info> make_terminal_status(std::string_view sandbox_id, std::string_view terminal_id,
                                                  const call_options& options);
    awaitable<void> make_delete_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                                         const call_options& options);
    awaitable<terminal_session> make_attach_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                                                     const attach_options& attach, const call_options& options);

    std::unique_ptr<detail::client_state> state_;
};

}  // namespace ngfail::opensandbox

#include <ngfail/opensandbox/terminal.hpp>  // the attached terminal, which the client returns
