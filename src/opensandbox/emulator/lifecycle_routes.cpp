// The lifecycle API (`/v1/sandboxes…`): one handler per route, and the route table.
#include "context.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

// The longest life a create may ask for (the real server's `max_sandbox_timeout_seconds`).
constexpr std::chrono::seconds longest_sandbox_timeout = std::chrono::hours(24 * 365);

const json::object* body_object(const exchange& x, json::value& holder) {
    json::error_code ec;
    holder = json::parse(x.req().body(), ec);
    return ec ? nullptr : holder.if_object();
}

// ---- what a sandbox record may hold ----------------------------------------------------------
// The server stores metadata as Kubernetes labels and checks them on create and patch, so
// the emulator does; the other bounds keep a record small (every list and GET copies it).
constexpr std::size_t max_metadata_pairs = 256;
constexpr std::size_t max_entrypoint_bytes = 128 * 1024;  // Linux's MAX_ARG_STRLEN
constexpr std::size_t max_image_bytes = 16 * 1024;         // the image object as JSON

bool label_char(char ch, bool inner) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || (inner && (ch == '-' || ch == '_' || ch == '.'));
}
// A label value or a key's name: at most 63 of [A-Za-z0-9], with - _ . inside.
bool label_name(std::string_view text, bool may_be_empty) {
    if (text.empty()) return may_be_empty;
    if (text.size() > 63 || !label_char(text.front(), false) || !label_char(text.back(), false)) return false;
    return std::all_of(text.begin(), text.end(), [](char ch) { return label_char(ch, true); });
}
// A key's prefix: a DNS subdomain of at most 253 characters (RFC 1123 labels, lower case).
bool dns_subdomain(std::string_view text) {
    if (text.empty() || text.size() > 253) return false;
    for (std::string_view rest = text;;) {
        const auto dot = rest.find('.');
        const std::string_view part = rest.substr(0, dot);
        const auto lower_alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
        if (part.empty() || part.size() > 63 || !lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
        if (!std::all_of(part.begin(), part.end(), [&](char ch) { return lower_alnum(ch) || ch == '-'; })) return false;
        if (dot == std::string_view::npos) return true;
        rest.remove_prefix(dot + 1);
    }
}

// Why `metadata` cannot be labels (the server's wording), or none. Null values pass (a
// patch's deletions); checked before any text of the key is quoted.
std::optional<std::string> invalid_labels(const json::object& metadata) {
    if (metadata.size() > max_metadata_pairs) return "Metadata has more than 256 keys";
    for (const auto& [key, value] : metadata) {
        const std::string_view k = key;
        const auto slash = k.rfind('/');
        const bool key_ok = label_name(k.substr(slash == std::string_view::npos ? 0 : slash + 1), false) &&
                            (slash == std::string_view::npos || dns_subdomain(k.substr(0, slash)));
        if (!key_ok) return "Metadata key is invalid: must be a Kubernetes label key (an optional DNS subdomain prefix and '/', then at most 63 characters [A-Za-z0-9-_.])";
        if (k.starts_with("opensandbox.io/")) {
            return "Metadata key '" + std::string(k) + "' uses the reserved prefix 'opensandbox.io/'";
        }
        if (value.is_null()) continue;
        if (!value.is_string()) return "Metadata value for key '" + std::string(k) + "' must be a string";
        if (!label_name(value.as_string(), true)) {
            return "Metadata value for key '" + std::string(k) + "' is invalid: must be at most 63 characters [A-Za-z0-9-_.], starting and ending alphanumeric";
        }
    }
    return std::nullopt;
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

// The `metadata` query value as the server reads it (Python's parse_qsl, strict): pairs
// `k=v` joined by `&`, each percent-decoded; a segment without `=` is malformed.
std::optional<std::vector<std::pair<std::string, std::string>>> metadata_filter(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (text.empty()) return pairs;
    for (std::string_view rest = text;;) {
        const auto amp = rest.find('&');
        const std::string_view segment = rest.substr(0, amp);
        const auto eq = segment.find('=');
        if (eq == std::string_view::npos) return std::nullopt;
        pairs.emplace_back(percent_decode(segment.substr(0, eq)), percent_decode(segment.substr(eq + 1)));
        if (amp == std::string_view::npos) break;
        rest = rest.substr(amp + 1);
    }
    return pairs;
}

json::object status_json(const sandbox_record& s) {
    return {{"state", s.state}, {"reason", s.reason}, {"message", s.message},
            {"lastTransitionAt", rfc3339(s.created_at)}};
}

json::object sandbox_json(const sandbox_record& s) {
    json::object o{{"id", s.id},
                   {"status", status_json(s)},
                   {"metadata", s.metadata},
                   {"entrypoint", s.entrypoint},
                   {"createdAt", rfc3339(s.created_at)}};
    if (!s.image.empty()) o["image"] = s.image;
    if (!s.snapshot_id.empty()) o["snapshotId"] = s.snapshot_id;
    if (s.expires_at) o["expiresAt"] = rfc3339(*s.expires_at);
    return o;
}

// The sandbox as the reply reports it: a sandbox_status fault changes this reply only.
sandbox_record as_reported(sandbox_record s, const call& k) {
    if (k.active_fault && k.active_fault->what == fault::action::sandbox_status) {
        s.state = k.active_fault->state;
        s.reason = k.active_fault->reason;
    }
    return s;
}

// An absolute URL on the lifecycle server, as the spec's Location header (format "uri") wants:
// the real server sends a bare path for snapshots, which Prism rejects.
std::string lifecycle_url(const context& c, const std::string& path) {
    return (c.options.tls_certificate_file.empty() ? "http://" : "https://") + c.options.host + ":" +
           std::to_string(c.lifecycle_port) + path;
}

// ---- snapshots, as the server's snapshot service keeps them --------------------------------------

json::object snapshot_json(const snapshot_record& r) {
    json::object o{{"id", r.id},
                   {"sandboxId", r.sandbox_id},
                   {"status", json::object{{"state", r.state}, {"reason", r.reason}, {"message", r.message},
                                           {"lastTransitionAt", rfc3339(r.transition_at)}}},
                   {"createdAt", rfc3339(r.created_at)}};
    if (r.name) o["name"] = *r.name;
    return o;
}

response snapshot_not_found(context& c, const exchange& x, const std::string& id) {
    return c.error_reply(x, 404, "SNAPSHOT::NOT_FOUND", "Snapshot " + id + " not found");
}

// A create past the server's own bounds (not the real server's: this one keeps a stranger from
// holding unbounded memory): a conflict with what the server holds, which the spec documents.
response create_refusal_reply(context& c, const exchange& x, sandbox_store::create_refusal why) {
    return why == sandbox_store::create_refusal::too_many
               ? c.error_reply(x, 409, "SANDBOX::LIMIT_EXCEEDED", "this server keeps no more sandboxes; delete one first")
               : c.error_reply(x, 409, "SANDBOX::LIMIT_EXCEEDED",
                               "the snapshot's files do not fit in what this server keeps; delete sandboxes or snapshots first");
}

// Why a snapshot cannot be restored: gone, or not Ready yet.
response snapshot_refusal(context& c, const exchange& x, const std::string& id, bool exists) {
    if (!exists) return snapshot_not_found(c, x, id);
    return c.error_reply(x, 409, "SNAPSHOT::NOT_READY", "Snapshot " + id + " is not ready for restore.");
}

// The optional body of a snapshot's creation: nothing, or `{"name": "…"}` with a name.
std::optional<std::optional<std::string>> snapshot_name(const exchange& x) {
    if (x.req().body().empty()) return std::optional<std::string>{};
    json::value holder;
    const json::object* o = body_object(x, holder);
    if (!o) return std::nullopt;
    std::optional<std::string> name;
    for (const auto& [key, value] : *o) {
        if (key != "name" || !value.is_string() || value.as_string().empty()) return std::nullopt;
        name.emplace(value.as_string());
    }
    return name;
}

awaitable<void> create_snapshot(context& c, exchange& x, call& k) {
    const auto name = snapshot_name(x);
    if (!name) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER",
                                       "the body must be empty or an object with only a non-empty name"));
        co_return;
    }
    auto taken = c.sandboxes.take_snapshot(k.sandbox_id, *name);
    using refusal = sandbox_store::snapshot_refusal;
    if (const auto* why = std::get_if<refusal>(&taken)) {
        response res = *why == refusal::no_sandbox ? c.not_found(x, k.sandbox_id)
                       : *why == refusal::not_running
                           ? c.error_reply(x, 409, "SNAPSHOT::INVALID_SOURCE_STATE",
                                           "Snapshot can only be created from a Running sandbox.")
                           : c.error_reply(x, 409, "SNAPSHOT::LIMIT_EXCEEDED",
                                           *why == refusal::full
                                               ? "this server keeps no more snapshots; delete one first"
                                               : "the sandbox's files do not fit in what this server keeps");
        co_await x.reply(std::move(res));
        co_return;
    }
    const snapshot_record& r = std::get<snapshot_record>(taken);
    response res = c.json_reply(x, 202, snapshot_json(r));
    res.set(http::field::location, lifecycle_url(c, "/v1/snapshots/" + r.id));
    co_await x.reply(std::move(res));
}

