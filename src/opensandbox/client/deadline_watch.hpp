// The deadlines of the client's connections: one watcher for all of them, on a thread of
// its own, that ends an operation past its deadline by closing its socket (as Beast's
// `tcp_stream` timeout does).
//
// Why not Beast's per-stream timers: each read and each write arms one, and an armed timer
// that becomes the earliest of its I/O context costs a `timerfd_settime` system call; with
// one call at a time that is every time, two a request. Here a deadline later than the one
// the watcher already waits for changes nothing, so a call costs a lock and a list link, and
// the watcher wakes about once per timeout while calls go on (to see that they have not
// expired, and wait for the earliest left) and once after the last. The watcher does not sit
// on the connection's own context: a pending wait there would keep an application's
// `io_context::run()` from returning after its last call.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

namespace ngfail::opensandbox::detail {

class deadline_watch {
    using clock = std::chrono::steady_clock;

public:
    // One socket's entry, kept by its connection for every operation it bounds; the watcher
    // holds it too while a close it asked for is on its way to the socket's executor.
    class entry;

    // The process's watcher, its thread started on first use.
    [[nodiscard]] static deadline_watch& shared();

    // An entry for `socket`, whose executor runs what is done to it. The socket must stay
    // alive until `forget` is called (the connection's end).
    [[nodiscard]] std::shared_ptr<entry> track(boost::asio::ip::tcp::socket& socket);
    // The socket is going away: nothing is done to it from now on.
    void forget(entry& e) noexcept;

    // Bounds the next operation on `e`'s socket by `deadline`: when it passes before
    // `finish`, the socket is closed on its executor (a pending operation ends with
    // operation_aborted) and `finish` says so. A deadline already passed ends it at once.
    void start(const std::shared_ptr<entry>& e, clock::time_point deadline);
    // Ends the bound; true when the deadline passed first.
    [[nodiscard]] bool finish(entry& e) noexcept;

    // How often the watcher was woken to wait for an earlier deadline: for tests, which
    // check that later deadlines cost no wake-up.
    [[nodiscard]] std::size_t rearms() const;

    deadline_watch();
    ~deadline_watch();
    deadline_watch(const deadline_watch&) = delete;
    deadline_watch& operator=(const deadline_watch&) = delete;

private:
    void run();
    [[nodiscard]] bool linked(const entry& e) const noexcept;
    void link(entry& e) noexcept;
    void unlink(entry& e) noexcept;
    // Under the lock: closes (on their executors) what has expired; the earliest deadline left.
    clock::time_point expire(clock::time_point now);

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    entry* first_ = nullptr;  // the entries with an operation in progress
    clock::time_point waiting_until_ = clock::time_point::max();
    std::size_t rearms_ = 0;
    bool stopping_ = false;
    std::thread thread_;
};

class deadline_watch::entry : public std::enable_shared_from_this<entry> {
    friend class deadline_watch;

    // All under the watcher's lock.
    boost::asio::ip::tcp::socket* socket_;  // null once forgotten
    boost::asio::any_io_executor executor_;
    clock::time_point deadline_{};
    bool expired_ = false;
    entry* previous_ = nullptr;
    entry* next_ = nullptr;

public:
    explicit entry(boost::asio::ip::tcp::socket& s) : socket_(&s), executor_(s.get_executor()) {}
};

}  // namespace ngfail::opensandbox::detail
