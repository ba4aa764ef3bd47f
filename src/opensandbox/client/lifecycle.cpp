// The lifecycle operations: create (with readiness), get, kill, renew, endpoint, list,
// pause and resume.
#include "call.hpp"
#include "readiness.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

namespace ngfail::opensandbox::detail {
namespace {

namespace json = boost::json;
using verb = beast_http::verb;

json::value create_body(const create_request& request) {
    json::object body{{"resourceLimits", string_map(request.resource_limits)}};
    if (!request.entrypoint.empty()) body["entrypoint"] = json::array(request.entrypoint.begin(), request.entrypoint.end());
    // A restore sends the snapshot alone: the server runs the snapshot's image.
    if (request.snapshot_id.empty()) {
        body["image"] = json::object{{"uri", request.image}};
    } else {
        body["snapshotId"] = request.snapshot_id;
    }
    if (request.timeout_s) body["timeout"] = *request.timeout_s;
    if (!request.metadata.empty()) body["metadata"] = string_map(request.metadata);
    return body;
}

json::value renew_body(std::string_view expires_at) { return json::object{{"expiresAt", expires_at}}; }

std::string list_path(const list_request& request) {
    std::string query = "?page=" + std::to_string(std::max(1, request.page)) +
                        "&pageSize=" + std::to_string(std::max(1, request.page_size));
    for (const std::string& state : request.states) query += "&state=" + path_segment(state);
    // One parameter holding `k=v&k2=v2`, each part encoded, as the server parses it.
    std::string metadata;
    for (const auto& [key, value] : request.metadata) {
        metadata += (metadata.empty() ? "" : "&") + path_segment(key) + "=" + path_segment(value);
    }
    if (!metadata.empty()) query += "&metadata=" + path_segment(metadata);
    return "/sandboxes" + query;
}

std::vector<sandbox_info> sandboxes_of(const json::value& reply) {
    const json::value* items = as_object(reply).if_contains("items");
    if (!items || !items->is_array()) malformed("the list has no items");
    std::vector<sandbox_info> found;
    for (const json::value& item : items->as_array()) found.push_back(sandbox_of(item));
    return found;
}

// The server's own word that the sandbox is gone (`KUBERNETES::SANDBOX_NOT_FOUND`, …).
// The reply's code is `name`, bare or under a provider's prefix ("KUBERNETES::name").
bool code_is(const api_error& e, std::string_view name) {
    if (!e.code()) return false;
    const std::string_view code = *e.code();
    return code == name || (code.ends_with(name) && code.substr(0, code.size() - name.size()).ends_with("::"));
}

bool says_sandbox_gone(const api_error& e) { return e.status() == 404 && code_is(e, "SANDBOX_NOT_FOUND"); }

// A lifecycle request on one sandbox whose reply carries nothing the caller needs. Its
// endpoint is forgotten: the sandbox is gone, or may come back elsewhere.
// Two answers are read further. A kill answered "not found" is done, not failed: the
// sandbox is gone, which is what the kill was for (a cleanup after a failed create meets
// this, the server having removed it already); the 404 goes to `call_options::log`. A pause
// or resume refused for the sandbox's state (409) is read with that state: a sandbox whose
// process died is lost, not in a passing conflict.
awaitable<result<void>> sandbox_action(client_state& s, operation op, std::string sandbox_id,
                                       call_options per_call, verb method, std::string_view suffix) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await done(call<bool>(s, per_call, op, sandbox_id,
                                       std::move(problem),
                                       [&](const call_context& c, observation& seen) -> attempt_result<bool> {
        s.endpoints.forget(sandbox_id);
        std::exception_ptr refused;
        bool gone = false;
        try {
            (void)co_await c.lifecycle(method, sandbox_path(sandbox_id, suffix), nullptr);
            co_return true;
        } catch (const api_error& e) {
            gone = op == operation::kill && says_sandbox_gone(e);
            const bool state_conflict = e.status() == 409 && (op == operation::pause || op == operation::resume);
            if (!gone && !state_conflict) throw;
            refused = std::current_exception();
        }
        describe(seen, refused);
        if (gone) {
            scrub(seen, c.secrets);
            if (per_call.log) per_call.log->observe_failure(to_failure(seen));
            co_return true;
        }
        co_await add_sandbox_status(c, seen);
        co_return std::nullopt;
    }));
}

// The sandbox a create's 504 POD_READY_TIMEOUT names: the real server's words ("Timeout
// waiting for sandbox <id> to be Running with IP") are its only record of which sandbox it
// made and gave up on. Only an address for the status and diagnostics reads, kept only
// when the status read finds that sandbox; never evidence of a kind.
std::optional<std::string> sandbox_named_in(const api_error& e) {
    if (e.status() != 504 || !code_is(e, "POD_READY_TIMEOUT")) return std::nullopt;
    const std::string_view message = e.what();
    constexpr std::string_view word = "sandbox ";
    for (std::size_t at = 0; at + word.size() < message.size(); ++at) {
        const std::string_view rest = message.substr(at);
        const bool said = std::equal(word.begin(), word.end(), rest.begin(),
                                     [](char w, char m) { return w == (m | 0x20); });
        if (!said) continue;
        const std::string_view id = rest.substr(word.size(), rest.find_first_of(" .,:;'\"", word.size()) - word.size());
        const bool id_like = !id.empty() && id.size() <= 128 && std::ranges::all_of(id, [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_';
        });
        if (id_like) return std::string(id);
    }
    return std::nullopt;
}

json::value patch_body(const metadata_patch& patch) {
    json::object body;
    for (const auto& [key, value] : patch) {
        if (value) {
            body[key] = *value;
        } else {
            body[key] = nullptr;
        }
    }
    return body;
}

}  // namespace

