#include <ngfail/event_id.hpp>
#include <ngfail/opensandbox/client.hpp>

#include "execd_stream.hpp"
#include "redactor.hpp"
#include "reply.hpp"
#include "request_safety.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <charconv>
#include <thread>

namespace ngfail::opensandbox {
namespace {

namespace beast = boost::beast;
namespace beast_http = beast::http;
namespace json = boost::json;
using tcp = boost::asio::ip::tcp;
using clock = std::chrono::steady_clock;
using string_response = beast_http::response<beast_http::string_body>;

using detail::api_error_of;
using detail::as_object;
using detail::breaks_a_line;
using detail::endpoint_of;
using detail::path_segment;
using detail::redactor;
using detail::malformed;
using detail::optional_string;
using detail::parse_endpoint;
using detail::required_string;
using detail::sandbox_of;
using detail::target;

constexpr std::string_view api_key_header = "OPEN-SANDBOX-API-KEY";
constexpr std::size_t max_header_bytes = 64 << 10;
constexpr auto status_probe_timeout = std::chrono::milliseconds(2000);
constexpr int max_interim_replies = 16;

// `timeout` from now, saturating: a huge timeout (milliseconds::max()) means "no deadline",
// never an overflow into the past.
clock::time_point deadline_after(std::chrono::milliseconds timeout) noexcept {
    const clock::time_point now = clock::now();
    if (timeout <= std::chrono::milliseconds::zero()) return now;
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - now);
    return timeout >= room ? clock::time_point::max() : now + timeout;
}

bool is_interim(unsigned status) noexcept { return status >= 100 && status < 200 && status != 101; }

// One HTTP/1.1 exchange, every step bounded by the deadline. Errors are connection_errors
// that say in which phase they happened.
class exchange {
public:
    exchange(const target& t, clock::time_point deadline) : stream_(io_), target_(t), deadline_(deadline) {}

    void connect() {
        boost::system::error_code ec;
        const auto address = boost::asio::ip::make_address(target_.host, ec);
        std::vector<tcp::endpoint> endpoints;
        if (!ec) {
            endpoints.emplace_back(address, target_.port);
        } else {
            tcp::resolver resolver(io_);
            tcp::resolver::results_type found;
            run([&](auto handler) { resolver.async_resolve(target_.host, std::to_string(target_.port), handler); },
                phase::connect, &found);
            for (const auto& entry : found) endpoints.push_back(entry.endpoint());
        }
        run([&](auto handler) { stream_.async_connect(endpoints, handler); }, phase::connect);
    }

    template <class Body>
    void send(beast_http::request<Body>& request) {
        const bool v6 = target_.host.find(':') != std::string::npos;
        request.set(beast_http::field::host, (v6 ? "[" + target_.host + "]" : target_.host) + ':' +
                                                 std::to_string(target_.port));
        request.prepare_payload();
        run([&](auto handler) { beast_http::async_write(stream_, request, handler); }, phase::send);
    }

    // Interim 1xx replies (100 Continue, 103 Early Hints) are skipped, as HTTP requires; a
    // peer that sends nothing else is malformed.
    string_response receive(std::size_t max_body) {
        for (int interim = 0; interim <= max_interim_replies; ++interim) {
            beast_http::response_parser<beast_http::string_body> parser;
            parser.header_limit(max_header_bytes);
            parser.body_limit(max_body);
            run([&](auto handler) { beast_http::async_read(stream_, buffer_, parser, handler); }, phase::receive);
            if (!is_interim(parser.get().result_int())) return parser.release();
        }
        too_many_interim_replies();
    }

