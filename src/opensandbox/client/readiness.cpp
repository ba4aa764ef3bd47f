#include "readiness.hpp"

#include <thread>

namespace ngfail::opensandbox::detail {
namespace {

// A sandbox the create left Failed or Terminated is deleted (within the call's deadline),
// unless the caller keeps it; the reason says which, so nothing is left behind unsaid.
std::string clean_up_failed_sandbox(const call_context& c, const create_request& request, const sandbox_info& info) {
    if (!request.delete_if_failed) return "; kept, as asked";
    const auto step = c.within(c.options.timeout);
    if (!step) return "; left behind: no time was left to delete it";
    try {
        (void)step->lifecycle(beast_http::verb::delete_, "/sandboxes/" + path_segment(info.id), nullptr);
        return "; deleted";
    } catch (const std::exception& e) {
        return "; left behind: the delete failed (" + std::string(std::string_view(e.what()).substr(0, 200)) + ")";
    }
}

// execd answers its health check: GET /ping through the sandbox's endpoint.
bool execd_answers(const call_context& c, const std::string& sandbox_id) {
    return execd_call(c, sandbox_id, beast_http::verb::get, "/ping").result_int() == 200;
}

}  // namespace

void record_dead_sandbox(const call_context& c, const create_request& request, const sandbox_info& info,
                         observation& seen) {
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    seen.provider_status_reason = info.reason;
    seen.reason = "create: the new sandbox is " + info.state + (info.reason ? " (" + *info.reason + ")" : "") +
                  clean_up_failed_sandbox(c, request, info);
}

std::optional<sandbox_info> wait_until_ready(const call_context& c, const create_request& request, sandbox_info info,
                                             observation& seen) {
    // Some of the call's time is kept for deleting a sandbox that never became ready.
    const auto reserve = std::min<clock::duration>(std::chrono::seconds(2), (c.deadline - clock::now()) / 4);
    const auto give_up = std::min(c.deadline - reserve, deadline_after(request.ready_timeout));
    for (;;) {
        const call_context step{c.options, give_up, c.secrets};
        try {
            info = sandbox_of(step.lifecycle(beast_http::verb::get, "/sandboxes/" + path_segment(info.id), nullptr));
            if (is_terminal(info)) {
                record_dead_sandbox(c, request, info, seen);
                return std::nullopt;
            }
            if (info.state == "Running" && execd_answers(step, info.id)) return info;
        } catch (...) {
            // not ready yet: the next poll decides
        }
        if (clock::now() + request.ready_poll >= give_up) break;
        std::this_thread::sleep_for(request.ready_poll);
    }
    seen.sandbox_id = info.id;
    seen.sandbox_state = info.state;
    seen.transport_error = make_error_code(errc::readiness_timeout);
    seen.reason = "create: the sandbox did not become ready (last seen " + info.state + ")" +
                  clean_up_failed_sandbox(c, request, info);
    return std::nullopt;
}

}  // namespace ngfail::opensandbox::detail
