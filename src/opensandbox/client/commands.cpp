// The execd operations: commands (streamed, background, status, logs, interrupt), bash
// sessions (create, run, delete), code runs, and ping. Every streamed run (an exec, a
// session run, a code run) is read by the same rules.
#include "execd_stream.hpp"
#include "call.hpp"

#include <boost/json.hpp>

#include <charconv>

namespace ngfail::opensandbox::detail {

// (defined below with the other operations; detached execution reads and interrupts with them)
awaitable<result<command_logs>> exec_logs_operation(client_state& s, std::string sandbox_id,
                                                    std::string execution_id, std::size_t cursor,
                                                    call_options per_call);
awaitable<result<void>> interrupt_operation(client_state& s, std::string sandbox_id, std::string execution_id,
                                            call_options per_call);

namespace {

namespace json = boost::json;
using verb = beast_http::verb;

// After an exec went wrong, the sandbox's own status is evidence: an OOM kill, a lost
// sandbox. Within the call's deadline; after a stream that outlasted it, within the time a
// call may take and never past the exec's total time.
awaitable<void> add_sandbox_status(const call_context& context, clock::time_point exec_end, observation& seen) {
    const auto most = std::min<std::chrono::milliseconds>(status_probe_timeout, context.options.timeout);
    const auto until = clock::now() < context.deadline ? std::min(context.deadline, deadline_after(most))
                                                       : std::min(exec_end, deadline_after(most));
    co_await add_sandbox_status(context.until(until), seen);
}

// A reply that proves nothing about the sandbox: a 5xx without the API's envelope, which a
// proxy in front of execd sends for an upstream that died (nginx's 502 page).
bool bare_server_error(const api_error& e) noexcept { return e.status() >= 500 && !e.code(); }

// `text` as a JSON string, escaped as Boost.JSON's serializer escapes it.
void append_json_string(std::string& out, std::string_view text) {
    json::serializer writer;
    writer.reset(text);
    char chunk[256];
    while (!writer.done()) out.append(writer.read(chunk));
}

// A session run's body: the command, and its directory and timeout when given.
json::value session_run_body(const command& cmd) {
    json::object body{{"command", cmd.command}};
    if (cmd.cwd) body["cwd"] = *cmd.cwd;
    if (cmd.timeout) body["timeout"] = cmd.timeout->count();
    return body;
}

// Sends `req` to the sandbox's execd and hands the reply's body to `on_bytes` as it arrives,
// quiet for at most `limits.idle`, whatever its size; an error reply becomes an api_error.
// The reply's head is returned.
awaitable<beast_http::response_header<>> stream_from_execd(const call_context& context, std::string_view sandbox_id,
                                                           const target& where, request& req, stream_limits limits,
                                                           const connection::bytes_callback& on_bytes) {
    const auto here = co_await asio::this_coro::executor;
    std::optional<lease> on = context.kept_connection(where, here);
    if (!on) on.emplace(co_await context.connect_to_execd(sandbox_id, where));
    co_await (*on)->send(req, context.deadline);
    beast_http::response_header<> head;
    bool failed = false;
    std::string error_body;
    co_await (*on)->receive_stream(
        context.deadline, limits,
        [&](const beast_http::response_header<>& h) {
            head = h;
            failed = h.result_int() >= 300;
        },
        [&](std::string_view bytes) {
            if (!failed) return on_bytes(bytes);
            error_body.append(bytes.substr(0, max_header_bytes - std::min(error_body.size(), max_header_bytes)));
        });
    if (failed) throw api_error_of(head, error_body, context.secrets);
    co_return head;
}

// POST `path` (/command, /session/{id}/run) and read its event stream, quiet for at most
// the command's idle timeout. An error reply becomes an api_error; a stream that ends
// without a terminal event, a connection_error (stream_incomplete).
awaitable<exec_result> run_command(const call_context& context, std::string_view sandbox_id,
                                   const execd_route& route, const std::string& path, const std::string& body,
                                   const command& cmd, clock::time_point exec_end, observation& seen,
                                   code_parts* code) {
    auto req = execd_request(context, verb::post, route.where, route.endpoint, path);
    req.set(beast_http::field::content_type, "application/json");
    req.set(beast_http::field::accept, "text/event-stream");
    req.body() = body;
    execd_stream events(context.options.max_body_bytes, {cmd.on_stdout, cmd.on_stderr});
    (void)co_await stream_from_execd(context, sandbox_id, route.where, req, {cmd.idle_timeout, exec_end},
                                     [&](std::string_view bytes) {
        // The execution is named even when what follows its `init` ends the stream.
        const auto name_execution = [&] {
            if (!events.result().execution_id.empty()) seen.execution_id = events.result().execution_id;
        };
        try {
            events.feed(bytes);
        } catch (...) {
            name_execution();
            throw;
        }
        name_execution();
    });
    events.finish();
    if (code) {
        *code = events.take_code();
        // Only execd's command runner reports an exit code; what a kernel raised is no exit.
        if (code->error_name != "CommandExecError") events.clear_exit_code();
    }
    // A background command's stream ends once it has started: its `init` is the result, and
    // its `execution_complete` (execd completes the run at the start) says it started, not
    // that it exited 0; its exit is its status's to say.
    if (cmd.background && !events.result().execution_id.empty()) {
        if (!events.result().error_value) events.clear_exit_code();
        co_return events.take_result();
    }
    if (!events.terminal()) {
        throw connection_error(boost::system::error_code(make_error_code(errc::stream_incomplete)), phase::receive);
    }
    co_return events.take_result();
}

// Every field is optional in the spec; the id asked for stands in for a missing one.
command_status status_of(const json::value& v, std::string_view execution_id) {
    const auto& o = as_object(v);
    command_status status{.id = optional_string(o, "id").value_or(std::string(execution_id)),
                          .error = optional_string(o, "error")};
    if (const auto* running = o.if_contains("running"); running && running->is_bool()) status.running = running->as_bool();
    if (const auto* code = o.if_contains("exit_code"); code && code->is_int64()) {
        status.exit_code = static_cast<int>(code->as_int64());
    }
    return status;
}

// Where to read a command's log from next, after a reply to a read that brought it to byte
// `after`: execd's tail cursor, or, when it gives none the client can use (the spec allows a
// negative one), `after`.
std::size_t next_cursor(const beast_http::response_header<>& head, std::size_t after) {
    const auto it = head.find("EXECD-COMMANDS-TAIL-CURSOR");
    if (it == head.end()) return after;
    std::int64_t tail = 0;
    const auto text = it->value();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), tail);
    if (ec != std::errc() || end != text.data() + text.size()) malformed("the tail cursor is not a number");
    return tail >= 0 ? static_cast<std::size_t>(tail) : after;
}