awaitable<void> get_snapshot(context& c, exchange& x, call& k) {
    const auto r = c.sandboxes.snapshot(k.sandbox_id);
    response res = r ? c.json_reply(x, 200, snapshot_json(*r)) : snapshot_not_found(c, x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

awaitable<void> delete_snapshot(context& c, exchange& x, call& k) {
    using erase = sandbox_store::snapshot_erase;
    const erase done = c.sandboxes.erase_snapshot(k.sandbox_id);
    response res = done == erase::erased        ? c.empty_reply(x, 204)
                   : done == erase::no_snapshot ? snapshot_not_found(c, x, k.sandbox_id)
                                                : c.error_reply(x, 409, "SNAPSHOT::INVALID_STATE",
                                                                "Snapshot " + k.sandbox_id +
                                                                    " is still being created and cannot be deleted");
    co_await x.reply(std::move(res));
}

// ---- a sandbox that never starts, and what its diagnostics say -----------------------------------

// Why a `pod_ready_timeout` sandbox never started: its status (structured: the state and a
// reason a controller sets) and the lines its diagnostics show, worded as Kubernetes words
// them (a quota's admission refusal, the pool's, the kubelet's failed pull).
struct start_cause_row {
    fault::start_cause cause;
    std::string_view reason;
    std::string_view message;  // "{id}" is replaced
    std::string_view event;    // the runtime's event line: type, reason, message
};
constexpr std::array start_causes{
    start_cause_row{fault::start_cause::quota, "QuotaExceeded",
                    "Sandbox {id} was not admitted: the namespace's quota is used up",
                    "Warning FailedCreate Error creating: pods \"{id}-0\" is forbidden: exceeded quota: "
                    "sandbox-quota, requested: pods=1, used: pods=20, limited: pods=20"},
    start_cause_row{fault::start_cause::pool, "PoolExhausted",
                    "Sandbox {id} is waiting for an idle sandbox in its pool",
                    "Warning PoolExhausted no idle sandbox in pool \"default\": 0 of 8 free, 8 allocated"},
    start_cause_row{fault::start_cause::image_pull, "ImagePullBackOff",
                    "Sandbox {id} cannot start: its image is not pulled",
                    "Warning Failed Failed to pull image: rpc error: code = NotFound desc = manifest unknown "
                    "(ErrImagePull); Back-off pulling image"},
};

const start_cause_row& start_cause_of(fault::start_cause cause) {
    for (const start_cause_row& row : start_causes) {
        if (row.cause == cause) return row;
    }
    return start_causes.front();
}

// `line` at the end of `text`, the oldest lines going past the bound.
void append_line(std::string& text, std::string_view line) {
    text.append(line).push_back('\n');
    if (text.size() <= max_diagnostic_bytes) return;
    const auto cut = text.find('\n', text.size() - max_diagnostic_bytes);
    text.erase(0, cut == std::string::npos ? text.size() : cut + 1);
}

// Fails a create's sandbox as never started after `waited`: its status and diagnostics name
// the cause; the reply is the backend's (it names the sandbox in its message only).
response never_started(context& c, const exchange& x, const std::string& id, const fault& f,
                       std::chrono::milliseconds waited) {
    const start_cause_row& why = start_cause_of(f.cause);
    c.sandboxes.update(id, [&](sandbox_record& s) {
        s.state = "Failed";
        s.reason = std::string(why.reason);
        s.message = with_id(why.message, id);
        s.never_started = true;
        append_line(s.diagnostic_events, rfc3339(wall_clock::now()) + " runtime " + with_id(why.event, id));
    });
    std::string message = with_id(c.profile.start_timeout.message, id);
    const std::string elapsed = std::to_string(waited.count() / 1000) + "." + std::to_string(waited.count() % 1000 / 100);
    if (const auto at = message.find("{elapsed}"); at != std::string::npos) message.replace(at, 9, elapsed);
    return c.error_reply(x, c.profile.start_timeout.status, c.backend_code(c.profile.start_timeout.code), message);
}

awaitable<void> create(context& c, exchange& x, call& k) {
    json::value holder;
    const json::object* o = body_object(x, holder);
    const json::value* image = o ? o->if_contains("image") : nullptr;
    const json::value* uri = image && image->is_object() ? image->as_object().if_contains("uri") : nullptr;
    const json::value* snapshot = o ? o->if_contains("snapshotId") : nullptr;
    if (!(uri && uri->is_string()) && !(snapshot && snapshot->is_string())) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER", "exactly one of image.uri or snapshotId is required"));
        co_return;
    }
    // As the server's resolve_sandbox_image_from_request: an image wins; a snapshot must be Ready.
    std::optional<snapshot_record> restored_from;
    json::object effective_image = image && image->is_object() ? image->as_object() : json::object{};
    if (!(uri && uri->is_string())) {
        const std::string snapshot_id(snapshot->as_string());
        restored_from = c.sandboxes.snapshot(snapshot_id);
        if (!restored_from || restored_from->state != "Ready") {
            co_await x.reply(snapshot_refusal(c, x, snapshot_id, restored_from.has_value()));
            co_return;
        }
        effective_image = json::object{{"uri", with_id(c.profile.snapshot_image, snapshot_id)}};
    }
    if (k.active_fault && k.active_fault->what == fault::action::image_pull_failure) {
        const auto& e = c.profile.image_pull_error;
        co_await x.reply(c.error_reply(x, e.status, c.backend_code(e.code), e.message));
        co_return;
    }
    std::optional<std::chrono::seconds> timeout;
    if (const json::value* t = o->if_contains("timeout"); t && !t->is_null()) {
        if (!t->is_int64() || t->as_int64() < 1 || t->as_int64() > longest_sandbox_timeout.count()) {
            co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER",
                                           "timeout must be a whole number of seconds from 1 to " +
                                               std::to_string(longest_sandbox_timeout.count())));
            co_return;
        }
        timeout = std::chrono::seconds(t->as_int64());
    }
    json::array entrypoint{"tail", "-f", "/dev/null"};
    if (const json::value* e = o->if_contains("entrypoint"); e && e->is_array()) entrypoint = e->as_array();
    json::object metadata;
    if (const json::value* m = o->if_contains("metadata"); m && m->is_object()) metadata = m->as_object();
    std::size_t entrypoint_bytes = 0;
    for (const json::value& arg : entrypoint) entrypoint_bytes += arg.is_string() ? arg.as_string().size() : 16;
    if (auto why = invalid_labels(metadata); why || std::ranges::any_of(metadata, [](const auto& kv) { return kv.value().is_null(); })) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_METADATA_LABEL", why.value_or("Metadata values must be strings")));
        co_return;
    }
    if (entrypoint_bytes > max_entrypoint_bytes || json::serialize(effective_image).size() > max_image_bytes) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER",
                                       "the entrypoint may hold at most 128 KiB, the image 16 KiB"));
        co_return;
    }
    const json::value* limits = o->if_contains("resourceLimits");
    std::optional<cgroup_limits> bounds;
    if (c.processes) {
        auto given = c.processes->limits_of(limits ? limits->if_object() : nullptr);
        if (const auto* why = std::get_if<std::string>(&given)) {
            co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER", *why));
            co_return;
        }
        bounds = std::get<cgroup_limits>(given);
    }
    const json::value* secure = o->if_contains("secureAccess");
    auto created = c.sandboxes.create(std::move(effective_image), std::move(entrypoint), std::move(metadata), timeout,
                                      secure && secure->is_bool() && secure->as_bool(),
                                      restored_from ? &*restored_from : nullptr);
    if (const auto* why = std::get_if<sandbox_store::create_refusal>(&created)) {
        co_await x.reply(create_refusal_reply(c, x, *why));
        co_return;
    }
    sandbox_record s = std::get<sandbox_record>(std::move(created));
    if (k.active_fault && k.active_fault->what == fault::action::pod_ready_timeout) {
        c.sandboxes.update(s.id, [&](sandbox_record& stored) {  // Pending, never Running
            stored.state = std::string(c.profile.pending.state);
            stored.reason = std::string(c.profile.pending.reason);
            stored.message = message_for(c.profile.pending, s.id);
            stored.ready_at = mono_clock::time_point::max();
        });
        const auto began = mono_clock::now();
        co_await x.wait(k.active_fault->stall_for);
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(mono_clock::now() - began);
        co_await x.reply(never_started(c, x, s.id, *k.active_fault, waited));
        co_return;
    }
    if (c.processes) {
        std::string why_not;
        try {
            c.sandboxes.attach(s.id, co_await c.off_io([&] { return c.processes->start(s.id, *bounds); }));
        } catch (const std::exception& e) {
            why_not = e.what();
        }
        if (!why_not.empty()) {  // the container did not start: nothing of it is left
            c.sandboxes.erase(s.id);
            co_await x.reply(c.error_reply(x, 500, c.backend_code("SANDBOX_START_FAILED"), why_not));
            co_return;
        }
    }
    if (k.active_fault && k.active_fault->what == fault::action::sandbox_status) {
        c.sandboxes.update(s.id, [&](sandbox_record& stored) {
            stored.state = k.active_fault->state;
            stored.reason = k.active_fault->reason;
        });
        s = as_reported(std::move(s), k);
    }
    json::object reply = sandbox_json(s);
    reply.erase("image");  // the create response carries no startup source
    reply.erase("snapshotId");
    response res = c.json_reply(x, 202, reply);
    res.set(http::field::location, lifecycle_url(c, "/v1/sandboxes/" + s.id));
    co_await x.reply(std::move(res));
}

