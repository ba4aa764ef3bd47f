// <ngfail/opensandbox/sandbox_types.hpp> — the lifecycle's values: what `create` and `list`
// take, what a sandbox looks like (`sandbox_info`), its metadata's patch, its endpoint
// (target ngfail::opensandbox_client; no Asio).
//
// Each request comes twice: the owning struct, to keep (`create_request`), and its borrowed
// view, which every face takes and which a braced argument builds (`create_request_ref`;
// <ngfail/opensandbox/borrowed.hpp> says why). The owning one converts to the view.
#pragma once

#include <ngfail/opensandbox/borrowed.hpp>

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox {

// What `create` asks for unless told otherwise, as the official SDKs do.
inline constexpr std::string_view default_image = "python:3.11";
inline constexpr std::array<std::string_view, 3> default_entrypoint{"tail", "-f", "/dev/null"};
inline constexpr std::array<string_pair, 2> default_resource_limits{{{"cpu", "500m"}, {"memory", "512Mi"}}};

struct create_request_ref;

struct create_request {
    std::string image{default_image};
    std::vector<std::string> entrypoint{default_entrypoint.begin(), default_entrypoint.end()};
    std::optional<int> timeout_s{};
    std::map<std::string, std::string> resource_limits{default_resource_limits.begin(), default_resource_limits.end()};
    std::map<std::string, std::string> metadata{};
    // `create` returns once the sandbox is usable, as the official SDK waits for it: the
    // sandbox Running and execd answering GET /ping, polled every `ready_poll` for at most
    // `ready_timeout` (and never past the call's timeout). A sandbox that does not become
    // ready is `errc::readiness_timeout`: `provider_start_failed`, delivery `delivered`.
    bool wait_until_ready = true;
    std::chrono::milliseconds ready_timeout{30000};
    std::chrono::milliseconds ready_poll{200};
    // A sandbox the create leaves Failed, Terminated or never ready is deleted, so that no
    // failed create leaves one behind; the failure's reason says whether the delete worked.
    bool delete_if_failed = true;
    // Restores the sandbox from a Ready snapshot (`create_snapshot`): its files as they were.
    // When set, `image` is not sent (the server runs the snapshot's image) and the entrypoint
    // may be left empty (the server's default for a restore is `tail -f /dev/null`).
    std::string snapshot_id{};

    operator create_request_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `create_request` borrowed, as `create` takes it in each face (<ngfail/opensandbox/borrowed.hpp>
// says why): the same fields and defaults, owning nothing, so that
// `co_await sandboxes.async_create({.image = "python:3.12"})` is safe with every compiler.
struct create_request_ref {
    std::string_view image = default_image;
    strings_ref entrypoint{default_entrypoint};
    std::optional<int> timeout_s{};
    string_map_ref resource_limits{default_resource_limits};
    string_map_ref metadata{};
    bool wait_until_ready = true;
    std::chrono::milliseconds ready_timeout{30000};
    std::chrono::milliseconds ready_poll{200};
    bool delete_if_failed = true;
    std::string_view snapshot_id{};

    [[nodiscard]] create_request copy() const;
};

inline create_request::operator create_request_ref() const noexcept {
    return {.image = image,
            .entrypoint = entrypoint,
            .timeout_s = timeout_s,
            .resource_limits = resource_limits,
            .metadata = metadata,
            .wait_until_ready = wait_until_ready,
            .ready_timeout = ready_timeout,
            .ready_poll = ready_poll,
            .delete_if_failed = delete_if_failed,
            .snapshot_id = snapshot_id};
}

struct sandbox_info {
    std::string id{};
    std::string state{};                  // Pending, Running, …, Terminated, Failed (or newer)
    std::optional<std::string> reason{};  // the status reason, as reported
    std::optional<std::string> expires_at{};
    std::optional<std::string> snapshot_id{};  // the snapshot it was restored from
    std::map<std::string, std::string> metadata{};
};

// What `patch_metadata` does to a sandbox's metadata (JSON Merge Patch, RFC 7396): a value
// adds or replaces its key, `std::nullopt` deletes it (a missing key is no error), and keys
// not named stay.
using metadata_patch = std::map<std::string, std::optional<std::string>>;

struct endpoint_info {
    std::string endpoint{};  // host:port[/path]
    std::map<std::string, std::string> headers{};
};

struct list_request_ref;

struct list_request {
    std::vector<std::string> states{};  // any of these, in any case (none: every state)
    std::map<std::string, std::string> metadata{};  // every pair must match
    int page = 1;
    int page_size = 20;

    operator list_request_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `list_request` borrowed, as `list` takes it (<ngfail/opensandbox/borrowed.hpp>).
struct list_request_ref {
    strings_ref states{};
    string_map_ref metadata{};
    int page = 1;
    int page_size = 20;

    [[nodiscard]] list_request copy() const;
};

inline list_request::operator list_request_ref() const noexcept {
    return {.states = states, .metadata = metadata, .page = page, .page_size = page_size};
}

}  // namespace ngfail::opensandbox
