// The client's requests on the wire: the bytes Beast's serializer writes for the same
// request, so that writing them ourselves changed nothing a server sees.
#include "opensandbox/client/call.hpp"
#include "opensandbox/client/request.hpp"

#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

namespace {

namespace http = boost::beast::http;
using ngfail::opensandbox::detail::request;
using http::field;
using http::verb;

// Applies the same steps to our request and to a Beast message, prepares both as the
// connection does (Host, then the payload's length) and gives both as bytes.
struct both {
    request ours;
    http::request<http::string_body> beast;

    both(verb method, std::string_view base, std::string_view path)
        : ours(method, base, path), beast(method, std::string(base) + std::string(path), 11) {}

    both& set(std::string_view name, std::string_view value) {
        ours.set(name, value);
        beast.set(name, value);
        return *this;
    }
    both& set(field name, std::string_view value) {
        ours.set(name, value);
        beast.set(name, value);
        return *this;
    }
    both& body(std::string text) {
        ours.body() = text;
        beast.body() = std::move(text);
        return *this;
    }

    [[nodiscard]] std::string our_bytes() {
        ours.set(field::host, "127.0.0.1:8080");
        ours.prepare_payload();
        return std::string(ours.head()) + "\r\n" + ours.body();
    }
    [[nodiscard]] std::string beast_bytes() {
        beast.set(field::host, "127.0.0.1:8080");
        beast.keep_alive(true);
        beast.prepare_payload();
        std::ostringstream out;
        out << beast;
        return out.str();
    }
};

TEST(request, is_the_bytes_beast_writes_for_every_method_and_body) {
    const std::vector<std::pair<verb, std::string>> cases{
        {verb::get, ""},          {verb::head, ""},   {verb::delete_, ""}, {verb::post, ""},
        {verb::put, ""},          {verb::options, ""}, {verb::patch, ""},  {verb::post, R"({"command":"ls"})"},
        {verb::put, "bytes\r\n"}, {verb::delete_, "{}"},
    };
    for (const auto& [method, body] : cases) {
        both r(method, "/proxy/44772", "/command?id=a%20b");
        r.set("X-EXECD-ACCESS-TOKEN", "tok-1").set(field::content_type, "application/json").body(body);
        EXPECT_EQ(r.our_bytes(), r.beast_bytes()) << http::to_string(method) << " with " << body.size() << " bytes";
    }
}

TEST(request, a_field_set_again_in_any_case_is_replaced_and_goes_last) {
    both r(verb::post, "", "/v1/sandboxes");
    r.set("Accept", "text/plain").set("x-route", "r-1").set(field::accept, "application/json");
    r.set("X-Route", "r-2").set("content-length", "999").set("HOST", "evil.example").body("{}");
    const std::string bytes = r.our_bytes();
    EXPECT_EQ(bytes, r.beast_bytes());
    EXPECT_EQ(bytes,
              "POST /v1/sandboxes HTTP/1.1\r\nAccept: application/json\r\nX-Route: r-2\r\n"
              "Host: 127.0.0.1:8080\r\nContent-Length: 2\r\n\r\n{}")
        << "one of each field: the server's Host and length cannot be doubled by a header of the same name";
}

TEST(request, a_name_that_is_the_start_of_another_is_not_that_field) {
    both r(verb::get, "", "/ping");
    r.set("X-A", "1").set("X-A-B", "2").set("X-A", "3");
    EXPECT_EQ(r.our_bytes(), r.beast_bytes());
    EXPECT_NE(r.our_bytes().find("X-A-B: 2\r\n"), std::string::npos);
}

TEST(request, sending_it_again_gives_the_same_bytes) {
    request r(verb::post, "", "/command");
    r.set(field::content_type, "application/json");
    r.body() = R"({"command":"ls"})";
    r.set(field::host, "a:1");
    r.prepare_payload();
    const std::string first = std::string(r.head());
    r.set(field::host, "a:1");
    r.prepare_payload();
    EXPECT_EQ(r.head(), first) << "a retry on a fresh connection re-sends the request as it was";
}

// The object an exec's body used to be built as, for comparison.
std::string serialized_command(const ngfail::opensandbox::command& cmd) {
    boost::json::object body{{"command", cmd.command}, {"background", cmd.background}};
    if (cmd.cwd) body["cwd"] = *cmd.cwd;
    if (cmd.timeout) body["timeout"] = cmd.timeout->count();
    if (!cmd.envs.empty()) body["envs"] = ngfail::opensandbox::detail::string_map(cmd.envs);
    return boost::json::serialize(body);
}

TEST(command_body, is_the_json_of_the_command_for_every_byte_and_option) {
    using ngfail::opensandbox::command;
    using ngfail::opensandbox::detail::command_body;
    std::string every_byte;
    for (int c = 0; c < 256; ++c) every_byte += static_cast<char>(c);
    const std::string long_text(5000, '"');  // escapes past the writer's chunk
    const std::vector<command> commands{
        {.command = "echo hi"},
        {.command = every_byte, .cwd = every_byte, .envs = {{every_byte, every_byte}, {"A", "1"}}},
        {.command = "sleep 1", .cwd = "/tmp", .timeout = std::chrono::milliseconds(1500), .background = true},
        {.command = long_text, .timeout = std::chrono::milliseconds(0)},
        {.command = "caf\xc3\xa9 \xff\xfe", .envs = {{"PATH", "/bin"}}},
    };
    for (const auto& cmd : commands) {
        EXPECT_EQ(command_body(cmd), serialized_command(cmd)) << cmd.command.size() << " bytes";
    }
    // Boost.JSON's serializer passes bytes that are not UTF-8 through as they are (execd's Go
    // decoder reads them as U+FFFD); valid text comes back as it went.
    for (const auto& cmd : {commands[0], commands[2], commands[3]}) {
        EXPECT_EQ(boost::json::parse(command_body(cmd)).at("command").as_string(), cmd.command);
    }
}

}  // namespace