awaitable<void> get(context& c, exchange& x, call& k) {
    const auto s = c.sandboxes.find(k.sandbox_id);
    response res = s ? c.json_reply(x, 200, sandbox_json(as_reported(*s, k))) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

// (Built outside the coroutines: GCC 12 rejects a brace-initialised JSON object with string
// literal keys inside a co_await expression, "array used as initializer".)
json::object list_json(json::array items, std::int64_t page, std::int64_t page_size, std::int64_t total,
                       std::int64_t pages) {
    return {{"items", std::move(items)},
            {"pagination", json::object{{"page", page}, {"pageSize", page_size}, {"totalItems", total},
                                        {"totalPages", pages}, {"hasNextPage", page < pages}}}};
}

json::object expires_json(wall_clock::time_point when) { return {{"expiresAt", rfc3339(when)}}; }

json::object endpoint_json(std::string endpoint, json::object headers) {
    return {{"endpoint", std::move(endpoint)}, {"headers", std::move(headers)}};
}

// One page of `all` as the server's list replies lay it out. Without a product that could
// overflow: a page past the last is empty.
template <class Record, class ToJson>
json::object page_json(const std::vector<Record>& all, std::int64_t page, std::int64_t page_size, ToJson to_json) {
    json::array items;
    const auto total = static_cast<std::int64_t>(all.size());
    const std::int64_t pages = total == 0 ? 0 : (total - 1) / page_size + 1;
    if (page <= pages) {
        const std::int64_t first = (page - 1) * page_size;  // <= total - 1, as page - 1 <= (total - 1) / page_size
        const std::int64_t count = std::min(page_size, total - first);
        for (std::int64_t i = first; i < first + count; ++i) items.push_back(to_json(all[static_cast<std::size_t>(i)]));
    }
    return list_json(std::move(items), page, page_size, total, pages);
}

// `page` and `pageSize` (at most `largest_page`), or none when either is not a whole number in range.
std::optional<std::pair<std::int64_t, std::int64_t>> paging(const exchange& x, std::int64_t largest_page) {
    const auto page = number_query(x, "page", 1, std::numeric_limits<std::int64_t>::max());
    const auto page_size = number_query(x, "pageSize", 1, largest_page);
    if (!page || !page_size) return std::nullopt;
    return std::pair{page->value_or(1), page_size->value_or(20)};
}

// The server's own bound on a page (its `le=200`): a page is answered whole.
constexpr std::int64_t largest_sandbox_page = 200;

awaitable<void> list(context& c, exchange& x, call&) {
    const auto pages = paging(x, largest_sandbox_page);
    if (!pages) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER",
                                       "page must be a whole number of at least 1 and pageSize one from 1 to 200"));
        co_return;
    }
    const auto wanted_metadata = metadata_filter(query_value(x.req().target(), "metadata").value_or(""));
    if (!wanted_metadata) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_METADATA_FORMAT",
                                       "Invalid metadata format: expected key=value pairs joined by &"));
        co_return;
    }
    std::vector<std::string> wanted_states = query_values(x.req().target(), "state");
    for (std::string& state : wanted_states) state = lower(state);
    // As the server's matches_filter: any of the states (case-insensitive), every pair.
    const auto keep = [&](const sandbox_record& s) {
        const bool state_ok = wanted_states.empty() || std::ranges::count(wanted_states, lower(s.state)) != 0;
        return state_ok && std::ranges::all_of(*wanted_metadata, [&](const auto& pair) {
                   const json::value* v = s.metadata.if_contains(pair.first);
                   return v && v->is_string() && v->as_string() == pair.second;
               });
    };
    // (Named, not bound: clang 14 cannot capture a structured binding in a lambda.)
    const std::int64_t page = pages->first;
    const std::int64_t page_size = pages->second;
    // A page so far on that its first index overflows is as empty as any past the last.
    const std::size_t first = page - 1 > std::numeric_limits<std::int64_t>::max() / page_size
                                  ? std::numeric_limits<std::size_t>::max()
                                  : static_cast<std::size_t>((page - 1) * page_size);
    // Filtering 4,096 records and making the page's JSON: a worker's work.
    response res = co_await c.off_io([&] {
        const auto found = c.sandboxes.page(keep, first, static_cast<std::size_t>(page_size));
        json::array items;
        for (const sandbox_record& s : found.records) items.push_back(sandbox_json(s));
        const auto total = static_cast<std::int64_t>(found.total);
        const std::int64_t page_count = total == 0 ? 0 : (total - 1) / page_size + 1;
        return c.json_reply(x, 200, list_json(std::move(items), page, page_size, total, page_count));
    });
    co_await x.reply(std::move(res));
}

