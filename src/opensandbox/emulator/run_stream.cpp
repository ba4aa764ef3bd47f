// Streams a run as execd does (see run_stream.hpp).
#include "run_stream.hpp"
#include "text/utf8.hpp"

#include "opensandbox/emulator/process/process_runs.hpp"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace ngfail::opensandbox::testing::detail {

namespace json = boost::json;
namespace asio = boost::asio;
using boost::asio::awaitable;

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(wall_clock::now().time_since_epoch()).count();
}

namespace {

// One SSE frame as execd writes it: a JSON object and a blank line.
std::string frame(json::object event) {
    event["timestamp"] = now_ms();
    return json::serialize(event) + "\n\n";
}


// What a kernel reports when an interrupt stops the code it runs.
end_frame keyboard_interrupt_frame() {
    return raised_frame({"KeyboardInterrupt", "", {"KeyboardInterrupt: "}});
}

}  // namespace

// Built outside the coroutines: GCC 12 rejects brace-initialised string literals inside a
// co_await expression ("array used as initializer").
std::string ping_frame() { return frame({{"type", "ping"}, {"text", "pong"}}); }
std::string text_frame(std::string_view type, std::string_view text) {
    return frame({{"type", type}, {"text", ngfail::text::valid_utf8(text)}});
}
end_frame complete_frame(std::chrono::steady_clock::time_point started) {
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    return {frame({{"type", "execution_complete"}, {"execution_time", took.count()}}), true};
}
end_frame raised_frame(const raised_error& raised) {
    json::array traceback;
    for (const std::string& line : raised.traceback) traceback.emplace_back(ngfail::text::valid_utf8(line));
    return {frame({{"type", "error"},
                   {"error", json::object{{"ename", raised.name}, {"evalue", ngfail::text::valid_utf8(raised.value)},
                                          {"traceback", std::move(traceback)}}}}),
            false};
}
awaitable<bool> end_run(exchange& x, const end_frame& last) {
    x.ended_work(last.succeeded);
    if (x.last_event_withheld()) co_return true;
    co_return co_await x.chunk(last.text);
}
// A kernel's cell number, and its last expression's value: execd renames Jupyter's
// "text/plain" to "text".
std::string count_frame(int count) { return frame({{"type", "execution_count"}, {"execution_count", count}}); }
std::string result_frame(std::string_view text) {
    return frame({{"type", "result"}, {"results", json::object{{"text", ngfail::text::valid_utf8(text)}}}});
}

end_frame error_frame(std::string_view evalue, std::string_view traceback) {
    return raised_frame({"CommandExecError", std::string(evalue), {std::string(traceback)}});
}

void fail_sandbox(context& c, const std::string& sandbox_id, const status_shape& shape) {
    c.sandboxes.update(sandbox_id, [&](sandbox_record& s) {
        s.state = std::string(shape.state);
        s.reason = std::string(shape.reason);
        s.message = message_for(shape, s.id);
    });
    c.reconcile_addresses();
}

