#include "readiness.hpp"

namespace ngfail::opensandbox::detail {
namespace {

// A sandbox the create left Failed or Terminated is deleted (within the call's deadline),
// unless the caller keeps it; the reason says which, so nothing is left behind unsaid.
awaitable<std::string> clean_up_failed_sandbox(const call_context& c, const create_request& request,
                                               const sandbox_info& info) {
    if (!request.delete_if_failed) co_return "; kept, as asked";
    const auto step = c.within(c.options.timeout);
    if (!step) co_return "; left behind: no time was left to delete it";
    std::string failed;
    try {
        (void)co_await step->lifecycle(beast_http::verb::delete_, sandbox_path(info.id), nullptr);
        co_return "; deleted";
    } catch (const std::exception& e) {
        failed = std::string(std::string_view(e.what()).substr(0, 200));
    }
    co_return "; left behind: the delete failed (" + failed + ")";
}

// execd answers its health check: GET /ping through the sandbox's endpoint.
awaitable<bool> execd_answers(const call_context& c, const std::string& sandbox_id) {
    co_return (co_await c.execd_call(sandbox_id, beast_http::verb::get, "/ping")).result_int() == 200;
}

// Polls once: the sandbox as it is now, and whether it is usable.
awaitable<bool> ready_now(const call_context& step, sandbox_info& info) {
    info = sandbox_of(co_await step.lifecycle(beast_http::verb::get, sandbox_path(info.id), nullptr));
    if (is_terminal(info) || info.state != "Running") co_return false;
    co_return co_await execd_answers(step, info.id);
}

}  // namespace

awaitable<void> record_dead_sandbox(const call_context& c, const create_request& request, const sandbox_info& info,
                                    observation& seen) {
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    seen.provider_status_reason = info.reason;
    std::string what = "create: the new sandbox is " + info.state;
    if (info.reason) what += " (" + *info.reason + ")";
    seen.reason = what + co_await clean_up_failed_sandbox(c, request, info);
}

awaitable<std::optional<sandbox_info>> wait_until_ready(const call_context& c, const create_request& request,
                                                        sandbox_info info, observation& seen) {
    // Some of the call's time is kept for deleting a sandbox that never became ready.
    const auto reserve = std::min<clock::duration>(std::chrono::seconds(2), (c.deadline - clock::now()) / 4);
    const auto give_up = std::min(c.deadline - reserve, deadline_after(request.ready_timeout));
    asio::steady_timer pause(co_await asio::this_coro::executor);
    // The sandbox exists from here on: whatever ends the wait (a cancellation too) names it.
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    for (;;) {
        const call_context step = c.until(give_up);
        bool ready = false;
        try {
            ready = co_await ready_now(step, info);
        } catch (...) {
            if (is_cancellation(std::current_exception())) throw;
            // not ready yet: the next poll decides
        }
        seen.sandbox_state = info.state;
        if (ready) co_return info;
        if (is_terminal(info)) {
            co_await record_dead_sandbox(c, request, info, seen);
            co_return std::nullopt;
        }
        if (clock::now() + request.ready_poll >= give_up) break;
        pause.expires_after(request.ready_poll);
        co_await pause.async_wait(asio::use_awaitable);
    }
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    seen.transport_error = make_error_code(errc::readiness_timeout);
    seen.reason = "create: the sandbox did not become ready (last seen " + info.state + ")" +
                  co_await clean_up_failed_sandbox(c, request, info);
    co_return std::nullopt;
}

}  // namespace ngfail::opensandbox::detail
