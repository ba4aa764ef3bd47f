// Routing: which API a request belongs to, the checks every route of that API shares
// (the API key, the sandbox behind an execd route), the fault queued for it, and then its
// handler from the route tables.
#include "context.hpp"
#include "run_stream.hpp"
#include "terminal.hpp"

#include <condition_variable>
#include <mutex>

#include <ngfail/event_id.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <charconv>
#include <chrono>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

constexpr unsigned short execd_port = 44772;

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::vector<std::string> segments_of(std::string_view target) {
    target = target.substr(0, target.find('?'));
    std::vector<std::string> parts;
    while (!target.empty()) {
        const auto slash = target.find('/');
        if (slash != 0) parts.push_back(percent_decode(target.substr(0, slash)));
        if (slash == std::string_view::npos) break;
        target.remove_prefix(slash + 1);
    }
    return parts;
}

// Matches `segments` against a route pattern, filling the call's parameters.
bool matches(std::string_view pattern, const std::vector<std::string>& segments, std::size_t from, call& c) {
    std::size_t i = from;
    for (std::string_view rest = pattern; !rest.empty();) {
        if (rest.front() == '/') rest.remove_prefix(1);
        const auto slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
        if (part.empty()) continue;
        if (i >= segments.size()) return false;
        if (part == "{id}") {
            c.sandbox_id = segments[i];
        } else if (part == "{param}") {
            c.param = segments[i];
        } else if (part != segments[i]) {
            return false;
        }
        ++i;
    }
    return i == segments.size();
}

const route* find_route(std::span<const route> table, http::verb method, const std::vector<std::string>& segments,
                        std::size_t from, call& c) {
    for (const route& r : table) {
        call attempt;
        if (r.method == method && matches(r.pattern, segments, from, attempt)) {
            c.sandbox_id = std::move(attempt.sandbox_id);
            c.param = std::move(attempt.param);
            c.operation = r.operation;
            return &r;
        }
    }
    return nullptr;
}

std::optional<unsigned short> port_number(std::string_view text) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65535) return std::nullopt;
    return static_cast<unsigned short>(value);
}

// (Built outside the coroutines: GCC 12 rejects a brace-initialised JSON object with string
// literal keys inside a co_await expression, "array used as initializer".)
json::object unauthorized_json() { return {{"error", "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN"}}; }
json::object healthy_json() { return {{"status", "healthy"}}; }

// The lifecycle API's authentication, as upstream's middleware answers it.
std::optional<response> refused_key(context& c, const exchange& x) {
    if (c.options.api_key.empty()) return std::nullopt;
    const auto it = x.req().find("OPEN-SANDBOX-API-KEY");
    if (it == x.req().end()) {
        return c.error_reply(x, 401, "MISSING_API_KEY", "Authentication credentials are missing");
    }
    if (it->value() != c.options.api_key) {
        return c.error_reply(x, 401, "INVALID_API_KEY", "Authentication credentials are invalid");
    }
    return std::nullopt;
}

// The faults every route treats alike, applied to the world before the route runs.
void apply_to_world(context& c, const call& k) {
    const fault& f = *k.active_fault;
    using action = fault::action;
    if (f.what == action::expire) {
        c.sandboxes.update(k.sandbox_id, [](sandbox_record& s) { s.expires_at = wall_clock::now(); });
    } else if ((f.what == action::crash || f.what == action::oom_kill) && !streams_a_run(k.operation) &&
               f.shown_as != fault::surface::ws_1011) {
        // (a run's stream acts these out itself, after its `init`: run_stream.cpp; a terminal's
        // 1011 after its first input: terminal_routes.cpp)
        const status_shape& shape = f.what == action::crash ? c.profile.crashed : c.profile.oom_killed;
        c.sandboxes.update(k.sandbox_id, [&](sandbox_record& s) {
            s.state = std::string(shape.state);
            s.reason = std::string(shape.reason);
            s.message = message_for(shape, s.id);
        });
    }
    c.reconcile_addresses();
}

// What nginx (an ingress, a gateway) answers when its upstream died mid-request.
constexpr std::string_view bad_gateway_page =
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>"
    "\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

// The reply a fault makes instead of the route's own; none when the route answers itself.
std::optional<response> fault_reply(context& c, const exchange& x, const fault& f) {
    using action = fault::action;
    if (f.what == action::http_error) {
        response res = c.error_reply(x, f.status, f.code, f.message);
        if (f.retry_after_s) res.set(http::field::retry_after, std::to_string(*f.retry_after_s));
        return res;
    }
    if (f.what == action::malformed_json) {
        return c.text_reply(x, 200, R"({"id": "sbx-1", "status": {"state": )", "application/json");
    }
    return std::nullopt;
}