    // Reads a streamed reply: `on_head` sees the status and headers, then `on_bytes` each
    // piece of the body as it arrives.
    template <class OnHead, class OnBytes>
    void receive_stream(OnHead&& on_head, OnBytes&& on_bytes) {
        std::optional<beast_http::response_parser<beast_http::buffer_body>> parser_slot;
        for (int interim = 0;; ++interim) {
            if (interim > max_interim_replies) too_many_interim_replies();
            auto& p = parser_slot.emplace();
            p.header_limit(max_header_bytes);
            p.body_limit(boost::none);  // the reader bounds what it keeps
            run([&](auto handler) { beast_http::async_read_header(stream_, buffer_, p, handler); }, phase::receive);
            if (!is_interim(p.get().result_int())) break;
        }
        auto& parser = *parser_slot;
        on_head(parser.get().base());
        std::array<char, 8192> chunk{};
        while (!parser.is_done()) {
            parser.get().body().data = chunk.data();
            parser.get().body().size = chunk.size();
            boost::system::error_code ec;
            start([&](auto handler) { beast_http::async_read(stream_, buffer_, parser, handler); }, ec);
            if (ec == beast_http::error::need_buffer) ec = {};
            // What arrived before a failure is still evidence (an `init` names the execution).
            on_bytes(std::string_view(chunk.data(), chunk.size() - parser.get().body().size));
            if (ec) throw connection_error(as_transport_error(ec), phase::receive);
        }
    }

private:
    [[noreturn]] static void too_many_interim_replies() {
        throw connection_error(boost::system::error_code(make_error_code(errc::malformed_response)), phase::receive);
    }

    // Starts an operation and runs the io_context until it completes or the deadline passes.
    template <class Start, class Result = std::nullptr_t>
    void start(Start&& op, boost::system::error_code& ec, Result* result = nullptr) {
        stream_.expires_at(deadline_);
        bool done = false;
        op([&](boost::system::error_code e, auto&& value) {
            ec = e;
            done = true;
            if constexpr (!std::is_same_v<Result, std::nullptr_t>) {
                if (result) *result = std::forward<decltype(value)>(value);
            }
        });
        io_.restart();
        io_.run_until(deadline_);
        if (!done) {  // only a resolve outlives the stream's expiry
            stream_.socket().close();
            io_.restart();
            io_.run();
            ec = beast::error::timeout;
        }
    }

    template <class Start, class Result = std::nullptr_t>
    void run(Start&& op, phase at, Result* result = nullptr) {
        boost::system::error_code ec;
        start(std::forward<Start>(op), ec, result);
        if (ec) throw connection_error(as_transport_error(ec), at);
    }

    // A reply Beast cannot parse (over a limit, bad syntax) is malformed, not a dropped peer;
    // only a message cut short by the peer stays a transport error.
    static boost::system::error_code as_transport_error(const boost::system::error_code& ec) {
        const auto& http_errors = beast_http::make_error_code(beast_http::error::end_of_stream).category();
        const bool cut_short = ec == beast_http::error::end_of_stream || ec == beast_http::error::partial_message;
        if (ec.category() != http_errors || cut_short) return ec;
        return boost::system::error_code(make_error_code(errc::malformed_response));
    }

    boost::asio::io_context io_;
    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    target target_;
    clock::time_point deadline_;
};

json::object string_map(const std::map<std::string, std::string>& m) {
    json::object o;
    for (const auto& [k, v] : m) o[k] = v;
    return o;
}

// ---- one call, with its observation and its retries ------------------------------------------

struct call_context {
    const client_options& options;
    clock::time_point deadline;
    redactor& secrets;  // what the request carried; scrubbed from everything recorded

    std::string lifecycle_path(std::string_view suffix) const { return "/v1" + std::string(suffix); }

    // The rest of the call's time, capped at `most`: a step (a status probe, a clean-up)
    // never outlives the call's deadline.
    [[nodiscard]] std::optional<call_context> within(std::chrono::milliseconds most) const {
        const auto now = clock::now();
        if (now >= deadline) return std::nullopt;
        return call_context{options, std::min(deadline, deadline_after(most)), secrets};
    }

    // GET …/endpoints/{port}, asking for the server proxy or a direct endpoint as configured.
    [[nodiscard]] std::string endpoint_path(std::string_view sandbox_id, int port) const {
        return "/sandboxes/" + path_segment(sandbox_id) + "/endpoints/" + std::to_string(port) +
               (options.use_server_proxy ? "?use_server_proxy=true" : "?use_server_proxy=false");
    }

