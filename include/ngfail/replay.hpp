// <ngfail/replay.hpp> — when a failed request may be sent again (target ngfail::core).
//
// Every operation declares how it may be replayed, and a failure's delivery says how far
// the request got; together they decide whether sending it again is safe:
//
//   if (ngfail::replay_allowed(ngfail::replay_policy::before_delivery, ngfail::delivery_of(f))) …
//
// Whether a replay is *worth* it (a rejected request fails again) is a policy's business,
// not this one's.
#pragma once

#include <ngfail/kind.hpp>

#include <array>
#include <iosfwd>
#include <optional>
#include <string_view>

namespace ngfail {

enum class replay_policy : int {
    before_delivery,  // repeat only what was `not_sent` (a POST that starts something)
    idempotent,       // repeat whatever the delivery (GET, status, logs, ping)
    deduplicated,     // repeat: the request carries an id its receiver deduplicates on
    never,            // never repeat
};

namespace detail {
inline constexpr std::array<std::string_view, 4> replay_policy_names{"before_delivery", "idempotent", "deduplicated",
                                                                      "never"};
static_assert(replay_policy_names.size() == static_cast<std::size_t>(replay_policy::never) + 1,
              "a name for every replay policy");
}  // namespace detail

[[nodiscard]] constexpr std::string_view name(replay_policy p) noexcept {
    return detail::enum_name(detail::replay_policy_names, p);
}
[[nodiscard]] constexpr std::optional<replay_policy> parse_replay_policy(std::string_view text) noexcept {
    return detail::parse_enum<replay_policy>(detail::replay_policy_names, text);
}
std::ostream& operator<<(std::ostream& out, replay_policy p);

// True when a request under `policy` may be sent again after a failure whose delivery is
// `established` (absent: nothing established, which only `idempotent` and `deduplicated`
// requests may repeat).
[[nodiscard]] constexpr bool replay_allowed(replay_policy policy, std::optional<delivery> established) noexcept {
    switch (policy) {
        case replay_policy::before_delivery: return established == delivery::not_sent;
        case replay_policy::idempotent:
        case replay_policy::deduplicated: return true;
        case replay_policy::never: return false;
    }
    return false;
}

}  // namespace ngfail
