// How many members an aggregate has: the compile-time check that two structs (or a struct
// and its table of rows) name the same fields.
#pragma once

#include <cstddef>

namespace ngfail_test {

// Converts to anything; only named in unevaluated operands, so never defined.
struct any_member {
    template <class T>
    operator T() const;  // NOLINT(google-explicit-constructor)
};

// How many `any_member`s `T` can be brace-initialised from: its members' count.
template <class T, class... Members>
constexpr std::size_t member_count() {
    if constexpr (requires { T{Members{}..., any_member{}}; }) {
        return member_count<T, Members..., any_member>();
    } else {
        return sizeof...(Members);
    }
}

}  // namespace ngfail_test
