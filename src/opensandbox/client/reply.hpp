// Reading OpenSandbox replies: error envelopes, sandboxes, endpoints. Shared by the client
// and its fuzz target, so what the fuzzer exercises is what the client runs.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include "redactor.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::detail {

// Where connections go: the scheme (https or not), host and port. A pool's key.
struct origin {
    bool tls = false;
    std::string host;
    unsigned short port = 0;

    friend auto operator<=>(const origin&, const origin&) = default;
};

// Where a request goes: an origin and a path prefix.
struct target : origin {
    std::string base;
};

// Throws std::system_error(errc::malformed_response).
[[noreturn]] void malformed(const char* what);

// Every endpoint form the spec allows: `host[:port][/path]`, with or without `http://` or
// `https://`, the host a name, an IPv4 address or a bracketed IPv6 one. Without a scheme the
// endpoint is reached as the lifecycle server is (`tls`), as the official SDKs do; an
// `http://` endpoint of an https server (`tls`) is malformed, never followed; without a
// port, 80 or 443. A host that is empty or holds a space or a line break is malformed; the
// path is percent-encoded as needed.
[[nodiscard]] target parse_endpoint(std::string_view endpoint, bool tls = false);

// What an endpoint reply's headers may hold: they go on every execd request, whose head no
// server takes without bound (the reply heads the client reads are held to 64 KiB too).
inline constexpr std::size_t max_endpoint_headers = 256;
inline constexpr std::size_t max_endpoint_header_bytes = 64 << 10;

// The endpoint and its headers from an endpoint reply; a header whose name is not a field
// name or whose value holds a line break, or more headers than the bounds above, is
// malformed (they would be sent on every execd request).
[[nodiscard]] endpoint_info endpoint_of(const boost::json::value& reply);

// The api_error for an error reply, from its {"code","message"} envelope, with every secret
// the request carried scrubbed from what it records (a server may echo the request).
[[nodiscard]] api_error api_error_of(const boost::beast::http::response_header<>& head, std::string_view body,
                                     const redactor& secrets);

[[nodiscard]] const boost::json::object& as_object(const boost::json::value& v);
[[nodiscard]] std::string required_string(const boost::json::object& o, std::string_view key);
[[nodiscard]] std::optional<std::string> optional_string(const boost::json::object& o, std::string_view key);
[[nodiscard]] sandbox_info sandbox_of(const boost::json::value& v);
// A FileInfo: a path, and a size and mode that are whole numbers (any the spec's integer
// allows); the rest as given.
[[nodiscard]] entry_info entry_of(const boost::json::value& v);

}  // namespace ngfail::opensandbox::detail
