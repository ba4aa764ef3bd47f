// Raw bytes to a server on loopback and everything it sends back: how the emulator's tests
// and fuzzer play a stranger whose bytes need not be HTTP.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <string>
#include <string_view>

namespace ngfail_test {

// Sends `bytes` on a fresh connection (then shuts the write side when `shut_write`) and
// reads until the server closes it, `patience` passes between two reads, or (when `until`
// is not empty) what arrived contains `until`; then closes its end.
inline std::string exchange_raw(unsigned short port, std::string_view bytes, std::chrono::milliseconds patience,
                                bool shut_write = false, std::string_view until = {}) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    const timeval tv{.tv_sec = static_cast<time_t>(patience.count() / 1000),
                     .tv_usec = static_cast<suseconds_t>(patience.count() % 1000 * 1000)};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    boost::system::error_code ec;
    boost::asio::write(socket, boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (shut_write) socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
    std::string received;
    char chunk[16384];
    while (until.empty() || received.find(until) == std::string::npos) {
        const auto n = ::recv(socket.native_handle(), chunk, sizeof chunk, 0);
        if (n <= 0) break;
        received.append(chunk, static_cast<std::size_t>(n));
    }
    return received;
}

}  // namespace ngfail_test