// The output from `cursor` (a byte offset: execd seeks its log file to it), and where to ask
// from next.
command_logs logs_of(const string_response& res, std::size_t cursor) {
    return {.content = res.body(), .cursor = next_cursor(res.base(), cursor + res.body().size())};
}

bool cancelled(const observation& seen) noexcept { return seen.transport_error == errc::cancelled; }

// A command's status, as execd's GET /command/status/{id} gives it.
awaitable<command_status> fetch_status(const call_context& c, std::string_view sandbox_id,
                                       std::string_view execution_id) {
    const json::value v = json_of(
        co_await c.execd_call(sandbox_id, verb::get, "/command/status/" + path_segment(execution_id)),
        "the command status is not JSON");
    co_return status_of(v, execution_id);
}

// A streamed run (an exec, a session run) as one operation: a signal exit and a broken
// stream are failures, with the sandbox's own status as further evidence.
awaitable<result<exec_result>> streamed_run(client_state& s, operation op, std::string sandbox_id, std::string path,
                                            std::string body, command cmd, std::optional<std::string> problem,
                                            call_options per_call, code_parts* code = nullptr) {
    co_return co_await call<exec_result>(s, per_call, op, sandbox_id, std::move(problem),
                                         [&](const call_context& c, observation& seen) -> attempt_result<exec_result> {
        const auto exec_end = cmd.total_timeout ? deadline_after(*cmd.total_timeout) : clock::time_point::max();
        shared_route route = c.cached_execd_endpoint(sandbox_id);
        if (!route) route = co_await c.execd_endpoint(sandbox_id);
        // (after the endpoint: its credentials are secrets to scrub from the program's name)
        if (!code && c.attempt == 1) observe_program(c, cmd.command);
        exec_result ran;
        std::exception_ptr failed;
        try {
            ran = co_await run_command(c, sandbox_id, *route, path, body, cmd, exec_end, seen, code);
        } catch (const api_error& e) {
            if (!bare_server_error(e)) throw;  // the reply says what happened; the status adds nothing
            failed = std::current_exception();
        } catch (...) {
            failed = std::current_exception();
        }
        if (failed) {
            describe(seen, failed);
            if (!cancelled(seen)) co_await add_sandbox_status(c, exec_end, seen);
            co_return std::nullopt;
        }
        if (ran.exit_code != -1) co_return std::move(ran);  // any other exit is the command's own result
        seen.exit_code = -1;
        seen.execution_id = ran.execution_id;
        seen.reason = std::string(name(op)) + ": the command was killed by a signal (exit -1)";
        co_await add_sandbox_status(c, exec_end, seen);
        co_return std::nullopt;
    });
}


