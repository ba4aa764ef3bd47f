#include <ngfail/opensandbox/asio_errors.hpp>

namespace ngfail::opensandbox {

std::error_code portable_transport_error(const boost::system::error_code& ec) noexcept {
    return portable_transport_error(std::error_code(ec));
}

}  // namespace ngfail::opensandbox
