// <ngfail/opensandbox/borrowed.hpp> — values the client's faces borrow instead of owning.
//
// `co_await sandboxes.async_exec(id, {.command = "make", .envs = env})` makes its argument
// inside the `co_await` expression, and g++ 12 destroys every owning member of an aggregate
// made there twice (a `std::string`, a `std::map`, a lambda's captured copies). Every face
// (throwing, `try_*`, `async_*`) therefore takes requests whose members own nothing: string views,
// and the three types below, each trivially destructible. The operation copies what they
// refer to when it is made, so the awaitable may still be stored and awaited later.
//
//   callback_ref    a callable taking the output text: a lambda or a std::function
//   strings_ref     a list of strings: a std::vector<std::string>, or static string views
//   string_map_ref  string pairs: a std::map<std::string, std::string>, or static pairs
//
// Each refers to its source; the source must live until the call returns (the asynchronous
// face: until it returns its awaitable), which a temporary in the same expression does. A
// braced list inside a request (`.envs = {{"A", "1"}}`) works in a blocking call; g++ 12
// refuses one inside a `co_await` ("array used as initializer"): name it first there.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ngfail::opensandbox {

using output_callback = std::function<void(std::string_view)>;

class callback_ref {
public:
    constexpr callback_ref() noexcept = default;

    // Any copyable callable taking the text; a lambda capturing by reference is the natural
    // one inside a `co_await` (g++ 12 also destroys a lambda's captured copies twice there).
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, callback_ref> && std::is_copy_constructible_v<F> &&
                 std::is_invocable_v<F&, std::string_view>)
    callback_ref(const F& f) noexcept  // NOLINT(google-explicit-constructor): braced arguments
        : target_(std::addressof(f)), copy_(&copy_of<F>) {}

    // An owning copy of the callable (empty for none, or for an empty std::function).
    [[nodiscard]] output_callback copy() const { return copy_ ? copy_(target_) : output_callback(); }

private:
    template <class F>
    static output_callback copy_of(const void* target) {
        return output_callback(*static_cast<const F*>(target));
    }

    const void* target_ = nullptr;
    output_callback (*copy_)(const void*) = nullptr;
};

class strings_ref {
public:
    constexpr strings_ref() noexcept = default;
    constexpr strings_ref(std::span<const std::string_view> items) noexcept : items_(items) {}  // NOLINT
    // A braced list in a call's argument: `{.entrypoint = {"python3", "-c", code}}`.
    constexpr strings_ref(std::initializer_list<std::string_view> items) noexcept  // NOLINT
        : items_(items.begin(), items.size()) {}
    strings_ref(const std::vector<std::string>& items) noexcept : vector_(&items) {}           // NOLINT

    [[nodiscard]] std::vector<std::string> copy() const {
        if (vector_) return *vector_;
        return {items_.begin(), items_.end()};
    }

private:
    std::span<const std::string_view> items_{};
    const std::vector<std::string>* vector_ = nullptr;
};

using string_pair = std::pair<std::string_view, std::string_view>;

class string_map_ref {
public:
    constexpr string_map_ref() noexcept = default;
    constexpr string_map_ref(std::span<const string_pair> pairs) noexcept : pairs_(pairs) {}  // NOLINT
    // A braced list in a call's argument: `{.envs = {{"A", "1"}}}` (of equal keys the first is
    // kept, as a std::map made from the list keeps it).
    constexpr string_map_ref(std::initializer_list<string_pair> pairs) noexcept  // NOLINT
        : pairs_(pairs.begin(), pairs.size()) {}
    string_map_ref(const std::map<std::string, std::string>& map) noexcept : map_(&map) {}    // NOLINT

    [[nodiscard]] std::map<std::string, std::string> copy() const {
        if (map_) return *map_;
        return {pairs_.begin(), pairs_.end()};
    }

private:
    std::span<const string_pair> pairs_{};
    const std::map<std::string, std::string>* map_ = nullptr;
};

static_assert(std::is_trivially_destructible_v<callback_ref> && std::is_trivially_destructible_v<strings_ref> &&
              std::is_trivially_destructible_v<string_map_ref>);

}  // namespace ngfail::opensandbox
