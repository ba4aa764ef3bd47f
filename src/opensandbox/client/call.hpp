// One call of the client, whatever the operation and whichever face: the client's shared
// state (executor, pool, endpoint cache), the call's context (deadline, secrets, the
// lifecycle and execd requests every operation is made of), the checks on its arguments,
// and the attempt loop that classifies each failure and retries only what was not sent.
#pragma once

#include "connection.hpp"
#include "endpoint_cache.hpp"
#include "redactor.hpp"
#include "request_safety.hpp"

#include <ngfail/request_failure_log.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <future>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace ngfail::opensandbox::detail {

// What the operations of one client share; the client owns it.
struct client_state {
    client_state(boost::asio::any_io_executor on, client_options o);
    explicit client_state(client_options o);
    ~client_state();

    // The TLS context, made when the first https connection needs it.
    boost::asio::ssl::context& tls();

    // An I/O context for one blocking call, and its return.
    boost::asio::io_context& borrow_driver();
    void return_driver(boost::asio::io_context& driver) noexcept;
    // The context of the blocking call this thread is running, if any: that call's
    // connections are opened there; every other call's on `executor`, whose context
    // outlives the client (an awaiting coroutine's own context may not).
    static thread_local boost::asio::io_context* driving;

    client_options options;
    std::optional<std::string> configuration_problem;  // a base URL that cannot be parsed
    detail::target lifecycle;                           // the server, its base path ending in /v1
    // The I/O contexts the blocking faces run their calls on, each on its caller's thread and
    // borrowed for one call (the most recently returned first, with its kept connections).
    // Kept until the client ends, and declared before the pool, whose connections on them
    // must go first; `idle_drivers` has room for all, so that a return never allocates.
    std::mutex drivers_mutex;
    std::vector<std::unique_ptr<boost::asio::io_context>> drivers;
    std::vector<boost::asio::io_context*> idle_drivers;
    std::unique_ptr<boost::asio::io_context> own_io;           // when the client runs its own I/O
    boost::asio::any_io_executor executor;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> keep_running;
    detail::connection_pool pool;
    detail::endpoint_cache endpoints;
    std::once_flag tls_made;
    std::unique_ptr<boost::asio::ssl::context> tls_context;
    std::thread io_thread;
};

inline constexpr std::string_view api_key_header = "OPEN-SANDBOX-API-KEY";
inline constexpr auto status_probe_timeout = std::chrono::milliseconds(2000);
inline constexpr int execd_port = 44772;

struct call_context {
    client_state& shared;  // the client's executor, pool and endpoint cache
    const client_options& options;
    clock::time_point deadline;
    redactor& secrets;  // what the request carried; scrubbed from everything recorded
    replay_policy replay = replay_policy::before_delivery;  // the operation's
    observed_call* trace = nullptr;    // the call's observer, if it is watched
    std::string_view trace_parent{};   // W3C traceparent for the attempt's requests (empty: none)
    int attempt = 1;                   // which attempt of the call this is

    // The rest of the call's time, capped at `most`: a step (a status probe, a clean-up)
    // never outlives the call's deadline.
    [[nodiscard]] std::optional<call_context> within(std::chrono::milliseconds most) const;
    // This call's step with a deadline of its own (its requests still the call's: they
    // carry its secrets and its attempt's trace parent).
    [[nodiscard]] call_context until(clock::time_point step_deadline) const {
        call_context step = *this;
        step.deadline = step_deadline;
        return step;
    }

    // GET …/endpoints/{port}, asking for the server proxy or a direct endpoint as configured.
    [[nodiscard]] std::string endpoint_path(std::string_view sandbox_id, int port) const;

    // The endpoint of execd for a sandbox (cached), its credentials marked secret.
    [[nodiscard]] awaitable<shared_route> execd_endpoint(std::string_view sandbox_id) const;
    // ... when it is cached: without a coroutine of its own (nullptr when not cached).
    [[nodiscard]] shared_route cached_execd_endpoint(std::string_view sandbox_id) const;

    // A connection to `where`: a kept-alive one (unless `fresh`), or a new one opened within
    // the deadline. An https one needs `where` to be the server the caller meant (SNI,
    // verification).
    [[nodiscard]] awaitable<lease> connect(const target& where, bool fresh = false) const;
    // A kept-alive connection to `where` for a call running on `here`, without a coroutine
    // of its own: the common case of the two above, taken first on an exec's path (each
    // coroutine frame is an allocation a call).
    [[nodiscard]] std::optional<lease> kept_connection(const target& where, const asio::any_io_executor& here) const;

