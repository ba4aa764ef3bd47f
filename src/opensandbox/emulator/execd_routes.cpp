// execd inside a simulated sandbox: health, commands (streamed, background, status, logs,
// interrupt), bash sessions and metrics. One handler per route, and the route table (files and
// directories are in filesystem_routes.cpp).
#include "context.hpp"
#include "run_stream.hpp"
#include "opensandbox/emulator/process/process_runs.hpp"
#include "simulated_shell.hpp"

#include <ngfail/event_id.hpp>

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <cctype>
#include <charconv>
#include <limits>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;
namespace asio = boost::asio;
using boost::asio::awaitable;

awaitable<void> ping(context& c, exchange& x, call&) { co_await x.reply(c.empty_reply(x, 200)); }

// A run's command and timeout from its body; a one-line reason when they are not there.
struct run_request {
    std::string_view command;  // in the body, which outlives the run
    std::optional<std::chrono::milliseconds> timeout;
    const json::object* body = nullptr;
};

std::variant<run_request, std::string> run_request_of(const json::value& body) {
    const json::object* o = body.if_object();
    const json::value* command = o ? o->if_contains("command") : nullptr;
    if (!command || !command->is_string() || command->as_string().empty()) {
        return std::string("error parsing request, MAYBE invalid body format. command is required");
    }
    const auto timeout = exec_timeout(*o);
    if (!timeout) return std::string("timeout must be a whole number of milliseconds");
    // execd decodes `envs` into a map of strings: anything else is a malformed body.
    if (const json::value* envs = o->if_contains("envs"); envs && !envs->is_null()) {
        const json::object* pairs = envs->if_object();
        const auto not_text = [](const auto& pair) { return !pair.value().is_string(); };
        if (!pairs || std::any_of(pairs->begin(), pairs->end(), not_text)) {
            return std::string("error parsing request, MAYBE invalid body format. envs must map names to strings");
        }
        std::size_t bytes = 0;
        for (const auto& pair : *pairs) bytes += pair.key().size() + pair.value().as_string().size();
        if (bytes > max_shell_variable_bytes) return std::string("envs hold more than 64 KiB (names and values)");
    }
    return run_request{command->as_string(), *timeout, o};
}

// The shell a command runs in: the request's `cwd` and `envs`, as execd starts it.
shell_state shell_of(const run_request& r) {
    shell_state shell;
    if (const json::value* cwd = r.body->if_contains("cwd"); cwd && cwd->is_string() && !cwd->as_string().empty()) {
        shell.cwd = file_tree::normal(cwd->as_string());
    }
    if (const json::value* envs = r.body->if_contains("envs"); envs && envs->is_object()) {
        // run_request_of has checked that they are strings and fit
        for (const auto& [name, value] : envs->as_object()) (void)shell.set(std::string(name), std::string(value.as_string()));
    }
    return shell;
}

// The command as the process runtime's supervisor starts it: execd's `cwd` and `envs`.
process_command process_command_of(const run_request& r) {
    process_command command{.command = std::string(r.command)};
    if (const json::value* cwd = r.body->if_contains("cwd"); cwd && cwd->is_string()) command.cwd = cwd->as_string();
    if (const json::value* envs = r.body->if_contains("envs"); envs && envs->is_object()) {
        // run_request_of has checked that they are strings and fit
        for (const auto& [name, value] : envs->as_object()) {
            command.envs.push_back(std::string(name) + "=" + std::string(value.as_string()));
        }
    }
    return command;
}

