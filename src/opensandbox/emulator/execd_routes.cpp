// execd inside a simulated sandbox: health, commands (streamed, background, status, logs,
// interrupt), bash sessions and metrics. One handler per route, and the route table (files and
// directories are in filesystem_routes.cpp).
#include "context.hpp"
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

namespace ngfail::opensandbox::emulator {
namespace {

namespace json = boost::json;
namespace asio = boost::asio;
using boost::asio::awaitable;

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(wall_clock::now().time_since_epoch()).count();
}

// One SSE frame as execd writes it: a JSON object and a blank line.
std::string frame(json::object event) {
    event["timestamp"] = now_ms();
    return json::serialize(event) + "\n\n";
}

// Built outside the coroutines: GCC 12 rejects brace-initialised string literals inside a
// co_await expression ("array used as initializer").
std::string ping_frame() { return frame({{"type", "ping"}, {"text", "pong"}}); }
// Output as JSON can carry it: bytes that are not UTF-8 become U+FFFD, as Go's encoder in
// execd writes them.
std::string as_utf8(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        bool valid = length != 0 && i + length <= text.size();
        for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
        if (valid) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

std::string text_frame(std::string_view type, std::string_view text) {
    return frame({{"type", type}, {"text", as_utf8(text)}});
}
std::string complete_frame(std::chrono::milliseconds took) {
    return frame({{"type", "execution_complete"}, {"execution_time", took.count()}});
}

std::string error_frame(std::string_view evalue, std::string_view traceback) {
    return frame({{"type", "error"},
                  {"error", json::object{{"ename", "CommandExecError"}, {"evalue", evalue},
                                         {"traceback", json::array{traceback}}}}});
}

response invalid_request(const context& c, const exchange& x, std::string_view message) {
    return c.error_reply(x, 400, "INVALID_REQUEST_BODY", message);
}

// execd's `timeout` (milliseconds): none when absent, null or not positive; a huge one
// saturates at the longest wait; std::nullopt when it is not a whole number.
std::optional<std::optional<std::chrono::milliseconds>> exec_timeout(const json::object& o) {
    const json::value* t = o.if_contains("timeout");
    if (!t || t->is_null()) return std::optional<std::chrono::milliseconds>();
    if (t->is_uint64()) return std::optional(longest_wait);  // past INT64_MAX
    if (!t->is_int64()) return std::nullopt;
    if (t->as_int64() <= 0) return std::optional<std::chrono::milliseconds>();
    return std::optional(std::min(std::chrono::milliseconds(t->as_int64()), longest_wait));
}

enum class ending { completed, killed, terminated, gone };

// Runs a simulated command for `how_long`, sending `ping` every `ping_every` as execd does,
// until it completes, its timeout kills it, an interrupt terminates it, or the peer or
// server goes away.
awaitable<ending> run_for(context& c, exchange& x, const call& k, const std::string& command_id,
                          std::chrono::milliseconds how_long, std::optional<std::chrono::milliseconds> timeout) {
    const auto start = mono_clock::now();
    auto next_ping = start + c.options.ping_every;
    for (;;) {
        const auto now = mono_clock::now();
        const command_fate fate = c.sandboxes.fate(k.sandbox_id, command_id);
        if (fate == command_fate::gone) {  // the sandbox was deleted under it: its pod is gone
            x.close_connection();
            co_return ending::gone;
        }
        if (fate == command_fate::interrupted) co_return ending::terminated;
        if (timeout && now - start >= *timeout) co_return ending::killed;
        if (now - start >= how_long) co_return ending::completed;
        if (now >= next_ping) {
            if (!co_await x.chunk(ping_frame())) co_return ending::gone;
            next_ping += c.options.ping_every;
        }
        auto until = std::min(start + how_long, next_ping);
        if (timeout) until = std::min(until, start + *timeout);
        const auto step = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
        if (!co_await x.wait(std::clamp(step, std::chrono::milliseconds(1), std::chrono::milliseconds(50)))) {
            co_return ending::gone;
        }
    }
}

// A background command runs on, detached from the request that started it.
awaitable<void> run_in_background(context& c, std::string sandbox_id, std::string command_id, simulated_run plan,
                                  std::optional<std::chrono::milliseconds> timeout) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto start = mono_clock::now();
    c.sandboxes.append_output(sandbox_id, command_id, plan.stdout_text + plan.stderr_text);
    for (;;) {
        const auto elapsed = mono_clock::now() - start;
        const command_fate fate = c.sandboxes.fate(sandbox_id, command_id);
        if (fate == command_fate::gone) co_return;  // its sandbox went, and the command with it
        if (fate == command_fate::interrupted) {
            c.sandboxes.finish_command(sandbox_id, command_id, -1, "signal: terminated");
            co_return;
        }
        if (timeout && elapsed >= *timeout) {
            c.sandboxes.finish_command(sandbox_id, command_id, -1, "signal: killed");
            co_return;
        }
        if (elapsed >= plan.runs_for) break;
        timer.expires_after(std::chrono::milliseconds(20));
        co_await timer.async_wait(asio::use_awaitable);
    }
    c.sandboxes.finish_command(sandbox_id, command_id, plan.exit_code,
                               plan.exit_code == 0 ? "" : "exit status " + std::to_string(plan.exit_code));
}

void fail_sandbox(context& c, const std::string& sandbox_id, const status_shape& shape) {
    c.sandboxes.update(sandbox_id, [&](sandbox_record& s) {
        s.state = std::string(shape.state);
        s.reason = std::string(shape.reason);
        s.message = message_for(shape, s.id);
    });
}

awaitable<void> ping(context& c, exchange& x, call&) { co_await x.reply(c.empty_reply(x, 200)); }

// A started run, streamed as execd streams it: `init` (the run's id, or the session's),
// a `ping`, then the output and `execution_complete` or `error`; a background run ends the
// stream after `init` and runs on. Faults act at the points their names say.
awaitable<void> stream_run(context& c, exchange& x, call& k, const command_run& run, std::string_view init_text,
                           const std::function<simulated_run()>& plan_run, bool background,
                           std::optional<std::chrono::milliseconds> timeout) {
    using action = fault::action;
    const std::optional<action> misbehave = k.active_fault ? std::optional(k.active_fault->what) : std::nullopt;
    // Real execd's head goes out with its first event (gin writes it on the first flush): a
    // stream dropped before `init` has sent nothing at all.
    if (misbehave == action::drop_before_init) {
        x.close_connection();
        co_return;
    }
    http::response<http::empty_body> head(http::status::ok, x.req().version());
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    set_request_id(head);
    if (!co_await x.begin_stream(std::move(head))) co_return;
    co_await x.chunk(text_frame("init", std::string(init_text)));
    co_await x.chunk(ping_frame());  // execd's pinger fires at once
    if (misbehave == action::drop_after_init || misbehave == action::crash) {
        if (misbehave == action::crash) fail_sandbox(c, k.sandbox_id, c.profile.crashed);
        x.close_connection();
        co_return;
    }
    if (misbehave == action::signal_exit || misbehave == action::oom_kill) {
        // The process execd waited on died by SIGKILL; an OOM kill also fails the sandbox.
        if (misbehave == action::oom_kill) fail_sandbox(c, k.sandbox_id, c.profile.oom_killed);
        c.sandboxes.finish_command(k.sandbox_id, run.id, -1, "signal: killed");
        co_await x.chunk(error_frame("-1", "signal: killed"));
        co_await x.end_stream();
        co_return;
    }
    simulated_run plan = plan_run();
    if (background) {
        co_await x.end_stream();
        asio::co_spawn(co_await asio::this_coro::executor,
                       run_in_background(c, k.sandbox_id, run.id, std::move(plan), timeout), asio::detached);
        co_return;
    }
    const auto started = mono_clock::now();
    const ending how = co_await run_for(c, x, k, run.id, plan.runs_for, timeout);
    if (how == ending::gone) co_return;
    if (how != ending::completed) {
        const std::string_view signal = how == ending::killed ? "signal: killed" : "signal: terminated";
        c.sandboxes.finish_command(k.sandbox_id, run.id, -1, std::string(signal));
        co_await x.chunk(error_frame("-1", signal));
        co_await x.end_stream();
        co_return;
    }
    if (!plan.stdout_text.empty()) co_await x.chunk(text_frame("stdout", plan.stdout_text));
    if (!plan.stderr_text.empty()) co_await x.chunk(text_frame("stderr", plan.stderr_text));
    c.sandboxes.append_output(k.sandbox_id, run.id, plan.stdout_text + plan.stderr_text);
    const std::string error = plan.exit_code == 0 ? "" : "exit status " + std::to_string(plan.exit_code);
    c.sandboxes.finish_command(k.sandbox_id, run.id, plan.exit_code, error);
    if (misbehave == action::no_terminal_event) {
        // the stream ends cleanly: no error, no execution_complete
    } else if (plan.exit_code == 0) {
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(mono_clock::now() - started);
        co_await x.chunk(complete_frame(took));
    } else {
        co_await x.chunk(error_frame(std::to_string(plan.exit_code), error));
    }
    co_await x.end_stream();
}

file_reader files_of(context& c, const call& k) {
    return [&c, id = k.sandbox_id](const std::string& path) {
        const auto f = c.sandboxes.file(id, path);
        return f ? f->content : nullptr;
    };
}

// A run's command and timeout from its body; a one-line reason when they are not there.
struct run_request {
    std::string command;
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
    }
    return run_request{std::string(command->as_string()), *timeout, o};
}

