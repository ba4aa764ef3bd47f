// <ngfail/opensandbox/embedded_server.hpp> — an OpenSandbox-compatible server on loopback,
// with scriptable faults (target ngfail::opensandbox_client).
//
// It speaks the lifecycle API (`/v1/sandboxes…`, API key in `OPEN-SANDBOX-API-KEY`) and
// execd's command API behind the server proxy (`/v1/sandboxes/{id}/proxy/44772/command…`),
// as the OpenAPI specs describe them, for what the client uses. Commands are simulated:
// `echo TEXT` prints TEXT, `exit N` exits N, `sleep MS` waits; anything else prints what it
// would have run. Faults make it fail the way a real deployment does, one request at a time:
//
//   ngfail::opensandbox::embedded_server server({.api_key = "sk-test"});
//   server.inject(ngfail::opensandbox::fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED",
//                                                        "Could not connect to the backend sandbox"));
//   ngfail::opensandbox::client c({.port = server.port(), .api_key = "sk-test"});
//
// It is what `ngfail demo` and the end-to-end tests run against.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox {

// One scripted misbehaviour, applied to the next `times` requests of `operation` (create,
// get, kill, renew, endpoint, exec, exec_status).
struct fault {
    enum class action {
        http_error,         // status with the {"code","message"} envelope (and Retry-After)
        drop_before_init,   // exec: 200, then the connection closes before any event
        drop_after_init,    // exec: `init` sent, then the connection closes
        no_terminal_event,  // exec: the stream ends cleanly without error/execution_complete
        signal_exit,        // exec: `error` event with evalue "-1", "signal: killed"
        stall,              // nothing is answered for `stall_for`
        malformed_json,     // a 200 whose body is not JSON
        sandbox_status,     // the reply reports the sandbox in `state` with `reason` (create, get)
    };

    std::string operation{};
    action what = action::http_error;
    int status = 500;
    std::string code{};
    std::string message{};
    std::optional<int> retry_after_s{};
    std::string state{};   // sandbox_status: "Failed", "Terminated", …
    std::string reason{};  // sandbox_status: "OOMKilled", "ImagePullBackOff", …
    std::chrono::milliseconds stall_for{0};
    int times = 1;

    static fault http_error(std::string operation, int status, std::string code, std::string message,
                            std::optional<int> retry_after_s = std::nullopt);
    static fault exec(action what);
    static fault stall(std::string operation, std::chrono::milliseconds how_long);
    static fault malformed(std::string operation);
    static fault sandbox_status(std::string operation, std::string state, std::string reason);
};

struct server_options {
    std::string api_key{};  // required on lifecycle routes when not empty
};

class embedded_server {
public:
    // Listens on 127.0.0.1 at an ephemeral port, serving from threads of its own.
    explicit embedded_server(server_options options = {});
    ~embedded_server();
    embedded_server(const embedded_server&) = delete;
    embedded_server& operator=(const embedded_server&) = delete;

    [[nodiscard]] unsigned short port() const noexcept;

    // Queues a fault; faults for one operation apply in the order given.
    void inject(fault f);

    // Sets a sandbox's state and reason from now on (as a controller would after an OOM kill).
    void set_sandbox_status(std::string_view sandbox_id, std::string state, std::string reason);

    // Requests served so far (every route, faults included).
    [[nodiscard]] std::size_t requests() const noexcept;

    // Stops listening and ends every connection; the port is then closed.
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace ngfail::opensandbox