// ---- detached execution: started in the background, followed to its end -----------------------

// Why following a detached command ended before it did: an exec failure with the command named.
failure follow_ended(const std::string& sandbox_id, const std::string& execution_id, std::error_code why,
                     std::string reason) {
    observation seen{.operation = std::string(name(operation::exec)), .sandbox_id = sandbox_id};
    seen.reason = std::move(reason);
    seen.execution_id = execution_id;
    seen.transport_error = why;
    seen.transport_phase = phase::receive;
    return to_failure(seen);
}

// A read of a detached command (its status, its log): `read`'s value, or, after a proxy's
// bare 5xx, nothing but the sandbox's status as evidence (a sandbox that died under its
// command is lost, not a server fault to read again).
template <class T, class Read>
attempt_result<T> read_detached(const call_context& c, observation& seen, const std::string& execution_id, Read read) {
    seen.execution_id = execution_id;
    std::exception_ptr bare;
    try {
        co_return co_await read();
    } catch (const api_error& e) {
        if (!bare_server_error(e)) throw;
        bare = std::current_exception();
    }
    describe(seen, bare);
    co_await add_sandbox_status(c, clock::time_point::max(), seen);
    co_return std::nullopt;
}

// A detached command's status; a signal exit is a value here (the exec says what it means).
awaitable<result<command_status>> read_status(client_state& s, const std::string& sandbox_id,
                                              const std::string& execution_id, const call_options& options) {
    co_return co_await call<command_status>(s, options, operation::exec_status, sandbox_id, std::nullopt,
                                            [&](const call_context& c, observation& seen) -> attempt_result<command_status> {
        co_return co_await read_detached<command_status>(c, seen, execution_id, [&] {
            return fetch_status(c, sandbox_id, execution_id);
        });
    });
}

// The output of a detached command, as its log is read from a cursor again and again: each
// byte is handed on once, by its offset in the log, whichever read (a cut one included)
// brought it; at most `room` bytes are kept, every one goes to the callback.
struct detached_output {
    std::string kept{};
    std::size_t room = 0;
    std::size_t handed_on = 0;  // the log's bytes before this offset are handed on
    bool truncated = false;
    const output_callback* on_stdout = nullptr;

    // `bytes` read at offset `at` of the log.
    void take(std::string_view bytes, std::size_t at) {
        if (at + bytes.size() <= handed_on) return;
        bytes.remove_prefix(handed_on > at ? handed_on - at : 0);
        handed_on += bytes.size();
        const std::size_t left = room - std::min(room, kept.size());
        kept.append(bytes.substr(0, left));
        truncated |= bytes.size() > left;
        if (*on_stdout) {
            try {
                (*on_stdout)(bytes);
            } catch (...) {
                throw std::system_error(make_error_code(errc::cancelled), "an output callback threw");
            }
        }
    }
};