awaitable<result<sandbox_info>> create_operation(client_state& s, create_request request, call_options per_call) {
    auto problem = refused_argument(s, {});
    co_return co_await call<sandbox_info>(s, per_call, operation::create, "", std::move(problem),
                                          [&](const call_context& c, observation& seen) -> attempt_result<sandbox_info> {
        const json::value body = create_body(request);
        std::optional<sandbox_info> answered;
        std::exception_ptr server_fault;
        try {
            answered = sandbox_of(co_await c.lifecycle(verb::post, "/sandboxes", &body));
        } catch (const api_error& e) {
            // The server made a sandbox and gave up waiting for it: its status is read.
            seen.sandbox_id = sandbox_named_in(e);
            if (!seen.sandbox_id) throw;
            server_fault = std::current_exception();
        }
        if (server_fault) {
            describe(seen, server_fault);
            co_await add_sandbox_status(c, seen);
            if (!seen.sandbox_state) {  // not found (or not read): the message proves no sandbox
                seen.sandbox_id.reset();
                seen.diagnostics.reset();
                co_return std::nullopt;
            }
            // Named by text alone, it may be another's: reported, never deleted here.
            seen.reason = seen.reason.value_or("create failed") + "; sandbox " + *seen.sandbox_id + " (" +
                          *seen.sandbox_state + ") not deleted: the server named it only in its message";
            co_return std::nullopt;
        }
        sandbox_info info = std::move(*answered);
        if (is_terminal(info)) {
            co_await record_dead_sandbox(c, request, info, seen);
            co_return std::nullopt;
        }
        if (!request.wait_until_ready) co_return info;
        co_return co_await wait_until_ready(c, request, std::move(info), seen);
    });
}

awaitable<result<sandbox_info>> get_operation(client_state& s, std::string sandbox_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<sandbox_info>(s, per_call, operation::get, sandbox_id,
                                          std::move(problem),
                                          [&](const call_context& c, observation&) -> attempt_result<sandbox_info> {
        co_return sandbox_of(co_await c.lifecycle(verb::get, sandbox_path(sandbox_id), nullptr));
    });
}

awaitable<result<void>> kill_operation(client_state& s, std::string sandbox_id, call_options per_call) {
    return sandbox_action(s, operation::kill, std::move(sandbox_id), std::move(per_call), verb::delete_, "");
}