    // The endpoint of execd (port 44772) for a sandbox, its credentials marked secret.
    [[nodiscard]] endpoint_info execd_endpoint(std::string_view sandbox_id) const {
        endpoint_info endpoint = endpoint_of(
            lifecycle(beast_http::verb::get, endpoint_path(sandbox_id, 44772), nullptr));
        for (const auto& header : endpoint.headers) {
            const auto named = [&](std::string_view secret) { return beast::iequals(header.first, secret); };
            if (named("X-EXECD-ACCESS-TOKEN") ||
                std::any_of(options.secret_headers.begin(), options.secret_headers.end(), named)) {
                secrets.add(header.second);
            }
        }
        return endpoint;
    }

    // A lifecycle request with the API key; error replies become api_errors.
    json::value lifecycle(beast_http::verb verb, const std::string& path, const json::value* body) const {
        exchange x({options.host, options.port, ""}, deadline);
        x.connect();
        beast_http::request<beast_http::string_body> req(verb, lifecycle_path(path), 11);
        if (!options.api_key.empty()) req.set(api_key_header, options.api_key);
        req.set(beast_http::field::accept, "application/json");
        if (body) {
            req.set(beast_http::field::content_type, "application/json");
            req.body() = json::serialize(*body);
        }
        x.send(req);
        const string_response res = x.receive(options.max_body_bytes);
        if (res.result_int() >= 300) throw api_error_of(res.base(), res.body(), secrets);
        if (res.body().empty()) return nullptr;
        json::error_code ec;
        json::value v = json::parse(res.body(), ec);
        if (ec) malformed("the reply is not JSON");
        return v;
    }
};

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

// Fills the observation from what went wrong, structurally.
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
        seen.transport_error = e.code();
        seen.transport_phase = e.at();
    } catch (const std::system_error& e) {
        seen.transport_error = e.code();
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

std::chrono::milliseconds wait_before_retry(const observation& seen, const retry_policy& policy) {
    const auto wanted = seen.retry_after ? std::chrono::duration_cast<std::chrono::milliseconds>(*seen.retry_after)
                                         : policy.backoff;
    return std::min(wanted, policy.max_backoff);
}

// The failure's own classification says nothing was sent: the only case a retry is safe.
bool proven_not_sent(const failure& f) noexcept {
    const auto* sandbox = std::get_if<sandbox_details>(&f.details());
    return sandbox && sandbox->delivery == delivery::not_sent;
}

// A value the caller gave that may go on a request line or in a header.
struct argument {
    std::string_view name;
    std::string_view value;
};

// What is wrong with the caller's arguments, said without repeating them (one may be a
// secret); nothing when they can be sent.
std::optional<std::string> refused_argument(const client_options& options, std::initializer_list<argument> arguments) {
    if (breaks_a_line(options.api_key)) return "the API key holds CR, LF or NUL";
    for (const argument& a : arguments) {
        if (a.value.empty()) return "the " + std::string(a.name) + " is empty";
        if (breaks_a_line(a.value)) return "the " + std::string(a.name) + " holds CR, LF or NUL";
    }
    return std::nullopt;
}

// A request refused before anything was sent: the caller's arguments cannot be sent.
failure refused_request(std::string_view operation, std::string_view sandbox_id, const std::string& problem,
                        const redactor& secrets) {
    std::optional<std::string> id;
    if (!sandbox_id.empty() && !breaks_a_line(sandbox_id)) id = secrets.scrubbed(sandbox_id);
    return make_sandbox_failure({.operation = std::string(operation),
                                 .kind = kind::provider_request_rejected,
                                 .sandbox_id = std::move(id),
                                 .reason = std::string(operation) + " was not sent: " + problem,
                                 .provider = "opensandbox",
                                 .delivery = delivery::not_sent});
}

// Runs `attempt` until it succeeds, fails for good, or may not be retried. `attempt`
// returns the value, or nothing after recording its evidence in the observation.
template <class T, class Attempt>
result<T> call(const client_options& options, const call_options& per_call, std::string_view operation,
               std::string_view sandbox_id, std::initializer_list<argument> arguments, Attempt&& attempt) noexcept {
    try {
        redactor secrets;
        secrets.add(options.api_key);
        if (auto problem = refused_argument(options, arguments)) {
            return refused_request(operation, sandbox_id, *problem, secrets);
        }
        const int attempts = std::max(1, options.retries.max_attempts);
        for (int n = 1;; ++n) {
            observation seen{.operation = std::string(operation)};
            if (!sandbox_id.empty()) seen.sandbox_id = std::string(sandbox_id);
            const call_context context{options, deadline_after(per_call.timeout.value_or(options.timeout)), secrets};
            try {
                if (std::optional<T> value = attempt(context, seen)) return std::move(*value);
            } catch (...) {
                describe(seen, std::current_exception());
            }
            scrub(seen, secrets);
            failure f = to_failure(seen);
            if (n >= attempts || !proven_not_sent(f)) return f;
            if (per_call.log) per_call.log->observe_failure(f);
            std::this_thread::sleep_for(wait_before_retry(seen, options.retries));
        }
    } catch (...) {  // out of memory while describing a failure
        return failure(kind::transport_local_resource);
    }
}

// After an exec went wrong, the sandbox's own status is evidence: an OOM kill, a lost
// sandbox. Only within the call's deadline.
void add_sandbox_status(const call_context& context, observation& seen) {
    const auto probe = context.within(status_probe_timeout);
    if (!probe) return;
    try {
        const sandbox_info info = sandbox_of(
            probe->lifecycle(beast_http::verb::get, "/sandboxes/" + path_segment(*seen.sandbox_id), nullptr));
        seen.sandbox_state = info.state;
        seen.provider_status_reason = info.reason;
    } catch (...) {
        // no status, no evidence: the failure stands on what was seen
    }
}

// An execd request to `where`, carrying the endpoint's headers (its access token included).
template <class Body>
beast_http::request<Body> execd_request(beast_http::verb verb, const target& where, const endpoint_info& endpoint,
                                        std::string_view path) {
    beast_http::request<Body> req(verb, where.base + std::string(path), 11);
    for (const auto& [name, value] : endpoint.headers) req.set(name, value);
    return req;
}

// One execd request to the sandbox, through its endpoint with the endpoint's headers, the
// reply read whole; an error reply becomes an api_error.
string_response execd_call(const call_context& c, std::string_view sandbox_id, beast_http::verb verb,
                           const std::string& path, std::string body = {}, std::string_view content_type = {}) {
    const endpoint_info endpoint = c.execd_endpoint(sandbox_id);
    const target where = parse_endpoint(endpoint.endpoint);
    exchange x(where, c.deadline);
    x.connect();
    auto req = execd_request<beast_http::string_body>(verb, where, endpoint, path);
    if (!content_type.empty()) req.set(beast_http::field::content_type, content_type);
    req.body() = std::move(body);
    x.send(req);
    string_response res = x.receive(c.options.max_body_bytes);
    if (res.result_int() >= 300) throw api_error_of(res.base(), res.body(), c.secrets);
    return res;
}

json::value json_of(const string_response& res, const char* what) {
    json::error_code ec;
    json::value v = json::parse(res.body(), ec);
    if (ec) malformed(what);
    return v;
}

// POST /command and read its event stream. An error reply becomes an api_error; a stream
// that ends without a terminal event, a connection_error (stream_incomplete).
exec_result run_command(const call_context& context, const endpoint_info& endpoint, const command& cmd,
                        observation& seen) {
    const target where = parse_endpoint(endpoint.endpoint);
    json::object body{{"command", cmd.command}, {"background", cmd.background}};
    if (cmd.cwd) body["cwd"] = *cmd.cwd;
    if (cmd.timeout) body["timeout"] = cmd.timeout->count();
    if (!cmd.envs.empty()) body["envs"] = string_map(cmd.envs);
    auto req = execd_request<beast_http::string_body>(beast_http::verb::post, where, endpoint, "/command");
    req.set(beast_http::field::content_type, "application/json");
    req.set(beast_http::field::accept, "text/event-stream");
    req.body() = json::serialize(body);

    exchange x(where, context.deadline);
    x.connect();
    x.send(req);
    detail::execd_stream events(context.options.max_body_bytes);
    std::optional<beast_http::response_header<>> error_head;
    std::string error_body;
    x.receive_stream(
        [&](const beast_http::response_header<>& head) {
            if (head.result_int() >= 300) error_head = head;
        },
        [&](std::string_view bytes) {
            if (error_head) {
                error_body.append(bytes.substr(0, max_header_bytes - std::min(error_body.size(), max_header_bytes)));
                return;
            }
            events.feed(bytes);
            if (!events.result().execution_id.empty()) seen.execution_id = events.result().execution_id;
        });
    if (error_head) throw api_error_of(*error_head, error_body, context.secrets);
    events.finish();
    // A background command's stream ends once it has started: its `init` is the result.
    if (cmd.background && !events.result().execution_id.empty()) return events.take_result();
    if (!events.terminal()) {
        throw connection_error(boost::system::error_code(make_error_code(errc::stream_incomplete)), phase::receive);
    }
    return events.take_result();
}

// A sandbox the create left Failed or Terminated is deleted (within the call's deadline),
// unless the caller keeps it; the reason says which, so nothing is left behind unsaid.
std::string clean_up_failed_sandbox(const call_context& c, const create_request& request, const sandbox_info& info) {
    if (!request.delete_if_failed) return "; kept, as asked";
    const auto step = c.within(c.options.timeout);
    if (!step) return "; left behind: no time was left to delete it";
    try {
        (void)step->lifecycle(beast_http::verb::delete_, "/sandboxes/" + path_segment(info.id), nullptr);
        return "; deleted";
    } catch (const std::exception& e) {
        return "; left behind: the delete failed (" + std::string(std::string_view(e.what()).substr(0, 200)) + ")";
    }
}

bool is_terminal(const sandbox_info& info) noexcept { return info.state == "Failed" || info.state == "Terminated"; }

// Records a create that made a sandbox that is not alive: its status is the evidence, and
// the create was delivered; the sandbox is cleaned up.
void record_dead_sandbox(const call_context& c, const create_request& request, const sandbox_info& info,
                         observation& seen) {
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    seen.provider_status_reason = info.reason;
    seen.reason = "create: the new sandbox is " + info.state + (info.reason ? " (" + *info.reason + ")" : "") +
                  clean_up_failed_sandbox(c, request, info);
}

// execd answers its health check: GET /ping through the sandbox's endpoint.
bool execd_answers(const call_context& c, const std::string& sandbox_id) {
    return execd_call(c, sandbox_id, beast_http::verb::get, "/ping").result_int() == 200;
}

// Readiness as the official SDK waits for it: the sandbox Running and execd answering its
// health check, polled every `ready_poll` until `ready_timeout` (and never past the call's
// deadline). The sandbox as last seen when ready; nothing after recording why not.
std::optional<sandbox_info> wait_until_ready(const call_context& c, const create_request& request, sandbox_info info,
                                             observation& seen) {
    // Some of the call's time is kept for deleting a sandbox that never became ready.
    const auto reserve = std::min<clock::duration>(std::chrono::seconds(2), (c.deadline - clock::now()) / 4);
    const auto give_up = std::min(c.deadline - reserve, deadline_after(request.ready_timeout));
    for (;;) {
        const call_context step{c.options, give_up, c.secrets};
        try {
            info = sandbox_of(step.lifecycle(beast_http::verb::get, "/sandboxes/" + path_segment(info.id), nullptr));
            if (is_terminal(info)) {
                record_dead_sandbox(c, request, info, seen);
                return std::nullopt;
            }
            if (info.state == "Running" && execd_answers(step, info.id)) return info;
        } catch (...) {
            // not ready yet: the next poll decides
        }
        if (clock::now() + request.ready_poll >= give_up) break;
        std::this_thread::sleep_for(request.ready_poll);
    }
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    seen.transport_error = make_error_code(errc::readiness_timeout);
    seen.reason = "create: the sandbox did not become ready (last seen " + info.state + ")" +
                  clean_up_failed_sandbox(c, request, info);
    return std::nullopt;
}

// A call that returns nothing but success.
result<void> done(result<bool> r) noexcept {
    if (!r) return std::move(r).error();
    return boost::outcome_v2::success();
}

}  // namespace

