// The client alone (ngfail::opensandbox_client), as a production program uses it: against a
// port where nothing listens, a create fails classified and says nothing was sent. check.sh
// then looks for emulator symbols in the program and finds none.
#include <ngfail/opensandbox/client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdio>

int main() {
    unsigned short closed_port = 0;
    {
        boost::asio::io_context io;
        boost::asio::ip::tcp::acceptor nothing(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
        closed_port = nothing.local_endpoint().port();
    }
    ngfail::opensandbox::client sandboxes({.port = closed_port});
    const auto box = sandboxes.try_create({});
    const auto* details = box ? nullptr : std::get_if<ngfail::sandbox_details>(&box.error().details());
    const bool ok = !box && box.error().code() == ngfail::kind::transport_unreachable && details &&
                    details->delivery == ngfail::delivery::not_sent;
    std::printf("client alone: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
