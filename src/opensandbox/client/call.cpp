#include "call.hpp"

#include <ngfail/opensandbox/asio_errors.hpp>

#include "text/printable.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <variant>

namespace ngfail::opensandbox::detail {

namespace json = boost::json;

namespace {

std::string reason_for(const observation& seen, const std::exception_ptr& cause) {
    std::string reason = seen.operation + " failed";
    if (seen.sandbox_id) reason += " on " + *seen.sandbox_id;
    if (!cause) return reason;
    try {
        std::rethrow_exception(cause);
    } catch (const std::exception& e) {
        reason += ": ";
        reason += std::string_view(e.what()).substr(0, 512);
    } catch (...) {
    }
    return reason;
}

// The lifecycle server from the options: a base URL as the official SDKs take it, or host
// and port; every lifecycle path then starts with the base path and /v1.
std::variant<target, std::string> lifecycle_target(const client_options& options) {
    if (options.base_url.empty()) return target{{false, options.host, options.port}, "/v1"};
    try {
        target server = parse_endpoint(options.base_url);
        std::string_view base = server.base;
        while (base.ends_with('/')) base.remove_suffix(1);
        if (base.ends_with("/v1")) base.remove_suffix(3);
        server.base = std::string(base) + "/v1";
        return server;
    } catch (const std::exception& e) {
        return "the base URL is not a server's URL (" + std::string(e.what()) + ")";
    }
}

}  // namespace

client_state::client_state(boost::asio::any_io_executor on, client_options o)
    : options(std::move(o)),
      executor(std::move(on)),
      pool(options.max_idle_connections, options.max_kept_connections, options.max_idle_time),
      endpoints(options.endpoint_cache_size, options.endpoint_cache_ttl) {
    auto server = detail::lifecycle_target(options);
    if (auto* problem = std::get_if<std::string>(&server)) {
        configuration_problem = std::move(*problem);
    } else {
        lifecycle = std::get<detail::target>(std::move(server));
    }
}

client_state::client_state(client_options o) : client_state(boost::asio::any_io_executor(), std::move(o)) {
    own_io = std::make_unique<boost::asio::io_context>(1);
    executor = own_io->get_executor();
    keep_running.emplace(own_io->get_executor());
    io_thread = std::thread([io = own_io.get()] { io->run(); });
}

client_state::~client_state() {
    if (!own_io) return;
    keep_running.reset();
    own_io->stop();
    io_thread.join();
    // Kept connections go while their I/O context lives; then operations never finished end
    // (a connection one of them gives back is closed at once, the pool being closed).
    pool.close();
    own_io.reset();
}

thread_local boost::asio::io_context* client_state::driving = nullptr;

boost::asio::io_context& client_state::borrow_driver() {
    const std::lock_guard lock(drivers_mutex);
    if (!idle_drivers.empty()) {
        boost::asio::io_context& driver = *idle_drivers.back();
        idle_drivers.pop_back();
        return driver;
    }
    drivers.push_back(std::make_unique<boost::asio::io_context>(1));
    idle_drivers.reserve(drivers.size());
    return *drivers.back();
}

void client_state::return_driver(boost::asio::io_context& driver) noexcept {
    const std::lock_guard lock(drivers_mutex);
    idle_drivers.push_back(&driver);
}

boost::asio::ssl::context& client_state::tls() {
    std::call_once(tls_made, [this] {
        try {
            tls_context = detail::make_tls_context(options.tls);
        } catch (const boost::system::system_error& e) {  // a CA file that cannot be read
            throw connection_error(e.code(), phase::connect);
        }
    });
    return *tls_context;
}

std::optional<call_context> call_context::within(std::chrono::milliseconds most) const {
    if (clock::now() >= deadline) return std::nullopt;
    return until(std::min(deadline, deadline_after(most)));
}

std::string call_context::endpoint_path(std::string_view sandbox_id, int port) const {
    return sandbox_path(sandbox_id, "/endpoints/" + std::to_string(port)) +
           (options.use_server_proxy ? "?use_server_proxy=true" : "?use_server_proxy=false");
}

namespace {

// The execd route's credentials, marked secret for the call that uses them.
void mark_secret_headers(const execd_route& route, const client_options& options, redactor& secrets) {
    for (const auto& header : route.endpoint.headers) {
        const auto named = [&](std::string_view secret) { return beast::iequals(header.first, secret); };
        if (named("X-EXECD-ACCESS-TOKEN") ||
            std::any_of(options.secret_headers.begin(), options.secret_headers.end(), named)) {
            secrets.add(header.second);
        }
    }
}

// Connections are opened on the call's own context when it is a blocking call's (driven
// on the caller's thread), on the client's executor otherwise.
asio::any_io_executor connection_executor(const client_state& shared, const asio::any_io_executor& here) {
    const bool blocking = &asio::query(here, asio::execution::context) == client_state::driving;
    return blocking ? here : shared.executor;
}

}  // namespace

shared_route call_context::cached_execd_endpoint(std::string_view sandbox_id) const {
    shared_route route = shared.endpoints.find(sandbox_id, execd_port);
    if (route) mark_secret_headers(*route, options, secrets);
    return route;
}

awaitable<shared_route> call_context::execd_endpoint(std::string_view sandbox_id) const {
    if (shared_route cached = cached_execd_endpoint(sandbox_id)) co_return cached;
    endpoint_info endpoint =
        endpoint_of(co_await lifecycle(beast_http::verb::get, endpoint_path(sandbox_id, execd_port), nullptr));
    target where = parse_endpoint(endpoint.endpoint, shared.lifecycle.tls);  // a malformed one is not kept
    auto route = std::make_shared<const execd_route>(execd_route{std::move(endpoint), std::move(where)});
    shared.endpoints.store(sandbox_id, execd_port, route);
    mark_secret_headers(*route, options, secrets);
    co_return route;
}

std::optional<lease> call_context::kept_connection(const target& where, const asio::any_io_executor& here) const {
    origin to = where;
    const asio::any_io_executor on = connection_executor(shared, here);
    auto kept = shared.pool.take(to, asio::query(on, asio::execution::context));
    if (!kept) return std::nullopt;
    return lease(shared.pool, std::move(to), std::move(kept), true);
}

awaitable<lease> call_context::connect(const target& where, bool fresh) const {
    const auto here = co_await asio::this_coro::executor;
    if (!fresh) {
        if (std::optional<lease> kept = kept_connection(where, here)) co_return std::move(*kept);
    }
    origin to = where;
    const asio::any_io_executor on = connection_executor(shared, here);
    auto opened = std::make_unique<connection>(on, to.tls ? &shared.tls() : nullptr);
    co_await opened->open(to, deadline);
    co_return lease(shared.pool, std::move(to), std::move(opened), false);
}

awaitable<lease> call_context::connect_to_execd(std::string_view sandbox_id, const target& where, bool fresh) const {
    try {
        co_return co_await connect(where, fresh);
    } catch (const connection_error&) {
        shared.endpoints.forget(sandbox_id);  // it may have moved (a resumed sandbox)
        throw;
    }
}

namespace {

// How a server's close of an idle connection meets a request sent on it: the write fails,
// or the read finds the end of the stream (or a reset) before any byte of a reply.
bool closed_by_peer(const boost::system::error_code& ec) noexcept {
    return ec == beast_http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

}  // namespace

awaitable<string_response> call_context::exchange(request& req, const target& where,
                                                  std::string_view execd_sandbox) const {
    const bool repeatable = req.method() == beast_http::verb::get || req.method() == beast_http::verb::head ||
                            replay_allowed(replay, std::nullopt);
    for (bool fresh = false;; fresh = true) {
        std::optional<lease> on;
        if (execd_sandbox.empty()) {
            on.emplace(co_await connect(where, fresh));
        } else {
            on.emplace(co_await connect_to_execd(execd_sandbox, where, fresh));
        }
        try {
            co_await (*on)->send(req, deadline);
            co_return co_await (*on)->receive(options.max_body_bytes, deadline);
        } catch (const connection_error& e) {
            if (!repeatable || !on->reused() || (*on)->answered() || !closed_by_peer(e.code())) throw;
        }
    }
}

awaitable<json::value> call_context::lifecycle(beast_http::verb verb, std::string path, const json::value* body) const {
    request req(verb, shared.lifecycle.base, path);
    if (!options.api_key.empty()) req.set(api_key_header, options.api_key);
    add_trace_parent(req, *this);
    req.set(beast_http::field::accept, "application/json");
    if (body) {
        req.set(beast_http::field::content_type, "application/json");
        req.body() = json::serialize(*body);
    }
    const string_response res = co_await exchange(req, shared.lifecycle);
    if (res.result_int() >= 300) throw api_error_of(res.base(), res.body(), secrets);
    if (res.body().empty()) co_return nullptr;
    json::error_code ec;
    json::value v = json::parse(res.body(), ec);
    if (ec) malformed("the reply is not JSON");
    co_return v;
}

awaitable<string_response> call_context::execd_call(std::string_view sandbox_id, beast_http::verb verb,
                                                    std::string path, std::string body,
                                                    std::string content_type, std::string range) const {
    const shared_route route = co_await execd_endpoint(sandbox_id);
    auto req = execd_request(*this, verb, route->where, route->endpoint, path);
    if (!content_type.empty()) req.set(beast_http::field::content_type, content_type);
    if (!range.empty()) req.set(beast_http::field::range, range);
    req.body() = std::move(body);
    string_response res = co_await exchange(req, route->where, sandbox_id);
    if (res.result_int() >= 300) throw api_error_of(res.base(), res.body(), secrets);
    co_return res;
}

void describe(observation& seen, const std::exception_ptr& cause) {
    seen.cause = cause;
    seen.reason = reason_for(seen, cause);
    try {
        std::rethrow_exception(cause);
    } catch (const api_error& e) {
        seen.http_status = e.status();
        seen.provider_code = e.code();
        seen.retry_after = e.retry_after();
    } catch (const connection_error& e) {
        seen.transport_error = portable_transport_error(e.code());
        seen.transport_phase = e.at();
    } catch (const std::system_error& e) {
        seen.transport_error = e.code();
        seen.transport_phase = phase::receive;
    } catch (const boost::system::system_error& e) {  // a wait between steps, cancelled
        seen.transport_error = portable_transport_error(e.code());
        seen.transport_phase = phase::receive;
    } catch (...) {
    }
}

// Every text the observation took from a reply, with the request's secrets scrubbed (the
// cause, an api_error, was scrubbed when it was made).
void scrub(observation& seen, const redactor& secrets) {
    for (auto* text : {&seen.sandbox_id, &seen.reason, &seen.execution_id, &seen.provider_status_reason,
                       &seen.provider_code, &seen.sandbox_state, &seen.failure_kind}) {
        secrets.scrub(*text);
    }
}

std::optional<std::chrono::milliseconds> retry_after(const observation& seen) noexcept {
    if (!seen.retry_after) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(*seen.retry_after);
}

failure not_resent(const failure& f, std::chrono::milliseconds asked, std::chrono::milliseconds longest,
                   std::string_view what) noexcept {
    try {
        return restated(f, "not resent: the server asked for a wait of " + std::to_string(asked.count()) +
                               " ms (Retry-After), more than " + std::string(what) + " (" +
                               std::to_string(longest.count()) + " ms)");
    } catch (...) {
        return f;
    }
}

awaitable<void> add_sandbox_status(const call_context& call, observation& seen) {
    const std::optional<call_context> probe = call.within(status_probe_timeout);
    if (!seen.sandbox_id || !probe) co_return;
    try {
        const sandbox_info info = sandbox_of(
            co_await probe->lifecycle(beast_http::verb::get, "/sandboxes/" + path_segment(*seen.sandbox_id), nullptr));
        seen.sandbox_state = info.state;
        seen.provider_status_reason = info.reason;
    } catch (...) {
        // no status, no evidence
    }
    co_await add_diagnostics(call, seen);
}

failure cancelled_before_retry(const observation& last) noexcept {
    try {
        observation seen{.operation = last.operation,
                         .sandbox_id = last.sandbox_id,
                         .reason = last.operation + ": cancelled while waiting to retry (the attempt before was not sent)",
                         .transport_error = make_error_code(errc::cancelled),
                         .transport_phase = phase::connect};
        return to_failure(seen);
    } catch (...) {
        return failure(kind::cancelled);
    }
}

bool is_cancellation(const std::exception_ptr& error) noexcept {
    try {
        std::rethrow_exception(error);
    } catch (const connection_error& e) {
        return e.code() == errc::cancelled;
    } catch (const boost::system::system_error& e) {
        return e.code() == asio::error::operation_aborted;
    } catch (...) {
    }
    return false;
}

namespace {

// A refusal another attempt of the same request would only get again: the server read it and
// refused it for what it is (its credentials, its arguments, a sandbox or a session that is
// gone). The outcome policy's defaults call the statuses behind them terminal.
constexpr std::array final_refusals{kind::provider_credentials_rejected, kind::provider_request_rejected,
                                    kind::provider_sandbox_lost, kind::session_lost, kind::cancelled};

}  // namespace

bool may_retry(const failure& f, operation op) noexcept {
    if (std::ranges::any_of(final_refusals, [&f](kind k) { return f.code() == k; })) return false;
    if (f.http_status() == 501) return false;  // the server does not implement it
    const std::optional<delivery> d = delivery_of(f);
    const bool curable = f.code() == domain::transport || f.code() == kind::provider_unavailable;
    return replay_allowed(traits(op).replay, d) && (d == delivery::not_sent || curable);
}

// What is wrong with the caller's arguments, said without repeating them (one may be a
// secret); nothing when they can be sent.
std::optional<std::string> refused_argument(const client_state& client, std::initializer_list<argument> arguments) {
    if (client.configuration_problem) return client.configuration_problem;
    if (breaks_a_line(client.options.api_key)) return "the API key holds CR, LF or NUL";
    for (const argument& a : arguments) {
        if (a.value.empty()) return "the " + std::string(a.name) + " is empty";
        if (breaks_a_line(a.value)) return "the " + std::string(a.name) + " holds CR, LF or NUL";
    }
    return std::nullopt;
}

// A request refused before anything was sent: the caller's arguments cannot be sent.
failure refused_request(operation op, std::string_view sandbox_id, const std::string& problem,
                        const redactor& secrets) {
    const std::string_view operation = name(op);
    std::optional<std::string> id;
    if (!sandbox_id.empty() && !breaks_a_line(sandbox_id)) id = secrets.scrubbed(sandbox_id);
    return make_sandbox_failure({.operation = std::string(operation),
                                 .kind = kind::provider_request_rejected,
                                 .sandbox_id = std::move(id),
                                 .reason = std::string(operation) + " was not sent: " + problem,
                                 .provider = "opensandbox",
                                 .delivery = delivery::not_sent});
}

json::value json_of(const string_response& res, const char* what) {
    json::error_code ec;
    json::value v = json::parse(res.body(), ec);
    if (ec) malformed(what);
    return v;
}

json::object string_map(const std::map<std::string, std::string>& m) {
    json::object o;
    for (const auto& [k, v] : m) o[k] = v;
    return o;
}

std::unique_ptr<observed_call> begin_observing(const client_state& client, operation op, std::string_view sandbox_id,
                                               const call_options& per_call) noexcept {
    try {
        return client.options.observer->begin(op, sandbox_id, per_call.trace_labels);
    } catch (...) {
        return nullptr;
    }
}

namespace {

// `value` is a W3C traceparent (version 00's form: 2, 32, 16 and 2 lowercase hex digits
// joined by dashes); anything else is not sent, so that an observer can neither break a
// request's head nor make a server refuse it.
bool is_traceparent(std::string_view value) noexcept {
    constexpr std::string_view form = "xx-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-xxxxxxxxxxxxxxxx-xx";
    if (value.size() != form.size()) return false;
    for (std::size_t i = 0; i < form.size(); ++i) {
        const char c = value[i];
        const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        if (form[i] == '-' ? c != '-' : !hex) return false;
    }
    return true;
}

}  // namespace

std::string observe_attempt(observed_call* trace, int attempt) noexcept {
    if (!trace) return {};
    try {
        const std::string_view parent = trace->attempt_began(attempt);
        // Copied: the attempt's requests go out after the observer is called again.
        return is_traceparent(parent) ? std::string(parent) : std::string();
    } catch (...) {
        return {};
    }
}

void observe_retried(observed_call* trace, const failure& f) noexcept {
    if (!trace) return;
    try {
        trace->attempt_failed(f);
    } catch (...) {
    }
}

namespace {

// Characters a plain shell word may hold without quoting, escaping or expanding anything:
// a program's name is read only from such words, so that no quoted or escaped text (which
// may hold a secret across what looks like a word's end) is ever taken for it.
bool plain_word(std::string_view word) noexcept {
    return !word.empty() && std::ranges::all_of(word, [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               std::string_view("._/+-=,:@%").find(ch) != std::string_view::npos;
    });
}

// NAME=value, the name an identifier.
bool assignment(std::string_view word) noexcept {
    const auto equals = word.find('=');
    if (equals == 0 || equals == std::string_view::npos) return false;
    const auto name = word.substr(0, equals);
    return !(name[0] >= '0' && name[0] <= '9') &&
           std::ranges::all_of(name, [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

}  // namespace

void observe_program(const call_context& c, std::string_view command) noexcept {
    if (!c.trace) return;
    constexpr std::string_view blanks = " \t";
    for (;;) {
        const auto start = command.find_first_not_of(blanks);
        if (start == std::string_view::npos) return;
        command.remove_prefix(start);
        const auto end = command.find_first_of(blanks);
        const std::string_view word = command.substr(0, end);
        // Quoting, escapes, grouping, a newline: not a plain command line, so no name at all.
        if (!plain_word(word)) return;
        if (!assignment(word)) {
            if (word.find('=') != std::string_view::npos) return;
            try {
                c.trace->command_program(text::printable(c.secrets.scrubbed(word), 64));
            } catch (...) {
            }
            return;
        }
        if (end == std::string_view::npos) return;
        command.remove_prefix(end);
    }
}

void observe_end(observed_call& trace, const failure& f, std::string_view sandbox_id) noexcept {
    try {
        trace.ended(f, sandbox_id);
    } catch (...) {
    }
}

}  // namespace ngfail::opensandbox::detail
