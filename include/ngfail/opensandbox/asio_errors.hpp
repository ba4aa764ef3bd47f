// <ngfail/opensandbox/asio_errors.hpp> — Asio, Beast and OpenSSL error codes in the terms
// the classifier reads (target ngfail::opensandbox_client).
//
// The classifier knows errno codes and `opensandbox::errc`, never another library's
// categories, so a wrapper on Asio maps a transport error before describing it:
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

// errno codes as they are; the end of a stream (Asio's eof, Beast's end_of_stream and
// partial_message, a TLS session truncated) as `errc::connection_closed`; a failed name
// lookup as `errc::host_not_found`; any other TLS error as `errc::tls_failed`; Beast's
// timeout as `std::errc::timed_out`; an aborted operation as `errc::cancelled`. Anything
// else is returned unchanged, and the classifier does not read it.
[[nodiscard]] std::error_code portable_transport_error(const boost::system::error_code& ec) noexcept;

}  // namespace ngfail::opensandbox