// The log from `cursor` on, into `output`; the cursor to read from next (execd's tail
// cursor, or the bytes counted here when it gives none the client can use).
awaitable<result<std::size_t>> read_log(client_state& s, const std::string& sandbox_id, const std::string& execution_id,
                                        std::size_t cursor, detached_output& output, const call_options& options) {
    co_return co_await call<std::size_t>(s, options, operation::exec_logs, sandbox_id, std::nullopt,
                                         [&](const call_context& c, observation& seen) -> attempt_result<std::size_t> {
        co_return co_await read_detached<std::size_t>(c, seen, execution_id, [&]() -> awaitable<std::size_t> {
            const shared_route route = co_await c.execd_endpoint(sandbox_id);
            auto req = execd_request(c, verb::get, route->where, route->endpoint,
                                     "/command/" + path_segment(execution_id) + "/logs?cursor=" + std::to_string(cursor));
            std::size_t read = 0;
            const auto head = co_await stream_from_execd(c, sandbox_id, route->where, req,
                                                         {status_probe_timeout, c.deadline}, [&](std::string_view bytes) {
                output.take(bytes, cursor + read);
                read += bytes.size();
            });
            co_return next_cursor(head, cursor + read);
        });
    });
}

// `why` ended the exec while its command ran: the command is interrupted (DELETE
// /command?id=, within the time a status probe may take, whatever cancelled the exec), and
// the failure says what became of it. One known to have ended is left alone.
awaitable<failure> interrupted(client_state& s, const std::string& sandbox_id, const std::string& execution_id,
                               failure why, bool command_ended) {
    if (command_ended) co_return restated(why, std::string(why.reason()) + "; the command had ended");
    co_await asio::this_coro::reset_cancellation_state();
    const call_options quick{.timeout = status_probe_timeout};
    std::string_view became = "; the command was interrupted";
    if (!co_await interrupt_operation(s, sandbox_id, execution_id, quick)) {
        // execd refuses to interrupt a command that has ended (as one may have meanwhile)
        const result<command_status> status = co_await read_status(s, sandbox_id, execution_id, quick);
        became = status && !status.value().running ? "; the command had ended"
                                                   : "; interrupting the command failed too, so it may still run";
    }
    co_return restated(why, std::string(why.reason()) + std::string(became));
}

// A detached command killed by a signal, read as a streamed exec's is: the sandbox's status
// is the evidence (an OOM kill, a lost sandbox).
awaitable<result<exec_result>> signal_exit(client_state& s, const std::string& sandbox_id,
                                           const std::string& execution_id, clock::time_point exec_end,
                                           const call_options& per_call) {
    co_return co_await call<exec_result>(s, per_call, operation::exec, sandbox_id, std::nullopt,
                                         [&](const call_context& c, observation& seen) -> attempt_result<exec_result> {
        seen.exit_code = -1;
        seen.execution_id = execution_id;
        seen.reason = "exec: detached command " + execution_id + " was killed by a signal (exit -1)";
        co_await add_sandbox_status(c, exec_end, seen);
        co_return std::nullopt;
    });
}

