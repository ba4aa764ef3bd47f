// The wire names of ngfail's small enums, indexed by enumerator value, and the two lookups
// over them. Private to <ngfail/kind.hpp>, whose `name` and `parse_*` functions are the
// public way in; here only because those are `constexpr`.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace ngfail::detail {
// Index = enumerator value; an empty entry is a reserved value.
inline constexpr std::array<std::string_view, 9> domain_names{
    "", "transport", "agent", "environment", "verifier", "provider", "session", "lifecycle",
    "persistence"};
inline constexpr std::array<std::string_view, 5> stage_names{
    "admission", "seed", "agent", "verification", "cleanup"};
inline constexpr std::array<std::string_view, 6> boundary_names{
    "model", "harness", "agent", "resources_server", "environment", "collection"};
inline constexpr std::array<std::string_view, 3> delivery_names{
    "not_sent", "possibly_delivered", "delivered"};

template <class Enum, std::size_t N>
constexpr std::string_view enum_name(const std::array<std::string_view, N>& names,
                                     Enum e) noexcept {
    const auto i = static_cast<std::size_t>(e);
    return i < N ? names[i] : std::string_view{};
}

template <class Enum, std::size_t N>
constexpr std::optional<Enum> parse_enum(const std::array<std::string_view, N>& names,
                                         std::string_view text) noexcept {
    for (std::size_t i = 0; i < N; ++i) {
        if (!names[i].empty() && names[i] == text) return static_cast<Enum>(i);
    }
    return std::nullopt;
}
}  // namespace ngfail::detail
