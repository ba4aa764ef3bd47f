// <ngfail/kind_extension.hpp> — a server's own kinds, beside the core vocabulary.
//
// An extension is a user enum whose codes print and travel as `<namespace>:<kind>`. Value
// 0 is "no failure"; value i is the i-th name. Defining one takes two statements:
//
//   namespace swe {
//   enum class failure { patch_failed = 1, tests_failed };
//   }
//   NGFAIL_KIND_EXTENSION(swe, failure, "swe", "patch_failed", "tests_failed");
//
//   std::error_code ec = swe::failure::patch_failed;
//   ngfail::kind_name(ec);                         // "swe:patch_failed"
//   ngfail::kind_from_name("swe:patch_failed");    // == ec
//
// The namespace is registered at start-up, before `main`, so wire names resolve to the
// enum's codes from the first report read. A plugin loaded later calls
// `ngfail::register_kind_extension<E>()` before reading wire input.
#pragma once

#include <ngfail/detail/kind_category.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace ngfail {

// Specialise (or use NGFAIL_KIND_EXTENSION) with `static constexpr std::string_view
// name_space` and `names`, a range of `std::string_view` where names[i] is value i + 1.
template <class Enum>
struct kind_extension;

template <class Enum>
concept kind_extension_enum = std::is_enum_v<Enum> && requires {
    { kind_extension<Enum>::name_space } -> std::convertible_to<std::string_view>;
    { std::size(kind_extension<Enum>::names) } -> std::convertible_to<std::size_t>;
};

namespace detail {

template <class Traits>
constexpr bool valid_extension() noexcept {
    if (!is_kind_word(Traits::name_space)) return false;
    for (std::string_view n : Traits::names) {
        if (!is_kind_word(n)) return false;
    }
    return true;
}

template <kind_extension_enum Enum>
class extension_category final : public named_kind_category {
    using traits = kind_extension<Enum>;
    static_assert(valid_extension<traits>(),
                  "extension namespace and kind names must match [a-z][a-z0-9_]*");

public:
    extension_category() : label_("ngfail.kind." + std::string(traits::name_space)) {
        for (std::string_view n : traits::names) {
            full_names_.push_back(std::string(traits::name_space) + ':' + std::string(n));
        }
        register_kind_namespace(traits::name_space, *this);
    }

    [[nodiscard]] const char* name() const noexcept override { return label_.c_str(); }

    [[nodiscard]] std::string message(int value) const override {
        const auto n = kind_name(value);
        return n.empty() ? label_ + ' ' + std::to_string(value) : std::string(n);
    }

    [[nodiscard]] std::string_view kind_name(int value) const noexcept override {
        if (value < 1 || static_cast<std::size_t>(value) > full_names_.size()) return {};
        return full_names_[static_cast<std::size_t>(value) - 1];
    }

    [[nodiscard]] std::optional<int> kind_value(std::string_view local_name) const noexcept override {
        int value = 1;
        for (std::string_view n : traits::names) {
            if (n == local_name) return value;
            ++value;
        }
        return std::nullopt;
    }

private:
    std::string label_;
    std::vector<std::string> full_names_;
};

template <kind_extension_enum Enum>
const named_kind_category& extension_category_of() noexcept {
    static const extension_category<Enum> instance;
    return instance;
}

// Odr-used by make_extension_code, so its initialiser registers the namespace at start-up.
template <kind_extension_enum Enum>
inline const bool extension_registered = (extension_category_of<Enum>(), true);

}  // namespace detail

// The category of an extension enum; `name()` is "ngfail.kind.<namespace>".
template <kind_extension_enum Enum>
[[nodiscard]] const std::error_category& extension_category() noexcept {
    return detail::extension_category_of<Enum>();
}

// What the enum's ADL `make_error_code` returns.
template <kind_extension_enum Enum>
[[nodiscard]] std::error_code make_extension_code(Enum e) noexcept {
    (void)detail::extension_registered<Enum>;
    return {static_cast<int>(e), detail::extension_category_of<Enum>()};
}

// Registers the namespace now; only needed for an extension in a plugin loaded after start-up.
template <kind_extension_enum Enum>
void register_kind_extension() noexcept {
    (void)detail::extension_category_of<Enum>();
}

}  // namespace ngfail

// Declares `CxxNamespace::Enum` an extension under the wire namespace `NameSpace`, with
// kinds named by the remaining string literals (values 1, 2, ...): specialises the trait
// and `std::is_error_code_enum`, and defines the ADL `make_error_code`. Use at global scope.
#define NGFAIL_KIND_EXTENSION(CxxNamespace, Enum, NameSpace, ...)                     \
    template <>                                                                       \
    struct ngfail::kind_extension<CxxNamespace::Enum> {                               \
        static constexpr std::string_view name_space = NameSpace;                     \
        static constexpr std::string_view names[] = {__VA_ARGS__};                    \
    };                                                                                \
    template <>                                                                       \
    struct std::is_error_code_enum<CxxNamespace::Enum> : std::true_type {};           \
    namespace CxxNamespace {                                                          \
    [[nodiscard]] inline std::error_code make_error_code(Enum e) noexcept {           \
        return ::ngfail::make_extension_code(e);                                      \
    }                                                                                 \
    }                                                                                 \
    static_assert(true, "a macro use ends with a semicolon")
