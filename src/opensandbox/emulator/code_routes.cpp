// execd's code interpreting: code contexts (create, get, list, delete one, delete a
// language's), code runs streamed as execd streams them, and their interrupt. A context's
// kernel is the simulated interpreter (simulated_interpreter.hpp), or in the process runtime
// a real interpreter in the sandbox (process/process_kernel.hpp); a run that names no
// language runs its code as a command, as execd does.
#include "context.hpp"
#include "run_stream.hpp"
#include "simulated_interpreter.hpp"
#include "opensandbox/emulator/process/process_kernel.hpp"

#include <ngfail/event_id.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

// Context ids are UUIDs without their dashes, as execd makes them.
std::string new_context_id() {
    std::string id = to_string(event_id::generate());
    std::erase(id, '-');
    return id;
}

json::object context_json(const std::string& id, const code_context& context) {
    json::object o{{"id", id}, {"language", context.kernel.language}};
    if (!context.cwd.empty()) o["cwd"] = context.cwd;
    return o;
}

response context_not_found(const context& c, const exchange& x, std::string_view id) {
    return c.error_reply(x, 404, "CONTEXT_NOT_FOUND", "context " + std::string(id) + " not found");
}

response runtime_error(const context& c, const exchange& x, std::string_view message) {
    return c.error_reply(x, 500, "RUNTIME_ERROR", message);
}

// A string field of a JSON object, in the object: absent or null is empty; anything else
// not a string is a malformed body (std::nullopt).
std::optional<std::string_view> text_field(const json::object& o, std::string_view name) {
    const json::value* v = o.if_contains(name);
    if (!v || v->is_null()) return std::string_view();
    if (!v->is_string()) return std::nullopt;
    return std::string_view(v->as_string());
}

// The contexts of one language ("" for every language), oldest id order.
json::array listed(const code_contexts& all, std::string_view language) {
    json::array out;
    for (const auto& [id, context] : all.by_id) {
        if (language.empty() || context.kernel.language == language) out.push_back(context_json(id, context));
    }
    return out;
}

// execd refuses to list the runners that are not kernels.
constexpr std::array not_kernels{std::string_view("command"), std::string_view("background-command"),
                                 std::string_view("sql")};

bool is_runner(std::string_view language) {
    return std::find(not_kernels.begin(), not_kernels.end(), language) != not_kernels.end();
}

// A new context of `language` in `all`; its id, or none when the sandbox holds its most.
std::optional<std::string> add_context(code_contexts& all, std::string language, std::string cwd, std::size_t most) {
    if (all.by_id.size() >= most) return std::nullopt;
    std::string id = new_context_id();
    code_context made{.kernel = {.language = std::move(language)}, .cwd = std::move(cwd)};
    if (!made.cwd.empty()) made.kernel.shell.cwd = made.cwd;
    all.by_id.emplace(id, std::move(made));
    return id;
}

// Whether the sandbox has a kernel for `language`: the simulated image's languages, or the
// interpreters of this host that the process runtime runs.
bool kernel_for(const context& c, std::string_view language) {
    return c.processes ? has_process_kernel(language) : has_kernel(language);
}

// The process runtime's kernel of context `id`: the one it has, else a new one (started by
// its first cell); none when the runtime holds its most kernels.
std::shared_ptr<process_kernel> real_kernel_of(context& c, const call& k, const std::string& id) {
    const auto box = c.sandboxes.box(k.sandbox_id);
    return c.sandboxes
        .with_contexts(k.sandbox_id,
                       [&](code_contexts& all) -> std::shared_ptr<process_kernel> {
                           const auto it = all.by_id.find(id);
                           if (it == all.by_id.end()) return nullptr;
                           std::shared_ptr<process_kernel>& kernel = it->second.real_kernel;
                           if (!kernel || kernel->dead() || kernel->has_ended()) {  // a kernel that died idle: anew
                               auto place = c.processes->take_kernel_place();
                               if (!place) return nullptr;
                               kernel = std::make_shared<process_kernel>(box, it->second.kernel.language,
                                                                         it->second.cwd, std::move(place));
                           }
                           return kernel;
                       })
        .value_or(nullptr);
}

