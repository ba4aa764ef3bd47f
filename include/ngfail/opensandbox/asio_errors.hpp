// <ngfail/opensandbox/asio_errors.hpp> — a Boost error code in the terms the classifier
// reads (target ngfail::opensandbox_client).
//
// The classifier recognises Asio's, Beast's and OpenSSL's codes by category name and value
// (`portable_transport_error(std::error_code)` in classify.hpp, the one table); this is the
// same for a `boost::system::error_code`, for a wrapper that records the mapped code:
//
//   catch (const boost::system::system_error& e) {
//       seen.transport_error = ngfail::opensandbox::portable_transport_error(e.code());
//       seen.transport_phase = ngfail::opensandbox::phase::receive;
//   }
//
// The client does this for every failure it classifies; the original code stays in the
// failure's cause.
#pragma once

#include <ngfail/opensandbox/classify.hpp>

#include <boost/system/error_code.hpp>

#include <system_error>

namespace ngfail::opensandbox {

// `portable_transport_error(std::error_code(ec))`: the classifier's table.
[[nodiscard]] std::error_code portable_transport_error(const boost::system::error_code& ec) noexcept;

}  // namespace ngfail::opensandbox
