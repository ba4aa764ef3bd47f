#include "opensandbox/emulator/process/cgroup.hpp"

#include <algorithm>
#include <csignal>
#include <limits>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include <sys/types.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {

namespace {

namespace fs = std::filesystem;
const fs::path root = "/sys/fs/cgroup";

// The server's own group in a hierarchy, from /proc/self/cgroup: "0::/path" for v2,
// "N:memory:/path" (or "N:cpu,cpuacct:/path") for a v1 controller.
std::optional<std::string> own_group(std::string_view controller) {
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find(':');
        const auto second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        std::stringstream list(controllers);
        for (std::string c; std::getline(list, c, ',');) {
            if (c == controller) return line.substr(second + 1);
        }
        if (controller.empty() && controllers.empty()) return line.substr(second + 1);
    }
    return std::nullopt;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

void write_file(const fs::path& path, std::string_view value) {
    std::ofstream out(path);
    out << value;
    out.flush();
    if (!out) throw std::system_error(errno ? errno : EIO, std::generic_category(), "cannot write " + path.string());
}

// The value after `key ` in a flat keyed file (memory.events, memory.oom_control).
std::int64_t keyed_value(const fs::path& path, std::string_view key) {
    std::istringstream in(read_file(path));
    std::string name;
    std::int64_t value = 0;
    while (in >> name >> value) {
        if (name == key) return value;
    }
    return 0;
}

// v1's hierarchies, by the directory they are mounted at (which names their controller).
struct v1_hierarchy {
    std::string_view name;
    bool required;
};
constexpr std::array<v1_hierarchy, 5> v1_hierarchies{{
    {"memory", true}, {"pids", true}, {"freezer", false}, {"cpu", false}, {"cpuacct", false}}};

// A number in a cgroup file; none for "max", an empty or unreadable file.
std::optional<std::int64_t> number_in(const fs::path& path) {
    std::istringstream in(read_file(path));
    std::int64_t value = 0;
    if (in >> value) return value;
    return std::nullopt;
}

// SIGKILL to every process in the group at `dir`; how many there were.
std::size_t kill_members(const fs::path& dir) {
    std::istringstream procs(read_file(dir / "cgroup.procs"));
    std::size_t killed = 0;
    for (pid_t pid = 0; procs >> pid;) killed += ::kill(pid, SIGKILL) == 0 ? 1 : 0;
    return killed;
}

fs::path under_own(std::string_view hierarchy, std::string_view controller, std::string_view name) {
    const auto own = own_group(controller);
    fs::path dir = hierarchy.empty() ? root : root / hierarchy;
    if (own && *own != "/") dir /= fs::path(*own).relative_path();
    return dir / name;
}

}  // namespace

cgroup::support cgroup::detect() {
    std::error_code ec;
    const auto writable = [](const fs::path& dir) { return ::access(dir.parent_path().c_str(), W_OK) == 0; };
    if (fs::exists(root / "cgroup.controllers", ec) &&
        read_file(root / "cgroup.controllers").find("memory") != std::string::npos) {
        if (!writable(under_own("", "", "x"))) {
            return {.v2 = true, .missing = "the server's cgroup is not writable (run as root, or delegate it)"};
        }
        return {.v2 = true};
    }
    if (fs::exists(root / "memory" / "memory.limit_in_bytes", ec) && fs::exists(root / "pids", ec)) {
        if (!writable(under_own("memory", "memory", "x")) || !writable(under_own("pids", "pids", "x"))) {
            return {.missing = "the server's memory and pids cgroups are not writable (run as root)"};
        }
        return {};
    }
    return {.missing = "the cgroup memory and pids controllers (cgroup v2 with memory enabled, or v1's "
                       "/sys/fs/cgroup/memory and /sys/fs/cgroup/pids) are not mounted"};
}

std::size_t cgroup::remove_orphans(std::string_view prefix) {
    const bool v2 = detect().v2;
    std::vector<fs::path> parents;
    if (v2) {
        parents.push_back(under_own("", "", "x").parent_path());
    } else {
        for (const auto& h : v1_hierarchies) {
            std::error_code ec;
            if (fs::exists(root / h.name, ec)) parents.push_back(under_own(h.name, h.name, "x").parent_path());
        }
    }
    std::size_t removed = 0;
    for (const auto& parent : parents) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(parent, ec)) {
            const std::string name = entry.path().filename().string();
            if (!name.starts_with(prefix)) continue;
            const std::string pid = name.substr(prefix.size(), name.find('-', prefix.size()) - prefix.size());
            if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
            if (fs::exists(fs::path("/proc") / pid, ec)) continue;  // its server still runs
            if (fs::exists(entry.path() / "freezer.state", ec)) {
                try {
                    write_file(entry.path() / "freezer.state", "THAWED");  // v1 holds a frozen kill
                } catch (const std::system_error&) {
                }
            }
            for (int tries = 0; tries < 200 && kill_members(entry.path()) > 0; ++tries) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            if (fs::remove(entry.path(), ec)) ++removed;
        }
    }
    return removed;
}