// As the server's snapshot repository: the source sandbox and any of the states (exactly as
// written), newest first, pages of at most 200.
awaitable<void> list_snapshots(context& c, exchange& x, call&) {
    const auto pages = paging(x, 200);
    if (!pages) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER",
                                       "page must be a whole number of at least 1 and pageSize one from 1 to 200"));
        co_return;
    }
    const auto source = query_value(x.req().target(), "sandboxId");
    const std::vector<std::string> wanted_states = query_values(x.req().target(), "state");
    std::vector<snapshot_record> all = c.sandboxes.snapshots();
    std::erase_if(all, [&](const snapshot_record& r) {
        return (source && r.sandbox_id != *source) ||
               (!wanted_states.empty() && std::ranges::count(wanted_states, r.state) == 0);
    });
    std::ranges::reverse(all);
    co_await x.reply(c.json_reply(x, 200, page_json(all, pages->first, pages->second, snapshot_json)));
}

awaitable<void> kill(context& c, exchange& x, call& k) {
    response res = c.sandboxes.erase(k.sandbox_id) ? c.empty_reply(x, 204) : c.not_found(x, k.sandbox_id);
    c.reconcile_addresses();  // its address refuses before the client hears it is gone
    co_await x.reply(std::move(res));
}

awaitable<void> renew(context& c, exchange& x, call& k) {
    json::value holder;
    const json::object* o = body_object(x, holder);
    const json::value* at = o ? o->if_contains("expiresAt") : nullptr;
    const auto when = at && at->is_string() ? parse_rfc3339(at->as_string()) : std::nullopt;
    if (!when) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER", "expiresAt must be an RFC 3339 time"));
        co_return;
    }
    if (*when <= wall_clock::now()) {
        co_await x.reply(c.error_reply(x, 400, "DOCKER::INVALID_EXPIRATION", "expiresAt must be in the future"));
        co_return;
    }
    const bool found = c.sandboxes.update(k.sandbox_id, [&](sandbox_record& s) { s.expires_at = *when; });
    response res = found ? c.json_reply(x, 200, expires_json(*when)) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