awaitable<void> exec(context& c, exchange& x, call& k) {
    const json::value body = co_await body_json(c, x);
    auto request = run_request_of(body);
    if (const auto* why = std::get_if<std::string>(&request)) {
        co_await x.reply(invalid_request(c, x, *why));
        co_return;
    }
    const run_request& r = std::get<run_request>(request);
    const json::value* background_field = r.body->if_contains("background");
    const bool background = background_field && background_field->is_bool() && background_field->as_bool();
    std::optional<process_command> real;
    if (c.processes) {
        real = process_command_of(r);
        if (!passable(real->cwd, {real->command}, real->envs)) {
            co_await x.reply(invalid_request(c, x, std::string(unpassable)));
            co_return;
        }
    }
    const std::optional<command_run> run = co_await start_run(c, x, k, r.command, background);
    if (!run) co_return;
    if (real) {
        const process_work work{.box = c.sandboxes.box(k.sandbox_id), .command = std::move(*real)};
        co_await stream_run(c, x, k, *run, run->id, work, background, r.timeout);
        co_return;
    }
    const file_reader files = files_of(c, k);
    shell_state shell = shell_of(r);
    const simulated_work work = shell_work(r.command, [&] { return simulate(r.command, files, &shell); });
    co_await stream_run(c, x, k, *run, run->id, work, background, r.timeout);
}

// ---- bash sessions: a shell's working directory and variables kept between runs -----------------

// POST /session {"cwd"}: the body may be empty; the directory is made, as execd makes it.
awaitable<void> create_session(context& c, exchange& x, call& k) {
    shell_state shell;
    if (c.processes) shell.cwd.clear();  // a real session starts where its bash would: home
    if (!x.req().body().empty()) {
        json::error_code ec;
        const json::value body = json::parse(x.req().body(), ec);
        const json::value* cwd = !ec && body.is_object() ? body.as_object().if_contains("cwd") : nullptr;
        if (ec || !body.is_object() || (cwd && !cwd->is_string())) {
            co_await x.reply(invalid_request(c, x, "error parsing request. cwd must be a string"));
            co_return;
        }
        if (c.processes && cwd && !passable(cwd->as_string(), {})) {
            co_await x.reply(invalid_request(c, x, std::string(unpassable)));
            co_return;
        }
        if (cwd && !cwd->as_string().empty()) {
            shell.cwd = file_tree::normal(cwd->as_string());
            if (!c.processes) {
                (void)c.sandboxes.with_files(k.sandbox_id, [&](file_tree& t) { return t.make_directories(shell.cwd, 755); });
            }
        }
    }
    if (c.processes) {
        if (const std::string failed = co_await make_real_directory(c, k, shell.cwd); !failed.empty()) {
            co_await x.reply(c.error_reply(x, 500, "RUNTIME_ERROR", "error creating session. " + failed));
            co_return;
        }
    }
    const std::string id = to_string(event_id::generate());
    json::object created;  // named: g++ 12 rejects a braced JSON object inside a co_await
    created["session_id"] = id;
    const auto made = c.sandboxes.with_sessions(k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) {
        if (sessions.size() >= c.sandboxes.sessions_per_sandbox()) return false;
        sessions.emplace(id, std::move(shell));
        return true;
    });
    if (!made) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*made) {
        co_await x.reply(c.error_reply(x, 500, "RUNTIME_ERROR", "error creating session. too many sessions"));
    } else {
        co_await x.reply(c.json_reply(x, 200, created));
    }
}