// The shell a command runs in: the request's `cwd` and `envs`, as execd starts it.
shell_state shell_of(const run_request& r) {
    shell_state shell;
    if (const json::value* cwd = r.body->if_contains("cwd"); cwd && cwd->is_string() && !cwd->as_string().empty()) {
        shell.cwd = file_tree::normal(cwd->as_string());
    }
    if (const json::value* envs = r.body->if_contains("envs"); envs && envs->is_object()) {
        for (const auto& [name, value] : envs->as_object()) shell.env[std::string(name)] = std::string(value.as_string());
    }
    return shell;
}

// Starts a run of `text`; answers the refusal itself (no sandbox, too many running) and
// gives none.
awaitable<std::optional<command_run>> start_run(context& c, exchange& x, const call& k, const std::string& text,
                                                bool background) {
    auto started = c.sandboxes.start_command(k.sandbox_id, text, background);
    if (const auto* refused = std::get_if<sandbox_store::refused_start>(&started)) {
        response res = *refused == sandbox_store::refused_start::no_sandbox
                           ? c.not_found(x, k.sandbox_id)
                           : c.error_reply(x, 429, "RUNTIME_ERROR", "too many commands running in this sandbox");
        co_await x.reply(std::move(res));
        co_return std::nullopt;
    }
    co_return std::get<command_run>(std::move(started));
}