client::client(client_options options) : options_(std::move(options)) {}

// ---- the noexcept face: every method is one attempt function --------------------------------

result<sandbox_info> client::try_create(const create_request& request, const call_options& options) noexcept {
    return call<sandbox_info>(options_, options, "create", "", {}, [&](const call_context& c, observation& seen)
                                  -> std::optional<sandbox_info> {
        json::value body = json::object{{"image", json::object{{"uri", request.image}}},
                          {"entrypoint", json::array(request.entrypoint.begin(), request.entrypoint.end())},
                          {"resourceLimits", string_map(request.resource_limits)}};
        if (request.timeout_s) body.as_object()["timeout"] = *request.timeout_s;
        if (!request.metadata.empty()) body.as_object()["metadata"] = string_map(request.metadata);
        const json::value reply = c.lifecycle(beast_http::verb::post, "/sandboxes", &body);
        sandbox_info info = sandbox_of(reply);
        if (is_terminal(info)) {
            record_dead_sandbox(c, request, info, seen);
            return std::nullopt;
        }
        if (!request.wait_until_ready) return info;
        return wait_until_ready(c, request, std::move(info), seen);
    });
}

result<sandbox_info> client::try_get(std::string_view sandbox_id, const call_options& options) noexcept {
    return call<sandbox_info>(options_, options, "get", sandbox_id, {{"sandbox id", sandbox_id}},
                              [&](const call_context& c, observation&) {
        return std::optional(
            sandbox_of(c.lifecycle(beast_http::verb::get, "/sandboxes/" + path_segment(sandbox_id), nullptr)));
    });
}