awaitable<result<void>> pause_operation(client_state& s, std::string sandbox_id, call_options per_call) {
    return sandbox_action(s, operation::pause, std::move(sandbox_id), std::move(per_call), verb::post, "/pause");
}

awaitable<result<void>> resume_operation(client_state& s, std::string sandbox_id, call_options per_call) {
    return sandbox_action(s, operation::resume, std::move(sandbox_id), std::move(per_call), verb::post, "/resume");
}

awaitable<result<sandbox_info>> patch_metadata_operation(client_state& s, std::string sandbox_id, metadata_patch patch,
                                                         call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<sandbox_info>(s, per_call, operation::metadata, sandbox_id, std::move(problem),
                                          [&](const call_context& c, observation&) -> attempt_result<sandbox_info> {
        const json::value body = patch_body(patch);
        co_return sandbox_of(co_await c.lifecycle(beast_http::verb::patch, sandbox_path(sandbox_id, "/metadata"), &body));
    });
}

awaitable<result<std::string>> renew_operation(client_state& s, std::string sandbox_id, std::string expires_at,
                                               call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<std::string>(s, per_call, operation::renew, sandbox_id,
                                         std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        const json::value body = renew_body(expires_at);
        const json::value reply = co_await c.lifecycle(verb::post, sandbox_path(sandbox_id, "/renew-expiration"), &body);
        co_return required_string(as_object(reply), "expiresAt");
    });
}

awaitable<result<endpoint_info>> endpoint_operation(client_state& s, std::string sandbox_id, int port,
                                                    call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<endpoint_info>(s, per_call, operation::endpoint, sandbox_id,
                                           std::move(problem),
                                           [&](const call_context& c, observation&) -> attempt_result<endpoint_info> {
        co_return endpoint_of(co_await c.lifecycle(verb::get, c.endpoint_path(sandbox_id, port), nullptr));
    });
}

awaitable<result<std::vector<sandbox_info>>> list_operation(client_state& s, list_request request,
                                                            call_options per_call) {
    auto problem = refused_argument(s, {});
    co_return co_await call<std::vector<sandbox_info>>(
        s, per_call, operation::list, "", std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::vector<sandbox_info>> {
            co_return sandboxes_of(co_await c.lifecycle(verb::get, list_path(request), nullptr));
        });
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<sandbox_info> client::make_create(const create_request_ref& request, const call_options& options) {
    return detail::create_operation(*state_, request.copy(), options);
}

client::awaitable<sandbox_info> client::make_get(std::string_view sandbox_id, const call_options& options) {
    return detail::get_operation(*state_, std::string(sandbox_id), options);
}

client::awaitable<void> client::make_kill(std::string_view sandbox_id, const call_options& options) {
    return detail::kill_operation(*state_, std::string(sandbox_id), options);
}

client::awaitable<std::string> client::make_renew(std::string_view sandbox_id, std::string_view expires_at,
                                                   const call_options& options) {
    return detail::renew_operation(*state_, std::string(sandbox_id), std::string(expires_at), options);
}

client::awaitable<endpoint_info> client::make_endpoint(std::string_view sandbox_id, int port, const call_options& options) {
    return detail::endpoint_operation(*state_, std::string(sandbox_id), port, options);
}

client::awaitable<std::vector<sandbox_info>> client::make_list(const list_request_ref& request,
                                                                const call_options& options) {
    return detail::list_operation(*state_, request.copy(), options);
}

client::awaitable<void> client::make_pause(std::string_view sandbox_id, const call_options& options) {
    return detail::pause_operation(*state_, std::string(sandbox_id), options);
}

client::awaitable<void> client::make_resume(std::string_view sandbox_id, const call_options& options) {
    return detail::resume_operation(*state_, std::string(sandbox_id), options);
}

client::awaitable<sandbox_info> client::make_patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                                             const call_options& options) {
    return detail::patch_metadata_operation(*state_, std::string(sandbox_id), patch, options);
}

}  // namespace ngfail::opensandbox
