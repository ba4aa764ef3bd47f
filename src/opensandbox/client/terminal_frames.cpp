// execd's terminal frames (see terminal_frames.hpp).
#include "terminal_frames.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace ngfail::opensandbox::detail {

namespace json = boost::json;

namespace {

// Output from `offset`, unless it would end past 2^63 - 1: the session's offset after it
// (`offset + size`) is never wrapped negative by a hostile server.
terminal_frame output(terminal_stream stream, std::int64_t offset, std::string_view bytes) {
    if (offset < 0 || bytes.size() > static_cast<std::uint64_t>(INT64_MAX - offset)) {
        return malformed_frame{"output that would end past offset 2^63 - 1"};
    }
    return terminal_output{.stream = stream, .offset = offset, .bytes = std::string(bytes)};
}

terminal_frame binary_frame_of(std::string_view data, std::int64_t live_offset) {
    if (data.empty()) return malformed_frame{"an empty binary frame"};
    const auto channel = static_cast<unsigned char>(data[0]);
    data.remove_prefix(1);
    if (channel == 0x01 || channel == 0x02) {
        return output(channel == 0x01 ? terminal_stream::stdout_bytes : terminal_stream::stderr_bytes, live_offset, data);
    }
    if (channel != 0x03) return malformed_frame{"a binary frame of no known channel"};
    if (data.size() < 8) return malformed_frame{"a replay frame without its offset"};
    std::uint64_t offset = 0;
    for (int i = 0; i < 8; ++i) offset = offset << 8 | static_cast<unsigned char>(data[static_cast<std::size_t>(i)]);
    if (offset > static_cast<std::uint64_t>(INT64_MAX)) return malformed_frame{"a replay offset past 2^63"};
    return output(terminal_stream::replay, static_cast<std::int64_t>(offset), data.substr(8));
}

terminal_frame text_frame_of(std::string_view data) {
    json::error_code ec;
    const json::value parsed = json::parse(data, ec);
    const json::object* o = ec ? nullptr : parsed.if_object();
    if (!o) return malformed_frame{"a text frame that is not a JSON object"};
    const json::value* type = o->if_contains("type");
    if (!type || !type->is_string()) return malformed_frame{"a text frame without its type"};
    const json::string& name = type->as_string();
    const auto text = [&](std::string_view field) {
        const json::value* v = o->if_contains(field);
        return v && v->is_string() ? std::string(v->as_string()) : std::string();
    };
    if (name == "connected") return connected_frame{text("mode")};
    if (name == "error") return error_frame{text("code")};
    if (name == "exit") {
        const json::value* code = o->if_contains("exit_code");
        if (!code || !code->is_int64() || code->as_int64() < INT32_MIN || code->as_int64() > INT32_MAX) {
            return malformed_frame{"an exit frame without its exit code"};
        }
        return terminal_exit{static_cast<int>(code->as_int64())};
    }
    return ignored_frame{};  // pong, and what a newer execd may add
}

}  // namespace

terminal_frame parse_terminal_frame(bool binary, std::string_view data, std::int64_t live_offset) {
    return binary ? binary_frame_of(data, live_offset) : text_frame_of(data);
}

std::string stdin_frame(std::string_view input) {
    std::string frame(1, '\0');
    frame.append(input);
    return frame;
}

std::string resize_frame(int cols, int rows) {
    return json::serialize(json::object{{"type", "resize"}, {"cols", cols}, {"rows", rows}});
}

std::string signal_frame(std::string_view name) {
    return json::serialize(json::object{{"type", "signal"}, {"signal", name}});
}

}  // namespace ngfail::opensandbox::detail