result<void> client::try_kill(std::string_view sandbox_id, const call_options& options) noexcept {
    return done(call<bool>(options_, options, "kill", sandbox_id, {{"sandbox id", sandbox_id}},
                           [&](const call_context& c, observation&) {
        (void)c.lifecycle(beast_http::verb::delete_, "/sandboxes/" + path_segment(sandbox_id), nullptr);
        return std::optional(true);
    }));
}

result<std::string> client::try_renew(std::string_view sandbox_id, std::string_view expires_at,
                                      const call_options& options) noexcept {
    return call<std::string>(options_, options, "renew", sandbox_id, {{"sandbox id", sandbox_id}},
                             [&](const call_context& c, observation&) {
        const json::value body = json::object{{"expiresAt", expires_at}};
        const json::value reply = c.lifecycle(beast_http::verb::post,
                                              "/sandboxes/" + path_segment(sandbox_id) + "/renew-expiration", &body);
        return std::optional(required_string(as_object(reply), "expiresAt"));
    });
}

result<endpoint_info> client::try_endpoint(std::string_view sandbox_id, int port, const call_options& options) noexcept {
    return call<endpoint_info>(options_, options, "endpoint", sandbox_id, {{"sandbox id", sandbox_id}},
                               [&](const call_context& c, observation&) {
        return std::optional(endpoint_of(c.lifecycle(
            beast_http::verb::get, c.endpoint_path(sandbox_id, port), nullptr)));
    });
}

