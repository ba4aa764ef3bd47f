// A batch of sandboxes at once from one thread: each is created, runs a command and is
// killed, all concurrently as coroutines on one io_context; then a per-kind summary of what
// failed. Runs against the embedded server (with a few faults injected) unless given a
// server: `example_many_sandboxes [BASE_URL API_KEY] [SANDBOXES]`.
#include <ngfail/opensandbox.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>
#include <map>
#include <optional>
#include <string>

namespace {

namespace asio = boost::asio;
namespace sandbox = ngfail::opensandbox;

// What happened to each sandbox, by kind ("ok" for a clean run).
using summary = std::map<std::string, int>;

// The outcome's name: "ok", or the failure's kind.
template <class T>
std::string outcome(const ngfail::result<T>& r) {
    return r ? "ok" : std::string(ngfail::kind_name(r.error().code()));
}

// One sandbox's life.
asio::awaitable<void> one_sandbox(sandbox::client& sandboxes, int n, summary& seen) {
    const auto box = co_await sandboxes.async_create({.image = "python:3.11"});
    if (!box) {
        ++seen["create: " + outcome(box)];
        co_return;
    }
    const auto ran = co_await sandboxes.async_exec(box.value().id, {.command = "echo job " + std::to_string(n)});
    ++seen["exec: " + outcome(ran)];
    (void)co_await sandboxes.async_kill(box.value().id);
}

}  // namespace

int main(int argc, char** argv) {
    const int count = argc == 4 ? std::stoi(argv[3]) : argc == 2 ? std::stoi(argv[1]) : 64;
    std::optional<sandbox::embedded_server> local;
    sandbox::client_options options;
    if (argc >= 3) {
        options = {.base_url = argv[1], .api_key = argv[2]};
    } else {
        local.emplace();
        // One OOM kill: Kubernetes says "OOMKilled" only in a message, so the evidence shows a
        // command killed by a signal (provider_command_terminated), not an OOM kill.
        local->inject(sandbox::fault::exec(sandbox::fault::action::oom_kill));
        auto busy = sandbox::fault::http_error("create", 429, "QUOTA_EXCEEDED", "slow down", 1);
        busy.times = 3;  // three creates refused for quota
        local->inject(busy);
        options = {.port = local->port()};
    }

    asio::io_context io(1);
    sandbox::client sandboxes(io.get_executor(), options);
    summary seen;
    for (int n = 0; n < count; ++n) asio::co_spawn(io, one_sandbox(sandboxes, n, seen), asio::detached);
    io.run();

    std::cout << count << " sandboxes, one thread:\n";
    for (const auto& [what, times] : seen) std::cout << "  " << times << "  " << what << '\n';
}
