// The interface every kind category implements: core, extension and interned unknown
// kinds alike. It lets `kind_name` and `kind_from_name` treat all three the same way.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <optional>
#include <string_view>
#include <system_error>

namespace ngfail::detail {

class named_kind_category : public std::error_category {
public:
    // The full wire name of `value` ("swe:patch_failed"); empty when `value` is not one of
    // this category's kinds. Valid for the life of the process.
    [[nodiscard]] virtual std::string_view kind_name(int value) const noexcept = 0;

    // The value of a name local to this category (for an extension, the part after ':').
    [[nodiscard]] virtual std::optional<int> kind_value(std::string_view local_name) const noexcept = 0;

protected:
    ~named_kind_category() = default;
};

// Makes `name_space:<kind>` names resolve to `category` in `kind_from_name`. The first
// category registered for a namespace keeps it; a later one is reported as a warning.
void register_kind_namespace(std::string_view name_space, const named_kind_category& category) noexcept;

}  // namespace ngfail::detail

namespace ngfail::detail {

// `[a-z][a-z0-9_]*`: the shape of a kind name and of an extension namespace.
[[nodiscard]] constexpr bool is_kind_word(std::string_view text) noexcept {
    if (text.empty() || text.front() < 'a' || text.front() > 'z') return false;
    for (char c : text) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) return false;
    }
    return true;
}

}  // namespace ngfail::detail