// POST /code/context {"language", "cwd"}: a kernel of that language.
awaitable<void> create_context(context& c, exchange& x, call& k) {
    json::error_code ec;
    const json::value body = json::parse(x.req().body(), ec);
    const json::object* o = ec ? nullptr : body.if_object();
    const auto language = o ? text_field(*o, "language") : std::nullopt;
    const auto cwd = o ? text_field(*o, "cwd") : std::nullopt;
    if (!language || !cwd) {
        co_await x.reply(invalid_request(c, x, "error parsing request, MAYBE invalid body format. "
                                               "language and cwd must be strings"));
        co_return;
    }
    if (!kernel_for(c, *language)) {  // execd finds no kernel spec for it
        co_await x.reply(runtime_error(c, x, "error creating code context. no kernel specs found"));
        co_return;
    }
    if (c.processes && !passable(*cwd, {})) {
        co_await x.reply(invalid_request(c, x, std::string(unpassable)));
        co_return;
    }
    const std::string directory = cwd->empty() ? std::string() : file_tree::normal(*cwd);
    if (c.processes) {
        if (const std::string failed = co_await make_real_directory(c, k, directory); !failed.empty()) {
            co_await x.reply(runtime_error(c, x, "error creating code context. " + failed));
            co_return;
        }
    } else if (!directory.empty()) {
        (void)c.sandboxes.with_files(k.sandbox_id, [&](file_tree& t) { return t.make_directories(directory, 755); });
    }
    const auto made = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        const auto id = add_context(all, std::string(*language), directory, c.sandboxes.sessions_per_sandbox());
        return id ? std::optional(context_json(*id, all.by_id.at(*id))) : std::nullopt;
    });
    if (!made) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*made) {
        co_await x.reply(runtime_error(c, x, "error creating code context. too many contexts"));
    } else {
        co_await x.reply(c.json_reply(x, 200, **made));
    }
}

// GET /code/contexts?language=: every context, or one language's.
awaitable<void> list_contexts(context& c, exchange& x, call& k) {
    const std::string language = query_value(x.req().target(), "language").value_or("");
    if (is_runner(language)) {
        co_await x.reply(runtime_error(c, x, "unsupported language context operation: " + language));
        co_return;
    }
    const auto found = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) { return listed(all, language); });
    if (!found) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
        co_return;
    }
    co_await x.reply(c.json_reply(x, 200, *found));
}

// Forgets a context, and that it was its language's default; its real kernel is killed now,
// though a cell running in it holds it a while yet (the cell ends with its kernel).
void forget(code_contexts& all, const std::string& id) {
    if (const auto it = all.by_id.find(id); it != all.by_id.end() && it->second.real_kernel) it->second.real_kernel->kill();
    all.by_id.erase(id);
    std::erase_if(all.default_of, [&](const auto& entry) { return entry.second == id; });
}

// DELETE /code/contexts?language=: every context of one language.
awaitable<void> delete_contexts(context& c, exchange& x, call& k) {
    const std::string language = query_value(x.req().target(), "language").value_or("");
    if (language.empty()) {
        co_await x.reply(c.error_reply(x, 400, "MISSING_QUERY", "missing query parameter 'language'"));
        co_return;
    }
    const auto done = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        std::vector<std::string> ids;
        for (const auto& [id, context] : all.by_id) {
            if (context.kernel.language == language) ids.push_back(id);
        }
        for (const std::string& id : ids) forget(all, id);
        return true;
    });
    response res = done ? c.empty_reply(x, 200) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

awaitable<void> get_context(context& c, exchange& x, call& k) {
    const auto found = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        const auto it = all.by_id.find(k.param);
        return it == all.by_id.end() ? std::optional<json::object>() : std::optional(context_json(it->first, it->second));
    });
    if (!found) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*found) {
        co_await x.reply(context_not_found(c, x, k.param));
    } else {
        co_await x.reply(c.json_reply(x, 200, **found));
    }
}

awaitable<void> delete_context(context& c, exchange& x, call& k) {
    const auto erased = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        if (!all.by_id.contains(k.param)) return false;
        forget(all, k.param);
        return true;
    });
    if (!erased) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*erased) {
        co_await x.reply(context_not_found(c, x, k.param));
    } else {
        co_await x.reply(c.empty_reply(x, 200));
    }
}

