// The client as a whole: its construction, and the borrowed requests' copies. Each
// operation is written once, in its own file (lifecycle.cpp, commands.cpp, files.cpp, …):
// a coroutine taking its arguments by value, then its three faces, each one line over it.
#include "call.hpp"

namespace ngfail::opensandbox {

client::client(client_options options) : state_(std::make_unique<detail::client_state>(options)) {}
client::client(boost::asio::any_io_executor executor, client_options options)
    : state_(std::make_unique<detail::client_state>(std::move(executor), options)) {}
client::~client() = default;
client::client(client&&) noexcept = default;
client& client::operator=(client&&) noexcept = default;

boost::asio::any_io_executor client::get_executor() const noexcept { return state_->executor; }
std::size_t client::idle_connections() const { return state_->pool.idle(); }

// ---- borrowed requests, copied when an operation is made ------------------------------------------

create_request create_request_ref::copy() const {
    return {.image = std::string(image),
            .entrypoint = entrypoint.copy(),
            .timeout_s = timeout_s,
            .resource_limits = resource_limits.copy(),
            .metadata = metadata.copy(),
            .wait_until_ready = wait_until_ready,
            .ready_timeout = ready_timeout,
            .ready_poll = ready_poll,
            .delete_if_failed = delete_if_failed,
            .snapshot_id = std::string(snapshot_id)};
}

struct command command_ref::copy() const {
    std::optional<std::string> owned_cwd;
    if (cwd) owned_cwd.emplace(*cwd);
    return {.command = std::string(command),
            .cwd = std::move(owned_cwd),
            .timeout = timeout,
            .envs = envs.copy(),
            .idle_timeout = idle_timeout,
            .total_timeout = total_timeout,
            .on_stdout = on_stdout.copy(),
            .on_stderr = on_stderr.copy(),
            .background = background};
}

code_run code_run_ref::copy() const {
    return {.code = std::string(code),
            .context_id = std::string(context_id),
            .language = std::string(language),
            .idle_timeout = idle_timeout,
            .total_timeout = total_timeout,
            .on_stdout = on_stdout.copy(),
            .on_stderr = on_stderr.copy()};
}

list_request list_request_ref::copy() const {
    return {.states = states.copy(), .metadata = metadata.copy(), .page = page, .page_size = page_size};
}

}  // namespace ngfail::opensandbox
