// <ngfail/opensandbox/client.hpp> — an OpenSandbox client that speaks ngfail
// (target ngfail::opensandbox_client, Boost.Beast, HTTP/1.1 over TCP or TLS).
//
// Three faces over one implementation. Throwing methods raise classified `sandbox_failure`s
// with the underlying error (an `api_error` or a `connection_error`) nested as the cause;
// `noexcept` `try_*` methods return the same failures as `result<T>`; `async_*` methods
// complete with them through an Asio completion token (below). Each operation is declared
// once, as `NGFAIL_OPENSANDBOX_CALL(name, (parameters), (names), result)`, which gives
// `name`, `try_name` and `async_name` with those parameters and `call_options` last
// (<ngfail/opensandbox/detail/faces.hpp>):
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
// the socket of an operation past its deadline on that socket's executor. Connections are
// kept alive and reused per server (`max_idle_connections`), and execd endpoints are cached
// per sandbox until it is killed, paused or resumed, or a connection to its endpoint fails.
//
// `https://` servers are reached over TLS (OpenSSL) with SNI and the server's certificate
// verified against the system CA store (or `tls.ca_file`); verification is off only when
// `tls.verify_peer` is set false. A sandbox's execd is reached with the lifecycle server's
// scheme, as the official SDKs do.
#pragma once

#include <ngfail/opensandbox/asio_errors.hpp>
#include <ngfail/opensandbox/borrowed.hpp>
#include <ngfail/opensandbox/classify.hpp>
#include <ngfail/opensandbox/client_options.hpp>
#include <ngfail/opensandbox/code_types.hpp>
#include <ngfail/opensandbox/command_types.hpp>
#include <ngfail/opensandbox/completion.hpp>
#include <ngfail/opensandbox/connection_error.hpp>
#include <ngfail/opensandbox/detail/faces.hpp>
#include <ngfail/opensandbox/diagnostic_types.hpp>
#include <ngfail/opensandbox/file_types.hpp>
#include <ngfail/opensandbox/metrics_types.hpp>
#include <ngfail/opensandbox/sandbox_types.hpp>
#include <ngfail/opensandbox/snapshot_types.hpp>
#include <ngfail/opensandbox/terminal.hpp>
#include <ngfail/opensandbox/terminal_types.hpp>
#include <ngfail/result.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ngfail::opensandbox {