// What a run asks for: its code, and the context's id and language (both may be empty).
struct code_request {
    std::string_view code;  // in the body, which outlives the run
    std::string context_id;
    std::string language;
};

std::variant<code_request, std::string> code_request_of(const json::value& body) {
    const json::object* o = body.if_object();
    if (!o) return std::string("error parsing request, MAYBE invalid body format. the body is not a JSON object");
    const auto code = text_field(*o, "code");
    const json::value* context_value = o->if_contains("context");
    const json::object* in = context_value && !context_value->is_null() ? context_value->if_object() : nullptr;
    if (context_value && !context_value->is_null() && !in) {
        return std::string("error parsing request, MAYBE invalid body format. context must be an object");
    }
    const auto id = in ? text_field(*in, "id") : std::optional<std::string_view>("");
    const auto language = in ? text_field(*in, "language") : std::optional<std::string_view>("");
    if (!code || !id || !language) {
        return std::string("error parsing request, MAYBE invalid body format. code, context.id and "
                           "context.language must be strings");
    }
    if (code->empty()) return std::string("invalid request, validation error: code is required");
    return code_request{*code, std::string(*id), std::string(*language)};
}

// The context a kernel run uses: the one named, or the language's default (made on first
// use); its id, or why the run cannot start (execd's words after "error running codes ").
std::variant<std::string, std::string_view> claim_context(code_contexts& all, const code_request& r,
                                                          const std::string& run_id, std::size_t most) {
    std::string id = r.context_id;
    if (id.empty()) {
        if (const auto it = all.default_of.find(r.language); it != all.default_of.end()) {
            id = it->second;
        } else {
            const auto made = add_context(all, r.language, "", most);
            if (!made) return std::string_view("too many contexts");
            id = all.default_of[r.language] = *made;
        }
    }
    const auto it = all.by_id.find(id);
    if (it == all.by_id.end()) return std::string_view("context not found");
    if (!it->second.running.empty()) return std::string_view("session is busy");
    it->second.running = run_id;
    return id;
}

// The context is free for its next run, unless another has taken it since.
void release_context(context& c, const call& k, const std::string& id, const std::string& run_id) {
    (void)c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        if (const auto it = all.by_id.find(id); it != all.by_id.end() && it->second.running == run_id) {
            it->second.running.clear();
        }
        return true;
    });
}

// POST /code {"context": {"id", "language"}, "code"}.
awaitable<void> run_code(context& c, exchange& x, call& k) {
    const json::value body = co_await body_json(c, x);
    auto parsed = code_request_of(body);
    if (const auto* why = std::get_if<std::string>(&parsed)) {
        co_await x.reply(invalid_request(c, x, *why));
        co_return;
    }
    const code_request& r = std::get<code_request>(parsed);
    const bool as_command = r.language.empty() || r.language == "command" || r.language == "background-command";
    if (!as_command && !kernel_for(c, r.language)) {
        co_await x.reply(runtime_error(c, x, "error running codes unknown language: " + r.language));
        co_return;
    }
    if (c.processes && !passable("", {r.code})) {
        co_await x.reply(invalid_request(c, x, std::string(unpassable)));
        co_return;
    }
    const bool background = r.language == "background-command";
    const std::optional<command_run> run = co_await start_run(c, x, k, r.code, background);
    if (!run) co_return;
    if (c.processes && as_command) {
        const process_work work{.box = c.sandboxes.box(k.sandbox_id), .command = {.command = std::string(r.code)}};
        co_await stream_run(c, x, k, *run, run->id, work, background, std::nullopt);
        co_return;
    }
    const file_reader files = files_of(c, k);
    if (as_command) {
        shell_state shell;
        const simulated_work work = shell_work(r.code, [&] { return simulate(r.code, files, &shell); });
        co_await stream_run(c, x, k, *run, run->id, work, r.language == "background-command", std::nullopt);
        co_return;
    }
    const auto claimed = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        return claim_context(all, r, run->id, c.sandboxes.sessions_per_sandbox());
    });
    if (!claimed || std::holds_alternative<std::string_view>(*claimed)) {
        c.sandboxes.finish_command(k.sandbox_id, run->id, -1, "not started");
        x.ended_work(false);  // a run that could not start: execd's controller records a failure
        const std::string why = claimed ? std::string(std::get<std::string_view>(*claimed)) : "context not found";
        co_await x.reply(runtime_error(c, x, "error running codes " + why));
        co_return;
    }
    const std::string id = std::get<std::string>(*claimed);
    if (c.processes) {
        if (auto kernel = real_kernel_of(c, k, id)) {
            const process_work work{.box = kernel->box(), .command = {.command = std::string(r.code)}, .kernel = kernel};
            co_await stream_run(c, x, k, *run, id, work, false, std::nullopt);
        } else {
            c.sandboxes.finish_command(k.sandbox_id, run->id, -1, "not started");
            co_await x.reply(runtime_error(c, x, "error running codes too many kernels running"));
        }
        release_context(c, k, id, run->id);
        co_return;
    }
    // The kernel's state is read when the run starts and kept when it ends.
    const simulated_work work{.plan = [&] {
        std::optional<simulated_run> ran;
        (void)c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
            if (const auto it = all.by_id.find(id); it != all.by_id.end()) ran = interpret(r.code, it->second.kernel, files);
            return true;
        });
        return ran.value_or(simulated_run{.in_kernel = true});
    }};
    co_await stream_run(c, x, k, *run, id, work, false, std::nullopt);
    release_context(c, k, id, run->id);
}