// The start is the one step that is not idempotent: it goes once, as a background exec, and
// is sent again only when proven unsent. Then the command's status and log are read (both
// idempotent: a failed read is read again from the same cursor, under the allowance) until it
// has ended and its log is read to the end, each read within the exec's total time. A
// deadline, a cancellation or a read that cannot be resumed interrupts the command.
awaitable<result<exec_result>> follow_detached(client_state& s, std::string sandbox_id, command cmd,
                                               std::optional<std::string> problem, call_options per_call) {
    const auto exec_end = cmd.total_timeout ? deadline_after(*cmd.total_timeout) : clock::time_point::max();
    command start{.command = std::move(cmd.command),
                  .cwd = std::move(cmd.cwd),
                  .timeout = cmd.timeout,
                  .envs = std::move(cmd.envs),
                  .idle_timeout = cmd.idle_timeout,
                  .background = true};
    std::string body = command_body(start);
    result<exec_result> started = co_await streamed_run(s, operation::exec, sandbox_id, "/command", std::move(body),
                                                        std::move(start), std::move(problem), per_call);
    if (!started) co_return std::move(started).error();
    const std::string id = std::move(started.value().execution_id);

    const detached_options& how = s.options.detached;
    const retry_policy& own = s.options.retries;
    policy::retry_allowance own_budget({.attempts = std::max(own.max_attempts, std::max(0, how.resumes) + 1),
                                        .elapsed = std::chrono::milliseconds::max(),
                                        .base_delay = own.backoff,
                                        .max_delay = own.max_backoff});
    call_options reads = per_call;
    if (!reads.allowance) reads.allowance = &own_budget;
    const auto call_time = per_call.timeout.value_or(s.options.timeout);
    std::optional<command_status> ended;
    const auto given_up = [&](failure f) { return interrupted(s, sandbox_id, id, std::move(f), ended.has_value()); };
    const auto past_total_time = [&] {
        return follow_ended(sandbox_id, id, std::make_error_code(std::errc::timed_out),
                            "exec: detached command " + id + " ran past its total_timeout (" +
                                std::to_string(cmd.total_timeout->count()) + " ms)");
    };
    // A cancellation is read here, between steps: one emitted during a read that still
    // succeeded leaves no error behind, and the waits after it would never end by it.
    const auto cancelled_now = [&]() -> awaitable<bool> {
        co_return (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
    };

    detached_output output{.room = s.options.max_body_bytes, .on_stdout = &cmd.on_stdout};
    constexpr auto first_wait = std::chrono::milliseconds(5);
    const auto longest_wait = std::max(how.max_poll_interval, std::chrono::milliseconds(1));
    auto wait = first_wait;
    std::size_t cursor = 0;
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (;;) {
        if (co_await cancelled_now()) {
            co_return co_await given_up(follow_ended(sandbox_id, id, make_error_code(errc::cancelled),
                                                     "exec: cancelled while following detached command " + id));
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(exec_end - clock::now());
        if (left <= std::chrono::milliseconds::zero()) co_return co_await given_up(past_total_time());
        reads.timeout = std::min(call_time, left);  // no read outlasts the exec's total time
        if (!ended) {
            result<command_status> status = co_await read_status(s, sandbox_id, id, reads);
            if (!status) co_return co_await given_up(std::move(status).error());
            if (!status.value().running) ended = std::move(status).value();
        }
        // Past max_body_bytes the log is read no further, unless a callback takes all of it.
        const std::size_t before = output.handed_on;
        if (output.kept.size() < output.room || cmd.on_stdout) {
            result<std::size_t> next = co_await read_log(s, sandbox_id, id, cursor, output, reads);
            if (!next) {
                if (clock::now() >= exec_end) co_return co_await given_up(past_total_time());
                co_return co_await given_up(std::move(next).error());
            }
            cursor = next.value();
        } else {
            output.truncated = true;
        }
        const bool fresh = output.handed_on != before;
        if (ended && !fresh) break;
        if (ended) continue;  // its log still has more: read on without a wait
        wait = fresh ? first_wait : std::min(wait * 2, longest_wait);
        pause.expires_at(std::min(clock::now() + wait, exec_end));
        boost::system::error_code stopped;
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, stopped));
    }
    if (ended->exit_code == -1) co_return co_await signal_exit(s, sandbox_id, id, exec_end, per_call);
    exec_result out{.execution_id = id,
                    .exit_code = ended->exit_code,
                    .stdout_text = std::move(output.kept),
                    .output_truncated = output.truncated};
    if (ended->exit_code && *ended->exit_code != 0) out.error_value = std::to_string(*ended->exit_code);
    co_return out;
}

// Detached execution with cancellations read as values, not thrown at each await (Asio's
// default), so that a cancelled exec still interrupts its command; the caller's setting is
// restored after.
awaitable<result<exec_result>> detached_exec(client_state& s, std::string sandbox_id, command cmd,
                                             std::optional<std::string> problem, call_options per_call) {
    const bool throws = co_await asio::this_coro::throw_if_cancelled();
    co_await asio::this_coro::throw_if_cancelled(false);
    result<exec_result> out = co_await follow_detached(s, std::move(sandbox_id), std::move(cmd), std::move(problem),
                                                       std::move(per_call));
    co_await asio::this_coro::throw_if_cancelled(throws);
    co_return out;
}

}  // namespace

// Written as it goes: on every exec's path, where building the object first cost as much
// as writing the request.
std::string command_body(const command& cmd) {
    std::string body = R"({"command":)";
    append_json_string(body, cmd.command);
    body.append(cmd.background ? R"(,"background":true)" : R"(,"background":false)");
    if (cmd.cwd) {
        body.append(R"(,"cwd":)");
        append_json_string(body, *cmd.cwd);
    }
    if (cmd.timeout) body.append(R"(,"timeout":)").append(std::to_string(cmd.timeout->count()));
    if (!cmd.envs.empty()) body.append(R"(,"envs":)").append(json::serialize(string_map(cmd.envs)));
    body += '}';
    return body;
}

