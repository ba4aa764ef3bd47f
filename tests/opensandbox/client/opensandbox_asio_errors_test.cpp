// Asio, Beast and OpenSSL codes, mapped for the classifier: each gives the kind and delivery
// it gave when the classifier still read those libraries' categories itself.
#include <ngfail/opensandbox/asio_errors.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <optional>

namespace {

using ngfail::delivery;
using ngfail::kind;
using ngfail::opensandbox::errc;
using ngfail::opensandbox::phase;
using ngfail::opensandbox::portable_transport_error;

struct mapped_case {
    boost::system::error_code from;
    std::error_code to;
};

TEST(portable_transport_error, maps_each_library_code_to_errno_or_errc) {
    const boost::system::error_code handshake(static_cast<int>(ERR_PACK(ERR_LIB_SSL, 0, SSL_R_CERTIFICATE_VERIFY_FAILED)),
                                              boost::asio::error::get_ssl_category());
    const mapped_case cases[] = {
        {boost::asio::error::eof, errc::connection_closed},
        {boost::asio::ssl::error::stream_truncated, errc::connection_closed},
        {boost::beast::http::error::end_of_stream, errc::connection_closed},
        {boost::beast::http::error::partial_message, errc::connection_closed},
        {boost::asio::error::host_not_found, errc::host_not_found},
        {boost::asio::error::host_not_found_try_again, errc::host_not_found},
        {handshake, errc::tls_failed},
        {boost::beast::error::timeout, std::make_error_code(std::errc::timed_out)},
        {boost::asio::error::operation_aborted, errc::cancelled},
        {boost::asio::error::connection_refused, std::make_error_code(std::errc::connection_refused)},
        {boost::asio::error::connection_reset, std::make_error_code(std::errc::connection_reset)},
        {{}, {}},
    };
    for (const auto& c : cases) {
        // errno values keep Asio's category (system); they equal the generic condition.
        const std::error_code got = portable_transport_error(c.from);
        EXPECT_TRUE(got == c.to || got == c.to.default_error_condition())
            << c.from.category().name() << ' ' << c.from.value() << " gave " << got.category().name() << ' '
            << got.value();
    }
}

TEST(portable_transport_error, keeps_the_client_s_own_codes_through_boost) {
    const boost::system::error_code wrapped(make_error_code(errc::stream_incomplete));
    EXPECT_EQ(portable_transport_error(wrapped), errc::stream_incomplete);
}

TEST(portable_transport_error, leaves_an_unknown_code_unchanged) {
    const boost::system::error_code other = boost::asio::error::already_open;
    EXPECT_EQ(portable_transport_error(other), std::error_code(other));
}

// TLS codes come from OpenSSL through Asio's categories (opensandbox_classify_test has the
// others, read by the classifier itself): a failed handshake is unreachable, a TLS session
// that breaks or is cut short is a dropped peer.
TEST(portable_transport_error, tls_codes_classify_as_the_evidence_table_says) {
    const boost::system::error_code handshake(static_cast<int>(ERR_PACK(ERR_LIB_SSL, 0, SSL_R_CERTIFICATE_VERIFY_FAILED)),
                                              boost::asio::error::get_ssl_category());
    const auto classified = [](const char* operation, boost::system::error_code ec, phase at,
                               std::optional<std::string> execution_id = std::nullopt) {
        return ngfail::opensandbox::classify({.operation = operation, .execution_id = std::move(execution_id),
                                              .transport_error = portable_transport_error(ec), .transport_phase = at});
    };
    using ngfail::opensandbox::classification;
    const auto is = [](kind k, delivery d) { return classification{make_error_code(k), d}; };
    EXPECT_EQ(classified("create", handshake, phase::connect), is(kind::transport_unreachable, delivery::not_sent));
    EXPECT_EQ(classified("get", handshake, phase::receive), is(kind::transport_peer_drop, delivery::possibly_delivered));
    EXPECT_EQ(classified("exec", boost::asio::ssl::error::stream_truncated, phase::receive, "e-1"),
              is(kind::transport_peer_drop, delivery::delivered));
}

}  // namespace
