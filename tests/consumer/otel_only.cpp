// The client instrumented (ngfail::otel), as an application with the OpenTelemetry API only
// builds it: no SDK installed, so the global providers record nothing, and a call fails as
// it would without the observer.
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/otel/client_instrumentation.hpp>

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
    ngfail::opensandbox::client sandboxes({.port = closed_port, .observer = ngfail::otel::instrument_client()});
    const auto box = sandboxes.try_create({});
    const bool ok = !box && box.error().code() == ngfail::kind::transport_unreachable;
    std::printf("client instrumented: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
