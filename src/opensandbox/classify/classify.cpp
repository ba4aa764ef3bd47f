#include <ngfail/opensandbox/classify.hpp>

#include <ngfail/detail/member_count.hpp>

#include <boost/system/system_error.hpp>  // a cause may be one: its code is read

#include <array>
#include <cerrno>
#include <netdb.h>  // HOST_NOT_FOUND, TRY_AGAIN: the values of Asio's netdb category
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace ngfail::opensandbox {
namespace {

// ---- the evidence, normalised once ------------------------------------------------------

enum class network {
    none,
    refused,            // ECONNREFUSED
    unreachable,        // ENETUNREACH, EHOSTUNREACH
    host_not_found,     // errc::host_not_found
    timed_out,          // ETIMEDOUT
    local_resource,     // EMFILE, ENFILE, ENOBUFS, ENOMEM, EADDRNOTAVAIL
    dropped,            // ECONNRESET, ECONNABORTED, EPIPE, errc::connection_closed, stream_incomplete
    readiness_timeout,  // errc::readiness_timeout
    malformed,          // errc::malformed_response
    cancelled,          // errc::cancelled
    tls_failed,         // errc::tls_failed
};

// The provider codes, status reasons and states the table names, recognised once.
enum class code_name : unsigned char {
    other, pod_ready_timeout, quota_exceeded, pool_capacity_exhausted, sandbox_not_found,
    pod_ip_not_available, initialization_error, backend_connection_failed,
    context_not_found, already_connected,  // execd's: a session (a terminal) unknown, or held
};
enum class status_reason : unsigned char { other, oom_killed, image_pull_failed };

struct evidence {
    bool exec = false;
    bool create = false;
    std::optional<int> status;
    code_name code = code_name::other;
    status_reason reason = status_reason::other;
    bool terminal_state = false;  // Terminated or Failed
    std::optional<int> exit_code;
    bool signalled = false;        // a signal reported as what ended the command
    bool execution_known = false;  // for a terminal: its WebSocket was established
    bool sandbox_known = false;
    network net = network::none;
    std::optional<phase> at;
    bool terminal = false;
    std::optional<int> close_code;
    bool input_written = false;
};

// `*NAME` codes match with any backend prefix ("DOCKER::", "KUBERNETES::"); the proxy's
// BACKEND_CONNECTION_FAILED has none.
struct known_code {
    std::string_view name;
    code_name tag;
    bool any_backend;
};
constexpr std::array<known_code, 9> known_codes{{
    {"POD_READY_TIMEOUT", code_name::pod_ready_timeout, true},
    {"QUOTA_EXCEEDED", code_name::quota_exceeded, true},
    {"POOL_CAPACITY_EXHAUSTED", code_name::pool_capacity_exhausted, true},
    {"SANDBOX_NOT_FOUND", code_name::sandbox_not_found, true},
    {"POD_IP_NOT_AVAILABLE", code_name::pod_ip_not_available, true},
    {"INITIALIZATION_ERROR", code_name::initialization_error, true},
    {"BACKEND_CONNECTION_FAILED", code_name::backend_connection_failed, false},
    {"CONTEXT_NOT_FOUND", code_name::context_not_found, false},
    {"ALREADY_CONNECTED", code_name::already_connected, false},
}};

code_name code_name_of(std::string_view code) noexcept {
    if (code.empty()) return code_name::other;
    for (const known_code& k : known_codes) {
        // The last byte rules out most names before any comparison of the text.
        if (k.name.back() != code.back() || !code.ends_with(k.name)) continue;
        const std::size_t prefix = code.size() - k.name.size();
        if (prefix == 0) return k.tag;
        if (k.any_backend && prefix >= 2 && code.substr(prefix - 2, 2) == "::") return k.tag;
    }
    return code_name::other;
}

status_reason status_reason_of(std::string_view reason) noexcept {
    if (reason == "OOMKilled") return status_reason::oom_killed;
    if (reason == "ImagePullBackOff" || reason == "ErrImagePull") return status_reason::image_pull_failed;
    return status_reason::other;
}

network network_of_errno(int value) noexcept {
    switch (value) {
        case ECONNREFUSED: return network::refused;
        case ENETUNREACH:
        case EHOSTUNREACH: return network::unreachable;
        case ETIMEDOUT: return network::timed_out;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
        case EADDRNOTAVAIL: return network::local_resource;
        case ECONNRESET:
        case ECONNABORTED:
        case EPIPE: return network::dropped;
        default: return network::none;
    }
}

// Other libraries' transport codes, by their category's name and value (SPEC §9.2), so that
// no header of theirs is needed: Asio's, Beast's and OpenSSL's (through Asio). The values are
// those libraries' public enumerators (asio/error.hpp, asio/ssl/error.hpp,
// beast/core/error.hpp, beast/http/error.hpp); the client's tests check each row against
// the headers. An errno code is evidence as it is, except ECANCELED: a cancelled operation.
constexpr int any_value = -1;
struct foreign_code {
    std::string_view category;  // its name()
    int value;                  // or any_value
    errc own;                   // what it is in the classifier's terms,
    int errno_value = 0;        // ... or this errno code when set
};
constexpr std::array foreign_codes{
    foreign_code{"asio.misc", 2, errc::connection_closed},                // eof
    foreign_code{"asio.ssl.stream", 1, errc::connection_closed},          // stream_truncated
    foreign_code{"beast.http", 1, errc::connection_closed},               // end_of_stream
    foreign_code{"beast.http", 2, errc::connection_closed},               // partial_message
    foreign_code{"asio.netdb", HOST_NOT_FOUND, errc::host_not_found},     // host_not_found
    foreign_code{"asio.netdb", TRY_AGAIN, errc::host_not_found},          // host_not_found_try_again
    foreign_code{"asio.ssl", any_value, errc::tls_failed},                // OpenSSL's errors
    foreign_code{"asio.ssl.stream", any_value, errc::tls_failed},         // the TLS stream's others
    foreign_code{"boost.beast", 1, {}, ETIMEDOUT},                        // timeout
    foreign_code{"generic", ECANCELED, errc::cancelled},                  // asio's operation_aborted
    foreign_code{"system", ECANCELED, errc::cancelled},
};

// Only errno codes and the client's own are evidence; another library's, once mapped.
network network_of(const std::error_code& raw) noexcept {
    const std::error_code ec = portable_transport_error(raw);
    if (!ec) return network::none;
    if (ec.category() == std::generic_category() || ec.category() == std::system_category()) {
        return network_of_errno(ec.value());
    }
    if (ec.category() != error_category()) return network::none;
    switch (static_cast<errc>(ec.value())) {
        case errc::stream_incomplete:
        case errc::connection_closed: return network::dropped;
        case errc::readiness_timeout: return network::readiness_timeout;
        case errc::malformed_response: return network::malformed;
        case errc::cancelled: return network::cancelled;
        case errc::host_not_found: return network::host_not_found;
        case errc::tls_failed: return network::tls_failed;
    }
    return network::none;
}

// Fields the observation does not give directly, read from its cause's type.
struct cause_facts {
    std::optional<int> status;
    std::optional<std::string> code;
    std::error_code transport;
};

cause_facts facts_of(const std::exception_ptr& cause) noexcept {
    if (!cause) return {};
    try {
        std::rethrow_exception(cause);
    } catch (const api_error& e) {
        try {
            return {e.status(), e.code(), {}};
        } catch (...) {
            return {e.status(), std::nullopt, {}};
        }
    } catch (const std::system_error& e) {
        return {std::nullopt, std::nullopt, e.code()};
    } catch (const boost::system::system_error& e) {
        return {std::nullopt, std::nullopt, std::error_code(e.code())};
    } catch (...) {
        return {};
    }
}

// What the operation's name says about the evidence: unknown names have no exec or create
// rules.
const operation_traits* traits_of(std::string_view name) noexcept {
    const std::optional<operation> op = parse_operation(name);
    return op ? &traits(*op) : nullptr;
}

bool oom_reported(const evidence& e) noexcept { return e.reason == status_reason::oom_killed; }
bool killed_by_signal(const evidence& e) noexcept { return e.exec && (e.exit_code == -1 || e.signalled); }
bool start_failed(const evidence& e) noexcept {
    return e.create && ((e.status == 504 && e.code == code_name::pod_ready_timeout) ||
                        e.reason == status_reason::image_pull_failed || e.net == network::readiness_timeout);
}
bool credentials_rejected(const evidence& e) noexcept { return e.status == 401; }
bool quota_exhausted(const evidence& e) noexcept {
    return e.status == 429 || (e.status == 403 && e.code == code_name::quota_exceeded) ||
           e.code == code_name::pool_capacity_exhausted;
}
bool lost_by_reply(const evidence& e) noexcept { return e.status == 404 && e.code == code_name::sandbox_not_found; }
bool sandbox_lost(const evidence& e) noexcept { return lost_by_reply(e) || e.terminal_state; }
bool provider_not_ready(const evidence& e) noexcept {
    return (e.status == 404 && e.code == code_name::pod_ip_not_available) ||
           (e.status == 503 && e.code == code_name::initialization_error);
}
bool backend_unreachable(const evidence& e) noexcept {
    return e.status == 502 && e.code == code_name::backend_connection_failed;
}
bool state_conflict(const evidence& e) noexcept { return e.status == 409; }
// A terminal's own evidence (execd's PTY controller): its holder evicted by another
// client's takeover (close 4001), a proxy's policy close (1008), another client holding it
// (ALREADY_CONNECTED: the 409 before the upgrade, or the error frame of a takeover that
// timed out), the session unknown to execd (404 CONTEXT_NOT_FOUND). Never a close reason's text.
bool terminal_taken_over(const evidence& e) noexcept { return e.terminal && e.close_code == 4001; }
bool terminal_policy_close(const evidence& e) noexcept { return e.terminal && e.close_code == 1008; }
bool terminal_held(const evidence& e) noexcept { return e.terminal && e.code == code_name::already_connected; }
bool terminal_gone(const evidence& e) noexcept {
    return e.terminal && e.status == 404 && e.code == code_name::context_not_found;
}
bool other_4xx(const evidence& e) noexcept { return e.status && *e.status >= 400 && *e.status < 500; }
bool other_5xx(const evidence& e) noexcept { return e.status && *e.status >= 500 && *e.status < 600; }
// A refusal and a failed name lookup happen only before anything is sent: they say the
// phase themselves. Unreachability (an ICMP error can end an established connection) and a
// timeout need the phase to be known.
bool unreachable_at_connect(const evidence& e) noexcept {
    const bool says_its_phase = e.net == network::refused || e.net == network::host_not_found;
    const bool connecting = e.at == phase::connect || (!e.at && says_its_phase);
    return connecting && (says_its_phase || e.net == network::unreachable || e.net == network::timed_out ||
                          e.net == network::tls_failed);
}
bool local_resource(const evidence& e) noexcept { return e.net == network::local_resource; }
bool malformed(const evidence& e) noexcept { return e.net == network::malformed; }
// A TLS session that breaks under an exchange is a connection that broke.
bool dropped(const evidence& e) noexcept {
    return e.net == network::dropped || (e.net == network::tls_failed && e.at != phase::connect);
}
bool timed_out_after_connect(const evidence& e) noexcept {
    return e.net == network::timed_out && e.at != phase::connect;
}
bool cancelled_by_caller(const evidence& e) noexcept { return e.net == network::cancelled; }

using delivery_rule = std::optional<delivery> (*)(const evidence&) noexcept;
std::optional<delivery> not_sent(const evidence&) noexcept { return delivery::not_sent; }
std::optional<delivery> delivered(const evidence&) noexcept { return delivery::delivered; }
std::optional<delivery> possibly_delivered(const evidence&) noexcept { return delivery::possibly_delivered; }
std::optional<delivery> delivered_if_execution_known(const evidence& e) noexcept {
    return e.execution_known ? std::optional(delivery::delivered) : std::nullopt;
}
std::optional<delivery> not_sent_if_connecting(const evidence& e) noexcept {
    return e.at == phase::connect ? delivery::not_sent : delivery::possibly_delivered;
}
// The request's effect is known to exist: an execution id for exec, a sandbox id for a create.
bool effect_known(const evidence& e) noexcept { return (e.exec && e.execution_known) || (e.create && e.sandbox_known); }
std::optional<delivery> delivered_if_effect_known(const evidence& e) noexcept {
    return effect_known(e) ? std::optional(delivery::delivered) : std::nullopt;
}
// Only the 404 envelope refuses this request; a state seen afterwards never does.
std::optional<delivery> lost_delivery(const evidence& e) noexcept {
    return lost_by_reply(e) ? delivery::not_sent : delivered_if_effect_known(e);
}
// A terminal's input, once written, may or may not have reached the shell; an attachment
// that wrote none was established (the shell started) or not known to be.
std::optional<delivery> terminal_delivery(const evidence& e) noexcept {
    return !e.input_written && e.execution_known ? delivery::delivered : delivery::possibly_delivered;
}
std::optional<delivery> after_connect(const evidence& e) noexcept {
    if (e.terminal) return terminal_delivery(e);
    return e.exec && e.execution_known ? delivery::delivered : delivery::possibly_delivered;
}
std::optional<delivery> by_phase(const evidence& e) noexcept {
    if (e.at == phase::connect) return delivery::not_sent;
    return effect_known(e) ? delivery::delivered : delivery::possibly_delivered;
}

struct row {
    std::string_view name;  // what the evidence establishes
    bool (*matches)(const evidence&) noexcept;
    kind result;
    delivery_rule delivery;
};

// First matching row wins. An explicit failure_kind (`explicit_kind`) and no match
// (`nothing_matched`) are the edges of `classify` itself.
constexpr std::array evidence_table{
    //  name                      evidence                 kind                                 delivery
    row{"oom_killed",             oom_reported,            kind::provider_oom_killed,           delivered_if_execution_known},
    row{"killed_by_signal",       killed_by_signal,        kind::provider_command_terminated,   delivered},
    row{"start_failed",           start_failed,            kind::provider_start_failed,         delivered_if_effect_known},
    row{"credentials_rejected",   credentials_rejected,    kind::provider_credentials_rejected, not_sent},
    row{"quota_exhausted",        quota_exhausted,         kind::provider_quota_exhausted,      not_sent},
    row{"sandbox_lost",           sandbox_lost,            kind::provider_sandbox_lost,         lost_delivery},
    row{"terminal_taken_over",    terminal_taken_over,     kind::provider_state_conflict,       terminal_delivery},
    row{"terminal_policy_close",  terminal_policy_close,   kind::provider_request_rejected,     terminal_delivery},
    row{"terminal_held",          terminal_held,           kind::provider_state_conflict,       not_sent},
    row{"terminal_gone",          terminal_gone,           kind::session_lost,                  not_sent},
    row{"provider_not_ready",     provider_not_ready,      kind::provider_unavailable,          not_sent},
    row{"backend_unreachable",    backend_unreachable,     kind::transport_unreachable,         not_sent},
    row{"state_conflict",         state_conflict,          kind::provider_state_conflict,       not_sent},
    row{"request_rejected",       other_4xx,               kind::provider_request_rejected,     not_sent},
    row{"server_fault",           other_5xx,               kind::provider_unavailable,          possibly_delivered},
    row{"unreachable_at_connect", unreachable_at_connect,  kind::transport_unreachable,         not_sent},
    row{"local_resource",         local_resource,          kind::transport_local_resource,      not_sent_if_connecting},
    row{"malformed_reply",        malformed,               kind::protocol_violation,            possibly_delivered},
    row{"peer_dropped",           dropped,                 kind::transport_peer_drop,           after_connect},
    row{"timed_out",              timed_out_after_connect, kind::transport_timeout,             after_connect},
    row{"cancelled",              cancelled_by_caller,     kind::cancelled,                     by_phase},
};

// The table walked in order; a fold over constant indices lets the compiler call each
// predicate directly instead of through a pointer.
template <std::size_t... I>
const row* first_match(const evidence& e, std::index_sequence<I...>) noexcept {
    const row* found = nullptr;
    (void)((evidence_table[I].matches(e) && (found = &evidence_table[I], true)) || ...);
    return found;
}

const row* first_match(const evidence& e) noexcept {
    return first_match(e, std::make_index_sequence<evidence_table.size()>{});
}

std::string_view view(const std::optional<std::string>& s) noexcept { return s ? std::string_view(*s) : std::string_view{}; }

class category_impl final : public std::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "ngfail.opensandbox"; }
    [[nodiscard]] std::string message(int value) const override {
        switch (static_cast<errc>(value)) {
            case errc::stream_incomplete: return "the stream ended with neither error nor execution_complete";
            case errc::readiness_timeout: return "the sandbox did not become ready in time";
            case errc::malformed_response: return "the reply is not what the API allows";
            case errc::cancelled: return "the caller cancelled the operation";
            case errc::connection_closed: return "the peer closed the connection mid-exchange";
            case errc::host_not_found: return "the server's name did not resolve";
            case errc::tls_failed: return "the TLS handshake or session failed";
        }
        return "unknown ngfail.opensandbox error " + std::to_string(value);
    }
};