result<exec_result> client::try_exec(std::string_view sandbox_id, const command& cmd, const call_options& options) noexcept {
    return call<exec_result>(options_, options, "exec", sandbox_id, {{"sandbox id", sandbox_id}},
                             [&](const call_context& c, observation& seen) -> std::optional<exec_result> {
        const endpoint_info endpoint = c.execd_endpoint(sandbox_id);
        exec_result ran;
        try {
            ran = run_command(c, endpoint, cmd, seen);
        } catch (const api_error&) {
            throw;  // the reply says what happened; the sandbox's status adds nothing
        } catch (...) {
            describe(seen, std::current_exception());
            add_sandbox_status(c, seen);
            return std::nullopt;
        }
        if (ran.exit_code != -1) return ran;  // any other exit is the command's own result
        seen.exit_code = -1;
        seen.execution_id = ran.execution_id;
        seen.reason = "exec: the command was killed by a signal (exit -1)";
        add_sandbox_status(c, seen);
        return std::nullopt;
    });
}

result<command_status> client::try_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                               const call_options& options) noexcept {
    return call<command_status>(options_, options, "exec_status", sandbox_id,
                                {{"sandbox id", sandbox_id}, {"execution id", execution_id}},
                                [&](const call_context& c, observation& seen) -> std::optional<command_status> {
        seen.execution_id = std::string(execution_id);
        const json::value v = json_of(
            execd_call(c, sandbox_id, beast_http::verb::get, "/command/status/" + path_segment(execution_id)),
            "the command status is not JSON");
        const auto& o = as_object(v);
        // Every field is optional in the spec; the id asked for stands in for a missing one.
        command_status status{.id = optional_string(o, "id").value_or(std::string(execution_id)),
                              .error = optional_string(o, "error")};
        if (const auto* running = o.if_contains("running"); running && running->is_bool()) status.running = running->as_bool();
        if (const auto* code = o.if_contains("exit_code"); code && code->is_int64()) {
            status.exit_code = static_cast<int>(code->as_int64());
        }
        if (status.exit_code != -1) return status;
        seen.exit_code = -1;
        seen.reason = "exec_status: command " + status.id + " was killed by a signal (exit -1)";
        return std::nullopt;
    });
}

