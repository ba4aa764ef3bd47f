// The code-context operations of execd: create, get, list, delete one, delete a language's,
// and interrupt what runs in a context. Code runs stream as commands do (commands.cpp).
#include "call.hpp"

#include <boost/json.hpp>

namespace ngfail::opensandbox::detail {
namespace {

namespace json = boost::json;
using verb = beast_http::verb;

code_context_info context_of(const json::value& v) {
    const json::object& o = as_object(v);
    return {.id = required_string(o, "id"), .language = required_string(o, "language"), .cwd = optional_string(o, "cwd")};
}

std::vector<code_context_info> contexts_of(const json::value& v) {
    if (!v.is_array()) malformed("the context list is not an array");
    std::vector<code_context_info> found;
    for (const json::value& item : v.as_array()) found.push_back(context_of(item));
    return found;
}

std::string context_path(std::string_view context_id) { return "/code/contexts/" + path_segment(context_id); }

}  // namespace

awaitable<result<code_context_info>> create_code_context_operation(client_state& s, std::string sandbox_id,
                                                                   std::string language,
                                                                   std::optional<std::string> cwd,
                                                                   call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"language", language}});
    if (!problem && cwd) problem = refused_argument(s, {{"working directory", *cwd}});
    co_return co_await call<code_context_info>(
        s, per_call, operation::create_code_context, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<code_context_info> {
            json::object body{{"language", language}};
            if (cwd) body["cwd"] = *cwd;
            co_return context_of(json_of(co_await c.execd_call(sandbox_id, verb::post, "/code/context",
                                                               json::serialize(body), "application/json"),
                                         "the context reply is not JSON"));
        });
}

awaitable<result<code_context_info>> get_code_context_operation(client_state& s, std::string sandbox_id,
                                                                std::string context_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"context id", context_id}});
    co_return co_await call<code_context_info>(
        s, per_call, operation::get_code_context, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<code_context_info> {
            co_return context_of(json_of(co_await c.execd_call(sandbox_id, verb::get, context_path(context_id)),
                                         "the context reply is not JSON"));
        });
}

awaitable<result<std::vector<code_context_info>>> list_code_contexts_operation(client_state& s,
                                                                               std::string sandbox_id,
                                                                               std::string language,
                                                                               call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<std::vector<code_context_info>>(
        s, per_call, operation::list_code_contexts, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::vector<code_context_info>> {
            const std::string path = "/code/contexts?language=" + path_segment(language);
            co_return contexts_of(json_of(co_await c.execd_call(sandbox_id, verb::get, path),
                                          "the context list is not JSON"));
        });
}

awaitable<result<void>> delete_code_context_operation(client_state& s, std::string sandbox_id,
                                                      std::string context_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"context id", context_id}});
    co_return co_await done(call<bool>(s, per_call, operation::delete_code_context, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb::delete_, context_path(context_id));
        co_return true;
    }));
}

awaitable<result<void>> delete_code_contexts_operation(client_state& s, std::string sandbox_id,
                                                       std::string language, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"language", language}});
    co_return co_await done(call<bool>(s, per_call, operation::delete_code_contexts, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb::delete_, "/code/contexts?language=" + path_segment(language));
        co_return true;
    }));
}

awaitable<result<void>> interrupt_code_operation(client_state& s, std::string sandbox_id, std::string context_id,
                                                 call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"context id", context_id}});
    co_return co_await done(call<bool>(s, per_call, operation::interrupt_code, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb::delete_, "/code?id=" + path_segment(context_id));
        co_return true;
    }));
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<code_context_info> client::make_create_code_context(std::string_view sandbox_id,
                                                                       std::string_view language,
                                                                       std::optional<std::string> cwd,
                                                                       const call_options& options) {
    return detail::create_code_context_operation(*state_, std::string(sandbox_id), std::string(language), std::move(cwd),
                                         options);
}

client::awaitable<code_context_info> client::make_get_code_context(std::string_view sandbox_id,
                                                                    std::string_view context_id,
                                                                    const call_options& options) {
    return detail::get_code_context_operation(*state_, std::string(sandbox_id), std::string(context_id), options);
}

client::awaitable<std::vector<code_context_info>> client::make_list_code_contexts(std::string_view sandbox_id,
                                                                                   std::string_view language,
                                                                                   const call_options& options) {
    return detail::list_code_contexts_operation(*state_, std::string(sandbox_id), std::string(language), options);
}

client::awaitable<void> client::make_delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                                          const call_options& options) {
    return detail::delete_code_context_operation(*state_, std::string(sandbox_id), std::string(context_id), options);
}

client::awaitable<void> client::make_delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                                           const call_options& options) {
    return detail::delete_code_contexts_operation(*state_, std::string(sandbox_id), std::string(language), options);
}

client::awaitable<void> client::make_interrupt_code(std::string_view sandbox_id, std::string_view context_id,
                                                     const call_options& options) {
    return detail::interrupt_code_operation(*state_, std::string(sandbox_id), std::string(context_id), options);
}

}  // namespace ngfail::opensandbox
