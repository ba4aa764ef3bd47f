// A sandbox's control group: the kernel's bound on its memory and processes, and the
// kernel's own count of the OOM kills inside it (the evidence that a command was OOM-killed).
// cgroup v2 where the host's unified hierarchy has the memory controller, else v1's memory
// and pids hierarchies, each under the server's own group (/proc/self/cgroup).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

struct cgroup_limits {
    std::optional<std::int64_t> memory_bytes{};
    std::optional<std::int64_t> max_pids{};
};

class cgroup {
public:
    // Which hierarchy the host offers, or why none will do (one line: what to enable).
    struct support {
        bool v2 = false;
        std::string missing{};  // empty: usable
    };
    [[nodiscard]] static support detect();

    // Kills the processes of, and removes, every group under the server's own named
    // `<prefix><pid>-…` whose server process `<pid>` is gone (a server killed by SIGKILL leaves
    // its sandboxes' groups behind); how many it removed.
    static std::size_t remove_orphans(std::string_view prefix);

    // Makes the group `name` under the server's own, with `limits`; throws
    // std::system_error with what could not be made.
    cgroup(std::string_view name, const cgroup_limits& limits);
    cgroup(const cgroup&) = delete;
    cgroup& operator=(const cgroup&) = delete;
    // Kills every process still in it, then removes it.
    ~cgroup();

    // Moves `pid` (and what it forks from then on) into the group.
    void add(int pid) const;
    // The kernel's count of OOM kills in the group (memory.events or memory.oom_control).
    [[nodiscard]] std::int64_t oom_kills() const;
    // Bytes of memory the group uses now.
    [[nodiscard]] std::int64_t memory_used() const;
    // Sends SIGKILL to every process in the group; how many there were.
    std::size_t kill_all() const;

private:
    bool v2_ = false;
    std::vector<std::filesystem::path> dirs_;  // v2: one; v1: memory, then pids
};

}  // namespace ngfail::opensandbox::testing::detail
