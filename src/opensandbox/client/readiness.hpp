// Readiness and clean-up for `create`: the SDK's wait for a usable sandbox, and the delete
// of one that a create left dead or never ready.
#pragma once

#include "call.hpp"

namespace ngfail::opensandbox::detail {

[[nodiscard]] inline bool is_terminal(const sandbox_info& info) noexcept {
    return info.state == "Failed" || info.state == "Terminated";
}

// A sandbox the create left Failed or Terminated is deleted (within the call's deadline),
// unless the caller keeps it; what became of it, as the end of a failure's reason.
[[nodiscard]] awaitable<std::string> clean_up_failed_sandbox(const call_context& c, const create_request& request,
                                                             const sandbox_info& info);

// Records a create that made a sandbox that is not alive: its status is the evidence, and
// the create was delivered; the sandbox is cleaned up.
awaitable<void> record_dead_sandbox(const call_context& c, const create_request& request, const sandbox_info& info,
                                    observation& seen);

// Readiness as the official SDK waits for it: the sandbox Running and execd answering its
// health check, polled every `ready_poll` until `ready_timeout` (and never past the call's
// deadline). The sandbox as last seen when ready; nothing after recording why not.
[[nodiscard]] awaitable<std::optional<sandbox_info>> wait_until_ready(const call_context& c,
                                                                     const create_request& request, sandbox_info info,
                                                                     observation& seen);

}  // namespace ngfail::opensandbox::detail
