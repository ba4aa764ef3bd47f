#include "backends.hpp"

#include <ngfail/detail/enum_names.hpp>

#include <array>

namespace ngfail::opensandbox::testing::detail {

// What each backend really reports (OpenSandbox's server and controller, see
// docs/opensandbox.md): Kubernetes puts the pod's reason only inside `message`; Docker
// reports the container's exit code.
constexpr std::array profiles{
    backend_profile{
        .kind = backend::kubernetes,
        .name = "kubernetes",
        .code_prefix = "KUBERNETES::",
        .not_found_message = "Sandbox '{id}' not found",
        .pending = {"Pending", "CREATING", "Sandbox is being created"},
        .running = {"Running", "RUNNING", "Sandbox is running"},
        .paused = {"Paused", "PAUSED", "Sandbox is paused"},
        .pausing = status_shape{"Pausing", "PAUSING", "Pausing sandbox"},
        .resuming = status_shape{"Resuming", "RESUMING", "Resuming sandbox"},
        .oom_killed = {"Failed", "FAILED",
                       "1/1 observed pods failed; primary reason=OOMKilled; sample pod={id}-0; "
                       "container sandbox terminated with OOMKilled (exit code 137)"},
        .crashed = {"Failed", "FAILED", "1/1 observed pods failed; primary reason=CrashLoopBackOff; sample pod={id}-0"},
        .image_pull_error = {504, "POD_READY_TIMEOUT",
                             "Pod did not become ready within the timeout; the workload was deleted"},
        .start_timeout = {504, "POD_READY_TIMEOUT",
                          "Timeout waiting for sandbox {id} to be Running with IP. Elapsed: {elapsed}s, Last state: Pending"},
        .expiry_deletes = true,
        .expired = {"Terminated", "SandboxExpired", "Sandbox expired"},
        .snapshot_ready_message = "Kubernetes snapshot image created successfully.",
        .snapshot_image = "opensandbox-snapshots:{id}",
    },
    backend_profile{
        .kind = backend::docker,
        .name = "docker",
        .code_prefix = "DOCKER::",
        .not_found_message = "Sandbox {id} not found.",
        .pending = {"Pending", "CONTAINER_STARTING", "Sandbox container is starting."},
        .running = {"Running", "CONTAINER_RUNNING", "Sandbox container is running."},
        .paused = {"Paused", "CONTAINER_PAUSED", "Sandbox container is paused."},
        .pausing = std::nullopt,
        .resuming = std::nullopt,
        .oom_killed = {"Failed", "CONTAINER_EXITED_ERROR", "Sandbox container exited with code 137."},
        .crashed = {"Failed", "CONTAINER_EXITED_ERROR", "Sandbox container exited with code 1."},
        .image_pull_error = {500, "SANDBOX_IMAGE_PULL_FAILED", "Failed to pull the sandbox image."},
        .start_timeout = {500, "SANDBOX_START_FAILED", "Failed to start sandbox {id}: not running after {elapsed}s."},
        .expiry_deletes = true,
        .expired = {"Terminated", "CONTAINER_EXITED", "Sandbox container exited with code 0."},
        .snapshot_ready_message = "Docker snapshot image created successfully.",
        .snapshot_image = "opensandbox-snapshots:{id}",
    },
};

const backend_profile& profile_of(backend b) noexcept {
    for (const backend_profile& p : profiles) {
        if (p.kind == b) return p;
    }
    return profiles.front();
}

std::string with_id(std::string_view text, std::string_view id) {
    std::string out(text);
    for (auto at = out.find("{id}"); at != std::string::npos; at = out.find("{id}", at + id.size())) out.replace(at, 4, id);
    return out;
}

}  // namespace ngfail::opensandbox::testing::detail

namespace ngfail::opensandbox::testing {

std::string_view name(backend b) noexcept {
    for (const auto& p : detail::profiles) {
        if (p.kind == b) return p.name;
    }
    return {};
}

std::optional<backend> parse_backend(std::string_view text) noexcept {
    for (const auto& p : detail::profiles) {
        if (p.name == text) return p.kind;
    }
    return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 2> runtime_names{"simulated", "process"};
}  // namespace

std::string_view name(runtime r) noexcept { return ngfail::detail::enum_name(runtime_names, r); }
std::optional<runtime> parse_runtime(std::string_view text) noexcept {
    return ngfail::detail::parse_enum<runtime>(runtime_names, text);
}

}  // namespace ngfail::opensandbox::testing
