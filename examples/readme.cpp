// The README's examples, compiled and run: each region from "// README: NAME" to
// "// README end" is one ```cpp block of README.md, verbatim (tests/readme_snippets.sh
// checks both ways). The sandbox example runs against an embedded OpenSandbox server.
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http.hpp>

#include <iostream>
#include <stdexcept>
#include <string>

namespace asio = boost::asio;
namespace beast_http = boost::beast::http;

// What the snippets call but do not show: a third-party SDK, a job and its steps.
struct sdk_client {
    void exec(const std::string&) { throw std::runtime_error("sdk: connection reset by peer"); }
};
struct job {
    bool sandbox_gone = false;
};
bool lost(const job& j) { return j.sandbox_gone; }

// README: kinds
#include <ngfail/kind.hpp>

#include <boost/system/error_code.hpp>

void kinds() {
    std::error_code ec = ngfail::kind::provider_oom_killed;
    bool in_domain = ec == ngfail::domain::provider;             // true: domains are error conditions
    std::string_view name = ngfail::kind_name(ec);               // "provider_oom_killed"
    std::error_code peer = ngfail::kind_from_name("acme:thing");  // a peer's kind: interned, kept verbatim
    boost::system::error_code bec = ec;                          // Boost.System interop, equality kept
    std::cout << name << ' ' << in_domain << ' ' << ngfail::kind_name(peer) << ' ' << (bec == ec) << '\n';
}
// README end

// README: events
#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>

void exec_with(sdk_client& sdk, const std::string& cmd) {
    try {
        sdk.exec(cmd);
    } catch (...) {  // raise from the SDK's exception: it becomes the nested cause
        std::throw_with_nested(ngfail::sandbox_failure({.operation = "exec",
                                                        .kind = ngfail::kind::transport_peer_drop}));
    }
}

ngfail::result<int> exec(const job&) noexcept {
    return ngfail::capture([] {  // an exception becomes the result's failure, its causes kept
        sdk_client sdk;
        exec_with(sdk, "pytest -q");
        return 0;
    });
}

ngfail::result<int> run(const job& j) noexcept {
    if (lost(j)) return ngfail::kind::provider_sandbox_lost;  // no allocation
    BOOST_OUTCOME_TRY(auto code, exec(j));
    return code;
}
// run(j).value() throws the full event: its class, its id, its cause nested
// README end

// README: http
#include <ngfail/http.hpp>

using response = boost::beast::http::response<boost::beast::http::string_body>;

// server: a handler's failure goes back in the reply's header (success replies carry one too)
void answer(response& reply, const std::function<void()>& handler) {
    try {
        handler();
    } catch (...) {
        auto report = ngfail::report_for(std::current_exception());
        ngfail::http::attach(reply, report);
        reply.result(500);
    }
}

// client
void read(const response& reply) {
    ngfail::http::raise_boundary_failure(reply);  // throws the rebuilt remote failure
}
// README end

// README: sandboxes
#include <ngfail/opensandbox.hpp>
#include <ngfail/report_tree.hpp>

void first_sandbox(const std::string& url, const std::string& key) {
    ngfail::opensandbox::client sandboxes({.base_url = url, .api_key = key});
    auto box = sandboxes.create({.image = "python:3.11"});             // waits until ready
    auto ran = sandboxes.try_exec(box.id, {.command = "pytest -q"});  // noexcept
    if (!ran && ran.error().code() == ngfail::kind::provider_oom_killed) std::cout << "out of memory\n";
    // Whether the command reached the sandbox: the fact that says whether a retry is safe.
    if (!ran && ngfail::delivery_of(ran.error()) == ngfail::delivery::not_sent) std::cout << "safe to retry\n";
    // (on the thrown event: catch (const ngfail::sandbox_failure& e) { e.delivery(); })
    if (!ran) ngfail::print_tree(std::cerr, ran.error());  // the causes, as `ngfail decode` shows them
    if (ran) std::cout << "exit " << *ran.value().exit_code << '\n';
    sandboxes.kill(box.id);
}

// Thousands at once from one thread: the same calls as awaitables.
asio::awaitable<void> many_at_once(ngfail::opensandbox::client& many, std::string id) {
    auto result = co_await many.async_exec(id, {.command = "pytest -q"});  // result<exec_result>
    std::cout << "awaited: " << (result ? "ok" : result.error().what()) << '\n';
    // Or with an Asio completion token last: a callback, asio::deferred, asio::use_future.
    many.async_exec(id, {.command = "pytest -q"}, {}, [](ngfail::result<ngfail::opensandbox::exec_result> r) {
        std::cout << "called back: " << (r ? "ok" : r.error().what()) << '\n';
    });
}
// README end

// README: extension
#include <ngfail/kind_extension.hpp>

namespace swe {
enum class failure { patch_failed = 1, tests_failed };
}
NGFAIL_KIND_EXTENSION(swe, failure, "swe", "patch_failed", "tests_failed");

void own_kinds() {
    std::error_code ec = swe::failure::patch_failed;  // kind_name(ec) == "swe:patch_failed"
    std::cout << ngfail::kind_name(ec) << '\n';
}
// README end

int main() {
    kinds();

    try {
        (void)run(job{}).value();
    } catch (const ngfail::sandbox_failure& e) {
        std::cout << "run: " << e.what() << "; caused by ";
        try {
            std::rethrow_if_nested(e);
        } catch (const std::exception& cause) {
            std::cout << cause.what() << '\n';
        }
    }
    std::cout << "lost: " << ngfail::kind_name(run(job{.sandbox_gone = true}).error().code()) << '\n';

    response reply;
    answer(reply, [] { throw ngfail::sandbox_failure({.operation = "get", .kind = ngfail::kind::provider_sandbox_lost}); });
    try {
        read(reply);
    } catch (const ngfail::sandbox_failure& e) {
        std::cout << "across the hop: " << e.kind_name() << '\n';
    }

    ngfail::opensandbox::embedded_server server;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
    first_sandbox(url, "");

    asio::io_context io;
    ngfail::opensandbox::client many(io.get_executor(), {.base_url = url});
    const std::string id = ngfail::opensandbox::client({.base_url = url}).create({}).id;
    asio::co_spawn(io, many_at_once(many, id), asio::detached);
    io.run();

    own_kinds();
}
