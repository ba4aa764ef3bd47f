// execd's terminal WebSocket frames, read and made: what the server sends (binary messages
// whose first byte is the channel, 0x01 stdout, 0x02 stderr, 0x03 replay with an 8-byte
// big-endian offset; JSON text frames `connected`, `exit`, `pong`, `error`) and what a
// client sends (0x00 + stdin; `resize` and `signal` as JSON). Pure functions: the session
// (terminal.cpp) does the I/O, a fuzzer feeds the reader.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace ngfail::opensandbox::detail {

struct connected_frame {
    std::string mode{};  // "pty" or "pipe"
};
struct error_frame {
    std::string code{};  // execd's: ALREADY_CONNECTED, STDIN_WRITE_FAILED, INVALID_FRAME, …
};
struct ignored_frame {};  // a pong, or a type this client does not know
struct malformed_frame {
    const char* why = "";
};
using terminal_frame =
    std::variant<terminal_output, terminal_exit, connected_frame, error_frame, ignored_frame, malformed_frame>;

// One message from the server; output without an offset of its own starts at `live_offset`
// (what has been read so far). Output that would end past offset 2^63 - 1 is malformed.
[[nodiscard]] terminal_frame parse_terminal_frame(bool binary, std::string_view data, std::int64_t live_offset);

[[nodiscard]] std::string stdin_frame(std::string_view input);  // binary
[[nodiscard]] std::string resize_frame(int cols, int rows);     // text
[[nodiscard]] std::string signal_frame(std::string_view name);  // text

}  // namespace ngfail::opensandbox::detail
