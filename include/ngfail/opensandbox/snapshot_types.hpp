// <ngfail/opensandbox/snapshot_types.hpp> — snapshots: what one is (`snapshot_info`) and which
// `list_snapshots` returns (target ngfail::opensandbox_client; no Asio).
#pragma once

#include <ngfail/opensandbox/borrowed.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox {

// A snapshot: a point-in-time capture of a sandbox that outlives it. `state` is Creating
// until the server has captured it, then Ready (a restore needs Ready) or Failed; newer
// servers may add states.
struct snapshot_info {
    std::string id{};
    std::string sandbox_id{};  // the sandbox it was taken from
    std::optional<std::string> name{};
    std::string state{};
    std::optional<std::string> reason{};   // machine-readable, e.g. "snapshot_runtime_ready"
    std::optional<std::string> message{};  // for people
    std::string created_at{};              // RFC 3339, as the server wrote it
};

// Which snapshots `list_snapshots` returns: of one sandbox, in any of the states (as the
// server writes them: "Ready", not "ready"), newest first, pages of 1 to 200.
struct snapshot_list_request_ref;

struct snapshot_list_request {
    std::string sandbox_id{};           // empty: every sandbox's
    std::vector<std::string> states{};  // none: every state
    int page = 1;
    int page_size = 20;

    operator snapshot_list_request_ref() const noexcept;  // NOLINT(google-explicit-constructor)
};

// A `snapshot_list_request` borrowed, as `list_snapshots` takes it.
struct snapshot_list_request_ref {
    std::string_view sandbox_id{};
    strings_ref states{};
    int page = 1;
    int page_size = 20;

    [[nodiscard]] snapshot_list_request copy() const;
};

inline snapshot_list_request::operator snapshot_list_request_ref() const noexcept {
    return {.sandbox_id = sandbox_id, .states = states, .page = page, .page_size = page_size};
}

}  // namespace ngfail::opensandbox
