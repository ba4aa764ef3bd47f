// <ngfail/opensandbox/completion.hpp> — how the asynchronous faces complete (target
// ngfail::opensandbox_client): an operation, an `awaitable<result<T>>`, completed through any
// Asio completion token. The client's and a terminal session's `async_*` calls use it; so may
// a wrapper whose own operations run on an executor:
//
//   auto f = ngfail::opensandbox::detail::complete_on(executor, make_op(), asio::use_future);
#pragma once

#include <ngfail/result.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace ngfail::opensandbox::detail {

// Awaits the operation, then calls the handler on its own executor with the result.
template <class T, class Handler>
boost::asio::awaitable<void> finish(boost::asio::awaitable<result<T>> operation, Handler handler,
                                    boost::asio::any_io_executor fallback) {
    std::optional<result<T>> done;
    try {
        done.emplace(co_await std::move(operation));
    } catch (...) {  // the operations catch everything but a failure to allocate
        done.emplace(failure(kind::transport_local_resource));
    }
    auto on = boost::asio::get_associated_executor(handler, fallback);
    boost::asio::dispatch(on, [handler = std::move(handler), r = std::move(*done)]() mutable {
        std::move(handler)(std::move(r));
    });
}

// `client::complete` (below), for anything whose operations run on `executor`.
template <class T, class CompletionToken>
auto complete_on(boost::asio::any_io_executor executor, boost::asio::awaitable<result<T>> operation,
                 CompletionToken&& token) {
    if constexpr (std::is_same_v<std::decay_t<CompletionToken>, boost::asio::use_awaitable_t<>>) {
        return operation;  // awaited where it is awaited, as a coroutine's own call is
    } else {
        return boost::asio::async_initiate<CompletionToken, void(result<T>)>(
            [executor](auto handler, boost::asio::awaitable<result<T>> op) {
                auto slot = boost::asio::get_associated_cancellation_slot(handler);
                boost::asio::co_spawn(executor, finish(std::move(op), std::move(handler), executor),
                                      boost::asio::bind_cancellation_slot(slot, boost::asio::detached));
            },
            token, std::move(operation));
    }
}

// Awaits the operation and keeps its result in `out`: a blocking face's operation, run to its
// end on an I/O context that the blocking thread runs.
template <class T>
boost::asio::awaitable<void> into(boost::asio::awaitable<result<T>> operation, std::optional<result<T>>& out) {
    out.emplace(co_await std::move(operation));
}

// A blocking face: the operation `make` makes, run to its end by `drive` (which runs an
// `awaitable<void>` and returns when it is done). Nothing escapes: an operation that cannot
// be made or started (no memory) is `transport_local_resource`.
template <class Make, class Drive, class T = typename std::invoke_result_t<Make&>::value_type::value_type>
result<T> run_made(Make& make, Drive&& drive) noexcept {
    std::optional<result<T>> out;
    try {
        drive(into(make(), out));
    } catch (...) {
    }
    if (out) return std::move(*out);
    return failure(kind::transport_local_resource);
}

}  // namespace ngfail::opensandbox::detail