constinit const category_impl category_instance{};

// ---- the facts an event's details carry --------------------------------------------------

// Where a member of `sandbox_details` comes from: a member of the observation, or of the
// classification (what the evidence established).
template <class From, class Member>
struct detail_source {
    Member From::*from;
    Member sandbox_details::*to;
};
template <class From, class Member>
detail_source(Member From::*, Member sandbox_details::*) -> detail_source<From, Member>;

// The one member no observation holds: the row that decided.
struct deciding_row {
    std::optional<std::string> sandbox_details::*to;
};

// Every member of `sandbox_details`, once: the only place an observation's facts are copied
// into an event.
constexpr std::tuple detail_sources{
    detail_source{&observation::operation, &sandbox_details::operation},
    detail_source{&observation::provider, &sandbox_details::provider},
    detail_source{&observation::sandbox_id, &sandbox_details::sandbox_id},
    detail_source{&observation::execution_id, &sandbox_details::execution_id},
    detail_source{&observation::provider_status_reason, &sandbox_details::provider_status_reason},
    detail_source{&observation::provider_code, &sandbox_details::provider_code},
    detail_source{&observation::exit_code, &sandbox_details::exit_code},
    detail_source{&observation::signal, &sandbox_details::signal},
    detail_source{&classification::delivery, &sandbox_details::delivery},
    detail_source{&observation::retry_after, &sandbox_details::retry_after},
    deciding_row{&sandbox_details::evidence_row},
    detail_source{&observation::diagnostics, &sandbox_details::diagnostics},
};

