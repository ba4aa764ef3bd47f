// <ngfail/opensandbox/diagnostic_types.hpp> — what the diagnostics API returns
// (`diagnostic_content`; target ngfail::opensandbox_client; no Asio).
//
// The diagnostics API (`specs/diagnostic-api.yml`, 0.1.0) gives a sandbox's logs and events
// as display text: for a person or a troubleshooting agent, "not a stable schema". The client
// returns it as it came and never reads it for a failure's kind.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ngfail::opensandbox {

// One diagnostics reply. The text is inline (`content`) or at a download address
// (`content_url`, valid until `expires_at`); `truncated` says the server cut it.
struct diagnostic_content {
    std::string sandbox_id{};
    std::string kind{};   // "logs" or "events"
    std::string scope{};  // as the server used it: "all", "container", "runtime", …
    std::string delivery{};      // "inline" or "url"
    std::string content_type{};  // "text/plain; charset=utf-8"
    std::optional<std::string> content{};
    std::optional<std::string> content_url{};
    std::optional<std::int64_t> content_length{};
    std::optional<std::string> expires_at{};  // RFC 3339, as the server wrote it
    bool truncated = false;
    std::vector<std::string> warnings{};  // what the server says is missing or incomplete
};

}  // namespace ngfail::opensandbox