// Not a coroutine itself: the run's own coroutine is the operation, one frame and two moves
// of the result fewer an exec.
awaitable<result<exec_result>> exec_operation(client_state& s, std::string sandbox_id, command cmd,
                                              call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    if (!problem && cmd.background && cmd.detached.value_or(false)) {
        problem = "a command is either background (exec returns once it started) or detached (exec follows it to "
                  "its end), not both";
    }
    if (!cmd.background && cmd.detached.value_or(s.options.detached.by_default)) {
        return detached_exec(s, std::move(sandbox_id), std::move(cmd), std::move(problem), std::move(per_call));
    }
    std::string body = command_body(cmd);
    return streamed_run(s, operation::exec, std::move(sandbox_id), "/command", std::move(body), std::move(cmd),
                        std::move(problem), std::move(per_call));
}

awaitable<result<std::string>> create_session_operation(client_state& s, std::string sandbox_id,
                                                        std::optional<std::string> cwd, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    if (!problem && cwd) problem = refused_argument(s, {{"working directory", *cwd}});
    co_return co_await call<std::string>(s, per_call, operation::create_session, sandbox_id, std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        json::object body;
        if (cwd) body["cwd"] = *cwd;
        const json::value reply = json_of(
            co_await c.execd_call(sandbox_id, verb::post, "/session", json::serialize(body), "application/json"),
            "the session reply is not JSON");
        co_return required_string(as_object(reply), "session_id");
    });
}

awaitable<result<exec_result>> run_in_session_operation(client_state& s, std::string sandbox_id,
                                                        std::string session_id, command cmd, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"session id", session_id}});
    if (!problem && (cmd.background || !cmd.envs.empty())) {
        problem = "a session run is never in the background and takes no envs (export them in the session)";
    }
    std::string body = json::serialize(session_run_body(cmd));
    std::string path = "/session/" + path_segment(session_id) + "/run";
    co_return co_await streamed_run(s, operation::run_in_session, std::move(sandbox_id), std::move(path),
                                    std::move(body), std::move(cmd), std::move(problem), std::move(per_call));
}

awaitable<result<void>> delete_session_operation(client_state& s, std::string sandbox_id, std::string session_id,
                                                 call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"session id", session_id}});
    co_return co_await done(call<bool>(s, per_call, operation::delete_session, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb::delete_, "/session/" + path_segment(session_id));
        co_return true;
    }));
}

awaitable<result<command_status>> exec_status_operation(client_state& s, std::string sandbox_id,
                                                        std::string execution_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"execution id", execution_id}});
    co_return co_await call<command_status>(
        s, per_call, operation::exec_status, sandbox_id,
        std::move(problem),
        [&](const call_context& c, observation& seen) -> attempt_result<command_status> {
            seen.execution_id = execution_id;
            command_status status = co_await fetch_status(c, sandbox_id, execution_id);
            if (status.exit_code != -1) co_return status;
            seen.exit_code = -1;
            seen.reason = "exec_status: command " + status.id + " was killed by a signal (exit -1)";
            co_return std::nullopt;
        });
}

awaitable<result<void>> ping_operation(client_state& s, std::string sandbox_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await done(call<bool>(s, per_call, operation::ping, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb::get, "/ping");
        co_return true;
    }));
}

awaitable<result<command_logs>> exec_logs_operation(client_state& s, std::string sandbox_id,
                                                    std::string execution_id, std::size_t cursor,
                                                    call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"execution id", execution_id}});
    co_return co_await call<command_logs>(
        s, per_call, operation::exec_logs, sandbox_id,
        std::move(problem),
        [&](const call_context& c, observation& seen) -> attempt_result<command_logs> {
            seen.execution_id = execution_id;
            const string_response res = co_await c.execd_call(
                sandbox_id, verb::get,
                "/command/" + path_segment(execution_id) + "/logs?cursor=" + std::to_string(cursor));
            co_return logs_of(res, cursor);
        });
}