    // A connection to a sandbox's execd endpoint; a failure to connect drops the cached
    // endpoint, so the next call asks the server again.
    [[nodiscard]] awaitable<lease> connect_to_execd(std::string_view sandbox_id, const target& where,
                                                    bool fresh = false) const;

    // Sends `req` to `where` (a sandbox's execd when `execd_sandbox` is set) and reads the
    // whole reply. A kept-alive connection that the server closed without answering gets the
    // request once more, on a fresh connection, when repeating it is safe: a GET or HEAD, or
    // an operation whose replay policy allows any delivery (RFC 9110 §9.2.2). Servers close
    // idle connections on their own clock, and a request that meets that close is not a
    // failure of the request; anything else is never repeated here.
    [[nodiscard]] awaitable<string_response> exchange(request& req, const target& where,
                                                      std::string_view execd_sandbox = {}) const;

    // A lifecycle request with the API key; error replies become api_errors.
    [[nodiscard]] awaitable<boost::json::value> lifecycle(beast_http::verb verb, std::string path,
                                                         const boost::json::value* body) const;

    // One execd request to the sandbox, through its endpoint with the endpoint's headers (and
    // `range` as its Range header when set), the reply read whole; an error reply becomes an
    // api_error.
    [[nodiscard]] awaitable<string_response> execd_call(std::string_view sandbox_id, beast_http::verb verb,
                                                       std::string path, std::string body = {},
                                                       std::string content_type = {}, std::string range = {}) const;
};

// Fills the observation from what went wrong, structurally.
void describe(observation& seen, const std::exception_ptr& cause);

// After a failure whose reply proves nothing (a stream cut, a proxy's bare 5xx, a WebSocket
// closed 1011), the sandbox's own status is evidence: its state and reason (structured
// fields only) go into `seen`, within `probe`'s deadline. No status, no evidence: nothing is
// added, and the failure stands on what was seen.
// The read gets at most `status_probe_timeout` of the call's time. When the client fetches
// failure diagnostics (`client_options::failure_diagnostics`), their text is attached to
// `seen` after the status (`add_diagnostics`), in another such slice.
[[nodiscard]] awaitable<void> add_sandbox_status(const call_context& probe, observation& seen);

// The sandbox's diagnostic events and logs as one text in `seen.diagnostics`, scrubbed of
// the client's secrets and cut to the option's bound, within `probe`'s deadline. Text the
// server only offers by URL is named, not fetched (a download URL may carry a credential).
[[nodiscard]] awaitable<void> add_diagnostics(const call_context& probe, observation& seen);

// Every text the observation took from a reply, with the request's secrets scrubbed (the
// cause, an api_error, was scrubbed when it was made; diagnostics when they were attached,
// before they were cut to their bound).
void scrub(observation& seen, const redactor& secrets);

// The wait the server asked for (`Retry-After`), if any.
[[nodiscard]] std::optional<std::chrono::milliseconds> retry_after(const observation& seen) noexcept;

// `f`, not resent because the server asked for a wait (`asked`) longer than the call may
// wait (`longest`, which `what` names): the reason says so, and `f` is its cause.
[[nodiscard]] failure not_resent(const failure& f, std::chrono::milliseconds asked, std::chrono::milliseconds longest,
                                 std::string_view what) noexcept;

// A retry is safe and may help: the operation's replay policy allows it for the failure's
// delivery, and either nothing was sent or the failure is one a second try can cure (the
// connection or the server, not the answer); never after the caller cancelled, nor for a
// refusal the same request would get again (credentials, a rejected request, a sandbox or
// session that is gone).
[[nodiscard]] bool may_retry(const failure& f, operation op) noexcept;

// A value the caller gave that may go on a request line or in a header.
struct argument {
    std::string_view name;
    std::string_view value;
};

// What is wrong with the client's configuration or the caller's arguments, said without
// repeating them (one may be a secret); nothing when they can be sent.
[[nodiscard]] std::optional<std::string> refused_argument(const client_state& client,
                                                          std::initializer_list<argument> arguments);

// A request refused before anything was sent: the caller's arguments cannot be sent.
[[nodiscard]] failure refused_request(operation op, std::string_view sandbox_id,
                                      const std::string& problem, const redactor& secrets);

