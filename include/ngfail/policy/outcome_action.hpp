// <ngfail/policy/outcome_action.hpp> — what a boundary may do about one failure (target ngfail::policy).
//
// A kind says what went wrong; an action says what this boundary does about this
// occurrence. There are four, as in NeMo Gym's `OutcomeAction`:
//
//   retry          another attempt, within the request's retry allowance
//   fail           stop; the failure stands (and, when the rule says `terminal`, no later
//                  attempt of the rollout repeats it either)
//   count_as_zero  a scored zero that no infrastructure retry replaces: the evaluated
//                  model's own failure
//   verify         re-grade the saved answer without running the model again
//
// A boundary supports a subset (`action_set`); what it cannot do falls back to `fail`.
#pragma once

#include <ngfail/kind.hpp>

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>

namespace ngfail::policy {

enum class outcome_action : std::uint8_t { retry, fail, count_as_zero, verify };

namespace detail {
inline constexpr std::array<std::string_view, 4> outcome_action_names{"retry", "fail", "count_as_zero", "verify"};
static_assert(outcome_action_names.size() == static_cast<std::size_t>(outcome_action::verify) + 1,
              "a name for every action");
}  // namespace detail

[[nodiscard]] constexpr std::string_view name(outcome_action a) noexcept {
    return ngfail::detail::enum_name(detail::outcome_action_names, a);
}
[[nodiscard]] constexpr std::optional<outcome_action> parse_outcome_action(std::string_view text) noexcept {
    return ngfail::detail::parse_enum<outcome_action>(detail::outcome_action_names, text);
}
std::ostream& operator<<(std::ostream& out, outcome_action a);

// The actions a boundary can carry out, as a small bit set.
class action_set {
public:
    constexpr action_set() noexcept = default;
    constexpr action_set(std::initializer_list<outcome_action> actions) noexcept {
        for (outcome_action a : actions) insert(a);
    }
    [[nodiscard]] static constexpr action_set all() noexcept {
        return {outcome_action::retry, outcome_action::fail, outcome_action::count_as_zero, outcome_action::verify};
    }

    constexpr void insert(outcome_action a) noexcept { bits_ |= bit(a); }
    [[nodiscard]] constexpr bool contains(outcome_action a) const noexcept { return (bits_ & bit(a)) != 0; }
    [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
    [[nodiscard]] constexpr action_set operator&(action_set other) const noexcept {
        action_set both;
        both.bits_ = static_cast<std::uint8_t>(bits_ & other.bits_);
        return both;
    }
    friend constexpr bool operator==(action_set, action_set) noexcept = default;

private:
    static constexpr std::uint8_t bit(outcome_action a) noexcept {
        return static_cast<std::uint8_t>(1U << static_cast<unsigned>(a));
    }
    std::uint8_t bits_ = 0;
};

}  // namespace ngfail::policy