// Each row fills a member of its own: as many rows as members, and no member twice.
template <class A, class B>
constexpr bool same_target(const A& a, const B& b) noexcept {
    if constexpr (std::is_same_v<decltype(a.to), decltype(b.to)>) {
        return a.to == b.to;
    } else {
        return false;
    }
}
constexpr bool targets_distinct() noexcept {
    return std::apply(
        [](const auto&... row) {
            std::size_t repeats = 0;
            const auto count = [&](const auto& a) { ((repeats += same_target(a, row) ? 1 : 0), ...); };
            (count(row), ...);
            return repeats == sizeof...(row);  // each row matches itself only
        },
        detail_sources);
}
static_assert(ngfail::detail::member_count<sandbox_details>() == std::tuple_size_v<decltype(detail_sources)>,
              "a sandbox_details member has no row in detail_sources");
static_assert(targets_distinct(), "two rows of detail_sources fill the same sandbox_details member");

template <class From, class Member>
const From& source_of(const detail_source<From, Member>&, const observation& seen, const classification& c) noexcept {
    if constexpr (std::is_same_v<From, observation>) {
        return seen;
    } else {
        return c;
    }
}

event_info info_for(const observation& seen, const classification& c) {
    return {.kind = c.kind,
            .reason = seen.reason.value_or(std::string()),
            .http_status = seen.http_status,
            .cause = seen.cause};
}

