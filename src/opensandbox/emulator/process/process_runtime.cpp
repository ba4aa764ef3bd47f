#include "opensandbox/emulator/process/process_runtime.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace fs = std::filesystem;

// What a server's folders and control groups are named: the prefix, then its process id.
constexpr std::string_view own_prefix = "ngfail-";

// The operations the process runtime serves: the lifecycle but taking snapshots; commands,
// bash sessions, terminals, code contexts and metrics; files and directories.
constexpr std::array<std::string_view, 46> served{
    "create", "get",  "list",      "kill",        "renew",     "metadata", "endpoint", "pause", "resume", "list_snapshots",
    "get_snapshot", "delete_snapshot", "ping", "exec", "interrupt", "exec_status", "exec_logs", "create_session",
    "run_in_session", "delete_session", "metrics", "watch_metrics", "upload", "download", "file_info", "delete_files",
    "move_files", "list_directory", "create_directories", "delete_directories", "set_permissions", "search_files",
    "replace_contents", "create_terminal", "terminal_status", "delete_terminal", "attach_terminal", "diagnostic_logs",
    "diagnostic_events", "run_code", "interrupt_code", "create_code_context", "list_code_contexts",
    "delete_code_contexts", "get_code_context", "delete_code_context"};

fs::path base_of(const server_options& o) {
    if (!o.state_dir.empty()) return o.state_dir;
    const char* tmp = std::getenv("TMPDIR");
    return fs::path(tmp && *tmp ? tmp : "/tmp") / "ngfail-sandboxes";
}

// Removes the folders of servers that are gone (`ngfail-<pid>` whose process is not).
void remove_orphan_folders(const fs::path& base) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with(own_prefix)) continue;
        const std::string pid = name.substr(own_prefix.size());
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (fs::exists(fs::path("/proc") / pid, ec)) continue;
        for (const auto& sandbox : fs::directory_iterator(entry.path(), ec)) remove_sandbox_folder(sandbox.path());
        fs::remove_all(entry.path(), ec);
    }
}

}  // namespace

std::optional<std::int64_t> memory_quantity(std::string_view text) noexcept {
    std::int64_t number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || number < 0) return std::nullopt;
    // A fraction ("1.5Gi"), to nine digits: kept in billionths until the unit is known.
    std::int64_t billionths = 0;
    const char* rest = end;
    if (rest != text.data() + text.size() && *rest == '.') {
        std::int64_t scale = 100'000'000;
        for (++rest; rest != text.data() + text.size() && *rest >= '0' && *rest <= '9'; ++rest, scale /= 10) {
            billionths += (*rest - '0') * scale;
        }
    }
    const std::string_view suffix(rest, static_cast<std::size_t>(text.data() + text.size() - rest));
    static constexpr std::array<std::pair<std::string_view, std::int64_t>, 9> units{{
        {"", 1},
        {"k", 1000},
        {"M", 1000 * 1000},
        {"G", 1000 * 1000 * 1000},
        {"T", std::int64_t{1000} * 1000 * 1000 * 1000},
        {"Ki", 1 << 10},
        {"Mi", 1 << 20},
        {"Gi", 1 << 30},
        {"Ti", std::int64_t{1} << 40},
    }};
    const auto unit = std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == suffix; });
    constexpr std::int64_t most = std::int64_t{1} << 62;
    if (unit == units.end() || number > most / unit->second - 1) return std::nullopt;
    return number * unit->second + static_cast<std::int64_t>(static_cast<long double>(billionths) * unit->second / 1e9L);
}

