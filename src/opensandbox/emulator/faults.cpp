#include "faults.hpp"

#include <ngfail/json.hpp>
#include <ngfail/opensandbox/operation.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <limits>

namespace ngfail::opensandbox::testing {
namespace {

using action = fault::action;

struct action_row {
    action what;
    std::string_view name;
    std::string_view acts_on;  // the operations where it is applied, space-separated; empty: every one
};

constexpr std::string_view runs = "exec run_in_session run_code";

// Every action by its JSON name, and where it acts: adding one is a row here and a case
// where it is applied. A fault for an operation its action does nothing to is refused.
constexpr std::array action_names{
    action_row{action::oom_kill, "oom_kill", ""},
    action_row{action::image_pull_failure, "image_pull_failure", "create"},
    action_row{action::expire, "expire", ""},
    action_row{action::crash, "crash", ""},
    action_row{action::http_error, "http_error", ""},
    action_row{action::drop_before_init, "drop_before_init", runs},
    action_row{action::drop_after_init, "drop_after_init", runs},
    action_row{action::no_terminal_event, "no_terminal_event", runs},
    action_row{action::signal_exit, "signal_exit", "exec run_in_session run_code exec_status"},
    action_row{action::stall, "stall", ""},
    action_row{action::malformed_json, "malformed_json", ""},
    action_row{action::sandbox_status, "sandbox_status", "create get"},
    action_row{action::taken_over, "taken_over", "attach_terminal"},
    action_row{action::policy_close, "policy_close", "attach_terminal"},
    action_row{action::drop_mid_frame, "drop_mid_frame", "attach_terminal"},
};

// Whether `operation` is in a space-separated `list` (empty: every operation is).
bool acts_on(std::string_view list, std::string_view operation) noexcept {
    if (list.empty()) return true;
    for (std::string_view rest = list; !rest.empty();) {
        const auto space = rest.find(' ');
        if (rest.substr(0, space) == operation) return true;
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    return false;
}

failure bad_fault(std::string why) { return failure(kind::provider_request_rejected, "fault: " + why); }

// Every field a fault may have: a misspelt one ("retry_after", "stal_ms") is refused, never
// dropped, or a chaos test would pass without its fault.
constexpr std::array<std::string_view, 10> fault_fields{"operation", "action",        "code",     "message", "state",
                                                        "reason",    "retry_after_s", "stall_ms", "status",  "times"};

// A name from the request, as an error message may quote it: printable ASCII, 64 bytes.
std::string quoted(std::string_view text) {
    std::string out = "\"";
    for (const char c : text.substr(0, 64)) out += c >= 0x20 && c < 0x7f && c != '"' ? c : '?';
    return out + (text.size() > 64 ? "...\"" : "\"");
}

}  // namespace

std::string_view name(fault::action a) noexcept {
    for (const action_row& row : action_names) {
        if (row.what == a) return row.name;
    }
    return {};
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
fault fault::malformed(std::string operation) { return {.operation = std::move(operation), .what = action::malformed_json}; }
fault fault::sandbox_status(std::string operation, std::string state, std::string reason) {
    return {.operation = std::move(operation), .what = action::sandbox_status, .state = std::move(state),
            .reason = std::move(reason)};
}

std::string to_json(const fault& f) {
    boost::json::object o{{"operation", f.operation}, {"action", name(f.what)}, {"times", f.times}};
    if (f.what == action::http_error) {
        o["status"] = f.status;
        o["code"] = f.code;
        o["message"] = f.message;
        if (f.retry_after_s) o["retry_after_s"] = *f.retry_after_s;
    }
    if (f.what == action::stall) o["stall_ms"] = f.stall_for.count();
    if (f.what == action::sandbox_status) {
        o["state"] = f.state;
        o["reason"] = f.reason;
    }
    return boost::json::serialize(o);
}

result<fault> parse_fault(std::string_view text) {
    const auto parsed = parse_json(text);
    if (!parsed) return bad_fault(std::string(parsed.error().reason()));
    const auto* o = parsed.value().if_object();
    if (!o) return bad_fault("expected a JSON object");
    for (const auto& field : *o) {
        if (std::find(fault_fields.begin(), fault_fields.end(), field.key()) == fault_fields.end()) {
            return bad_fault("unknown field " + quoted(field.key()) + "; a fault has operation, action, code, message, "
                             "state, reason, status, retry_after_s, stall_ms and times");
        }
    }
    fault f;
    const auto string_field = [&](std::string_view key, std::string& into) -> bool {
        const auto* v = o->if_contains(key);
        if (!v) return true;
        if (!v->is_string()) return false;
        into = std::string(v->as_string());
        return true;
    };
    const auto int_field = [&](std::string_view key, auto&& into, std::int64_t lo, std::int64_t hi) -> bool {
        const auto* v = o->if_contains(key);
        if (!v) return true;
        if (!v->is_int64() || v->as_int64() < lo || v->as_int64() > hi) return false;
        into(v->as_int64());
        return true;
    };
    std::string action_name;
    if (!string_field("operation", f.operation) || f.operation.empty()) return bad_fault("\"operation\" is required");

    if (!string_field("action", action_name)) return bad_fault("\"action\" must be a string");
    if (action_name.empty()) action_name = "http_error";
    const auto row = std::find_if(action_names.begin(), action_names.end(),
                                  [&](const action_row& r) { return r.name == action_name; });
    if (row == action_names.end()) return bad_fault("unknown action " + quoted(action_name));
    f.what = row->what;
    constexpr std::int64_t int_max = std::numeric_limits<int>::max();
    if (!string_field("code", f.code) || !string_field("message", f.message) || !string_field("state", f.state) ||
        !string_field("reason", f.reason)) {
        return bad_fault("code, message, state and reason must be strings");
    }
    if (!int_field("status", [&](std::int64_t v) { f.status = static_cast<int>(v); }, 100, 599)) {
        return bad_fault("\"status\" must be an HTTP status from 100 to 599");
    }
    if (!int_field("retry_after_s", [&](std::int64_t v) { f.retry_after_s = static_cast<int>(v); }, 0, int_max)) {
        return bad_fault("\"retry_after_s\" must be a whole number of seconds");
    }
    if (!int_field("stall_ms", [&](std::int64_t v) { f.stall_for = std::chrono::milliseconds(v); }, 0, 3'600'000)) {
        return bad_fault("\"stall_ms\" must be from 0 to 3600000");
    }
    if (!int_field("times", [&](std::int64_t v) { f.times = static_cast<int>(v); }, 1, int_max)) {
        return bad_fault("\"times\" must be at least 1");
    }
    if (auto why = detail::never_acts(f)) return bad_fault(std::move(*why));
    return f;
}

}  // namespace ngfail::opensandbox::testing

namespace ngfail::opensandbox::testing::detail {

bool streams_a_run(std::string_view operation) noexcept {
    return acts_on(runs, operation);
}

std::optional<std::string> never_acts(const fault& f) {
    if (!parse_operation(f.operation)) {
        return "unknown operation " + quoted(f.operation) +
               " (the operations are the client's: create, exec, get, run_code, upload, ...; docs/opensandbox.md lists them)";
    }
    const auto row = std::find_if(action_names.begin(), action_names.end(),
                                  [&](const action_row& r) { return r.what == f.what; });
    if (row != action_names.end() && !acts_on(row->acts_on, f.operation)) {
        return "action " + quoted(row->name) + " does nothing to " + quoted(f.operation) + "; it acts on " +
               std::string(row->acts_on);
    }
    return std::nullopt;
}

void fault_queue::push(fault f) {
    const std::lock_guard lock(mutex_);
    faults_.push_back(std::move(f));
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