// The call was cancelled while it waited to repeat an attempt that was not sent (the
// failed attempt went to the caller's log): `cancelled`, and still not sent.
[[nodiscard]] failure cancelled_before_retry(const observation& last) noexcept;

// True when `error` is the caller's cancellation reaching an await point.
[[nodiscard]] bool is_cancellation(const std::exception_ptr& error) noexcept;

// What an attempt is: a coroutine that gives the value, or nothing after recording its
// evidence in the observation.
template <class T>
using attempt_result = awaitable<std::optional<T>>;

// The secrets every call of the client scrubs from what it records (an endpoint's
// credentials join them when the call learns them).
[[nodiscard]] inline redactor secrets_of(const client_state& client) {
    redactor secrets;
    secrets.add(client.options.api_key);
    return secrets;
}

// What the observer is told, each part catching what the observer throws: an observer
// never changes a call's outcome. `begin_observing` gives nullptr when there is none.
[[nodiscard]] std::unique_ptr<observed_call> begin_observing(const client_state& client, operation op,
                                                             std::string_view sandbox_id,
                                                             const call_options& per_call) noexcept;
// The attempt's traceparent, when the observer gives a well-formed one (else empty).
[[nodiscard]] std::string observe_attempt(observed_call* trace, int attempt) noexcept;
void observe_retried(observed_call* trace, const failure& f) noexcept;
// The program `command` runs: its first word after any `NAME=value` assignments (which, like
// the arguments, may carry secrets), scrubbed, at most 64 bytes. Only a plain command line
// names one: a quote, an escape, a grouping or an expansion before the program's end (any
// of which can hide a secret across what looks like a word's end) names none. Called once
// the attempt's endpoint credentials are known secrets, on the first attempt only.
void observe_program(const call_context& c, std::string_view command) noexcept;
void observe_end(observed_call& trace, const failure& f, std::string_view sandbox_id) noexcept;

// The sandbox a call's outcome concerns: a new one's, the failure's, or the one it named.
template <class T>
[[nodiscard]] std::string_view sandbox_of(const result<T>& r, std::string_view named) noexcept {
    if constexpr (std::is_same_v<T, sandbox_info>) {
        if (r) return r.value().id;
    }
    if (!r) {
        if (const auto* d = std::get_if<sandbox_details>(&r.error().details()); d && d->sandbox_id) return *d->sandbox_id;
    }
    return named;
}

// Runs `attempt` until it succeeds, fails for good, or may not be retried, telling `trace`
// (when set) of each attempt. Never throws.
template <class T, class Attempt>
awaitable<result<T>> attempts(client_state& client, const call_options& per_call, operation op,
                              std::string_view sandbox_id, std::optional<std::string> problem, Attempt attempt,
                              observed_call* trace) {
    try {
        redactor secrets = secrets_of(client);
        if (problem) co_return refused_request(op, sandbox_id, *problem, secrets);
        const retry_policy& own = client.options.retries;
        policy::retry_allowance per_call_budget({.attempts = std::max(1, own.max_attempts),
                                                 .elapsed = std::chrono::milliseconds::max(),
                                                 .base_delay = own.backoff,
                                                 .max_delay = own.max_backoff});
        policy::retry_allowance& budget = per_call.allowance ? *per_call.allowance : per_call_budget;
        for (int attempt_number = 1;; ++attempt_number) {
            observation seen{.operation = std::string(name(op))};
            if (!sandbox_id.empty()) seen.sandbox_id = std::string(sandbox_id);
            const std::string trace_parent = observe_attempt(trace, attempt_number);
            const call_context context{client,
                                       client.options,
                                       deadline_after(per_call.timeout.value_or(client.options.timeout)),
                                       secrets,
                                       traits(op).replay,
                                       trace,
                                       trace_parent,
                                       attempt_number};
            std::exception_ptr error;
            try {
                if (std::optional<T> value = co_await attempt(context, seen)) co_return std::move(*value);
            } catch (...) {
                error = std::current_exception();
            }
            if (error) describe(seen, error);
            scrub(seen, secrets);
            failure f = to_failure(seen);
            if (!may_retry(f, op)) co_return f;
            budget.record(f);
            // The server's wait is honoured whole or not at all: resending sooner than it
            // asked would only meet the same refusal.
            const auto asked = retry_after(seen);
            if (asked && budget.attempts_made() < budget.limits().attempts) {
                if (!per_call.allowance && *asked > own.max_backoff) {
                    co_return not_resent(f, *asked, own.max_backoff, "the client's max_backoff");
                }
                if (const auto left = budget.remaining(); per_call.allowance && *asked >= left) {
                    co_return not_resent(f, *asked, left, "the time its allowance has left");
                }
            }
            const auto wait = budget.next_delay(asked);
            if (!wait && budget.attempts_made() > 1) co_return budget.exhausted(f);  // says how many
            if (!wait) co_return f;
            if (per_call.log) per_call.log->observe_failure(f);
            observe_retried(trace, f);
            asio::steady_timer pause(co_await asio::this_coro::executor, *wait);
            boost::system::error_code cancelled;
            co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, cancelled));
            if (cancelled) co_return cancelled_before_retry(seen);
        }
    } catch (...) {  // out of memory while describing a failure
        co_return failure(kind::transport_local_resource);
    }
}