template <class From, class Member>
void fill(sandbox_details& details, const detail_source<From, Member>& row, const observation& seen,
          const classification& c) {
    details.*row.to = source_of(row, seen, c).*row.from;
}
void fill(sandbox_details& details, const deciding_row& row, const observation& seen, const classification&) {
    details.*row.to = std::string(matching_rule(seen));
}

sandbox_details details_for(const observation& seen, const classification& c) {
    sandbox_details details;
    std::apply([&](const auto&... row) { (fill(details, row, seen, c), ...); }, detail_sources);
    return details;
}

evidence evidence_of(const observation& seen) noexcept {
    const std::string_view state = view(seen.sandbox_state);
    const operation_traits* op = traits_of(seen.operation);
    evidence e{.exec = op && op->command_evidence,
               .create = op && op->creates_sandbox,
               .status = seen.http_status,
               .code = seen.provider_code ? code_name_of(*seen.provider_code) : code_name::other,
               .reason = seen.provider_status_reason ? status_reason_of(*seen.provider_status_reason)
                                                     : status_reason::other,
               .terminal_state = state == "Terminated" || state == "Failed",
               .exit_code = seen.exit_code,
               .signalled = seen.signal && !seen.signal->empty(),
               .execution_known = seen.execution_id.has_value(),
               .sandbox_known = seen.sandbox_id.has_value(),
               .net = network_of(seen.transport_error),
               .at = seen.transport_phase,
               .terminal = op && op->terminal_evidence,
               .close_code = seen.close_code,
               .input_written = seen.input_written};
    // What the observation leaves out, the cause may carry structurally.
    if (seen.cause && (!seen.http_status || !seen.provider_code || !seen.transport_error)) {
        const cause_facts from_cause = facts_of(seen.cause);
        if (!e.status) e.status = from_cause.status;
        if (!seen.provider_code && from_cause.code) e.code = code_name_of(*from_cause.code);
        if (!seen.transport_error) e.net = network_of(from_cause.transport);
    }
    return e;
}

}  // namespace

