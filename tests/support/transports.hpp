// The four ways a client reaches `ngfail serve` (HTTP or HTTPS, the server proxy or a direct
// endpoint), for suites parameterised over them: the server's and the client's options for
// each, and the instantiation's values and names.
#pragma once

#include "test_ca.hpp"

#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <gtest/gtest.h>

#include <string>

namespace ngfail_test {

struct transport {
    bool tls;
    bool proxy;
};

// The server for `t`: HTTPS with the tests' CA's certificate when it asks for TLS.
inline ngfail::opensandbox::testing::server_options serving(const transport& t,
                                                           ngfail::opensandbox::testing::server_options o) {
    if (t.tls) {
        o.tls_certificate_file = ca().file("server.pem");
        o.tls_key_file = ca().file("server.key");
    }
    return o;
}

// A client of the server on `port` over `t`, trusting the tests' CA.
inline ngfail::opensandbox::client_options reaching(const transport& t, unsigned short port,
                                                    ngfail::opensandbox::client_options o) {
    o.use_server_proxy = t.proxy;
    o.base_url = std::string(t.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port);
    if (t.tls) o.tls.ca_file = ca().file("ca.pem");
    return o;
}

inline const auto every_transport = testing::Values(transport{false, false}, transport{false, true},
                                                    transport{true, false}, transport{true, true});
inline std::string transport_name(const testing::TestParamInfo<transport>& info) {
    return std::string(info.param.tls ? "https" : "http") + (info.param.proxy ? "_proxy" : "_direct");
}

}  // namespace ngfail_test
