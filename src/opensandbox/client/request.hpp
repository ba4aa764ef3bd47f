// A request as the client puts it on the wire. Its line and fields are written into one
// buffer as they are set, so sending it is one write of that buffer and the body, with no
// field allocated on its own; a request repeated on a fresh connection is the same bytes.
//
//     request req(verb::post, route.where.base, "/command");
//     req.set(field::content_type, "application/json");
//     req.body() = serialized;
//     co_await connection.send(req, deadline);  // adds Host and Content-Length
#pragma once

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::detail {

class request {
public:
    // An HTTP/1.1 request for `method` on `base` + `path` (made safe by the caller:
    // request_safety.hpp).
    request(boost::beast::http::verb method, std::string_view base, std::string_view path);

    // Sets field `name` to `value`, last: a field of that name (in any case) already set
    // is removed, as Beast's `set` does. Names are tokens and values break no line: the
    // caller has refused any other (request_safety.hpp).
    request& set(boost::beast::http::field name, std::string_view value);
    request& set(std::string_view name, std::string_view value);

    [[nodiscard]] std::string& body() noexcept { return body_; }
    [[nodiscard]] const std::string& body() const noexcept { return body_; }
    [[nodiscard]] boost::beast::http::verb method() const noexcept { return method_; }

    // Makes the request ready to send as Beast's `prepare_payload` would: Content-Length
    // for a body, and for an empty one when the method defines a meaning for a body (POST,
    // PUT, OPTIONS); no length otherwise.
    void prepare_payload();

    // The request line and the fields, each ending in CRLF; the empty line that ends the
    // head is not part of it.
    [[nodiscard]] std::string_view head() const noexcept { return head_; }

private:
    // Where the line of field `name` starts in head_, or npos.
    [[nodiscard]] std::size_t find(std::string_view name) const noexcept;

    boost::beast::http::verb method_;
    std::string head_;
    std::string body_;
};

}  // namespace ngfail::opensandbox::detail