awaitable<result<void>> interrupt_operation(client_state& s, std::string sandbox_id, std::string execution_id,
                                            call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"execution id", execution_id}});
    co_return co_await done(call<bool>(
        s, per_call, operation::interrupt, sandbox_id,
        std::move(problem),
        [&](const call_context& c, observation& seen) -> attempt_result<bool> {
            seen.execution_id = execution_id;
            (void)co_await c.execd_call(sandbox_id, verb::delete_, "/command?id=" + path_segment(execution_id));
            co_return true;
        }));
}

awaitable<result<code_result>> run_code_operation(client_state& s, std::string sandbox_id, code_run run,
                                                  call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    if (!problem && run.code.empty()) problem = "there is no code to run";
    json::object body{{"code", run.code}};
    if (!run.context_id.empty() || !run.language.empty()) {
        json::object in;
        if (!run.context_id.empty()) in["id"] = run.context_id;
        if (!run.language.empty()) in["language"] = run.language;
        body["context"] = std::move(in);
    }
    command cmd{.command = std::move(run.code),
                .idle_timeout = run.idle_timeout,
                .total_timeout = run.total_timeout,
                .on_stdout = std::move(run.on_stdout),
                .on_stderr = std::move(run.on_stderr)};
    code_parts parts;
    result<exec_result> ran = co_await streamed_run(s, operation::run_code, std::move(sandbox_id), "/code",
                                                    json::serialize(body), std::move(cmd), std::move(problem),
                                                    std::move(per_call), &parts);
    if (!ran) co_return std::move(ran).error();
    exec_result& out = ran.value();
    code_result done{.context_id = std::move(out.execution_id),
                     .stdout_text = std::move(out.stdout_text),
                     .stderr_text = std::move(out.stderr_text),
                     .execution_count = parts.execution_count,
                     .results = std::move(parts.results),
                     .output_truncated = out.output_truncated};
    if (parts.error_name) {
        done.error = code_error{std::move(*parts.error_name), out.error_value.value_or(""), std::move(parts.traceback)};
    }
    co_return done;
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<exec_result> client::make_exec(std::string_view sandbox_id, const command_ref& cmd,
                                                  const call_options& options) {
    return detail::exec_operation(*state_, std::string(sandbox_id), cmd.copy(), options);
}

client::awaitable<command_status> client::make_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                                            const call_options& options) {
    return detail::exec_status_operation(*state_, std::string(sandbox_id), std::string(execution_id), options);
}

client::awaitable<void> client::make_ping(std::string_view sandbox_id, const call_options& options) {
    return detail::ping_operation(*state_, std::string(sandbox_id), options);
}

client::awaitable<command_logs> client::make_exec_logs(std::string_view sandbox_id, std::string_view execution_id,
                                                        std::size_t cursor, const call_options& options) {
    return detail::exec_logs_operation(*state_, std::string(sandbox_id), std::string(execution_id), cursor, options);
}

client::awaitable<void> client::make_interrupt(std::string_view sandbox_id, std::string_view execution_id,
                                                const call_options& options) {
    return detail::interrupt_operation(*state_, std::string(sandbox_id), std::string(execution_id), options);
}

client::awaitable<code_result> client::make_run_code(std::string_view sandbox_id, const code_run_ref& run,
                                                      const call_options& options) {
    return detail::run_code_operation(*state_, std::string(sandbox_id), run.copy(), options);
}

client::awaitable<std::string> client::make_create_session(std::string_view sandbox_id,
                                                            std::optional<std::string> cwd,
                                                            const call_options& options) {
    return detail::create_session_operation(*state_, std::string(sandbox_id), std::move(cwd), options);
}

client::awaitable<exec_result> client::make_run_in_session(std::string_view sandbox_id, std::string_view session_id,
                                                            const command_ref& cmd, const call_options& options) {
    return detail::run_in_session_operation(*state_, std::string(sandbox_id), std::string(session_id), cmd.copy(), options);
}

client::awaitable<void> client::make_delete_session(std::string_view sandbox_id, std::string_view session_id,
                                                     const call_options& options) {
    return detail::delete_session_operation(*state_, std::string(sandbox_id), std::string(session_id), options);
}

}  // namespace ngfail::opensandbox