// DELETE /code?id=: interrupts what runs in a context (a kernel takes an interrupt when
// idle too), a command by its id, or closes a bash session, as execd's Interrupt does.
awaitable<void> interrupt_code(context& c, exchange& x, call& k) {
    const std::string id = query_value(x.req().target(), "id").value_or("");
    if (id.empty()) {
        co_await x.reply(c.error_reply(x, 400, "MISSING_QUERY", "missing query parameter 'id'"));
        co_return;
    }
    const auto running = c.sandboxes.with_contexts(k.sandbox_id, [&](code_contexts& all) {
        const auto it = all.by_id.find(id);
        return it == all.by_id.end() ? std::optional<std::string>() : std::optional(it->second.running);
    });
    if (!running) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
        co_return;
    }
    if (*running) {
        if (!(*running)->empty()) (void)c.sandboxes.interrupt(k.sandbox_id, **running);
        co_await x.reply(c.empty_reply(x, 200));
        co_return;
    }
    if (const auto command = c.sandboxes.command(k.sandbox_id, id)) {
        if (command->running && c.sandboxes.interrupt(k.sandbox_id, id)) {
            co_await x.reply(c.empty_reply(x, 200));
        } else {
            co_await x.reply(runtime_error(c, x, "error interruptting code context. command session " + id +
                                                     " is not running"));
        }
        co_return;
    }
    const auto closed = c.sandboxes.with_sessions(
        k.sandbox_id, [&](std::map<std::string, shell_state>& sessions) { return sessions.erase(id) == 1; });
    if (closed && *closed) {
        co_await x.reply(c.empty_reply(x, 200));
        co_return;
    }
    co_await x.reply(runtime_error(c, x, "error interruptting code context. no such session"));
}

using v = http::verb;
constexpr std::array code_table{
    route{v::post, "/code", "run_code", run_code, "", "run_code"},
    route{v::delete_, "/code", "interrupt_code", interrupt_code},
    route{v::post, "/code/context", "create_code_context", create_context},
    route{v::get, "/code/contexts", "list_code_contexts", list_contexts},
    route{v::delete_, "/code/contexts", "delete_code_contexts", delete_contexts},
    route{v::get, "/code/contexts/{param}", "get_code_context", get_context, "/code/contexts/:contextId", ""},
    route{v::delete_, "/code/contexts/{param}", "delete_code_context", delete_context, "/code/contexts/:contextId", ""},
};

}  // namespace

std::span<const route> code_routes() noexcept { return code_table; }

}  // namespace ngfail::opensandbox::testing::detail
