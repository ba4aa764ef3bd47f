#include "faults.hpp"

#include <ngfail/json.hpp>
#include <ngfail/opensandbox/operation.hpp>

#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <limits>

namespace ngfail::opensandbox::testing {
namespace {

using action = fault::action;
using surface = fault::surface;

struct action_row {
    action what;
    std::string_view name;
    std::string_view acts_on;  // the operations where it is applied, space-separated; empty: every one
    std::string_view takes;    // the fields it acts with beside operation, action and times
};

constexpr std::string_view runs = "exec run_in_session run_code";
// The operations whose request names no sandbox (a snapshot's id is no sandbox's): what acts on
// a sandbox does nothing to them.
constexpr std::string_view sandboxless = "create list list_snapshots get_snapshot delete_snapshot";
constexpr std::string_view on_a_sandbox = "!";  // as `acts_on`: every operation but the sandboxless

// Every action by its JSON name, where it acts and what it acts with: adding one is a row
// here and a case where it is applied. A fault for an operation its action does nothing to,
// or with a field its action does nothing with, is refused.
constexpr std::array action_names{
    action_row{action::oom_kill, "oom_kill", on_a_sandbox, "surface"},
    action_row{action::image_pull_failure, "image_pull_failure", "create", ""},
    action_row{action::expire, "expire", on_a_sandbox, ""},
    action_row{action::crash, "crash", on_a_sandbox, ""},
    action_row{action::http_error, "http_error", "", "status code message retry_after_s"},
    action_row{action::drop_before_init, "drop_before_init", runs, ""},
    action_row{action::drop_after_init, "drop_after_init", runs, ""},
    action_row{action::no_terminal_event, "no_terminal_event", runs, ""},
    action_row{action::signal_exit, "signal_exit", "exec run_in_session run_code exec_status", ""},
    action_row{action::stall, "stall", "", "stall_ms"},
    action_row{action::malformed_json, "malformed_json", "", ""},
    action_row{action::sandbox_status, "sandbox_status", "create get", "state reason"},
    action_row{action::taken_over, "taken_over", "attach_terminal", ""},
    action_row{action::policy_close, "policy_close", "attach_terminal", ""},
    action_row{action::drop_mid_frame, "drop_mid_frame", "attach_terminal", ""},
    action_row{action::lose_reply, "lose_reply", "", ""},
    action_row{action::cut_stream, "cut_stream", "exec run_in_session run_code exec_logs download watch_metrics",
               "cut_after_bytes cut_after_ms"},
    action_row{action::pod_ready_timeout, "pod_ready_timeout", "create", "cause stall_ms"},
};

const action_row* row_of(action a) noexcept {
    const auto row = std::find_if(action_names.begin(), action_names.end(), [&](const action_row& r) { return r.what == a; });
    return row == action_names.end() ? nullptr : &*row;
}

// Whether `word` is in a space-separated `list`.
bool listed(std::string_view list, std::string_view word) noexcept {
    for (std::string_view rest = list; !rest.empty();) {
        const auto space = rest.find(' ');
        if (rest.substr(0, space) == word) return true;
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    return false;
}

// Whether an action with this `acts_on` list acts on `operation` (empty: on every one).
bool acts_on(std::string_view list, std::string_view operation) noexcept {
    if (list == on_a_sandbox) return !listed(sandboxless, operation);
    return list.empty() || listed(list, operation);
}

// What an `acts_on` list says, for a message.
std::string described(std::string_view list) {
    if (list == on_a_sandbox) return "every operation on a sandbox (not " + std::string(sandboxless) + ")";
    return std::string(list);
}

failure bad_fault(std::string why) { return failure(kind::provider_request_rejected, "fault: " + why); }

// Every field a fault may have: a misspelt one ("retry_after", "stal_ms") is refused, never
// dropped, or a chaos test would pass without its fault.
constexpr std::array<std::string_view, 14> fault_fields{
    "operation", "action", "code", "message", "state", "reason", "retry_after_s", "stall_ms", "status", "times",
    "cut_after_bytes", "cut_after_ms", "surface", "cause"};

// The surfaces by their JSON names.
constexpr std::array<std::pair<fault::surface, std::string_view>, 3> surface_names{{
    {fault::surface::backend, "backend"}, {fault::surface::bare_502, "bare_502"}, {fault::surface::ws_1011, "ws_1011"}}};

// The start causes by their JSON names.
constexpr std::array<std::pair<fault::start_cause, std::string_view>, 3> cause_names{{
    {fault::start_cause::quota, "quota"}, {fault::start_cause::pool, "pool"}, {fault::start_cause::image_pull, "image_pull"}}};

// The name of `value` in a table of (value, name) rows that lists every value.
template <class Table, class Value>
std::string_view name_in(const Table& table, Value value) {
    return std::find_if(table.begin(), table.end(), [&](const auto& row) { return row.first == value; })->second;
}

// A name from the request, as an error message may quote it: printable ASCII, 64 bytes.
std::string in_quotes(std::string_view text) {
    std::string out = "\"";
    for (const char c : text.substr(0, 64)) out += c >= 0x20 && c < 0x7f && c != '"' ? c : '?';
    return out + (text.size() > 64 ? "...\"" : "\"");
}

// The fields every action takes. (parse_json bounds every string, so a queued fault's size.)
constexpr std::string_view always_taken = "operation action times";
constexpr int lowest_error_status = 400;  // a 1xx with a body, a 2xx or 3xx error is no reply HTTP has

std::string action_list() {
    std::string out;
    for (const action_row& row : action_names) out += (out.empty() ? "" : ", ") + std::string(row.name);
    return out;
}

std::optional<std::string> unknown_operation(std::string_view operation) {
    if (parse_operation(operation)) return std::nullopt;
    return "unknown operation " + in_quotes(operation) +
           " (the operations are the client's: create, exec, get, run_code, upload, ...; docs/opensandbox.md lists them)";
}

// Why `field` is refused on `row`'s action: it does nothing with it.
std::string takes_no(const action_row& row, std::string_view field) {
    std::string takes;
    for (const char c : row.takes) takes += c == ' ' ? std::string_view(", ") : std::string_view(&c, 1);
    return "field " + in_quotes(field) + " does nothing to action " + in_quotes(row.name) +
           (takes.empty() ? "; it takes only operation and times" : "; beside operation and times it takes " + takes);
}

// The first field `f` sets that its action does nothing with (as set: unlike its default).
std::optional<std::string_view> set_but_unused(const fault& f, const action_row& row) {
    const fault plain{};
    const std::pair<std::string_view, bool> set[] = {
        {"status", f.status != plain.status},          {"code", !f.code.empty()},
        {"message", !f.message.empty()},               {"retry_after_s", f.retry_after_s.has_value()},
        {"state", !f.state.empty()},                   {"reason", !f.reason.empty()},
        {"stall_ms", f.stall_for != plain.stall_for},   {"cut_after_bytes", f.cut_after_bytes.has_value()},
        {"cut_after_ms", f.cut_after_ms.has_value()},   {"surface", f.shown_as != plain.shown_as},
        {"cause", f.cause != plain.cause},
    };
    for (const auto& [field, is_set] : set) {
        if (is_set && !listed(row.takes, field)) return field;
    }
    return std::nullopt;
}

}  // namespace

std::string_view name(fault::action a) noexcept {
    const action_row* row = row_of(a);
    return row ? row->name : std::string_view();
}

fault fault::http_error(std::string operation, int status, std::string code, std::string message,
                        std::optional<int> retry_after_s) {
    return {.operation = std::move(operation), .what = action::http_error, .status = status, .code = std::move(code),
            .message = std::move(message), .retry_after_s = retry_after_s};
}
fault fault::exec(action what) { return {.operation = "exec", .what = what}; }
fault fault::stall(std::string operation, std::chrono::milliseconds how_long) {
    return {.operation = std::move(operation), .what = action::stall, .stall_for = how_long};
}
fault fault::cut_stream(std::string operation, std::size_t bytes, int times) {
    return {.operation = std::move(operation), .what = action::cut_stream, .cut_after_bytes = bytes, .times = times};
}
fault fault::pod_ready_timeout(start_cause cause, std::chrono::milliseconds how_long) {
    return {.operation = "create", .what = action::pod_ready_timeout, .stall_for = how_long, .cause = cause};
}
fault fault::malformed(std::string operation) { return {.operation = std::move(operation), .what = action::malformed_json}; }
fault fault::sandbox_status(std::string operation, std::string state, std::string reason) {
    return {.operation = std::move(operation), .what = action::sandbox_status, .state = std::move(state),
            .reason = std::move(reason)};
}

std::string to_json(const fault& f) {
    boost::json::object o{{"operation", f.operation}, {"action", name(f.what)}, {"times", f.times}};
    // (escaped to ASCII: `ngfail serve` prints it on a terminal)
    if (f.what == action::http_error) {
        o["status"] = f.status;
        o["code"] = f.code;
        o["message"] = f.message;
        if (f.retry_after_s) o["retry_after_s"] = *f.retry_after_s;
    }
    if (f.what == action::stall || f.what == action::pod_ready_timeout) o["stall_ms"] = f.stall_for.count();
    if (f.what == action::pod_ready_timeout) o["cause"] = name_in(cause_names, f.cause);
    if (f.cut_after_bytes) o["cut_after_bytes"] = *f.cut_after_bytes;
    if (f.cut_after_ms) o["cut_after_ms"] = f.cut_after_ms->count();
    if (f.shown_as != surface::backend) o["surface"] = name_in(surface_names, f.shown_as);
    if (f.what == action::sandbox_status) {
        o["state"] = f.state;
        o["reason"] = f.reason;
    }
    return serialize_ascii(o);
}

result<fault> parse_fault(std::string_view text) {
    const auto parsed = parse_json(text);
    if (!parsed) return bad_fault(std::string(parsed.error().reason()));
    const auto* o = parsed.value().if_object();
    if (!o) return bad_fault("expected a JSON object");
    for (const auto& field : *o) {
        if (std::find(fault_fields.begin(), fault_fields.end(), field.key()) == fault_fields.end()) {
            return bad_fault("unknown field " + in_quotes(field.key()) + "; a fault has operation, action, code, message, "
                             "state, reason, status, retry_after_s, stall_ms, cut_after_bytes, cut_after_ms, surface, "
                             "cause and times");
        }
    }
    fault f;
    std::optional<std::string> why;
    const auto string_field = [&](std::string_view key, std::string& into) {
        const auto* v = o->if_contains(key);
        if (!v || why) return;
        if (!v->is_string()) {
            why = in_quotes(key) + " must be a string";
        } else {
            into = std::string(v->as_string());
        }
    };
    const auto int_field = [&](std::string_view key, auto&& into, std::int64_t lo, std::int64_t hi,
                               std::string_view what) {
        const auto* v = o->if_contains(key);
        if (!v || why) return;
        if (!v->is_int64() || v->as_int64() < lo || v->as_int64() > hi) {
            why = in_quotes(key) + " must be " + std::string(what) + " from " + std::to_string(lo) + " to " + std::to_string(hi);
        } else {
            into(v->as_int64());
        }
    };
    string_field("operation", f.operation);
    if (!why && f.operation.empty()) why = "\"operation\" is required";
    if (!why) why = unknown_operation(f.operation);
    std::string action_name;
    if (!why && !o->contains("action")) why = "\"action\" is required; the actions are " + action_list();
    string_field("action", action_name);
    if (why) return bad_fault(std::move(*why));
    const auto row = std::find_if(action_names.begin(), action_names.end(),
                                  [&](const action_row& r) { return r.name == action_name; });
    if (row == action_names.end()) return bad_fault("unknown action " + in_quotes(action_name) + "; the actions are " + action_list());
    f.what = row->what;
    for (const auto& field : *o) {
        if (!listed(always_taken, field.key()) && !listed(row->takes, field.key())) {
            return bad_fault(takes_no(*row, field.key()));
        }
    }
    constexpr std::int64_t int_max = std::numeric_limits<int>::max();
    string_field("code", f.code);
    string_field("message", f.message);
    string_field("state", f.state);
    string_field("reason", f.reason);
    int_field("status", [&](std::int64_t v) { f.status = static_cast<int>(v); }, lowest_error_status, 599,
              "an HTTP error status");
    int_field("retry_after_s", [&](std::int64_t v) { f.retry_after_s = static_cast<int>(v); }, 0, int_max,
              "a whole number of seconds");
    int_field("stall_ms", [&](std::int64_t v) { f.stall_for = std::chrono::milliseconds(v); }, 0, 3'600'000,
              "a whole number of milliseconds");
    // A field naming one of a table's values: `names` lists them, for the message.
    const auto named_field = [&](std::string_view key, const auto& table, auto& into, std::string_view names) {
        std::string text;
        string_field(key, text);
        if (why || !o->contains(key)) return;
        const auto row = std::find_if(table.begin(), table.end(), [&](const auto& r) { return r.second == text; });
        if (row == table.end()) {
            why = in_quotes(key) + " must be " + std::string(names) + ", not " + in_quotes(text);
        } else {
            into = row->first;
        }
    };
    named_field("surface", surface_names, f.shown_as, "backend, bare_502 or ws_1011");
    named_field("cause", cause_names, f.cause, "quota, pool or image_pull");
    int_field("cut_after_bytes", [&](std::int64_t v) { f.cut_after_bytes = static_cast<std::size_t>(v); }, 0, int_max,
              "a whole number of bytes");
    int_field("cut_after_ms", [&](std::int64_t v) { f.cut_after_ms = std::chrono::milliseconds(v); }, 0, 3'600'000,
              "a whole number of milliseconds");
    int_field("times", [&](std::int64_t v) { f.times = static_cast<int>(v); }, 1, int_max, "a whole number");
    if (why) return bad_fault(std::move(*why));
    if (auto never = detail::never_acts(f)) return bad_fault(std::move(*never));
    return f;
}

}  // namespace ngfail::opensandbox::testing

namespace ngfail::opensandbox::testing::detail {

bool streams_a_run(std::string_view operation) noexcept {
    return acts_on(runs, operation);
}

std::optional<std::string> never_acts(const fault& f) {
    if (auto why = unknown_operation(f.operation)) return why;
    const action_row* row = row_of(f.what);
    if (!row) return "no such action";
    if (!acts_on(row->acts_on, f.operation)) {
        return "action " + in_quotes(row->name) + " does nothing to " + in_quotes(f.operation) + "; it acts on " +
               described(row->acts_on);
    }
    if (const auto field = set_but_unused(f, *row)) return takes_no(*row, *field);
    if (f.what == action::http_error && (f.status < lowest_error_status || f.status > 599)) {
        return "\"status\" must be an HTTP error status from 400 to 599";
    }
    if (f.times < 1) return "\"times\" must be a whole number from 1 to 2147483647";
    if (f.shown_as == surface::ws_1011 && f.operation != "attach_terminal") {
        return "surface \"ws_1011\" is a terminal's WebSocket close: it acts on attach_terminal only";
    }
    if (f.what == action::cut_stream && !f.cut_after_bytes && !f.cut_after_ms) {
        return "cut_stream needs \"cut_after_bytes\" or \"cut_after_ms\" (the cut comes at whichever is first)";
    }
    if (f.what == action::sandbox_status && f.state.empty()) {
        return "\"state\" is required for sandbox_status (Failed, Pending, Terminated, ...)";
    }
    return std::nullopt;
}

bool fault_queue::push(fault f) {
    const std::lock_guard lock(mutex_);
    if (faults_.size() >= most_) return false;
    faults_.push_back(std::move(f));
    return true;
}

std::optional<fault> fault_queue::take(std::string_view operation) {
    const std::lock_guard lock(mutex_);
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
        if (it->operation != operation) continue;
        fault f = *it;
        if (--it->times <= 0) faults_.erase(it);
        return f;
    }
    return std::nullopt;
}

}  // namespace ngfail::opensandbox::testing::detail