result<void> client::try_ping(std::string_view sandbox_id, const call_options& options) noexcept {
    return done(call<bool>(options_, options, "ping", sandbox_id, {{"sandbox id", sandbox_id}},
                           [&](const call_context& c, observation&) {
        (void)execd_call(c, sandbox_id, beast_http::verb::get, "/ping");
        return std::optional(true);
    }));
}

result<std::vector<sandbox_info>> client::try_list(const list_request& request, const call_options& options) noexcept {
    return call<std::vector<sandbox_info>>(options_, options, "list", "", {},
                                           [&](const call_context& c, observation&) {
        std::string query = "?page=" + std::to_string(std::max(1, request.page)) +
                            "&pageSize=" + std::to_string(std::max(1, request.page_size));
        for (const std::string& state : request.states) query += "&state=" + path_segment(state);
        const json::value reply = c.lifecycle(beast_http::verb::get, "/sandboxes" + query, nullptr);
        const json::value* items = as_object(reply).if_contains("items");
        if (!items || !items->is_array()) malformed("the list has no items");
        std::vector<sandbox_info> found;
        for (const json::value& item : items->as_array()) found.push_back(sandbox_of(item));
        return std::optional(std::move(found));
    });
}

result<void> client::try_pause(std::string_view sandbox_id, const call_options& options) noexcept {
    return done(call<bool>(options_, options, "pause", sandbox_id, {{"sandbox id", sandbox_id}},
                           [&](const call_context& c, observation&) {
        (void)c.lifecycle(beast_http::verb::post, "/sandboxes/" + path_segment(sandbox_id) + "/pause", nullptr);
        return std::optional(true);
    }));
}

result<void> client::try_resume(std::string_view sandbox_id, const call_options& options) noexcept {
    return done(call<bool>(options_, options, "resume", sandbox_id, {{"sandbox id", sandbox_id}},
                           [&](const call_context& c, observation&) {
        (void)c.lifecycle(beast_http::verb::post, "/sandboxes/" + path_segment(sandbox_id) + "/resume", nullptr);
        return std::optional(true);
    }));
}

result<command_logs> client::try_exec_logs(std::string_view sandbox_id, std::string_view execution_id,
                                           std::size_t cursor, const call_options& options) noexcept {
    return call<command_logs>(options_, options, "exec_logs", sandbox_id,
                              {{"sandbox id", sandbox_id}, {"execution id", execution_id}},
                              [&](const call_context& c, observation& seen) {
        seen.execution_id = std::string(execution_id);
        const string_response res =
            execd_call(c, sandbox_id, beast_http::verb::get,
                       "/command/" + path_segment(execution_id) + "/logs?cursor=" + std::to_string(cursor));
        command_logs logs{.content = res.body(), .cursor = cursor + res.body().size()};
        if (const auto it = res.find("EXECD-COMMANDS-TAIL-CURSOR"); it != res.end()) {
            std::size_t tail = 0;
            const auto text = it->value();
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), tail);
            if (ec != std::errc() || end != text.data() + text.size()) malformed("the tail cursor is not a number");
            logs.cursor = tail;
        }
        return std::optional(std::move(logs));
    });
}