// Pause and resume: 202, then the new state, through the backend's passing phase (Pausing,
// Resuming) when it has one; any other starting state, or one still passing, is a conflict.
// A pause or a resume; in the process runtime its processes are frozen or thawed (before the
// 202: a command the client runs after a resume finds them going).
awaitable<void> transition(context& c, exchange& x, call& k, std::string_view verb, const status_shape& from,
                           const std::optional<status_shape>& passing, const status_shape& to, bool frozen) {
    const auto box = c.processes ? c.sandboxes.box(k.sandbox_id) : nullptr;
    if (box && !box->can_freeze()) {
        co_await x.reply(c.error_reply(x, 501, "NOT_IMPLEMENTED",
                                       std::string(verb) + " needs the cgroup freezer, which this host does not mount"));
        co_return;
    }
    std::optional<std::string> conflict;
    const bool found =
        c.sandboxes.update(k.sandbox_id, [&](sandbox_record& s) { conflict = c.sandboxes.pass(s, verb, from, passing, to); });
    if (box && found && !conflict) co_await c.off_io([&] { box->freeze(frozen); });
    response res = !found    ? c.not_found(x, k.sandbox_id)
                   : conflict ? c.error_reply(x, 409, c.backend_code("INVALID_STATE"), *conflict)
                              : c.empty_reply(x, 202);
    c.reconcile_addresses();
    co_await x.reply(std::move(res));
}

