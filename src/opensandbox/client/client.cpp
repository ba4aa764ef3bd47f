// The client: the lifecycle operations, and the throwing face of every operation (the
// `try_` face, `.value()`d, so that both raise and return the same classified failures).
#include "call.hpp"
#include "readiness.hpp"

#include <boost/json.hpp>

namespace ngfail::opensandbox {

using namespace detail;
namespace json = boost::json;

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
