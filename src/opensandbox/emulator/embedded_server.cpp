#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include "context.hpp"
#include "faults.hpp"
#include "http_server.hpp"

#include <ngfail/opensandbox/operation.hpp>

#include <csignal>
#include <stdexcept>
#include <string>
#include <utility>

#include <pthread.h>

namespace ngfail::opensandbox::testing {

namespace {

// Every thread the server makes (its connections', its workers', its runtime's, and those
// they make in turn) inherits its maker's signal mask: made with SIGPIPE blocked, a write to
// a pipe whose reader has gone (a code kernel's stdin, a terminal's) fails with EPIPE there
// instead of killing the whole process. The caller's own mask is given back once they are made.
class sigpipe_blocked_while_built {
public:
    sigpipe_blocked_while_built() noexcept {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &pipe, &callers_);
    }
    sigpipe_blocked_while_built(const sigpipe_blocked_while_built&) = delete;
    sigpipe_blocked_while_built& operator=(const sigpipe_blocked_while_built&) = delete;
    ~sigpipe_blocked_while_built() { built(); }
    void built() noexcept {
        if (std::exchange(restored_, true)) return;
        ::pthread_sigmask(SIG_SETMASK, &callers_, nullptr);
    }

private:
    sigset_t callers_{};
    bool restored_ = false;
};

}  // namespace

struct embedded_server::impl {
    explicit impl(server_options options)
        : world(std::move(options)), server([this](detail::exchange& x) { return detail::dispatch(world, x); },
                                            world.options.threads,
                                            detail::server_limits{.read_timeout = world.options.read_timeout,
                                                                    .max_connections = world.options.max_connections}) {
        world.lifecycle_port = server.listen(world.options.host, world.options.port);
        world.direct_port = server.listen(world.options.host, 0);
        world.direct.attach([this](unsigned short port) { return server.listen(world.options.host, port); },
                            [this](unsigned short port) { server.close_listener(port); });
        if (!world.options.tls_certificate_file.empty()) {
            server.use_tls(world.options.tls_certificate_file, world.options.tls_key_file);
        }
        server.start();
        mask.built();
    }

    sigpipe_blocked_while_built mask;  // first: before any thread is made
    detail::context world;
    detail::http_server server;
};

embedded_server::embedded_server(server_options options) : impl_(std::make_unique<impl>(std::move(options))) {}
// The workers are joined once the connections have ended (their runs may still finish),
// before the threads' io_contexts go, where a finished run resumes its coroutine.
embedded_server::~embedded_server() { stop(); }

unsigned short embedded_server::port() const noexcept { return impl_->world.lifecycle_port; }
unsigned short embedded_server::direct_port() const noexcept { return impl_->world.direct_port; }

void embedded_server::inject(fault f) {
    if (auto why = detail::never_acts(f)) throw std::invalid_argument("embedded_server::inject: " + *why);
    if (!impl_->world.faults.push(std::move(f))) {
        throw std::length_error("embedded_server::inject: " + std::to_string(impl_->world.options.max_faults) +
                                " faults are waiting already (server_options::max_faults)");
    }
}

void embedded_server::set_sandbox_status(std::string_view sandbox_id, std::string state, std::string reason) {
    impl_->world.sandboxes.update(std::string(sandbox_id), [&](detail::sandbox_record& s) {
        s.state = std::move(state);
        s.reason = std::move(reason);
    });
    impl_->world.reconcile_addresses();
}

std::size_t embedded_server::requests() const noexcept { return impl_->world.served.load(); }
std::size_t embedded_server::commands_started() const noexcept { return impl_->world.sandboxes.commands_started(); }
std::size_t embedded_server::open_connections() const noexcept { return impl_->server.open_connections(); }
std::size_t embedded_server::threads() const noexcept { return impl_->server.thread_count(); }

void embedded_server::stop() {
    if (impl_->world.sweeper.joinable()) {  // it opens and closes listeners: before they go
        impl_->world.sweeper.request_stop();
        impl_->world.sweeper.join();
    }
    impl_->server.stop();
    impl_->world.workers.join();
}

}  // namespace ngfail::opensandbox::testing
