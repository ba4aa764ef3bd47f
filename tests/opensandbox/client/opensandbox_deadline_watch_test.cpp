// The client's deadline watcher on real loopback sockets: an operation past its deadline is
// ended by closing its socket on the socket's own context, one that ends in time is left
// alone, a socket forgotten is never touched again, and later deadlines wake no one.
#include "opensandbox/client/deadline_watch.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <optional>
#include <thread>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;
using ngfail::opensandbox::detail::deadline_watch;

// Two connected sockets on loopback, the client's on `io`.
struct socket_pair {
    asio::io_context& io;
    tcp::acceptor acceptor{io, {asio::ip::address_v4::loopback(), 0}};
    std::optional<tcp::socket> client{std::in_place, io};
    tcp::socket server{io};

    explicit socket_pair(asio::io_context& on) : io(on) {
        client->connect(acceptor.local_endpoint());
        acceptor.accept(server);
    }
};

// Reads one byte on the client socket, running `io` until the read completes.
boost::system::error_code read_one(socket_pair& s) {
    boost::system::error_code result = asio::error::would_block;
    char byte = 0;
    s.client->async_read_some(asio::buffer(&byte, 1), [&](boost::system::error_code ec, std::size_t) { result = ec; });
    s.io.run();
    s.io.restart();
    return result;
}

// A watcher of its own (not the process's) and one tracked socket, forgotten at the end.
class watched_socket : public testing::Test {
protected:
    ~watched_socket() override { watch.forget(*e); }

    deadline_watch watch;
    asio::io_context io;
    socket_pair s{io};
    std::shared_ptr<deadline_watch::entry> e = watch.track(*s.client);
};

TEST_F(watched_socket, ends_an_operation_past_its_deadline_by_closing_its_socket) {
    const auto started = clock_type::now();
    watch.start(e, started + 100ms);
    const auto ec = read_one(s);  // the server never writes
    const auto took = clock_type::now() - started;
    EXPECT_TRUE(watch.finish(*e));
    EXPECT_EQ(ec, asio::error::operation_aborted) << ec.message();
    EXPECT_FALSE(s.client->is_open());
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 10s);
}

TEST_F(watched_socket, leaves_an_operation_that_ends_in_time_alone) {
    watch.start(e, clock_type::now() + 200ms);
    asio::write(s.server, asio::buffer("x", 1));
    EXPECT_FALSE(read_one(s));
    EXPECT_FALSE(watch.finish(*e));
    std::this_thread::sleep_for(400ms);  // past the deadline the operation had
    io.run();
    EXPECT_TRUE(s.client->is_open());
}

TEST_F(watched_socket, ends_at_once_a_deadline_already_passed) {
    watch.start(e, clock_type::now() - 1s);
    EXPECT_EQ(read_one(s), asio::error::operation_aborted);
    EXPECT_TRUE(watch.finish(*e));
}

TEST_F(watched_socket, never_touches_a_socket_it_was_told_to_forget) {
    watch.start(e, clock_type::now() + 10ms);
    std::this_thread::sleep_for(300ms);  // expired: its close is queued on `io`, not yet run
    EXPECT_TRUE(watch.finish(*e));
    watch.forget(*e);
    s.client.reset();  // AddressSanitizer reports the queued close if it used the socket now
    EXPECT_EQ(io.run(), 1U);
}

TEST_F(watched_socket, later_deadlines_wake_no_one) {
    const auto base = clock_type::now() + 60s;
    watch.start(e, base);
    EXPECT_FALSE(watch.finish(*e));
    EXPECT_EQ(watch.rearms(), 1U);
    for (int i = 1; i <= 1000; ++i) {  // one call after another, each with the same timeout
        watch.start(e, base + std::chrono::milliseconds(i));
        EXPECT_FALSE(watch.finish(*e));
    }
    EXPECT_EQ(watch.rearms(), 1U);
    watch.start(e, base - 30s);  // a shorter timeout: the watcher must wait for it instead
    EXPECT_FALSE(watch.finish(*e));
    EXPECT_EQ(watch.rearms(), 2U);
}

TEST_F(watched_socket, watches_many_sockets_each_by_its_own_deadline) {
    socket_pair soon(io);
    const auto soon_entry = watch.track(*soon.client);
    watch.start(e, clock_type::now() + 60s);
    watch.start(soon_entry, clock_type::now() + 100ms);
    EXPECT_EQ(read_one(soon), asio::error::operation_aborted);
    EXPECT_TRUE(watch.finish(*soon_entry));
    EXPECT_TRUE(s.client->is_open());
    EXPECT_FALSE(watch.finish(*e));
    watch.forget(*soon_entry);
}

}  // namespace
