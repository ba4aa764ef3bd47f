// The diagnostics API of the lifecycle server: a sandbox's logs and events as display text
// (specs/diagnostic-api.yml). Read as the spec lays the descriptor out, never interpreted.
#include "call.hpp"

#include <boost/json.hpp>

namespace ngfail::opensandbox::detail {
namespace {

namespace json = boost::json;

// The descriptor's delivery decides which fields it must hold (the spec's MUSTs).
diagnostic_content diagnostic_of(const json::value& v) {
    const json::object& o = as_object(v);
    diagnostic_content d{.sandbox_id = required_string(o, "sandboxId"),
                         .kind = required_string(o, "kind"),
                         .scope = required_string(o, "scope"),
                         .delivery = required_string(o, "delivery"),
                         .content_type = required_string(o, "contentType"),
                         .content = optional_string(o, "content"),
                         .content_url = optional_string(o, "contentUrl"),
                         .expires_at = optional_string(o, "expiresAt")};
    const json::value* truncated = o.if_contains("truncated");
    if (!truncated || !truncated->is_bool()) malformed("the diagnostics descriptor has no truncated flag");
    d.truncated = truncated->as_bool();
    if (const json::value* length = o.if_contains("contentLength")) {
        if (!length->is_int64() || length->as_int64() < 0) malformed("a diagnostics contentLength is not a size");
        d.content_length = length->as_int64();
    }
    if (const json::value* warnings = o.if_contains("warnings")) {
        if (!warnings->is_array()) malformed("diagnostics warnings are not a list");
        for (const json::value& w : warnings->as_array()) {
            if (!w.is_string()) malformed("a diagnostics warning is not text");
            d.warnings.emplace_back(w.as_string());
        }
    }
    // (The spec's MUSTs that tie `content` and `contentUrl` to `delivery` are prose its schema
    // leaves out; a descriptor without either is read as one without text.)
    return d;
}

std::string diagnostics_path(std::string_view sandbox_id, operation op, std::string_view scope) {
    const std::string_view what = op == operation::diagnostic_logs ? "/diagnostics/logs" : "/diagnostics/events";
    return sandbox_path(sandbox_id, what) + "?scope=" + path_segment(scope);
}

// One part of an attachment: its text, or what stands for it.
std::string attached_text(const diagnostic_content& d) {
    std::string text = d.content ? *d.content : "(offered by URL, not fetched)";
    if (d.truncated) text += "\n(cut by the server)";
    for (const std::string& w : d.warnings) text += "\n(warning: " + w + ")";
    return text;
}

// At most `bound` bytes, never ending inside a UTF-8 sequence.
void cut_to(std::string& text, std::size_t bound) {
    constexpr std::string_view mark = "\n(cut)";
    if (text.size() <= bound) return;
    std::size_t keep = bound > mark.size() ? bound - mark.size() : 0;
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0U) == 0x80U) --keep;
    text.resize(keep);
    if (bound > mark.size()) text += mark;
}

}  // namespace

awaitable<void> add_diagnostics(const call_context& probe, observation& seen) {
    const failure_diagnostics_options& wanted = probe.options.failure_diagnostics;
    if (!wanted.fetch || !seen.sandbox_id || wanted.scope.empty() || breaks_a_line(wanted.scope)) co_return;
    std::string text;
    for (const operation op : {operation::diagnostic_events, operation::diagnostic_logs}) {
        if (clock::now() >= probe.deadline) break;
        try {
            const diagnostic_content d = diagnostic_of(co_await probe.lifecycle(
                beast_http::verb::get, diagnostics_path(*seen.sandbox_id, op, wanted.scope), nullptr));
            text += (text.empty() ? "" : "\n") + std::string(d.kind) + " (" + d.scope + "):\n" + attached_text(d);
        } catch (...) {
            // none to attach: a server without the API (501) or past its deadline
        }
    }
    if (text.empty()) co_return;
    probe.secrets.scrub(text);
    cut_to(text, wanted.max_bytes);
    seen.diagnostics = std::move(text);
}

awaitable<result<diagnostic_content>> diagnostics_operation(client_state& s, operation op, std::string sandbox_id,
                                                            std::string scope, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"diagnostics scope", scope}});
    co_return co_await call<diagnostic_content>(
        s, per_call, op, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<diagnostic_content> {
            co_return diagnostic_of(
                co_await c.lifecycle(beast_http::verb::get, diagnostics_path(sandbox_id, op, scope), nullptr));
        });
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<diagnostic_content> client::make_diagnostic_logs(std::string_view sandbox_id, std::string_view scope,
                                                                    const call_options& options) {
    return detail::diagnostics_operation(*state_, operation::diagnostic_logs, std::string(sandbox_id),
                                         std::string(scope), options);
}

client::awaitable<diagnostic_content> client::make_diagnostic_events(std::string_view sandbox_id,
                                                                      std::string_view scope,
                                                                      const call_options& options) {
    return detail::diagnostics_operation(*state_, operation::diagnostic_events, std::string(sandbox_id),
                                         std::string(scope), options);
}

}  // namespace ngfail::opensandbox
