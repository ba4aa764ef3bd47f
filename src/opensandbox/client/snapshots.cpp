// The snapshot operations of the lifecycle server: create (from a Running sandbox), get,
// list and delete. Restoring one is `create` with a snapshot id (lifecycle.cpp).
#include "call.hpp"

#include <boost/json.hpp>

namespace ngfail::opensandbox::detail {
namespace {

namespace json = boost::json;
using verb = beast_http::verb;

snapshot_info snapshot_of(const json::value& v) {
    const json::object& o = as_object(v);
    snapshot_info info{.id = required_string(o, "id"),
                       .sandbox_id = required_string(o, "sandboxId"),
                       .name = optional_string(o, "name"),
                       .created_at = required_string(o, "createdAt")};
    const json::value* status = o.if_contains("status");
    if (!status) malformed("the snapshot has no status");
    const json::object& s = as_object(*status);
    info.state = required_string(s, "state");
    info.reason = optional_string(s, "reason");
    info.message = optional_string(s, "message");
    return info;
}

std::vector<snapshot_info> snapshots_of(const json::value& reply) {
    const json::value* items = as_object(reply).if_contains("items");
    if (!items || !items->is_array()) malformed("the snapshot list has no items");
    std::vector<snapshot_info> found;
    for (const json::value& item : items->as_array()) found.push_back(snapshot_of(item));
    return found;
}

json::value snapshot_body(const std::optional<std::string>& name) {
    json::object body;
    if (name) body["name"] = *name;
    return body;
}

std::string snapshot_path(std::string_view snapshot_id) { return "/snapshots/" + path_segment(snapshot_id); }

std::string snapshots_path(const snapshot_list_request& request) {
    std::string query = "?page=" + std::to_string(std::max(1, request.page)) +
                        "&pageSize=" + std::to_string(std::clamp(request.page_size, 1, 200));
    if (!request.sandbox_id.empty()) query += "&sandboxId=" + path_segment(request.sandbox_id);
    for (const std::string& state : request.states) query += "&state=" + path_segment(state);
    return "/snapshots" + query;
}

}  // namespace

awaitable<result<snapshot_info>> create_snapshot_operation(client_state& s, std::string sandbox_id,
                                                           std::optional<std::string> name, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    if (!problem && name && name->empty()) problem = "a snapshot's name, when given, is not empty";
    co_return co_await call<snapshot_info>(s, per_call, operation::create_snapshot, sandbox_id, std::move(problem),
                                           [&](const call_context& c, observation&) -> attempt_result<snapshot_info> {
        const json::value body = snapshot_body(name);
        co_return snapshot_of(co_await c.lifecycle(verb::post, sandbox_path(sandbox_id, "/snapshots"), &body));
    });
}

awaitable<result<snapshot_info>> get_snapshot_operation(client_state& s, std::string snapshot_id,
                                                        call_options per_call) {
    auto problem = refused_argument(s, {{"snapshot id", snapshot_id}});
    co_return co_await call<snapshot_info>(s, per_call, operation::get_snapshot, "", std::move(problem),
                                           [&](const call_context& c, observation&) -> attempt_result<snapshot_info> {
        co_return snapshot_of(co_await c.lifecycle(verb::get, snapshot_path(snapshot_id), nullptr));
    });
}

awaitable<result<std::vector<snapshot_info>>> list_snapshots_operation(client_state& s, snapshot_list_request request,
                                                                       call_options per_call) {
    auto problem = refused_argument(s, {});
    co_return co_await call<std::vector<snapshot_info>>(
        s, per_call, operation::list_snapshots, "", std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::vector<snapshot_info>> {
            co_return snapshots_of(co_await c.lifecycle(verb::get, snapshots_path(request), nullptr));
        });
}

awaitable<result<void>> delete_snapshot_operation(client_state& s, std::string snapshot_id, call_options per_call) {
    auto problem = refused_argument(s, {{"snapshot id", snapshot_id}});
    co_return co_await done(call<bool>(s, per_call, operation::delete_snapshot, "", std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.lifecycle(verb::delete_, snapshot_path(snapshot_id), nullptr);
        co_return true;
    }));
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<snapshot_info> client::make_create_snapshot(std::string_view sandbox_id,
                                                               std::optional<std::string> name,
                                                               const call_options& options) {
    return detail::create_snapshot_operation(*state_, std::string(sandbox_id), std::move(name), options);
}

client::awaitable<snapshot_info> client::make_get_snapshot(std::string_view snapshot_id, const call_options& options) {
    return detail::get_snapshot_operation(*state_, std::string(snapshot_id), options);
}

client::awaitable<std::vector<snapshot_info>> client::make_list_snapshots(const snapshot_list_request_ref& request,
                                                                           const call_options& options) {
    return detail::list_snapshots_operation(*state_, request.copy(), options);
}

client::awaitable<void> client::make_delete_snapshot(std::string_view snapshot_id, const call_options& options) {
    return detail::delete_snapshot_operation(*state_, std::string(snapshot_id), options);
}

}  // namespace ngfail::opensandbox
