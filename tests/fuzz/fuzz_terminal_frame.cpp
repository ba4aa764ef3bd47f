// The client's reader of execd's terminal frames, on any message: it gives output within the
// message's bytes at a non-negative offset, an exit, or names the frame malformed; never
// throws, never reads past the message.
#include "opensandbox/client/terminal_frames.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool binary = (data[0] & 1) != 0;
    const std::int64_t live_offset = data[0] >> 1;
    const std::string_view message(reinterpret_cast<const char*>(data) + 1, size - 1);
    using namespace ngfail::opensandbox;
    const detail::terminal_frame frame = detail::parse_terminal_frame(binary, message, live_offset);
    if (const auto* out = std::get_if<terminal_output>(&frame)) {
        if (!binary || out->offset < 0 || out->bytes.size() >= message.size()) std::abort();
        if (out->stream != terminal_stream::replay && out->offset != live_offset) std::abort();
    } else if (const auto* why = std::get_if<detail::malformed_frame>(&frame)) {
        if (why->why == nullptr || *why->why == '\0') std::abort();
    } else if (binary) {
        std::abort();  // a binary message is output or malformed, nothing else
    }
    return 0;
}