process_runtime::process_runtime(const server_options& options)
    : defaults_{.memory_bytes = options.sandbox_memory_bytes, .max_pids = options.sandbox_max_processes},
      disk_bytes_(options.sandbox_disk_bytes) {
    if (const std::string why = process_sandbox::unavailable(); !why.empty()) {
        throw std::runtime_error("the process runtime cannot run here: " + why);
    }
    const fs::path base = base_of(options);
    fs::create_directories(base);
    // The sandboxes' user (nobody, when the server is root) walks through to its tree.
    ::chmod(base.c_str(), 0711);
    remove_orphan_folders(base);
    (void)cgroup::remove_orphans(own_prefix);
    root_ = base / (std::string(own_prefix) + std::to_string(::getpid()));
    fs::create_directories(root_);
    ::chmod(root_.c_str(), 0711);
    owns_root_ = true;
    reaper_ = std::thread([this] { tear_down(); });
}

process_runtime::~process_runtime() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    pending_.notify_all();
    reaper_.join();
    std::error_code ignored;
    if (owns_root_) fs::remove_all(root_, ignored);
}

void process_runtime::tear_down() {
    std::unique_lock lock(mutex_);
    for (;;) {
        pending_.wait(lock, [&] { return stopping_ || !dying_.empty(); });
        if (dying_.empty()) return;  // stopping, and nothing left
        process_sandbox* box = dying_.front();
        dying_.pop_front();
        lock.unlock();
        delete box;  // kills its processes, removes its files and its group
        lock.lock();
    }
}

std::optional<std::int64_t> cpu_quantity(std::string_view text) noexcept {
    const bool milli = text.ends_with('m');
    if (milli) text.remove_suffix(1);
    double number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number, std::chars_format::fixed);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(number >= 0)) return std::nullopt;
    const double millicpus = milli ? number : number * 1000;
    if (millicpus < 10 || millicpus > 1'000'000) return std::nullopt;
    return static_cast<std::int64_t>(millicpus);
}

std::variant<cgroup_limits, std::string> process_runtime::limits_of(const boost::json::object* resource_limits) const {
    cgroup_limits limits = defaults_;
    const auto given = [&](std::string_view key) { return resource_limits ? resource_limits->if_contains(key) : nullptr; };
    if (const auto* memory = given("memory")) {
        const auto bytes = memory->is_string() ? memory_quantity(memory->as_string()) : std::nullopt;
        if (!bytes || *bytes < min_memory_bytes) {
            return "resourceLimits.memory must be a quantity of at least 16Mi (512Mi, 2Gi, 1G)";
        }
        limits.memory_bytes = *bytes;
    }
    if (const auto* cpu = given("cpu")) {
        const auto millicpus = cpu->is_string() ? cpu_quantity(cpu->as_string()) : std::nullopt;
        if (!millicpus) return "resourceLimits.cpu must be a quantity from 10m to 1000 (500m, 1, 0.25)";
        limits.millicpus = *millicpus;
    }
    return limits;
}

std::shared_ptr<process_sandbox> process_runtime::start(const std::string& id, const cgroup_limits& limits) {
    std::unique_ptr<process_sandbox> box;
    try {
        box = std::make_unique<process_sandbox>(
            id, process_sandbox_options{.state_root = root_, .limits = limits, .disk_bytes = disk_bytes_});
    } catch (...) {
        remove_sandbox_folder(root_ / id);  // what it had made of its folder
        throw;
    }
    return std::shared_ptr<process_sandbox>(box.release(), [this](process_sandbox* dying) {
        {
            const std::lock_guard lock(mutex_);
            dying_.push_back(dying);
        }
        pending_.notify_one();
    });
}

std::unique_ptr<process_runtime::held_place> process_runtime::take_place(
    const std::shared_ptr<std::atomic<std::size_t>>& count, std::size_t most) {
    for (std::size_t now = count->load(); now < most;) {
        if (count->compare_exchange_weak(now, now + 1)) return std::make_unique<held_place>(count);
    }
    return nullptr;
}

bool process_runtime::serves(std::string_view operation) noexcept {
    return std::find(served.begin(), served.end(), operation) != served.end();
}

}  // namespace ngfail::opensandbox::testing::detail

namespace ngfail::opensandbox::testing {

std::string process_runtime_unavailable() { return detail::process_sandbox::unavailable(); }

}  // namespace ngfail::opensandbox::testing
