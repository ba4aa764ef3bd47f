// A sandbox's control group: the kernel's bound on its memory, processes and CPU, the
// kernel's own count of the OOM kills inside it (the evidence that a command was OOM-killed),
// its CPU time, and its freezing (pause). cgroup v2 where the host's unified hierarchy has the
// memory controller, else v1's memory and pids hierarchies (and freezer, cpu and cpuacct
// where the host mounts them), each under the server's own group (/proc/self/cgroup).
#pragma once

#include <array>
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
    std::optional<std::int64_t> millicpus{};  // CPU time per wall second, in thousandths of a CPU
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
    // Bytes of memory the group uses now, and may use (none: no limit).
    [[nodiscard]] std::int64_t memory_used() const;
    [[nodiscard]] std::optional<std::int64_t> memory_limit() const;
    // CPU time its processes have used, in nanoseconds; none where the host does not count it.
    [[nodiscard]] std::optional<std::int64_t> cpu_used_ns() const;
    // Stops every process in the group where it stands, or lets them go on; false where the
    // host has no freezer (v1 without its freezer hierarchy).
    bool freeze(bool frozen) const;
    [[nodiscard]] bool can_freeze() const noexcept { return v2_ || !dir(freezer).empty(); }
    // Sends SIGKILL to every process in the group (a frozen one too); how many there were.
    std::size_t kill_all() const;

private:
    enum part { memory, pids, freezer, cpu, cpuacct, parts };
    [[nodiscard]] const std::filesystem::path& dir(part p) const { return of_[p]; }

    bool v2_ = false;
    std::array<std::filesystem::path, parts> of_{};  // each part's group; empty where the host has none
    std::vector<std::filesystem::path> dirs_;        // the groups made, each once (v2: one)
};

}  // namespace ngfail::opensandbox::testing::detail
