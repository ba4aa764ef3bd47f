// How many members an aggregate has, at compile time: what a table keyed to a struct's
// members checks its row count against, so that a member added without its row fails to
// compile (the details schemas, the envelope, the classifier's facts). For ngfail's own code.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstddef>

namespace ngfail::detail {

// Converts to anything; only named in unevaluated operands, so never defined.
struct any_member {
    template <class T>
    operator T() const;  // NOLINT(google-explicit-constructor): converts implicitly, by design
};

// The number of `any_member`s `T` can be brace-initialised from: its member count.
template <class T, class... Members>
constexpr std::size_t member_count() {
    if constexpr (requires { T{Members{}..., any_member{}}; }) {
        return member_count<T, Members..., any_member>();
    } else {
        return sizeof...(Members);
    }
}

}  // namespace ngfail::detail
