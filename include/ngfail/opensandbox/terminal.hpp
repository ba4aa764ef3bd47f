// <ngfail/opensandbox/terminal.hpp> — an attached interactive terminal (execd's PTY session
// over its WebSocket), from `client::attach_terminal` (target ngfail::opensandbox_client).
//
//   auto id = sandboxes.create_terminal(box.id);
//   auto term = sandboxes.attach_terminal(box.id, id);
//   term.write("make test\r");                        // input, as typed
//   for (;;) {
//       auto event = term.read();                     // output as it arrives, or the exit
//       if (auto* out = std::get_if<ngfail::opensandbox::terminal_output>(&event)) std::cout << out->bytes;
//       else break;                                   // terminal_exit: the shell ended
//   }
//
// Detaching leaves the shell running; a later attach with `since = term.offset()` replays
// what was missed. Three faces, as the client's, each operation declared once
// (<ngfail/opensandbox/detail/faces.hpp>): throwing, `noexcept` `try_*`, and `async_*` with
// an Asio completion token (`use_awaitable` by default, a callback taking `result<T>`,
// `deferred`, `use_future`).
//
// A session's failures are classified as the client's are, operation `attach_terminal`:
// taken over by another client (WebSocket close 4001) is `provider_state_conflict`, a
// proxy's policy close (1008) `provider_request_rejected`, a dropped connection
// `transport_peer_drop`; their delivery is `possibly_delivered` once input was written on the
// session (it may or may not have reached the shell), else `delivered`. Once it has failed
// or the shell has exited, every later read gives the same answer again.
//
// Like a Beast WebSocket, a session has at most one read and one write (write, resize,
// signal) outstanding, from one thread or strand at a time; the client's own I/O thread
// (the blocking faces run there) is one. The session must not outlive its client.
// Destroying it closes its connection; the shell runs on.
#pragma once

#include <ngfail/opensandbox/completion.hpp>
#include <ngfail/opensandbox/detail/faces.hpp>
#include <ngfail/opensandbox/terminal_types.hpp>
#include <ngfail/result.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ngfail::opensandbox {

namespace detail {
struct terminal_link;  // the connection and what the session has seen; terminal.cpp
}  // namespace detail

class terminal_session {
public:
    terminal_session(terminal_session&&) noexcept;
    terminal_session& operator=(terminal_session&&) noexcept;
    ~terminal_session();

    [[nodiscard]] const std::string& terminal_id() const noexcept;
    // "pty" or "pipe", as the terminal said when it connected.
    [[nodiscard]] const std::string& mode() const noexcept;
    // The offset after the last output read: `attach_options::since` for a re-attach.
    [[nodiscard]] std::int64_t offset() const noexcept;

    template <class T>
    using awaitable = boost::asio::awaitable<result<T>>;
    using default_completion_token = boost::asio::use_awaitable_t<>;

    // Input as typed ("\r" is Enter on a terminal, "\x03" Ctrl-C), copied when the operation is made.
    NGFAIL_OPENSANDBOX_FACES(write, (std::string_view input), (input), void)
    // The terminal's size, in characters.
    NGFAIL_OPENSANDBOX_FACES(resize, (int cols, int rows), (cols, rows), void)
    // A signal to the shell's process group: SIGINT, SIGTERM, SIGKILL, SIGQUIT, SIGHUP.
    NGFAIL_OPENSANDBOX_FACES(signal, (std::string_view name), (name), void)
    // The next output (replayed output first, at its offset) or the shell's exit.
    NGFAIL_OPENSANDBOX_FACES(read, (), (), terminal_event)
    // Closes the session normally; the shell runs on.
    NGFAIL_OPENSANDBOX_FACES(detach, (), (), void)

    explicit terminal_session(std::shared_ptr<detail::terminal_link> link) noexcept;  // by the client

private:
    [[nodiscard]] boost::asio::any_io_executor executor() const noexcept;

    template <class T, class CompletionToken>
    auto complete(awaitable<T> operation, CompletionToken&& token) {
        return detail::complete_on(executor(), std::move(operation), std::forward<CompletionToken>(token));
    }
    // Runs the operation `make` makes on the client's executor and waits for it: a session's
    // operations run on its strand there anyway (from a blocking call's own context they
    // would cross threads twice). Must not be called from a thread running that executor.
    template <class Make, class T = typename std::invoke_result_t<Make&>::value_type::value_type>
    result<T> run_blocking(Make make) noexcept {
        return detail::run_made(make, [this](boost::asio::awaitable<void> work) { drive(std::move(work)); });
    }
    void drive(boost::asio::awaitable<void> work);

    std::shared_ptr<detail::terminal_link> link_;
};

}  // namespace ngfail::opensandbox