// Whether the sandbox whose own address this is runs now (none: the address is nobody's).
bool runs_now(context& c, const std::optional<std::string>& sandbox_id) {
    if (!sandbox_id) return false;
    const auto gate = c.sandboxes.find_gate(*sandbox_id);
    return gate && gate->state == c.profile.running.state;
}

// A request on a sandbox's own address, not on the server's shared ports.
bool on_own_address(const context& c, const exchange& x) {
    return x.local_port() != c.lifecycle_port && x.local_port() != c.direct_port;
}

// Who answered a routed request: its handler, the server before it (a 501, a fault's reply),
// or the proxy in front of a sandbox that died of a fault.
enum class answered_by { handler, server, proxy };

awaitable<answered_by> run_route(context& c, exchange& x, const route* r, call& k) {
    if (c.processes && !process_runtime::serves(r->operation)) {
        co_await x.reply(c.error_reply(x, 501, "NOT_IMPLEMENTED",
                                       std::string(r->operation) +
                                           " is not served by the process runtime yet (docs/opensandbox.md lists what is)"));
        co_return answered_by::server;
    }
    k.active_fault = c.faults.take(r->operation);
    if (k.active_fault) {
        if (auto reply = fault_reply(c, x, *k.active_fault)) {
            co_await x.reply(std::move(*reply));
            co_return answered_by::server;
        }
        if (k.active_fault->what == fault::action::oom_kill && k.active_fault->shown_as == fault::surface::bare_502) {
            // The sandbox dies of it, and the proxy in front answers for its upstream, as
            // nginx does: a 502 page, none of the API's envelope.
            fail_sandbox(c, k.sandbox_id, c.profile.oom_killed);
            co_await x.reply(c.text_reply(x, 502, std::string(bad_gateway_page), "text/html"));
            co_return answered_by::proxy;
        }
        if (k.active_fault->what == fault::action::cut_stream) {
            x.cut(k.active_fault->cut_after_bytes, k.active_fault->cut_after_ms);
        }
        if (k.active_fault->what == fault::action::lose_reply) x.lose_reply();
        if (k.active_fault->what == fault::action::stall) {
            co_await x.wait(k.active_fault->stall_for);
            x.close_connection();  // the client has given up; close without answering
            co_return answered_by::server;
        }
        apply_to_world(c, k);
        if (on_own_address(c, x) && !runs_now(c, k.sandbox_id)) {
            // The fault ended the pod this address is: nothing answers (as in dispatch).
            x.close_connection();
            co_return answered_by::proxy;
        }
    }
    co_await r->handle(c, x, k);
    co_return answered_by::handler;
}

// execd's route tables, each named as its telemetry names the area.
struct execd_area {
    std::span<const route> (*table)() noexcept;
    std::string_view name;
};
constexpr std::array execd_areas{execd_area{execd_routes, "command"}, execd_area{filesystem_routes, "filesystem"},
                                 execd_area{code_routes, "code"}, execd_area{terminal_routes, "terminal"}};

// An execd request as execd's telemetry records it: every request its router saw, routed or
// not (http_route "unknown", as Gin's empty full path is named), refused for its token or
// served; a run's or a file operation's result only when its handler ran (a run's from its
// last event, a file operation's from its status).
execd_request_seen seen_by_execd(const exchange& x, const route* r, std::string_view area, bool handled,
                                 std::chrono::steady_clock::duration took) noexcept {
    // (Gin's writer keeps its default 200 for a connection a WebSocket upgrade hijacked)
    execd_request_seen seen{.method = {}, .route = "unknown", .operation = {}, .area = area,
                            .status = x.taken_over() ? 200 : x.status(), .duration = took, .traceparent = {}};
    const auto method = x.req().method_string();
    const auto parent = x.req()["traceparent"];
    seen.method = x.req().method() == http::verb::unknown ? execd_request_seen::other_method
                                                          : std::string_view(method.data(), method.size());
    seen.traceparent = std::string_view(parent.data(), parent.size());
    if (!r) return seen;
    seen.route = r->execd_route.empty() ? r->pattern : r->execd_route;
    seen.operation = r->operation;
    seen.metric_operation = r->metric_operation;
    if (r->metric_operation.empty() || !handled || x.status() == 0) return seen;
    const std::optional<bool> succeeded = area == "filesystem" ? std::optional(x.status() < 400) : x.work_succeeded();
    if (succeeded) seen.result = *succeeded ? "success" : "failure";
    return seen;
}