awaitable<void> pause(context& c, exchange& x, call& k) {
    co_await transition(c, x, k, "pause", c.profile.running, c.profile.pausing, c.profile.paused, true);
}
awaitable<void> resume(context& c, exchange& x, call& k) {
    co_await transition(c, x, k, "resume", c.profile.paused, c.profile.resuming, c.profile.running, false);
}

// JSON Merge Patch (RFC 7396) of the metadata: a null deletes a key.
awaitable<void> patch_metadata(context& c, exchange& x, call& k) {
    json::value holder;
    const json::object* patch = body_object(x, holder);
    if (!patch) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER", "the body must be a JSON object"));
        co_return;
    }
    if (const auto why = invalid_labels(*patch)) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_METADATA_LABEL", *why));
        co_return;
    }
    bool too_many = false;
    const bool found = c.sandboxes.update(k.sandbox_id, [&](sandbox_record& s) {
        json::object patched = s.metadata;
        for (const auto& [key, value] : *patch) {
            if (value.is_null()) {
                patched.erase(key);
            } else {
                patched[key] = value;
            }
        }
        too_many = patched.size() > max_metadata_pairs;
        if (!too_many) s.metadata = std::move(patched);
    });
    if (too_many) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_METADATA_LABEL", "Metadata has more than 256 keys"));
        co_return;
    }
    const auto s = found ? c.sandboxes.find(k.sandbox_id) : std::nullopt;
    response res = s ? c.json_reply(x, 200, sandbox_json(*s)) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