namespace detail {
struct client_state;  // what the operations share; defined with them
}  // namespace detail

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

    // The asynchronous face's types. Each `async_*` call takes an Asio completion token last
    // (after the call's options, which may be `{}`): `asio::use_awaitable` by default (an
    // `awaitable<T>`, awaited where it is awaited), or a callback taking `result<T>`,
    // `asio::deferred` or `asio::use_future`, with which the operation runs on the client's
    // executor (see `complete` below):
    //
    //   sandboxes.async_exec(id, cmd, {}, [](ngfail::result<exec_result> r) { … });
    //   std::future<ngfail::result<sandbox_info>> f = sandboxes.async_get(id, {}, asio::use_future);
    //
    // Arguments are copied into the operation when it is made, so the awaitable may be
    // stored and awaited later. Requests are taken borrowed (`command_ref`,
    // `create_request_ref`, …; a `command` converts), so a braced request written inside the
    // `co_await` is safe:
    //
    //   auto r = co_await sandboxes.async_exec(id, {.command = "make " + target, .envs = env});
    //
    // With g++ 12, a braced list *inside* such a request (`.envs = {{"A", "1"}}`, a path list
    // `{"/a", "/b"}`) does not compile in a `co_await` ("array used as initializer"); name it
    // first. Lambdas written there should capture by reference (g++ 12 destroys a lambda's
    // captured copies twice).
    template <class T>
    using awaitable = boost::asio::awaitable<result<T>>;
    using default_completion_token = boost::asio::use_awaitable_t<>;

    // Creates a sandbox and, unless `request.wait_until_ready` is false, waits until it is
    // usable (sandbox_types.hpp says how).
    NGFAIL_OPENSANDBOX_CALL(create, (const create_request_ref& request), (request), sandbox_info)
    // The sandbox as the lifecycle server describes it now.
    NGFAIL_OPENSANDBOX_CALL(get, (std::string_view sandbox_id), (sandbox_id), sandbox_info)
    // Deletes the sandbox (its processes and files go with it). One the server says is already
    // gone (404 `*SANDBOX_NOT_FOUND`) is a kill done, not failed: the 404 goes to
    // `call_options::log` (a clean-up after a failed create meets it).
    NGFAIL_OPENSANDBOX_CALL(kill, (std::string_view sandbox_id), (sandbox_id), void)
    // Moves the sandbox's expiry to `expires_at` (RFC 3339); the expiry the server set.
    NGFAIL_OPENSANDBOX_CALL(renew, (std::string_view sandbox_id, std::string_view expires_at),
                            (sandbox_id, expires_at), std::string)
    // Where a port of the sandbox is reached (execd's is 44772), with the headers it wants.
    NGFAIL_OPENSANDBOX_CALL(endpoint, (std::string_view sandbox_id, int port = 44772),
                            (sandbox_id, port), endpoint_info)
    // Runs a command (bash -c) and returns what it did; a non-zero exit is a result.
    NGFAIL_OPENSANDBOX_CALL(exec, (std::string_view sandbox_id, const command_ref& cmd), (sandbox_id, cmd), exec_result)
    // A background command's state: running, or its exit code.
    NGFAIL_OPENSANDBOX_CALL(exec_status, (std::string_view sandbox_id, std::string_view execution_id),
                            (sandbox_id, execution_id), command_status)
    // Whether the sandbox's execd answers.
    NGFAIL_OPENSANDBOX_CALL(ping, (std::string_view sandbox_id), (sandbox_id), void)
    // Bash sessions: a shell whose working directory and exported variables stay from one
    // run to the next (`cd`, `export`). A run streams as `exec` does (the result's
    // execution_id is the session's id) and is never in the background; `cmd.envs` is
    // refused (export them in the session).
    NGFAIL_OPENSANDBOX_CALL(create_session, (std::string_view sandbox_id, std::optional<std::string> cwd = std::nullopt),
                            (sandbox_id, cwd), std::string)
    NGFAIL_OPENSANDBOX_CALL(run_in_session, (std::string_view sandbox_id, std::string_view session_id, const command_ref& cmd),
                            (sandbox_id, session_id, cmd), exec_result)
    NGFAIL_OPENSANDBOX_CALL(delete_session, (std::string_view sandbox_id, std::string_view session_id),
                            (sandbox_id, session_id), void)
    // Sandboxes matching the request's states and metadata, a page at a time.
    NGFAIL_OPENSANDBOX_CALL(list, (const list_request_ref& request = {}), (request), std::vector<sandbox_info>)
    // Pauses or resumes the sandbox (its processes frozen, its files kept). A refusal for the
    // sandbox's state (409) is read with that state: a sandbox that died is lost, not in conflict.
    NGFAIL_OPENSANDBOX_CALL(pause, (std::string_view sandbox_id), (sandbox_id), void)
    NGFAIL_OPENSANDBOX_CALL(resume, (std::string_view sandbox_id), (sandbox_id), void)
    // A background command's output from byte `cursor` on, and the cursor to ask from next.
    NGFAIL_OPENSANDBOX_CALL(exec_logs, (std::string_view sandbox_id, std::string_view execution_id, std::size_t cursor = 0),
                            (sandbox_id, execution_id, cursor), command_logs)
    // Stops a running command (a signal to its process group).
    NGFAIL_OPENSANDBOX_CALL(interrupt, (std::string_view sandbox_id, std::string_view execution_id),
                            (sandbox_id, execution_id), void)
    // Writes `content` to the file at `path` (its parent directories are made), or reads it.
    NGFAIL_OPENSANDBOX_CALL(upload, (std::string_view sandbox_id, std::string_view path, std::string_view content),
                            (sandbox_id, path, content), void)
    NGFAIL_OPENSANDBOX_CALL(download, (std::string_view sandbox_id, std::string_view path),
                            (sandbox_id, path), std::string)
    // Bytes `first` to `last` of a file, both included (to its end without `last`), asked
    // with a Range header; a server that ignores it still gives only those bytes.
    NGFAIL_OPENSANDBOX_CALL(download_range, (std::string_view sandbox_id, std::string_view path, std::uint64_t first, std::optional<std::uint64_t> last = std::nullopt),
                            (sandbox_id, path, first, last), std::string)
    // Lines of a text file from `first_line` (counted from 1), at most `max_lines`, each
    // without its line end, joined by "\n" (execd's `offset` and `limit`).
    NGFAIL_OPENSANDBOX_CALL(read_lines, (std::string_view sandbox_id, std::string_view path, std::int64_t first_line = 1, std::optional<std::int64_t> max_lines = std::nullopt),
                            (sandbox_id, path, first_line, max_lines), std::string)
    // Files and directories, as execd's filesystem API has them: info per path (a missing one
    // fails the call), delete files (a missing one is no error, a directory is), list a
    // directory `depth` levels down, create directories (mkdir -p, with `mode` for the ones
    // it creates) and delete them with everything in them.
    NGFAIL_OPENSANDBOX_CALL(file_info, (std::string_view sandbox_id, const std::vector<std::string>& paths),
                            (sandbox_id, paths), std::map<std::string, entry_info>)
    NGFAIL_OPENSANDBOX_CALL(delete_files, (std::string_view sandbox_id, const std::vector<std::string>& paths),
                            (sandbox_id, paths), void)
    NGFAIL_OPENSANDBOX_CALL(list_directory, (std::string_view sandbox_id, std::string_view path, int depth = 1),
                            (sandbox_id, path, depth), std::vector<entry_info>)
    NGFAIL_OPENSANDBOX_CALL(create_directories, (std::string_view sandbox_id, const std::vector<std::string>& paths, int mode = 755),
                            (sandbox_id, paths, mode), void)
    NGFAIL_OPENSANDBOX_CALL(delete_directories, (std::string_view sandbox_id, const std::vector<std::string>& paths),
                            (sandbox_id, paths), void)
    // Moves in turn, stopping at the first that fails (those before it stay done).
    NGFAIL_OPENSANDBOX_CALL(move_files, (std::string_view sandbox_id, const std::vector<file_move>& moves),
                            (sandbox_id, moves), void)
    NGFAIL_OPENSANDBOX_CALL(set_permissions, (std::string_view sandbox_id, const std::map<std::string, file_permissions>& permissions),
                            (sandbox_id, permissions), void)
    // The files (not directories) below `path` whose name matches a glob pattern (`*`, `?`,
    // `[a-z]`, `{a,b}`; `**` matches every name).
    NGFAIL_OPENSANDBOX_CALL(search_files, (std::string_view sandbox_id, std::string_view path, std::string_view pattern = "**"),
                            (sandbox_id, path, pattern), std::vector<entry_info>)
    // Changes a sandbox's metadata and returns the sandbox as it now is. Not repeated after it
    // may have arrived (two writers can interleave; the server takes no version).
    NGFAIL_OPENSANDBOX_CALL(patch_metadata, (std::string_view sandbox_id, const metadata_patch& patch),
                            (sandbox_id, patch), sandbox_info)
    // Metrics: one sample, or execd's stream of them (about one a second) handed to
    // `on_sample` until it returns false; the number of samples read. The stream is bounded
    // by silence (60 s without a sample is `timeout`), not by the call's timeout.
    NGFAIL_OPENSANDBOX_CALL(get_metrics, (std::string_view sandbox_id), (sandbox_id), metrics_sample)
    NGFAIL_OPENSANDBOX_CALL(watch_metrics, (std::string_view sandbox_id, const metrics_callback& on_sample),
                            (sandbox_id, on_sample), std::size_t)
    // Snapshots. `create_snapshot` returns at once with the snapshot Creating (the sandbox must
    // be Running); poll `get_snapshot` until it is Ready, then restore it with
    // `create({.snapshot_id = …})`. A snapshot still Creating cannot be deleted (409).
    NGFAIL_OPENSANDBOX_CALL(create_snapshot, (std::string_view sandbox_id, std::optional<std::string> name = std::nullopt),
                            (sandbox_id, name), snapshot_info)
    NGFAIL_OPENSANDBOX_CALL(get_snapshot, (std::string_view snapshot_id), (snapshot_id), snapshot_info)
    NGFAIL_OPENSANDBOX_CALL(list_snapshots, (const snapshot_list_request_ref& request = {}),
                            (request), std::vector<snapshot_info>)
    NGFAIL_OPENSANDBOX_CALL(delete_snapshot, (std::string_view snapshot_id), (snapshot_id), void)
    // Diagnostics: a sandbox's logs or events as the server renders them for people, in a
    // `scope` the server defines ("all", "container", "lifecycle", "runtime", …). Servers
    // without the API answer 501 (`provider_unavailable`, as any 5xx). The text is for reading: the
    // API's spec gives it no schema, and no failure's kind is ever taken from it.
    NGFAIL_OPENSANDBOX_CALL(diagnostic_logs, (std::string_view sandbox_id, std::string_view scope = "all"),
                            (sandbox_id, scope), diagnostic_content)
    NGFAIL_OPENSANDBOX_CALL(diagnostic_events, (std::string_view sandbox_id, std::string_view scope = "all"),
                            (sandbox_id, scope), diagnostic_content)
    // How many replacements were made in each file.
    NGFAIL_OPENSANDBOX_CALL(replace_contents, (std::string_view sandbox_id, const std::map<std::string, content_replacement>& replacements),
                            (sandbox_id, replacements), std::map<std::string, std::int64_t>)
    // Code contexts and code runs. A context is a kernel of one language that keeps what
    // the code defines between runs; `run_code` streams as `exec` does and is read by exec's
    // rules (a lost stream, a signal exit); code that raises completes with `error` set.
    // `interrupt_code` stops what runs in a context. `delete_code_contexts` deletes every
    // context of one language.
    NGFAIL_OPENSANDBOX_CALL(create_code_context, (std::string_view sandbox_id, std::string_view language, std::optional<std::string> cwd = std::nullopt),
                            (sandbox_id, language, cwd), code_context_info)
    NGFAIL_OPENSANDBOX_CALL(get_code_context, (std::string_view sandbox_id, std::string_view context_id),
                            (sandbox_id, context_id), code_context_info)
    NGFAIL_OPENSANDBOX_CALL(list_code_contexts, (std::string_view sandbox_id, std::string_view language = {}),
                            (sandbox_id, language), std::vector<code_context_info>)
    NGFAIL_OPENSANDBOX_CALL(delete_code_context, (std::string_view sandbox_id, std::string_view context_id),
                            (sandbox_id, context_id), void)
    NGFAIL_OPENSANDBOX_CALL(delete_code_contexts, (std::string_view sandbox_id, std::string_view language),
                            (sandbox_id, language), void)
    NGFAIL_OPENSANDBOX_CALL(run_code, (std::string_view sandbox_id, const code_run_ref& run),
                            (sandbox_id, run), code_result)
    NGFAIL_OPENSANDBOX_CALL(interrupt_code, (std::string_view sandbox_id, std::string_view context_id),
                            (sandbox_id, context_id), void)
    // Interactive terminals (execd's PTY sessions). `attach_terminal` opens the terminal's
    // WebSocket through the sandbox's execd endpoint (the server proxy or a direct endpoint,
    // TLS when the server is https, with the endpoint's headers and token) and returns once
    // the terminal says it is connected; the session then reads and writes (terminal.hpp).
    // A terminal another client holds, or one taken over, is `provider_state_conflict`; one
    // deleted or unknown is `session_lost`.
    NGFAIL_OPENSANDBOX_CALL(create_terminal, (std::string_view sandbox_id, const terminal_request_ref& request = {}),
                            (sandbox_id, request), std::string)
    NGFAIL_OPENSANDBOX_CALL(terminal_status, (std::string_view sandbox_id, std::string_view terminal_id),
                            (sandbox_id, terminal_id), terminal_info)
    NGFAIL_OPENSANDBOX_CALL(delete_terminal, (std::string_view sandbox_id, std::string_view terminal_id),
                            (sandbox_id, terminal_id), void)
    NGFAIL_OPENSANDBOX_CALL(attach_terminal, (std::string_view sandbox_id, std::string_view terminal_id, const attach_options& attach = {}),
                            (sandbox_id, terminal_id, attach), terminal_session)

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
    // The blocking faces: an attach runs on the client's executor, where its session stays;
    // any other call on an I/O context of the calling thread's (client.cpp says why).
    template <class Make, class T = typename std::invoke_result_t<Make&>::value_type::value_type>
    result<T> run_blocking(Make make) noexcept {
        return detail::run_made(make, [this](boost::asio::awaitable<void> work) {
            drive(std::move(work), std::is_same_v<T, terminal_session>);
        });
    }
    void drive(boost::asio::awaitable<void> work, bool on_executor);

    std::unique_ptr<detail::client_state> state_;
};

}  // namespace ngfail::opensandbox
