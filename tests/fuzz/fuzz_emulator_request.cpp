// Any bytes as what a stranger sends `ngfail serve`: written raw to a running emulator over
// loopback, the write side then shut. `{id}` in the input stands for a sandbox that exists
// (so the fuzzer reaches every sandbox route). Whatever arrives, the server neither crashes
// nor stops answering, and every reply it sends is well-formed HTTP.
#include "../support/raw_client.hpp"

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

constexpr std::size_t max_input = 64 << 10;
constexpr int inputs_per_server = 4096;  // a fresh emulator now and then: what inputs create stays bounded

std::string exchange_raw(unsigned short port, std::string_view bytes, std::chrono::milliseconds patience) {
    return ngfail_test::exchange_raw(port, bytes, patience, /*shut_write=*/true);
}

std::string request(std::string_view method, const std::string& target, std::string_view body = {}) {
    return std::string(method) + " " + target + " HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

struct emulator {
    ngfail::opensandbox::testing::embedded_server server{{.ping_every = 10ms, .read_timeout = 200ms}};
    std::string sandbox_id = make_sandbox().value_or("none");
    int served = 0;

    // A new sandbox's id, or none when creates fail (an input may have queued faults for them).
    std::optional<std::string> make_sandbox() {
        const std::string reply = exchange_raw(
            server.port(), request("POST", "/v1/sandboxes", R"({"image":{"uri":"python:3.11"},"entrypoint":["x"]})"), 2s);
        const auto body = reply.find("\r\n\r\n");
        if (!reply.starts_with("HTTP/1.1 202") || body == std::string::npos) return std::nullopt;
        return std::string(boost::json::parse(reply.substr(body + 4)).at("id").as_string());
    }

    // The server still answers (its health check takes no faults), and `{id}` names a sandbox
    // again when an input deleted it.
    void after_an_input() {
        if (!exchange_raw(server.port(), request("GET", "/health"), 2s).starts_with("HTTP/1.1 200")) std::abort();
        const std::string reply = exchange_raw(server.port(), request("GET", "/v1/sandboxes/" + sandbox_id), 300ms);
        if (reply.starts_with("HTTP/1.1 404")) sandbox_id = make_sandbox().value_or(sandbox_id);
    }
};

// Every reply in `bytes` parses as HTTP/1.x; one cut short at the end is the read's patience.
void check_replies(std::string_view bytes, bool only_the_first) {
    if (bytes.empty()) return;
    boost::beast::flat_buffer buffer;
    auto piece = buffer.prepare(bytes.size());
    std::memcpy(piece.data(), bytes.data(), bytes.size());
    buffer.commit(bytes.size());
    while (buffer.size() != 0) {
        http::response_parser<http::string_body> parser;
        parser.body_limit(boost::none);
        parser.header_limit(1 << 20);
        if (only_the_first) parser.skip(true);
        boost::system::error_code ec;
        while (!parser.is_done() && buffer.size() != 0) {
            const std::size_t used = parser.put(buffer.data(), ec);
            buffer.consume(used);
            if (ec == http::error::need_more) {
                if (used == 0) return;  // the rest was still coming when the read gave up
                ec = {};
                continue;
            }
            if (ec) std::abort();  // a reply that is not HTTP
        }
        if (!parser.is_done()) return;
        if (only_the_first && parser.get().result_int() >= 200) return;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static std::unique_ptr<emulator> world;
    if (!world || world->served >= inputs_per_server) {
        world.reset();
        world = std::make_unique<emulator>();
    }
    ++world->served;
    std::string input(reinterpret_cast<const char*>(data), std::min(size, max_input));
    for (auto at = input.find("{id}"); at != std::string::npos; at = input.find("{id}", at)) {
        input.replace(at, 4, world->sandbox_id);
        at += world->sandbox_id.size();
    }
    const std::string replies = exchange_raw(world->server.port(), input, 300ms);
    // A HEAD reply has no body to tell where the next reply starts: only the first is read then.
    check_replies(replies, input.find("HEAD") != std::string::npos);
    world->after_an_input();
    return 0;
}