awaitable<void> endpoint(context& c, exchange& x, call& k) {
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(k.param.data(), k.param.data() + k.param.size(), port);
    if (ec != std::errc() || end != k.param.data() + k.param.size() || port < 1 || port > 65535) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER", "port must be a number from 1 to 65535"));
        co_return;
    }
    const auto s = c.sandboxes.find(k.sandbox_id);
    if (!s) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
        co_return;
    }
    const bool proxied = query_value(x.req().target(), "use_server_proxy") == "true";
    const std::string& host = c.options.host;
    // Directly: the sandbox's own address while it runs (one that refuses once it stops).
    const unsigned short direct_port =
        c.direct.port_for(s->id, s->state == c.profile.running.state).value_or(c.direct_port);
    const std::string endpoint =
        proxied ? host + ":" + std::to_string(c.lifecycle_port) + "/sandboxes/" + s->id + "/proxy/" + k.param
                : host + ":" + std::to_string(direct_port) + "/sandboxes/" + s->id + "/port/" + k.param;
    json::object headers;
    if (s->secure_access) headers["X-EXECD-ACCESS-TOKEN"] = s->access_token;
    co_await x.reply(c.json_reply(x, 200, endpoint_json(endpoint, std::move(headers))));
}

// ---- the diagnostics API (specs/diagnostic-api.yml) -------------------------------------------

// The scopes this server fills; "all" is each of them.
constexpr std::array<std::string_view, 6> diagnostic_scopes{"all", "container", "lifecycle", "runtime", "network",
                                                            "process"};
constexpr std::size_t max_diagnostic_reply_bytes = 64 * 1024;