result<void> client::try_interrupt(std::string_view sandbox_id, std::string_view execution_id,
                                   const call_options& options) noexcept {
    return done(call<bool>(options_, options, "interrupt", sandbox_id,
                           {{"sandbox id", sandbox_id}, {"execution id", execution_id}},
                           [&](const call_context& c, observation& seen) {
        seen.execution_id = std::string(execution_id);
        (void)execd_call(c, sandbox_id, beast_http::verb::delete_, "/command?id=" + path_segment(execution_id));
        return std::optional(true);
    }));
}

result<void> client::try_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                                const call_options& options) noexcept {
    return done(call<bool>(options_, options, "upload", sandbox_id, {{"sandbox id", sandbox_id}, {"path", path}},
                           [&](const call_context& c, observation&) {
        // multipart/form-data, as execd reads it: a `metadata` part (JSON), then the `file`.
        const std::string boundary = "ngfail-" + to_string(event_id::generate());
        const std::string name(path.substr(path.rfind('/') + 1));
        std::string body = "--" + boundary +
                           "\r\nContent-Disposition: form-data; name=\"metadata\"; filename=\"metadata\"\r\n"
                           "Content-Type: application/json\r\n\r\n" +
                           json::serialize(json::object{{"path", path}}) + "\r\n--" + boundary +
                           "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + path_segment(name) +
                           "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
        body.append(content);
        body += "\r\n--" + boundary + "--\r\n";
        (void)execd_call(c, sandbox_id, beast_http::verb::post, "/files/upload", std::move(body),
                         "multipart/form-data; boundary=" + boundary);
        return std::optional(true);
    }));
}

result<std::string> client::try_download(std::string_view sandbox_id, std::string_view path,
                                         const call_options& options) noexcept {
    return call<std::string>(options_, options, "download", sandbox_id, {{"sandbox id", sandbox_id}, {"path", path}},
                             [&](const call_context& c, observation&) {
        return std::optional(
            execd_call(c, sandbox_id, beast_http::verb::get, "/files/download?path=" + path_segment(path)).body());
    });
}

// ---- the throwing face: the same calls, raised with their causes nested ------------------------

void client::ping(std::string_view sandbox_id, const call_options& options) { try_ping(sandbox_id, options).value(); }
std::vector<sandbox_info> client::list(const list_request& request, const call_options& options) {
    return try_list(request, options).value();
}
void client::pause(std::string_view sandbox_id, const call_options& options) { try_pause(sandbox_id, options).value(); }
void client::resume(std::string_view sandbox_id, const call_options& options) { try_resume(sandbox_id, options).value(); }
command_logs client::exec_logs(std::string_view sandbox_id, std::string_view execution_id, std::size_t cursor,
                               const call_options& options) {
    return try_exec_logs(sandbox_id, execution_id, cursor, options).value();
}
void client::interrupt(std::string_view sandbox_id, std::string_view execution_id, const call_options& options) {
    try_interrupt(sandbox_id, execution_id, options).value();
}
void client::upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                    const call_options& options) {
    try_upload(sandbox_id, path, content, options).value();
}
std::string client::download(std::string_view sandbox_id, std::string_view path, const call_options& options) {
    return try_download(sandbox_id, path, options).value();
}


sandbox_info client::create(const create_request& request, const call_options& options) {
    return try_create(request, options).value();
}
sandbox_info client::get(std::string_view sandbox_id, const call_options& options) {
    return try_get(sandbox_id, options).value();
}
void client::kill(std::string_view sandbox_id, const call_options& options) { try_kill(sandbox_id, options).value(); }
std::string client::renew(std::string_view sandbox_id, std::string_view expires_at, const call_options& options) {
    return try_renew(sandbox_id, expires_at, options).value();
}
endpoint_info client::endpoint(std::string_view sandbox_id, int port, const call_options& options) {
    return try_endpoint(sandbox_id, port, options).value();
}
exec_result client::exec(std::string_view sandbox_id, const command& cmd, const call_options& options) {
    return try_exec(sandbox_id, cmd, options).value();
}
command_status client::exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                   const call_options& options) {
    return try_exec_status(sandbox_id, execution_id, options).value();
}

}  // namespace ngfail::opensandbox
