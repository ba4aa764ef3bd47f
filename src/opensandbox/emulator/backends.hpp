// Backend profiles: what a real Kubernetes or Docker OpenSandbox reports, as data. A named
// fault shows what its profile says; adding a backend is one row.
#pragma once

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <string>
#include <optional>
#include <string_view>

namespace ngfail::opensandbox::testing::detail {

// A sandbox's status as the lifecycle API reports it.
struct status_shape {
    std::string_view state;
    std::string_view reason;
    std::string_view message;  // may hold "{id}", replaced by the sandbox id
};

// An error reply the backend gives instead of a sandbox.
struct error_shape {
    int status;
    std::string_view code;  // without the backend prefix
    std::string_view message;
};

struct backend_profile {
    ngfail::opensandbox::testing::backend kind;
    std::string_view name;                // as `ngfail serve --backend` takes it
    std::string_view code_prefix;         // "KUBERNETES::", "DOCKER::"
    std::string_view not_found_message;   // "{id}" is replaced
    status_shape pending;
    status_shape running;
    status_shape paused;
    // The phases a pause and a resume pass through where the backend shows them (Kubernetes:
    // Pausing, Resuming); none where they are immediate (Docker).
    std::optional<status_shape> pausing;
    std::optional<status_shape> resuming;
    status_shape oom_killed;              // after an OOM kill of the sandbox's process
    status_shape crashed;                 // after the main process died
    // A create whose image cannot be pulled: Kubernetes waits for a pod that never becomes
    // ready (504 POD_READY_TIMEOUT); Docker fails the pull at once.
    error_shape image_pull_error;
    // A create whose sandbox never starts (the `pod_ready_timeout` fault): Kubernetes waits
    // for its pod to be ready, then gives up with 504 POD_READY_TIMEOUT, naming the sandbox
    // only in its message; Docker reports the container's failed start. "{id}" and
    // "{elapsed}" (seconds waited) are replaced.
    error_shape start_timeout;
    // Expiry: Kubernetes' controller deletes the sandbox (later calls: 404 SANDBOX_NOT_FOUND);
    // a backend that keeps it shows this status instead.
    bool expiry_deletes;
    status_shape expired;
    // A snapshot once captured: the runtime's message, and the image a restore runs ("{id}"
    // is the snapshot's id).
    std::string_view snapshot_ready_message;
    std::string_view snapshot_image;
};

[[nodiscard]] const backend_profile& profile_of(ngfail::opensandbox::testing::backend b) noexcept;

// `text` with each "{id}" replaced by `id`.
[[nodiscard]] std::string with_id(std::string_view text, std::string_view id);
// `shape.message` with "{id}" replaced.
[[nodiscard]] inline std::string message_for(const status_shape& shape, std::string_view sandbox_id) {
    return with_id(shape.message, sandbox_id);
}

}  // namespace ngfail::opensandbox::testing::detail