const std::error_category& error_category() noexcept { return category_instance; }

std::error_code portable_transport_error(const std::error_code& ec) noexcept {
    if (!ec || ec.category() == error_category()) return ec;
    // An errno code is evidence as it is but for the table's ECANCELED rows: the walk by
    // category name below took a fifth of classify's time for every errno code.
    const bool errno_code = ec.category() == std::generic_category() || ec.category() == std::system_category();
    if (errno_code && ec.value() != ECANCELED) return ec;
    const std::string_view category = ec.category().name();
    for (const foreign_code& f : foreign_codes) {  // the first row of the category that takes the value
        if (f.category != category || (f.value != any_value && f.value != ec.value())) continue;
        return f.errno_value ? std::error_code(f.errno_value, std::generic_category()) : make_error_code(f.own);
    }
    return ec;
}

classification classify(const observation& seen) noexcept {
    const evidence e = evidence_of(seen);
    const row* match = first_match(e);
    const std::optional<delivery> established = match ? match->delivery(e) : std::nullopt;
    if (seen.failure_kind) {
        return {kind_from_name(validate_kind_name(*seen.failure_kind)), established};
    }
    if (!match) return {make_error_code(kind::undetermined), std::nullopt};
    return {make_error_code(match->result), established};
}

std::string_view matching_rule(const observation& seen) noexcept {
    if (seen.failure_kind) return "explicit_kind";
    const row* match = first_match(evidence_of(seen));
    return match ? match->name : "nothing_matched";
}

sandbox_failure opensandbox_failure(const observation& seen) {
    const classification c = classify(seen);
    return sandbox_failure(info_for(seen, c), details_for(seen, c));
}

failure to_failure(const observation& seen) noexcept {
    const classification c = classify(seen);
    try {
        return make_sandbox_failure(info_for(seen, c), details_for(seen, c));
    } catch (...) {  // copying the facts ran out of memory
        return failure(c.kind);
    }
}

api_error::api_error(int status, std::optional<std::string> code, const std::string& message,
                     std::optional<std::string> request_id, std::optional<std::chrono::seconds> retry_after)
    : std::runtime_error("HTTP " + std::to_string(status) + (code ? " " + *code : std::string()) + ": " + message),
      status_(status),
      code_(std::move(code)),
      request_id_(std::move(request_id)),
      retry_after_(retry_after) {}

}  // namespace ngfail::opensandbox
