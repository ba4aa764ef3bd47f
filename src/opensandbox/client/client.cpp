// The client as a whole: its construction, how its blocking faces run, and the borrowed
// requests' copies. Each operation is written once, in the file of its group (lifecycle.cpp,
// commands.cpp, files.cpp, …): a coroutine taking its arguments by value, and its `make_*`,
// which copies the arguments into it; its faces come from its declaration in client.hpp.
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

// An attach's session stays on the client's executor: it is made there.
void client::drive(boost::asio::awaitable<void> work, bool on_executor) {
    if (on_executor) {
        detail::drive_on_executor(*state_, std::move(work));
    } else {
        detail::drive_here(*state_, std::move(work));
    }
}

namespace detail {

void drive_here(client_state& client, awaitable<void> work) {
    struct loan {
        client_state& client;
        asio::io_context& io = client.borrow_driver();
        asio::io_context* outer = std::exchange(client_state::driving, &io);  // a callback may call again
        ~loan() {
            client_state::driving = outer;
            client.return_driver(io);
        }
    } driver{client};
    asio::co_spawn(driver.io, std::move(work), [](const std::exception_ptr&) {});
    driver.io.restart();
    driver.io.run();  // until the call and what it left (a cancelled timer's completion) are done
}

void drive_on_executor(client_state& client, awaitable<void> work) {
    std::promise<void> finished;
    auto done = finished.get_future();
    asio::co_spawn(client.executor, std::move(work), [&](const std::exception_ptr&) { finished.set_value(); });
    done.wait();
}

}  // namespace detail

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
            .background = background,
            .detached = detached};
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

snapshot_list_request snapshot_list_request_ref::copy() const {
    return {.sandbox_id = std::string(sandbox_id), .states = states.copy(), .page = page, .page_size = page_size};
}

terminal_request terminal_request_ref::copy() const {
    terminal_request owned;
    if (cwd) owned.cwd.emplace(*cwd);
    if (command) owned.command.emplace(*command);
    return owned;
}

list_request list_request_ref::copy() const {
    return {.states = states.copy(), .metadata = metadata.copy(), .page = page, .page_size = page_size};
}

}  // namespace ngfail::opensandbox