// POST /session/{id}/run {"command", "cwd", "timeout"}: streamed as a command is, `init`
// naming the session; the run starts in the session's directory (or `cwd`, which then
// stays), and what it changes (`cd`, `export`) stays for the next run.
awaitable<void> run_in_session(context& c, exchange& x, call& k) {
    const json::value body = co_await body_json(c, x);
    auto request = run_request_of(body);
    if (const auto* why = std::get_if<std::string>(&request)) {
        co_await x.reply(invalid_request(c, x, "error parsing request. " + *why));
        co_return;
    }
    const run_request& r = std::get<run_request>(request);
    const json::value* cwd = r.body->if_contains("cwd");
    const auto state = c.sandboxes.with_sessions(k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) {
        const auto it = sessions.find(k.param);
        return it == sessions.end() ? std::optional<shell_state>() : std::optional(it->second);
    });
    if (!state || !*state) {
        x.ended_work(false);  // a run that could not start: execd's controller records a failure
        co_await x.reply(c.error_reply(x, 500, "RUNTIME_ERROR", "error running in session. context not found"));
        co_return;
    }
    const std::string_view asked_cwd = cwd && cwd->is_string() ? std::string_view(cwd->as_string()) : std::string_view();
    if (c.processes && !passable(asked_cwd, {r.command})) {
        co_await x.reply(invalid_request(c, x, std::string(unpassable)));
        co_return;
    }
    shell_state shell = **state;
    if (!asked_cwd.empty()) shell.cwd = file_tree::normal(asked_cwd);
    const std::optional<command_run> run = co_await start_run(c, x, k, r.command, false);
    if (!run) co_return;
    if (c.processes) {
        auto session = std::make_shared<session_run>(shell, r.command);
        const auto keep_state = [&c, &k, &session] {
            (void)c.sandboxes.with_sessions(k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) {
                if (const auto it = sessions.find(k.param); it != sessions.end()) it->second = session->after(it->second);
                return true;
            });
        };
        process_work work{.box = c.sandboxes.box(k.sandbox_id),
                          .command = {.command = session->command_line()},
                          .session = session,
                          .before_last_event = keep_state};
        co_await stream_run(c, x, k, *run, k.param, work, false, r.timeout);
        co_return;
    }
    const file_reader files = files_of(c, k);
    const simulated_work work = shell_work(r.command, [&] {
        simulated_run ran = simulate(r.command, files, &shell);
        (void)c.sandboxes.with_sessions(k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) {
            if (const auto it = sessions.find(k.param); it != sessions.end()) it->second = shell;
            return true;
        });
        return ran;
    });
    co_await stream_run(c, x, k, *run, k.param, work, false, r.timeout);
}

awaitable<void> delete_session(context& c, exchange& x, call& k) {
    const auto erased = c.sandboxes.with_sessions(
        k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) { return sessions.erase(k.param) == 1; });
    if (!erased) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*erased) {
        co_await x.reply(c.error_reply(x, 404, "CONTEXT_NOT_FOUND", "session " + k.param + " not found"));
    } else {
        co_await x.reply(c.empty_reply(x, 200));
    }
}

awaitable<void> interrupt(context& c, exchange& x, call& k) {
    const auto id = query_value(x.req().target(), "id");
    if (!id || id->empty()) {
        co_await x.reply(c.error_reply(x, 400, "MISSING_QUERY", "missing command execution id"));
        co_return;
    }
    if (!c.sandboxes.interrupt(k.sandbox_id, *id)) {
        co_await x.reply(c.error_reply(x, 500, "RUNTIME_ERROR", "no running command " + *id));
        co_return;
    }
    co_await x.reply(c.empty_reply(x, 200));
}

// CommandStatusResponse; a signal_exit fault reports the command killed.
json::object status_json(const command_run& run, const call& k) {
    json::object o{{"id", run.id},
                   {"content", run.content},
                   {"running", run.running},
                   {"exit_code", run.exit_code ? json::value(*run.exit_code) : json::value(nullptr)},
                   {"error", run.error},
                   {"started_at", rfc3339(run.started_at)},
                   {"finished_at", run.finished_at ? json::value(rfc3339(*run.finished_at)) : json::value(nullptr)}};
    if (k.active_fault && k.active_fault->what == fault::action::signal_exit) {
        o["running"] = false;
        o["exit_code"] = -1;
        o["error"] = "signal: killed";
    }
    return o;
}

awaitable<void> status(context& c, exchange& x, call& k) {
    const auto run = c.sandboxes.command(k.sandbox_id, k.param);
    if (!run) {  // 404, as execd answers an id it does not know (after a restart, say)
        co_await x.reply(c.error_reply(x, 404, "INVALID_REQUEST_BODY", "command not found: " + k.param));
        co_return;
    }
    co_await x.reply(c.json_reply(x, 200, status_json(*run, k)));
}

