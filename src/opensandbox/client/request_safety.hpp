// What the client puts on a request line or in a header, made safe before anything is sent:
// a value with CR, LF or NUL could end a line early and smuggle a header or a second request
// in, so it is refused; path parameters are percent-encoded.
#pragma once

#include <string>
#include <string_view>

namespace ngfail::opensandbox::detail {

// True when `value` holds CR, LF or NUL: it may go on no request line and in no header.
[[nodiscard]] bool breaks_a_line(std::string_view value) noexcept;

// True when `name` is an HTTP field name: a token of RFC 9110 §5.6.2, non-empty, with no
// separator (a colon, a space) that would end the name early on the wire.
[[nodiscard]] bool is_field_name(std::string_view name) noexcept;

// True for the fields that frame a request (Host, Content-Length, Transfer-Encoding, in any
// case): the client writes them from the request itself, as Go's net/http does, and never
// sends a server's endpoint header of that name (a length of its choosing would leave a
// request waiting for bytes that never come).
[[nodiscard]] bool frames_the_request(std::string_view name) noexcept;

// One path segment (a sandbox or execution id): every byte outside RFC 3986's unreserved
// set is percent-encoded, so "a b/c?d" stays one segment.
[[nodiscard]] std::string path_segment(std::string_view value);

// The lifecycle API's path of one sandbox, `/sandboxes/{id}`, then `suffix` as given.
[[nodiscard]] std::string sandbox_path(std::string_view sandbox_id, std::string_view suffix = {});

// A path prefix from an endpoint: its '/' separators, existing %-escapes and the characters
// RFC 3986 allows in a path are kept; anything else (a space, a quote) is percent-encoded.
[[nodiscard]] std::string path_prefix(std::string_view value);

}  // namespace ngfail::opensandbox::detail
