// <ngfail/kind.hpp> — the failure vocabulary.
//
// A *kind* names what went wrong, and nothing else: whether to retry, to replay, to mask
// a sample or what to tell a person are properties of one occurrence, never of its kind.
// Kinds are low-cardinality names, safe as metric labels.
//
// A kind is a `std::error_code` of `kind_category()`, and its domain is an error condition:
//
//   std::error_code ec = ngfail::kind::provider_oom_killed;
//   ec == ngfail::domain::provider;                    // true
//   ngfail::kind_name(ec);                              // "provider_oom_killed"
//   boost::system::error_code bec = ec;                 // Boost.System interop, equality kept
//
// Kinds travel as wire names. Every wire name maps to a code and back, exactly:
// core names (below), extension kinds `<namespace>:<kind>` that a server defines from its
// own enum (see <ngfail/kind_extension.hpp>), and unknown names from newer peers, which are
// interned and kept verbatim rather than dropped:
//
//   auto ec = ngfail::kind_from_name("acme:thing");   // kept, compares equal to itself
//   ngfail::kind_name(ec);                             // "acme:thing"
//
// Stages, boundaries and delivery are plain enums with `name()` / `parse_*()`.
#pragma once

#include <ngfail/detail/enum_names.hpp>
#include <ngfail/detail/kind_category.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace ngfail {

// The core kinds. Value 0 is reserved: it is "no failure", as in every error category.
enum class kind : int {
    // transport — reaching another process at all
    transport_unreachable = 1,  // no connection could be made; nothing was sent
    transport_peer_drop,        // the peer closed or reset an established connection
    transport_timeout,          // an established exchange ran out of time
    transport_local_resource,   // this process ran out of sockets, memory or ports

    // agent — the agent run and the harness behind it
    agent_run_error,            // the agent answered and broke
    agent_request_failed,       // something in front of the agent failed; the run never ran
    agent_timeout,              // the agent run exceeded its time budget
    agent_command_not_allowed,  // the agent asked for a command the harness forbids
    agent_no_generation,        // the agent produced no generation to score

    // environment — one episode attempt
    environment_server_failed,  // the environment server failed the episode attempt
    protocol_violation,         // a peer sent something the protocol does not allow

    // verifier — verifiers and judges
    judge_failed,               // the judge could not be run or did not answer
    judge_unparseable,          // the judge answered, but its verdict could not be read
    verifier_error,             // the verifier itself failed

    // provider — sandboxes, browsers, containers
    provider_unavailable,           // the provider could not serve the request now
    provider_quota_exhausted,       // the provider refused for quota or capacity
    provider_oom_killed,            // the provider reported an out-of-memory kill
    provider_credentials_rejected,  // the provider refused the caller's credentials
    provider_request_rejected,      // the request is invalid or not permitted; resending won't help
    provider_state_conflict,        // the sandbox is in a state that forbids the operation
    provider_sandbox_lost,          // the sandbox no longer exists or has terminally failed
    provider_start_failed,          // a sandbox could not be brought up (readiness, image pull)
    provider_command_terminated,    // a command in the sandbox was killed by a signal

    // session — resources sessions
    session_lost,               // the resources session disappeared while in use
    session_expired,            // the resources session outlived its lease
    session_release_failed,     // the resources session could not be released

    // lifecycle — cancellation and process lifecycle
    cancelled,                  // the work was cancelled on purpose
    kill_shaped,                // the process died from outside: SIGTERM, a dead actor, a host OOM
    shutdown,                   // the process is shutting down

    // persistence — persistence and cohorts
    persistence_failed,         // a result could not be stored
    cohort_incomplete,          // a cohort ended with members missing

    // no domain
    undetermined,               // the evidence established no kind: an explicit, honest answer
};

// The layer that observed a failure. A domain is an error condition that every kind of that
// domain compares equal to; `undetermined` and non-core kinds belong to none.
enum class domain : int {
    transport = 1,
    agent,
    environment,
    verifier,
    provider,
    session,
    lifecycle,
    persistence,
};

// Where an episode's execution was when it failed.
enum class stage : int { admission, seed, agent, verification, cleanup };

// The place that observed the failure.
enum class boundary : int { model, harness, agent, resources_server, environment, collection };

// What is established about whether a failed request reached its executor. Only
// `not_sent` makes a replay safe, and only structured evidence establishes it.
enum class delivery : int { not_sent, possibly_delivered, delivered };

// Each name table has a name for every enumerator: one added without its name does not compile.
static_assert(detail::domain_names.size() == static_cast<std::size_t>(domain::persistence) + 1);
static_assert(detail::stage_names.size() == static_cast<std::size_t>(stage::cleanup) + 1);
static_assert(detail::boundary_names.size() == static_cast<std::size_t>(boundary::collection) + 1);
static_assert(detail::delivery_names.size() == static_cast<std::size_t>(delivery::delivered) + 1);