awaitable<void> logs(context& c, exchange& x, call& k) {
    const auto run = c.sandboxes.command(k.sandbox_id, k.param);
    if (!run || !run->background) {
        const std::string why = run ? "command " + k.param + " is not running in background"
                                    : "command not found: " + k.param;
        co_await x.reply(invalid_request(c, x, why));
        co_return;
    }
    const auto cursor = number_query(x, "cursor", 0, std::numeric_limits<std::int64_t>::max());
    if (!cursor) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_REQUEST_BODY", "cursor must be a byte offset"));
        co_return;
    }
    // The cursor is a byte offset into the combined output, as execd seeks its log file.
    auto out = c.sandboxes.output(k.sandbox_id, k.param, static_cast<std::size_t>(cursor->value_or(0)));
    if (!out) {
        co_await x.reply(invalid_request(c, x, "command not found: " + k.param));
        co_return;
    }
    response res = c.text_reply(x, 200, std::move(out->text), "text/plain; charset=utf-8");
    res.set("EXECD-COMMANDS-TAIL-CURSOR", std::to_string(out->end));
    co_await x.reply(std::move(res));
}

json::object simulated_metrics() {
    return {{"cpu_count", 2.0}, {"cpu_used_pct", 1.5}, {"mem_total_mib", 512.0}, {"mem_used_mib", 64.0},
            {"timestamp", now_ms()}};
}

// The process runtime's sandbox reports its own control group (process_sandbox::sample).
awaitable<json::object> metrics_of(context& c, const call& k) {
    const auto box = c.processes ? c.sandboxes.box(k.sandbox_id) : nullptr;
    if (!box) co_return simulated_metrics();
    const process_sandbox::usage u = co_await c.off_io([&] { return box->sample(); });
    co_return json::object{{"cpu_count", u.cpu_count}, {"cpu_used_pct", u.cpu_used_pct}, {"mem_total_mib", u.mem_total_mib},
                           {"mem_used_mib", u.mem_used_mib}, {"timestamp", now_ms()}};
}

awaitable<void> metrics(context& c, exchange& x, call& k) {
    const json::object sampled = co_await metrics_of(c, k);
    co_await x.reply(c.json_reply(x, 200, sampled));
}

// As execd's WatchMetrics: an event stream of bare JSON lines, a sample every `metrics_every`,
// until the peer goes (a write that fails or outlasts the write deadline ends it) or the
// server stops. Nothing accumulates: a peer that does not read is cut at the deadline.
awaitable<void> watch_metrics(context& c, exchange& x, call& k) {
    http::response<http::empty_body> head(http::status::ok, x.req().version());
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    set_request_id(head);
    // The head goes out with the first sample, a period later, as gin writes it on the first flush.
    if (!co_await x.wait(c.options.metrics_every) || !co_await x.begin_stream(std::move(head))) {
        x.close_connection();
        co_return;
    }
    do {
        const json::object sampled = co_await metrics_of(c, k);
        if (!co_await x.chunk(json::serialize(sampled) + "\n")) co_return;
    } while (co_await x.wait(c.options.metrics_every));
    x.close_connection();
}

using v = http::verb;
constexpr std::array execd_table{
    route{v::get, "/ping", "ping", ping},
    route{v::post, "/command", "exec", exec, "", "run_command"},
    route{v::delete_, "/command", "interrupt", interrupt},
    route{v::get, "/command/status/{param}", "exec_status", status, "/command/status/:id", ""},
    route{v::get, "/command/{param}/logs", "exec_logs", logs, "/command/:id/logs", ""},
    route{v::post, "/session", "create_session", create_session},
    route{v::post, "/session/{param}/run", "run_in_session", run_in_session, "/session/:sessionId/run", "run_in_session"},
    route{v::delete_, "/session/{param}", "delete_session", delete_session, "/session/:sessionId", ""},
    route{v::get, "/metrics", "metrics", metrics},
    route{v::get, "/metrics/watch", "watch_metrics", watch_metrics},
};

}  // namespace

std::span<const route> execd_routes() noexcept { return execd_table; }

}  // namespace ngfail::opensandbox::testing::detail