// An execd route, reached through the server proxy or a direct endpoint: the sandbox must
// exist and run, and execd must be listening on the port.
awaitable<void> to_execd(context& c, exchange& x, const std::vector<std::string>& segments, std::size_t id_at,
                         std::size_t rest_at) {
    const std::string& sandbox_id = segments[id_at];
    const auto port = port_number(segments[id_at + 2]);
    const auto sandbox = c.sandboxes.find_gate(sandbox_id);  // not the record: this frame lives as long as a stream
    if (!sandbox) {
        co_await x.reply(c.not_found(x, sandbox_id));
        co_return;
    }
    call k;
    const route* r = nullptr;
    std::string_view area;
    for (const auto& [table, name] : execd_areas) {
        if ((r = find_route(table(), x.req().method(), segments, rest_at, k))) {
            area = name;
            break;
        }
    }
    k.sandbox_id = sandbox_id;
    const auto began = std::chrono::steady_clock::now();
    // Only a request that reaches a running execd is in execd's telemetry.
    const bool reaches_execd = port == execd_port && sandbox->state == c.profile.running.state;
    answered_by who = answered_by::server;
    const auto token = x.req().find("X-EXECD-ACCESS-TOKEN");
    if (sandbox->secure_access && (token == x.req().end() || token->value() != sandbox->access_token)) {
        co_await x.reply(c.json_reply(x, 401, unauthorized_json()));
    } else if (!reaches_execd) {
        // Nothing listens there (yet): what the proxy answers when it cannot connect.
        co_await x.reply(c.error_reply(x, 502, "BACKEND_CONNECTION_FAILED",
                                       "Could not connect to the backend sandbox " + sandbox_id + ":" +
                                           segments[id_at + 2] + ": connection refused"));
    } else if (!r) {
        co_await x.reply(c.text_reply(x, 404, "404 page not found", "text/plain"));
    } else {
        who = co_await run_route(c, x, r, k);
    }
    if (c.options.on_execd_request && reaches_execd && who != answered_by::proxy) {
        c.options.on_execd_request(
            seen_by_execd(x, r, area, who == answered_by::handler, std::chrono::steady_clock::now() - began));
    }
}

awaitable<void> add_fault(context& c, exchange& x) {
    auto parsed = parse_fault(x.req().body());
    if (!parsed) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER", parsed.error().reason()));
        co_return;
    }
    if (!c.faults.push(parsed.value())) {
        co_await x.reply(c.error_reply(x, 409, "FAULT::LIMIT_EXCEEDED",
                                       std::to_string(c.options.max_faults) +
                                           " faults are waiting already; one must fire before another is added"));
        co_return;
    }
    co_await x.reply(c.json_reply(x, 201, json::parse(to_json(parsed.value()))));
}

}  // namespace

void context::yield_to_connections() noexcept {
    // Nice 10 weighs a tenth of nice 0 on Linux's scheduler: a connection thread that wakes
    // runs at once beside a worker. Only ever lowered, which needs no privilege.
    thread_local const bool lowered = ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10) == 0;
    (void)lowered;
}

void context::sweep_every_second(std::stop_token stop) {
    std::mutex m;
    std::condition_variable_any woken;
    std::unique_lock lock(m);
    while (!woken.wait_for(lock, stop, std::chrono::seconds(1), [&] { return stop.stop_requested(); })) {
        for (const auto& [id, box] : sandboxes.sweep()) {
            // An OOM kill of a process no run follows (a background command's child, a
            // daemon it left): the kernel's count is the evidence all the same.
            if (box->oom_kills() > 0) {
                fail_sandbox(*this, id, profile.oom_killed);
                box->kill_all();
            }
            // A terminal nobody holds has its output read all the same, as execd's pump
            // reads it: its shell never waits on a full PTY, and `since` replays it.
            (void)sandboxes.with_terminals(id, [](terminal_map& terminals, const file_tree& files) {
                for (auto& [terminal_id, t] : terminals) {
                    if (!t->held()) t->advance(mono_clock::now(), files);
                }
                return true;
            });
        }
        reconcile_addresses();
    }
}

void context::reconcile_addresses() {
    direct.reconcile([this](const std::string& id) -> std::optional<bool> {
        const auto s = sandboxes.find_gate(id);
        if (!s) return std::nullopt;
        return s->state == profile.running.state;
    });
}

void set_request_id(http::fields& fields) { fields.set("X-Request-ID", to_string(event_id::generate())); }

response context::json_reply(const exchange& x, int status, const json::value& body) const {
    return text_reply(x, status, json::serialize(body), "application/json");
}

