// <ngfail/result.hpp> — the same failures for code that must not throw.
//
// `result<T>` is a Boost.Outcome `basic_result<T, failure>`: a value or a failure, 16 bytes
// for `result<int>`. Failures move through `noexcept` code as cheaply as error codes, and
// cross back into throwing code with nothing lost:
//
//   ngfail::result<int> parse(std::string_view s) noexcept {
//       if (s.empty()) return ngfail::kind::protocol_violation;   // kind only: no allocation
//       …
//   }
//   ngfail::result<int> twice(std::string_view s) noexcept {
//       BOOST_OUTCOME_TRY(auto n, parse(s));                      // propagate on failure
//       return 2 * n;
//   }
//
//   int n = twice(s).value();                  // throws the full event: its class, id, cause
//   auto r = ngfail::capture([&] { return sdk.call(); });     // exceptions → result, noexcept
//
// `raise(failure)` and `failure_of(event)` (in <ngfail/event.hpp>) convert between the two
// styles without changing an id.
#pragma once

#include <ngfail/event.hpp>

#include <boost/outcome/basic_result.hpp>
#include <boost/outcome/bad_access.hpp>
#include <boost/outcome/policy/base.hpp>
#include <boost/outcome/success_failure.hpp>
#include <boost/outcome/try.hpp>

#include <functional>
#include <type_traits>
#include <utility>

namespace ngfail {
namespace detail {

// `.value()` on a failed result raises the failure as its event, never a bare
// `bad_result_access`.
struct raise_failure_policy : boost::outcome_v2::policy::base {
    template <class Impl>
    static constexpr void wide_value_check(Impl&& self) {
        if (!base::_has_value(self)) {
            if (base::_has_error(self)) ngfail::raise(base::_error(self));
            throw boost::outcome_v2::bad_result_access("no value");
        }
    }
    template <class Impl>
    static constexpr void wide_error_check(Impl&& self) {
        if (!base::_has_error(self)) throw boost::outcome_v2::bad_result_access("no error");
    }
    template <class Impl>
    static constexpr void wide_exception_check(Impl&& self) {
        if (!base::_has_exception(self)) throw boost::outcome_v2::bad_result_access("no exception");
    }
};

// The failure for the exception being handled: an ngfail event keeps its identity and
// nested cause; anything else becomes a `foreign_failure` of `foreign_kind` caused by it.
// Call only inside a `catch` block.
[[nodiscard]] failure current_failure(const std::error_code& foreign_kind) noexcept;

}  // namespace detail

template <class T>
using result = boost::outcome_v2::basic_result<T, failure, detail::raise_failure_policy>;

template <class T>
struct is_result : std::false_type {};
template <class T>
struct is_result<result<T>> : std::true_type {};

namespace detail {
template <class R>
struct captured {
    using type = result<R>;
};
template <class T>
struct captured<result<T>> {
    using type = result<T>;
};
}  // namespace detail

// Runs `f` and returns what it returns as a result (a `result` it returns is passed on as
// it is); an exception it throws becomes the failure, as `detail::current_failure` says.
// `foreign_kind` (default `undetermined`) is the kind given to non-ngfail exceptions.
template <class F, class R = std::invoke_result_t<F&>>
[[nodiscard]] auto capture(F&& f, std::error_code foreign_kind = kind::undetermined) noexcept ->
    typename detail::captured<R>::type {
    static_assert(!std::is_reference_v<R>, "capture returns values: return by value from f");
    try {
        if constexpr (is_result<R>::value) {
            return std::invoke(f);
        } else if constexpr (std::is_void_v<R>) {
            std::invoke(f);
            return boost::outcome_v2::success();
        } else {
            return result<R>(boost::outcome_v2::in_place_type<R>, std::invoke(f));
        }
    } catch (...) {
        return detail::current_failure(foreign_kind);
    }
}

}  // namespace ngfail
