#include <ngfail/opensandbox/asio_errors.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

namespace ngfail::opensandbox {

namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

struct mapped {
    boost::system::error_code from;
    std::error_code to;
};

// Errors matched by category and value, as the libraries define them.
const mapped* find(const boost::system::error_code& ec) noexcept {
    static const mapped table[] = {
        {asio::error::eof, make_error_code(errc::connection_closed)},
        {asio::ssl::error::stream_truncated, make_error_code(errc::connection_closed)},
        {beast::http::error::end_of_stream, make_error_code(errc::connection_closed)},
        {beast::http::error::partial_message, make_error_code(errc::connection_closed)},
        {asio::error::host_not_found, make_error_code(errc::host_not_found)},
        {asio::error::host_not_found_try_again, make_error_code(errc::host_not_found)},
        {beast::error::timeout, std::make_error_code(std::errc::timed_out)},
        {asio::error::operation_aborted, make_error_code(errc::cancelled)},
    };
    for (const mapped& m : table) {
        if (m.from == ec) return &m;
    }
    return nullptr;
}

bool is_tls(const boost::system::error_code& ec) noexcept {
    return ec.category() == asio::error::get_ssl_category() || ec.category() == asio::ssl::error::get_stream_category();
}

}  // namespace

std::error_code portable_transport_error(const boost::system::error_code& ec) noexcept {
    if (!ec) return {};
    if (const mapped* m = find(ec)) return m->to;
    if (is_tls(ec)) return make_error_code(errc::tls_failed);
    return std::error_code(ec);
}

}  // namespace ngfail::opensandbox
