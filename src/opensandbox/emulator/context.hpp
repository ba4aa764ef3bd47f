// What every route handler of the emulator works with: the options, the backend profile,
// the simulated world, the fault queue, and the replies every route shares.
#pragma once

#include "backends.hpp"
#include "direct_addresses.hpp"
#include "faults.hpp"
#include "opensandbox/emulator/process/process_runtime.hpp"
#include "http_server.hpp"
#include "sandboxes.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <stop_token>
#include <thread>
#include <type_traits>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::testing::detail {

struct context {
    context(server_options o)
        : options(std::move(o)),
          profile(profile_of(options.backend)),
          processes(options.runtime == runtime::process ? std::make_unique<process_runtime>(options) : nullptr),
          sandboxes(profile, options.pending_for, history_limits{.commands = options.commands_per_sandbox, .snapshots = options.max_snapshots, .sandboxes = options.max_sandboxes, .file_bytes = options.max_file_bytes}, options.transition_for), faults(options.max_faults) {}

    server_options options;
    const backend_profile& profile;
    // The process runtime, when it runs (before the sandboxes: it outlives every one of them).
    std::unique_ptr<process_runtime> processes;
    sandbox_store sandboxes;
    fault_queue faults;
    std::atomic<std::size_t> served{0};
    unsigned short lifecycle_port = 0;
    unsigned short direct_port = 0;  // shared: a sandbox without an address of its own
    direct_addresses direct;
    // Simulated work (a command line, a code cell, a terminal's line, a file search) runs
    // here, off the threads that serve connections: one sandbox's heaviest work then delays
    // only the requests that wait for that same sandbox (its lock), never another's.
    boost::asio::thread_pool workers{std::max(2u, options.threads)};
    // The process runtime sweeps every second: an expired sandbox's processes go when its
    // time does, not when it is next asked after (last: it stops before the rest goes).
    std::jthread sweeper = processes ? std::jthread([this](std::stop_token stop) { sweep_every_second(stop); })
                                     : std::jthread();
    void sweep_every_second(std::stop_token stop);

    // Runs `work` on `workers` and resumes the calling coroutine on its own executor with
    // what it returned (or threw).
    // Input up to this size is handled on the connection's thread: copying or parsing it
    // takes microseconds. Past it (a 64 MiB command line), a worker copies and parses.
    static constexpr std::size_t light_input_bytes = 64 * 1024;

    template <class Work>
    boost::asio::awaitable<std::invoke_result_t<Work&>> off_io(Work work) {
        using result = std::invoke_result_t<Work&>;
        co_return co_await boost::asio::co_spawn(
            workers,
            [&work]() -> boost::asio::awaitable<result> {
                yield_to_connections();
                co_return work();
            },
            boost::asio::use_awaitable);
    }

    // Lowers the calling worker thread's scheduling priority, once: a sandbox's seconds of
    // simulated work must not take the CPU from a thread that answers another sandbox.
    static void yield_to_connections() noexcept;

    // The same when `heavy` (input past `light_input_bytes`), else `work` here and now: a
    // worker's round trip costs more than light work does.
    template <class Work>
    boost::asio::awaitable<std::invoke_result_t<Work&>> off_io_if(bool heavy, Work work) {
        if (!heavy) co_return work();
        co_return co_await off_io(std::move(work));
    }

    // Brings the sandboxes' own addresses in line with their states; after anything that may
    // change a state (a lifecycle request, a fault that fails a sandbox).
    void reconcile_addresses();

    // Every reply carries an X-Request-ID (a UUID, as the spec's schema requires).
    [[nodiscard]] response json_reply(const exchange& x, int status, const boost::json::value& body) const;
    [[nodiscard]] response empty_reply(const exchange& x, int status) const;
    [[nodiscard]] response text_reply(const exchange& x, int status, std::string body, std::string_view type) const;
    // The {"code","message"} envelope every error uses.
    [[nodiscard]] response error_reply(const exchange& x, int status, std::string_view code,
                                       std::string_view message) const;
    // 404 `<BACKEND>::SANDBOX_NOT_FOUND`, worded as the backend words it.
    [[nodiscard]] response not_found(const exchange& x, std::string_view sandbox_id) const;
    // The code with the backend's prefix ("KUBERNETES::" + name).
    [[nodiscard]] std::string backend_code(std::string_view name) const;
};

void set_request_id(http::fields& fields);

// What the router found: the operation (as faults name it), the path parameters, and the
// fault taken for this request, if any.
struct call {
    std::string_view operation{};
    std::string sandbox_id{};
    std::string param{};  // an endpoint port, a command id
    std::optional<fault> active_fault{};
};

using route_handler = boost::asio::awaitable<void> (*)(context&, exchange&, call&);

// The routes, by API (defined beside their handlers).
struct route {
    http::verb method{};
    std::string_view pattern{};  // segments; "{id}" is the sandbox id, "{param}" the other parameter
    std::string_view operation{};
    route_handler handle{};
    // How execd's own telemetry names it (execd's routes only): its router's path where that
    // differs from the pattern (Gin names each parameter: "/command/status/:id"), and the
    // name its execution or filesystem metric records the work under ("run_command", "info").
    std::string_view execd_route{};
    std::string_view metric_operation{};
};

std::span<const route> lifecycle_routes() noexcept;
std::span<const route> execd_routes() noexcept;
std::span<const route> filesystem_routes() noexcept;  // execd's files and directories
std::span<const route> code_routes() noexcept;        // execd's code contexts and runs
std::span<const route> terminal_routes() noexcept;    // execd's interactive terminals (PTY)

// The whole request, routed: the one handler the HTTP server calls.
boost::asio::awaitable<void> dispatch(context& c, exchange& x);

// `%XX` escapes decoded, `+` read as a space (a query's form encoding).
[[nodiscard]] std::string percent_decode(std::string_view text);

// A query parameter's value, percent-decoded (the first, when it is given several times).
[[nodiscard]] std::optional<std::string> query_value(std::string_view target, std::string_view name);
// Every value of a query parameter given several times (`path=a&path=b`), in order.
[[nodiscard]] std::vector<std::string> query_values(std::string_view target, std::string_view name);

// A whole-number query parameter within [lo, hi]: an empty inner optional when absent,
// std::nullopt when it is malformed or out of range (the route answers 400).
[[nodiscard]] std::optional<std::optional<std::int64_t>> number_query(const exchange& x, std::string_view name,
                                                                      std::int64_t lo, std::int64_t hi);


}  // namespace ngfail::opensandbox::testing::detail