// The sandbox's diagnostic text of one kind and scope: what its record says (its creation,
// its status) and what its runtime said, each line "<time> <scope> <text>".
std::string diagnostic_text(const sandbox_record& s, std::string_view kind, std::string_view scope) {
    std::string all;
    const std::string created = rfc3339(s.created_at);
    if (kind == "events") {
        all += created + " lifecycle Normal Created Sandbox " + s.id + " created\n";
        const bool failed = s.state == "Failed" || s.state == "Terminated";
        all += rfc3339(wall_clock::now()) + " lifecycle " + (failed ? "Warning " : "Normal ") + s.state + " " + s.reason +
               ": " + s.message + "\n";
        all += s.diagnostic_events;
    } else {
        all += s.never_started ? created + " container (no container log: the sandbox's container never started)\n"
                               : created + " container execd started\n" + created + " container sandbox process ready\n";
        all += s.diagnostic_logs;
    }
    if (scope == "all") return all;
    std::string kept;
    for (std::string_view rest = all; !rest.empty();) {
        const auto end = rest.find('\n');
        const std::string_view line = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
        const auto first_space = line.find(' ');
        if (first_space != std::string_view::npos && line.substr(first_space + 1).starts_with(std::string(scope) + " ")) {
            kept += line;
        }
        rest.remove_prefix(line.size());
    }
    return kept;
}

json::object diagnostic_json(const std::string& id, std::string_view kind, std::string_view scope, std::string text) {
    const bool truncated = text.size() > max_diagnostic_reply_bytes;
    if (truncated) text.erase(0, text.size() - max_diagnostic_reply_bytes);  // the newest lines matter most
    return {{"sandboxId", id},       {"kind", kind},     {"scope", scope}, {"delivery", "inline"},
            {"contentType", "text/plain; charset=utf-8"}, {"content", std::move(text)}, {"truncated", truncated}};
}

awaitable<void> diagnostics(context& c, exchange& x, call& k, std::string_view kind) {
    if (!c.options.diagnostics) {
        co_await x.reply(c.error_reply(x, 501, "NOT_IMPLEMENTED", "The Diagnostics API is not implemented by this server"));
        co_return;
    }
    const auto scope = query_value(x.req().target(), "scope");
    if (!scope || std::ranges::count(diagnostic_scopes, *scope) == 0) {
        co_await x.reply(c.error_reply(x, 400, "SANDBOX::INVALID_PARAMETER",
                                       "scope is required: all, container, lifecycle, runtime, network or process"));
        co_return;
    }
    const auto s = c.sandboxes.find(k.sandbox_id);
    response res = s ? c.json_reply(x, 200, diagnostic_json(s->id, kind, *scope, diagnostic_text(*s, kind, *scope)))
                     : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

awaitable<void> diagnostic_logs(context& c, exchange& x, call& k) { co_await diagnostics(c, x, k, "logs"); }
awaitable<void> diagnostic_events(context& c, exchange& x, call& k) { co_await diagnostics(c, x, k, "events"); }

using v = http::verb;
constexpr std::array lifecycle_table{
    route{v::post, "/sandboxes", "create", create},
    route{v::get, "/sandboxes", "list", list},
    route{v::get, "/sandboxes/{id}", "get", get},
    route{v::delete_, "/sandboxes/{id}", "kill", kill},
    route{v::patch, "/sandboxes/{id}/metadata", "metadata", patch_metadata},
    route{v::post, "/sandboxes/{id}/pause", "pause", pause},
    route{v::post, "/sandboxes/{id}/resume", "resume", resume},
    route{v::post, "/sandboxes/{id}/renew-expiration", "renew", renew},
    route{v::get, "/sandboxes/{id}/endpoints/{param}", "endpoint", endpoint},
    route{v::post, "/sandboxes/{id}/snapshots", "create_snapshot", create_snapshot},
    route{v::get, "/snapshots", "list_snapshots", list_snapshots},
    route{v::get, "/snapshots/{id}", "get_snapshot", get_snapshot},
    route{v::delete_, "/snapshots/{id}", "delete_snapshot", delete_snapshot},
    route{v::get, "/sandboxes/{id}/diagnostics/logs", "diagnostic_logs", diagnostic_logs},
    route{v::get, "/sandboxes/{id}/diagnostics/events", "diagnostic_events", diagnostic_events},
};

}  // namespace

std::span<const route> lifecycle_routes() noexcept { return lifecycle_table; }

}  // namespace ngfail::opensandbox::testing::detail