response context::text_reply(const exchange& x, int status, std::string body, std::string_view type) const {
    response res(static_cast<http::status>(status), x.req().version());
    res.set(http::field::content_type, type);
    set_request_id(res);
    res.body() = std::move(body);
    return res;
}

response context::empty_reply(const exchange& x, int status) const {
    response res(static_cast<http::status>(status), x.req().version());
    set_request_id(res);
    return res;
}

response context::error_reply(const exchange& x, int status, std::string_view code, std::string_view message) const {
    return json_reply(x, status, json::object{{"code", code}, {"message", message}});
}

response context::not_found(const exchange& x, std::string_view sandbox_id) const {
    std::string message(profile.not_found_message);
    if (const auto at = message.find("{id}"); at != std::string::npos) message.replace(at, 4, sandbox_id);
    return error_reply(x, 404, backend_code("SANDBOX_NOT_FOUND"), message);
}

std::string context::backend_code(std::string_view name) const { return std::string(profile.code_prefix) + std::string(name); }

std::string percent_decode(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
        } else {
            out += text[i] == '+' ? ' ' : text[i];
        }
    }
    return out;
}

std::vector<std::string> query_values(std::string_view target, std::string_view name) {
    std::vector<std::string> values;
    const auto q = target.find('?');
    if (q == std::string_view::npos) return values;
    for (std::string_view rest = target.substr(q + 1); !rest.empty();) {
        const auto amp = rest.find('&');
        const std::string_view pair = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
        const auto eq = pair.find('=');
        if (percent_decode(pair.substr(0, eq)) == name) {
            values.push_back(eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1)));
        }
    }
    return values;
}

std::optional<std::string> query_value(std::string_view target, std::string_view name) {
    auto values = query_values(target, name);
    if (values.empty()) return std::nullopt;
    return std::move(values.front());
}

std::optional<std::optional<std::int64_t>> number_query(const exchange& x, std::string_view name, std::int64_t lo,
                                                       std::int64_t hi) {
    const auto text = query_value(x.req().target(), name);
    if (!text) return std::optional<std::int64_t>();
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc() || end != text->data() + text->size() || n < lo || n > hi) return std::nullopt;
    return std::optional(n);
}


awaitable<void> dispatch(context& c, exchange& x) {
    ++c.served;
    const std::vector<std::string> segments = segments_of(x.req().target());
    const auto is = [&](std::size_t at, std::string_view word) { return segments.size() > at && segments[at] == word; };

    const bool own_address = on_own_address(c, x);
    const std::optional<std::string> own = own_address ? c.direct.sandbox_at(x.local_port()) : std::nullopt;
    if (own_address && !runs_now(c, own)) {
        // A dead pod's address answers nothing: a connection kept alive from before its end
        // (or its expiry, which no request has seen yet) is closed unanswered, never routed
        // to the lifecycle API, whose 401 would read as bad credentials.
        x.close_connection();
        c.reconcile_addresses();
        co_return;
    }
    if (own_address || x.local_port() == c.direct_port) {  // /sandboxes/{id}/port/{port}/…
        // A sandbox's own address reaches that sandbox only, as a pod's IP does.
        if (is(0, "sandboxes") && is(2, "port") && segments.size() >= 4 && (!own || *own == segments[1])) {
            co_await to_execd(c, x, segments, 1, 4);
        } else {
            co_await x.reply(c.text_reply(x, 404, "404 page not found", "text/plain"));
        }
        co_return;
    }
    const std::size_t base = is(0, "v1") ? 1 : 0;
    if (is(base, "sandboxes") && is(base + 2, "proxy") && segments.size() >= base + 4) {
        co_await to_execd(c, x, segments, base + 1, base + 4);  // unauthenticated, as upstream
        co_return;
    }
    if (segments.size() == base + 1 && is(base, "health")) {
        co_await x.reply(c.json_reply(x, 200, healthy_json()));
        co_return;
    }
    if (auto denied = refused_key(c, x)) {
        co_await x.reply(std::move(*denied));
        co_return;
    }
    if (segments.size() == base + 2 && is(base, "_ngfail") && is(base + 1, "faults") &&
        x.req().method() == http::verb::post) {
        co_await add_fault(c, x);
        co_return;
    }
    call k;
    const route* r = find_route(lifecycle_routes(), x.req().method(), segments, base, k);
    if (!r) {
        co_await x.reply(c.error_reply(x, 404, "SANDBOX::API_NOT_SUPPORTED", "no such route"));
        co_return;
    }
    co_await run_route(c, x, r, k);
    c.reconcile_addresses();  // a read may have seen time pass (Resuming → Running, an expiry)
}

}  // namespace ngfail::opensandbox::testing::detail