template <class T, class Attempt>
awaitable<result<T>> observed_attempts(client_state& client, const call_options& per_call, operation op,
                                       std::string_view sandbox_id, std::optional<std::string> problem,
                                       Attempt attempt) {
    const std::unique_ptr<observed_call> trace = begin_observing(client, op, sandbox_id, per_call);
    result<T> r = co_await attempts<T>(client, per_call, op, sandbox_id, std::move(problem), std::move(attempt),
                                       trace.get());
    if (trace) {
        // A new sandbox's id is the server's text: scrubbed like everything else it says.
        observe_end(*trace, r ? failure() : r.error(), secrets_of(client).scrubbed(sandbox_of(r, sandbox_id)));
    }
    co_return r;
}

// One call of `op`: its attempts, watched by the client's observer when it has one (an
// unwatched call costs no coroutine more).
template <class T, class Attempt>
awaitable<result<T>> call(client_state& client, const call_options& per_call, operation op,
                          std::string_view sandbox_id, std::optional<std::string> problem, Attempt attempt) {
    if (!client.options.observer) {
        return attempts<T>(client, per_call, op, sandbox_id, std::move(problem), std::move(attempt), nullptr);
    }
    return observed_attempts<T>(client, per_call, op, sandbox_id, std::move(problem), std::move(attempt));
}

// A call that returns nothing but success.
inline result<void> done(result<bool> r) noexcept {
    if (!r) return std::move(r).error();
    return boost::outcome_v2::success();
}
inline awaitable<result<void>> done(awaitable<result<bool>> r) { co_return done(co_await std::move(r)); }

// Runs `work` to its end on the calling thread: the blocking faces. The call gets an I/O
// context of its own for the time it runs, so that its replies wake this thread directly
// instead of the client's I/O thread, which would then have to wake this one (two hand-offs
// a call); the connections it opens stay with that context for the blocking calls after it.
// Work it hands to the client's executor (a terminal's session) runs there. Must not be
// called from a thread running the client's executor. Throws only when it cannot start.
void drive_here(client_state& client, awaitable<void> work);

// Runs `work` on the client's executor and waits for it: the blocking faces of what lives
// there (an attach, whose session stays on that executor; a session's own operations, which
// run on its strand there anyway: from a blocking call's own context they would cross
// threads twice). Must not be called from a thread running the client's executor.
void drive_on_executor(client_state& client, awaitable<void> work);

// Adds the attempt's W3C `traceparent`, when its call is traced.
inline void add_trace_parent(request& req, const call_context& c) {
    if (!c.trace_parent.empty()) req.set("traceparent", c.trace_parent);
}

// An execd request to `where`, carrying the endpoint's headers (its access token included)
// and the call's trace parent.
inline request execd_request(const call_context& c, beast_http::verb verb, const target& where,
                             const endpoint_info& endpoint, std::string_view path) {
    request req(verb, where.base, path);
    add_trace_parent(req, c);
    for (const auto& [name, value] : endpoint.headers) {
        if (!frames_the_request(name)) req.set(name, value);
    }
    return req;
}

// The reply's body as JSON; not JSON is malformed (`what` says what it should have been).
[[nodiscard]] boost::json::value json_of(const string_response& res, const char* what);

[[nodiscard]] boost::json::object string_map(const std::map<std::string, std::string>& m);

// An exec's body as execd's POST /command takes it: {"command", "background", "cwd",
// "timeout" (milliseconds), "envs"}, the optional ones only when set; the bytes
// boost::json::serialize gives for that object.
[[nodiscard]] std::string command_body(const command& cmd);

}  // namespace ngfail::opensandbox::detail
