// The emulator's simulated world: sandboxes with their lifecycle, the commands run in them,
// and each sandbox's in-memory file system. Thread-safe; every read returns a copy.
#pragma once

#include "backends.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ngfail::opensandbox::emulator {

using wall_clock = std::chrono::system_clock;
using mono_clock = std::chrono::steady_clock;

// RFC 3339, UTC, whole seconds: "2026-11-30T14:00:00Z".
[[nodiscard]] std::string rfc3339(wall_clock::time_point t);
[[nodiscard]] std::optional<wall_clock::time_point> parse_rfc3339(std::string_view text);

struct command_run {
    std::string id{};
    std::string sandbox_id{};
    std::string content{};  // the command as given
    bool background = false;
    bool running = true;
    std::optional<int> exit_code{};
    std::string error{};
    wall_clock::time_point started_at{};
    std::optional<wall_clock::time_point> finished_at{};
    std::string output{};  // stdout and stderr, combined (background logs seek into it by byte)
};

struct file_entry {
    std::string content{};
    int mode = 644;
    wall_clock::time_point modified_at{};
};

struct sandbox_record {
    std::string id{};
    boost::json::object image{};
    boost::json::array entrypoint{};
    boost::json::object metadata{};
    std::string state{};
    std::string reason{};
    std::string message{};
    wall_clock::time_point created_at{};
    std::optional<wall_clock::time_point> expires_at{};
    mono_clock::time_point ready_at{};  // Pending until then
    bool secure_access = false;
    std::string access_token{};  // sent as X-EXECD-ACCESS-TOKEN when secure_access
    std::map<std::string, file_entry> files{};
};

class sandbox_store {
public:
    sandbox_store(const backend_profile& profile, std::chrono::milliseconds pending_for)
        : profile_(profile), pending_for_(pending_for) {}

    // A new sandbox, Pending until `pending_for` has passed (Running at once when zero).
    sandbox_record create(boost::json::object image, boost::json::array entrypoint, boost::json::object metadata,
                          std::optional<std::chrono::seconds> timeout, bool secure_access);

    // The sandbox as it is now (a Pending one whose time has come is Running); none when it
    // does not exist or has expired (an expired one is removed, as the backend does).
    [[nodiscard]] std::optional<sandbox_record> find(const std::string& id);

    // Changes a sandbox under the lock; false when there is none.
    bool update(const std::string& id, const std::function<void(sandbox_record&)>& change);

    bool erase(const std::string& id);

    [[nodiscard]] std::vector<sandbox_record> all();

    // Commands.
    command_run start_command(const std::string& sandbox_id, std::string content, bool background);
    void append_output(const std::string& command_id, std::string_view text);
    void finish_command(const std::string& command_id, int exit_code, std::string error);
    [[nodiscard]] std::optional<command_run> command(const std::string& id);
    // Marks a running command interrupted; false when it is not running.
    bool interrupt(const std::string& command_id);
    [[nodiscard]] bool interrupted(const std::string& command_id);

private:
    void settle(sandbox_record& s) const;  // applies the passage of time
    [[nodiscard]] bool expired(const sandbox_record& s) const;

    const backend_profile& profile_;
    std::chrono::milliseconds pending_for_;
    std::mutex mutex_;
    std::map<std::string, sandbox_record> sandboxes_;
    std::map<std::string, command_run> commands_;
    std::map<std::string, bool> interrupts_;
};

}  // namespace ngfail::opensandbox::emulator
