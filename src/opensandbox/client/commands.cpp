// The execd operations: commands (streamed, background, status, logs, interrupt) and ping.
#include "call.hpp"
#include "execd_stream.hpp"

#include <boost/json.hpp>

#include <charconv>

namespace ngfail::opensandbox {
namespace {

using namespace detail;
namespace json = boost::json;

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

}  // namespace

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
}  // namespace ngfail::opensandbox