awaitable<json::value> body_json(context& c, const exchange& x) {
    const auto parse = [&] {
        json::error_code ec;
        json::value body = json::parse(x.req().body(), ec);
        return ec ? json::value() : body;
    };
    // Parsing 64 MiB takes tens of milliseconds: another connection on this thread would wait.
    co_return co_await c.off_io_if(x.req().body().size() > context::light_input_bytes, parse);
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

namespace {

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

enum class afterwards { finished_or_ended, runs_on };

// The stream itself; says whether the run goes on in the background after it.
awaitable<afterwards> stream_until_the_end(context& c, exchange& x, call& k, const command_run& run,
                                           std::string_view init_text, const run_work& work, bool background,
                                           std::optional<std::chrono::milliseconds> timeout) {
    using action = fault::action;
    const std::optional<action> misbehave = k.active_fault ? std::optional(k.active_fault->what) : std::nullopt;
    // Whatever ends the run (a command, a kernel's cell, a background start, a kill), in
    // either runtime, its last event is withheld.
    if (misbehave == action::no_terminal_event) x.withhold_last_event();
    // Real execd's head goes out with its first event (gin writes it on the first flush): a
    // stream dropped before `init` has sent nothing at all.
    if (misbehave == action::drop_before_init) {
        x.close_connection();
        co_return afterwards::finished_or_ended;
    }
    http::response<http::empty_body> head(http::status::ok, x.req().version());
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    set_request_id(head);
    if (!co_await x.begin_stream(std::move(head))) co_return afterwards::finished_or_ended;
    co_await x.chunk(text_frame("init", std::string(init_text)));
    co_await x.chunk(ping_frame());  // execd's pinger fires at once
    if (misbehave == action::drop_after_init || misbehave == action::crash) {
        if (misbehave == action::crash) fail_sandbox(c, k.sandbox_id, c.profile.crashed);
        x.close_connection();
        co_return afterwards::finished_or_ended;
    }
    if (const auto* real = std::get_if<process_work>(&work); real && misbehave == action::oom_kill) {
        // A real sandbox is filled until its kernel kills the filler (tail holds a line that
        // never ends): the OOM kill, its counter and the sandbox's failure are the kernel's.
        process_work filler = *real;
        filler.command.command = "exec tail /dev/zero";
        filler.session.reset();
        co_await stream_process(c, x, k.sandbox_id, run, filler, false, timeout);
        co_return afterwards::finished_or_ended;
    }
    if (misbehave == action::signal_exit || misbehave == action::oom_kill) {
        // The process execd waited on died by SIGKILL; an OOM kill also fails the sandbox.
        if (misbehave == action::oom_kill) fail_sandbox(c, k.sandbox_id, c.profile.oom_killed);
        c.sandboxes.finish_command(k.sandbox_id, run.id, -1, "signal: killed");
        co_await end_run(x, error_frame("-1", "signal: killed"));
        co_await x.end_stream();
        co_return afterwards::finished_or_ended;
    }
    if (const auto* real = std::get_if<process_work>(&work)) {
        const bool runs_on = co_await stream_process(c, x, k.sandbox_id, run, *real, background, timeout);
        co_return runs_on ? afterwards::runs_on : afterwards::finished_or_ended;
    }
    // The work, and the frames of what it printed (up to 16 MiB made into JSON), off the
    // connection threads unless light: a long line holds its own sandbox, no one else's
    // connection.
    const auto& simulated = std::get<simulated_work>(work);
    const auto started = mono_clock::now();
    simulated_run plan = co_await c.off_io_if(!simulated.light, [&] { return simulated.plan(); });
    if (background) {  // execd completes a background command's run once it has started
        co_await end_run(x, complete_frame(started));
        co_await x.end_stream();
        asio::co_spawn(co_await asio::this_coro::executor,
                       run_in_background(c, k.sandbox_id, run.id, std::move(plan), timeout), asio::detached);
        co_return afterwards::runs_on;
    }
    const ending how = co_await run_for(c, x, k, run.id, plan.runs_for, timeout);
    if (how == ending::gone) co_return afterwards::finished_or_ended;
    if (how != ending::completed) {
        const std::string_view signal = how == ending::killed ? "signal: killed" : "signal: terminated";
        c.sandboxes.finish_command(k.sandbox_id, run.id, -1, std::string(signal));
        const end_frame last = plan.in_kernel && how == ending::terminated ? keyboard_interrupt_frame()
                                                                             : error_frame("-1", signal);
        co_await end_run(x, last);
        co_await x.end_stream();
        co_return afterwards::finished_or_ended;
    }
    const bool much_output = plan.stdout_text.size() + plan.stderr_text.size() > context::light_input_bytes;
    const std::string output = co_await c.off_io_if(much_output, [&] {
        std::string frames;
        if (!plan.stdout_text.empty()) frames += text_frame("stdout", plan.stdout_text);
        if (!plan.stderr_text.empty()) frames += text_frame("stderr", plan.stderr_text);
        c.sandboxes.append_output(k.sandbox_id, run.id, plan.stdout_text + plan.stderr_text);
        return frames;
    });
    if (!output.empty()) co_await x.chunk(output);
    if (plan.execution_count) co_await x.chunk(count_frame(*plan.execution_count));
    if (plan.result_text) co_await x.chunk(result_frame(*plan.result_text));
    const std::string error = plan.exit_code == 0 ? "" : "exit status " + std::to_string(plan.exit_code);
    c.sandboxes.finish_command(k.sandbox_id, run.id, plan.exit_code, error);
    if (plan.raised) {
        co_await end_run(x, raised_frame(*plan.raised));
    } else if (plan.exit_code == 0) {
        co_await end_run(x, complete_frame(started));
    } else {
        co_await end_run(x, error_frame(std::to_string(plan.exit_code), error));
    }
    co_await x.end_stream();
    co_return afterwards::finished_or_ended;
}

}  // namespace

awaitable<void> stream_run(context& c, exchange& x, call& k, const command_run& run, std::string_view init_text,
                           const run_work& work, bool background, std::optional<std::chrono::milliseconds> timeout) {
    // A run whose stream ended first (its peer went, a fault dropped it, its handler threw)
    // dies with it, as execd's request context SIGKILLs the process group when the client
    // disconnects: it must not stay "running" forever, one more entry a stranger could pile up.
    afterwards next = afterwards::finished_or_ended;
    try {
        next = co_await stream_until_the_end(c, x, k, run, init_text, work, background, timeout);
    } catch (...) {
        c.sandboxes.finish_command(k.sandbox_id, run.id, -1, "signal: killed");
        throw;
    }
    if (next == afterwards::finished_or_ended) c.sandboxes.finish_command(k.sandbox_id, run.id, -1, "signal: killed");
}


bool passable(std::string_view cwd, std::initializer_list<std::string_view> texts, const std::vector<std::string>& envs) {
    const auto holds_nul = [](std::string_view text) { return text.find('\0') != std::string_view::npos; };
    return cwd.size() <= max_path_bytes && !holds_nul(cwd) && std::none_of(texts.begin(), texts.end(), holds_nul) &&
           std::none_of(envs.begin(), envs.end(), holds_nul);
}

awaitable<std::string> make_real_directory(context& c, const call& k, const std::string& directory) {
    const auto box = c.sandboxes.box(k.sandbox_id);
    if (!box || directory.empty()) co_return std::string();
    co_return co_await c.off_io([&] {
        try {
            box->make_directories(directory);
            return std::string();
        } catch (const std::system_error& e) {
            return "mkdir " + directory + ": " + go_error_text(e.code().message());  // Go's *PathError
        }
    });
}

file_reader files_of(context& c, const call& k) {
    // A run is planned outside the sandbox's lock: each question takes it for itself.
    return {.read_file = [&c, id = k.sandbox_id](const std::string& path) {
                const auto f = c.sandboxes.file(id, path);
                return f ? f->content : nullptr;
            },
            .is_directory = [&c, id = k.sandbox_id](const std::string& path) {
                return c.sandboxes.with_files(id, [&](const file_tree& tree) { return tree.is_directory(path); })
                    .value_or(false);
            }};
}

// Starts a run of `text`; answers the refusal itself (no sandbox, too many running) and
// gives none.
awaitable<std::optional<command_run>> start_run(context& c, exchange& x, const call& k, std::string_view text,
                                                bool background) {
    auto started = co_await c.off_io_if(text.size() > context::light_input_bytes, [&] {
        return c.sandboxes.start_command(k.sandbox_id, std::string(text), background);
    });
    if (const auto* refused = std::get_if<sandbox_store::refused_start>(&started)) {
        response res = *refused == sandbox_store::refused_start::no_sandbox
                           ? c.not_found(x, k.sandbox_id)
                           : c.error_reply(x, 429, "RUNTIME_ERROR", "too many commands running in this sandbox");
        co_await x.reply(std::move(res));
        co_return std::nullopt;
    }
    co_return std::get<command_run>(std::move(started));
}

}  // namespace ngfail::opensandbox::testing::detail