// ---- categories and ADL hooks ------------------------------------------------------

// The category of core kinds; `name()` is "ngfail.kind", `message()` a short description.
[[nodiscard]] const std::error_category& kind_category() noexcept;

// The category of domains as error conditions; `name()` is "ngfail.domain".
[[nodiscard]] const std::error_category& domain_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(kind k) noexcept {
    return {static_cast<int>(k), kind_category()};
}

[[nodiscard]] inline std::error_condition make_error_condition(domain d) noexcept {
    return {static_cast<int>(d), domain_category()};
}

// ---- the core vocabulary -------------------------------------------------------------

// Every core kind, in enumerator order.
[[nodiscard]] std::span<const kind> all_kinds() noexcept;

// The wire name ("provider_oom_killed"); empty for a value that is not a core kind.
[[nodiscard]] std::string_view name(kind k) noexcept;

// One short human sentence; what `kind_category().message()` returns.
[[nodiscard]] std::string_view description(kind k) noexcept;

// The domain of a core kind; none for `undetermined`.
[[nodiscard]] std::optional<domain> domain_of(kind k) noexcept;

[[nodiscard]] std::optional<kind> parse_kind(std::string_view name) noexcept;

// ---- stages, boundaries, delivery, domains -----------------------------------------------


[[nodiscard]] constexpr std::string_view name(domain d) noexcept {
    return detail::enum_name(detail::domain_names, d);
}
[[nodiscard]] constexpr std::string_view name(stage s) noexcept {
    return detail::enum_name(detail::stage_names, s);
}
[[nodiscard]] constexpr std::string_view name(boundary b) noexcept {
    return detail::enum_name(detail::boundary_names, b);
}
[[nodiscard]] constexpr std::string_view name(delivery d) noexcept {
    return detail::enum_name(detail::delivery_names, d);
}

// Each writes its wire name: `std::cout << ngfail::delivery::not_sent` prints "not_sent".
std::ostream& operator<<(std::ostream& out, kind k);
std::ostream& operator<<(std::ostream& out, domain d);
std::ostream& operator<<(std::ostream& out, stage s);
std::ostream& operator<<(std::ostream& out, boundary b);
std::ostream& operator<<(std::ostream& out, delivery d);

[[nodiscard]] constexpr std::optional<domain> parse_domain(std::string_view text) noexcept {
    return detail::parse_enum<domain>(detail::domain_names, text);
}
[[nodiscard]] constexpr std::optional<stage> parse_stage(std::string_view text) noexcept {
    return detail::parse_enum<stage>(detail::stage_names, text);
}
[[nodiscard]] constexpr std::optional<boundary> parse_boundary(std::string_view text) noexcept {
    return detail::parse_enum<boundary>(detail::boundary_names, text);
}
[[nodiscard]] constexpr std::optional<delivery> parse_delivery(std::string_view text) noexcept {
    return detail::parse_enum<delivery>(detail::delivery_names, text);
}

// ---- any kind code: core, extension or interned ------------------------------------------

// True for a non-zero code of a kind category: core, extension or interned unknown.
[[nodiscard]] bool is_kind(const std::error_code& ec) noexcept;

// The wire name of any kind code; empty when `ec` is not a kind. The view stays valid for
// the life of the process.
[[nodiscard]] std::string_view kind_name(const std::error_code& ec) noexcept;

// The code for any wire name: a core kind, a registered extension kind, or else the name
// interned verbatim (thread-safe, process-wide). `kind_name(kind_from_name(s)) == s`.
//
// Interning is bounded (see docs/decisions.md): past 16,384 distinct names or 1 MiB of
// them, and if memory runs out, further unknown names share one overflow code named
// "ngfail:unknown_kind_overflow". Reports keep the original string either way.
[[nodiscard]] std::error_code kind_from_name(std::string_view name) noexcept;

// The code for a core kind or a registered extension kind; none for any other name (nothing
// is interned). What a configuration file naming kinds checks them against.
[[nodiscard]] std::optional<std::error_code> registered_kind(std::string_view name) noexcept;

// ---- validation -------------------------------------------------------------------------

// Receives each warning ngfail emits, one line without a trailing newline.
using warning_sink = std::function<void(std::string_view)>;

// Replaces the warning sink (thread-safe) and returns the previous one. An empty sink
// restores the default, which writes one line to stderr.
warning_sink set_warning_sink(warning_sink sink);

// Returns `name` unchanged, always: dropping a failure would be worse than a visibly wrong
// label. A name that is neither core, a registered extension kind, nor well-formed
// `<namespace>:<kind>` is reported to the warning sink once per distinct name.
std::string_view validate_kind_name(std::string_view name) noexcept;

}  // namespace ngfail

template <>
struct std::is_error_code_enum<ngfail::kind> : std::true_type {};

template <>
struct std::is_error_condition_enum<ngfail::domain> : std::true_type {};