cgroup::cgroup(std::string_view name, const cgroup_limits& limits) : v2_(detect().v2) {
    const auto make = [&](fs::path made) {
        fs::create_directories(made);
        if (std::find(dirs_.begin(), dirs_.end(), made) == dirs_.end()) dirs_.push_back(made);
        return made;
    };
    constexpr std::int64_t period_us = 100'000;
    if (v2_) {
        of_.fill(make(under_own("", "", name)));
        const fs::path& group = dirs_[0];
        if (limits.memory_bytes) write_file(group / "memory.max", std::to_string(*limits.memory_bytes));
        if (limits.memory_bytes) write_file(group / "memory.swap.max", "0");
        if (limits.max_pids) write_file(group / "pids.max", std::to_string(*limits.max_pids));
        std::error_code ec;  // the cpu controller is there only where the parent hands it down
        if (limits.millicpus && fs::exists(group / "cpu.max", ec)) {
            write_file(group / "cpu.max", std::to_string(*limits.millicpus * period_us / 1000) + " " + std::to_string(period_us));
        }
        return;
    }
    for (std::size_t i = 0; i < v1_hierarchies.size(); ++i) {
        const v1_hierarchy& h = v1_hierarchies[i];
        std::error_code ec;
        if (!h.required && !fs::exists(root / h.name, ec)) continue;
        try {
            of_[i] = make(under_own(h.name, h.name, name));
        } catch (const fs::filesystem_error&) {
            if (h.required) throw;  // a freezer or a CPU account the server may not make: done without
        }
    }
    if (limits.memory_bytes) write_file(dir(memory) / "memory.limit_in_bytes", std::to_string(*limits.memory_bytes));
    if (limits.max_pids) write_file(dir(pids) / "pids.max", std::to_string(*limits.max_pids));
    if (limits.millicpus && !dir(cpu).empty()) {
        write_file(dir(cpu) / "cpu.cfs_period_us", std::to_string(period_us));
        write_file(dir(cpu) / "cpu.cfs_quota_us", std::to_string(*limits.millicpus * period_us / 1000));
    }
}

cgroup::~cgroup() {
    for (int tries = 0; tries < 200; ++tries) {
        if (kill_all() == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (const auto& group : dirs_) {
        std::error_code ignored;
        fs::remove(group, ignored);  // rmdir: a group's files are the kernel's
    }
}

void cgroup::add(int pid) const {
    for (const auto& group : dirs_) write_file(group / "cgroup.procs", std::to_string(pid));
}

std::int64_t cgroup::oom_kills() const {
    return keyed_value(dir(memory) / (v2_ ? "memory.events" : "memory.oom_control"), "oom_kill");
}

std::int64_t cgroup::memory_used() const {
    return number_in(dir(memory) / (v2_ ? "memory.current" : "memory.usage_in_bytes")).value_or(0);
}

std::optional<std::int64_t> cgroup::memory_limit() const {
    const auto limit = number_in(dir(memory) / (v2_ ? "memory.max" : "memory.limit_in_bytes"));
    // v1 says "no limit" with the largest page-aligned number
    if (!limit || *limit >= std::numeric_limits<std::int64_t>::max() / 2) return std::nullopt;
    return limit;
}

std::optional<std::int64_t> cgroup::cpu_used_ns() const {
    if (v2_) {
        const std::int64_t usec = keyed_value(dir(cpu) / "cpu.stat", "usage_usec");
        return usec * 1000;
    }
    if (dir(cpuacct).empty()) return std::nullopt;
    return number_in(dir(cpuacct) / "cpuacct.usage");
}

bool cgroup::freeze(bool frozen) const {
    if (v2_) {
        write_file(dir(freezer) / "cgroup.freeze", frozen ? "1" : "0");
        return true;
    }
    if (dir(freezer).empty()) return false;
    write_file(dir(freezer) / "freezer.state", frozen ? "FROZEN" : "THAWED");
    return true;
}

std::size_t cgroup::kill_all() const {
    std::size_t killed = 0;
    for (const auto& group : dirs_) killed += kill_members(group);
    // A v1 frozen process takes its SIGKILL only once thawed (v2 kills it where it stands).
    if (!v2_ && !dir(freezer).empty()) {
        try {
            (void)freeze(false);
        } catch (const std::system_error&) {
        }
    }
    return killed;
}

}  // namespace ngfail::opensandbox::testing::detail
