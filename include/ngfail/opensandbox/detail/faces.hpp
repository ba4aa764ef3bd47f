// <ngfail/opensandbox/detail/faces.hpp> — an operation's three faces, from its one declaration.
//
// A class with operations (the client, an attached terminal) declares each one once, in its
// public section:
//
//   NGFAIL_OPENSANDBOX_FACES(name, (parameters, with their defaults), (their names), T)
//
// and gets, for that one parameter list:
//   T name(parameters)                          throws the failure (`result<T>::value()`)
//   result<T> try_name(parameters) noexcept     runs the operation on the calling thread
//   auto async_name(parameters, token = {})     any Asio completion token (use_awaitable first)
// and the private `awaitable<T> make_name(parameters)` that the class's source defines: the
// operation made (its arguments copied into it), not started. The class provides the two
// ways to run one: `run_blocking(make)` and `complete(operation, token)`.
//
// `T` comes last, so that a type with commas needs no parentheses.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <utility>

#define NGFAIL_DETAIL_UNPAREN(...) __VA_ARGS__
// The parameters and a comma after them, or nothing when there are none.
#define NGFAIL_DETAIL_THEN_COMMA(...) __VA_ARGS__ __VA_OPT__(, )

#define NGFAIL_OPENSANDBOX_FACES(name, params, args, ...)                                                  \
    __VA_ARGS__ name(NGFAIL_DETAIL_UNPAREN params) { return try_##name(NGFAIL_DETAIL_UNPAREN args).value(); } \
    ::ngfail::result<__VA_ARGS__> try_##name(NGFAIL_DETAIL_UNPAREN params) noexcept {                        \
        return run_blocking([&] { return make_##name(NGFAIL_DETAIL_UNPAREN args); });                       \
    }                                                                                                       \
    template <class CompletionToken = default_completion_token>                                             \
    auto async_##name(NGFAIL_DETAIL_THEN_COMMA params CompletionToken&& token = {}) {                        \
        return complete(make_##name(NGFAIL_DETAIL_UNPAREN args), std::forward<CompletionToken>(token));     \
    }                                                                                                       \
                                                                                                            \
private:                                                                                                    \
    awaitable<__VA_ARGS__> make_##name(NGFAIL_DETAIL_UNPAREN params);                                       \
                                                                                                            \
public:

// A client call: the faces above with the call's options (`call_options`) last.
#define NGFAIL_OPENSANDBOX_CALL(name, params, args, ...)                                                   \
    NGFAIL_OPENSANDBOX_FACES(name, (NGFAIL_DETAIL_UNPAREN params, const call_options& options = {}),        \
                             (NGFAIL_DETAIL_UNPAREN args, options), __VA_ARGS__)