awaitable<void> exec(context& c, exchange& x, call& k) {
    json::error_code ec;
    const json::value body = json::parse(x.req().body(), ec);
    auto request = run_request_of(body);
    if (const auto* why = std::get_if<std::string>(&request)) {
        co_await x.reply(invalid_request(c, x, *why));
        co_return;
    }
    const run_request& r = std::get<run_request>(request);
    const json::value* background_field = r.body->if_contains("background");
    const bool background = background_field && background_field->is_bool() && background_field->as_bool();
    const std::optional<command_run> run = co_await start_run(c, x, k, r.command, background);
    if (!run) co_return;
    const file_reader files = files_of(c, k);
    shell_state shell = shell_of(r);
    const std::function<simulated_run()> plan = [&] { return simulate(r.command, files, &shell); };
    co_await stream_run(c, x, k, *run, run->id, plan, background, r.timeout);
}

// ---- bash sessions: a shell's working directory and variables kept between runs -----------------

// POST /session {"cwd"}: the body may be empty; the directory is made, as execd makes it.
awaitable<void> create_session(context& c, exchange& x, call& k) {
    shell_state shell;
    if (!x.req().body().empty()) {
        json::error_code ec;
        const json::value body = json::parse(x.req().body(), ec);
        const json::value* cwd = !ec && body.is_object() ? body.as_object().if_contains("cwd") : nullptr;
        if (ec || !body.is_object() || (cwd && !cwd->is_string())) {
            co_await x.reply(invalid_request(c, x, "error parsing request. cwd must be a string"));
            co_return;
        }
        if (cwd && !cwd->as_string().empty()) {
            shell.cwd = file_tree::normal(cwd->as_string());
            (void)c.sandboxes.with_files(k.sandbox_id, [&](file_tree& t) { return t.make_directories(shell.cwd, 755); });
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
    json::error_code ec;
    const json::value body = json::parse(x.req().body(), ec);
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
        co_await x.reply(c.error_reply(x, 500, "RUNTIME_ERROR", "error running in session. context not found"));
        co_return;
    }
    shell_state shell = **state;
    if (cwd && cwd->is_string() && !cwd->as_string().empty()) shell.cwd = file_tree::normal(cwd->as_string());
    const std::optional<command_run> run = co_await start_run(c, x, k, r.command, false);
    if (!run) co_return;
    const file_reader files = files_of(c, k);
    const std::function<simulated_run()> plan = [&] {
        simulated_run ran = simulate(r.command, files, &shell);
        (void)c.sandboxes.with_sessions(k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) {
            if (const auto it = sessions.find(k.param); it != sessions.end()) it->second = shell;
            return true;
        });
        return ran;
    };
    co_await stream_run(c, x, k, *run, k.param, plan, false, r.timeout);
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

awaitable<void> metrics(context& c, exchange& x, call&) { co_await x.reply(c.json_reply(x, 200, simulated_metrics())); }

// As execd's WatchMetrics: an event stream of bare JSON lines, a sample every `metrics_every`,
// until the peer goes (a write that fails or outlasts the write deadline ends it) or the
// server stops. Nothing accumulates: a peer that does not read is cut at the deadline.
awaitable<void> watch_metrics(context& c, exchange& x, call&) {
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
        if (!co_await x.chunk(json::serialize(simulated_metrics()) + "\n")) co_return;
    } while (co_await x.wait(c.options.metrics_every));
    x.close_connection();
}

using v = http::verb;
constexpr std::array routes{
    route{v::get, "/ping", "ping", ping},
    route{v::post, "/command", "exec", exec},
    route{v::delete_, "/command", "interrupt", interrupt},
    route{v::get, "/command/status/{param}", "exec_status", status},
    route{v::get, "/command/{param}/logs", "exec_logs", logs},
    route{v::post, "/session", "create_session", create_session},
    route{v::post, "/session/{param}/run", "run_in_session", run_in_session},
    route{v::delete_, "/session/{param}", "delete_session", delete_session},
    route{v::get, "/metrics", "metrics", metrics},
    route{v::get, "/metrics/watch", "watch_metrics", watch_metrics},
};

}  // namespace

std::span<const route> execd_routes() noexcept { return routes; }

}  // namespace ngfail::opensandbox::emulator
