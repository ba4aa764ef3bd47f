// The process runtime's side of a server: the folder its sandboxes live in, the bounds each
// gets, which operations it serves so far, and a thread that tears sandboxes down, so that
// a sandbox's going (a delete, an expiry) never waits for its processes to die.
#pragma once

#include "opensandbox/emulator/process/process_sandbox.hpp"

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/json/object.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

namespace ngfail::opensandbox::testing::detail {

// A Kubernetes memory quantity ("512Mi", "2Gi", "1G", "1000k", "1073741824") in bytes; none
// when `text` is not one, or is past 2^62.
[[nodiscard]] std::optional<std::int64_t> memory_quantity(std::string_view text) noexcept;
// The least memory a sandbox may have: its supervisor and a shell must fit.
inline constexpr std::int64_t min_memory_bytes = std::int64_t{16} << 20;
// A Kubernetes CPU quantity ("500m", "1", "0.25") in thousandths of a CPU; none when `text`
// is not one, or is under 10m (the kernel's least quota) or over 1000 CPUs.
[[nodiscard]] std::optional<std::int64_t> cpu_quantity(std::string_view text) noexcept;

class process_runtime {
public:
    // Makes the state folder and removes what a killed server left (its folders and control
    // groups, found by the dead process's id); throws std::runtime_error saying what the host
    // lacks when it cannot run sandboxes.
    explicit process_runtime(const server_options& options);
    ~process_runtime();  // waits for the sandboxes being torn down, then removes its folder
    process_runtime(const process_runtime&) = delete;
    process_runtime& operator=(const process_runtime&) = delete;

    // The bounds a create request's `resourceLimits` gives a sandbox: `memory` (else the
    // server's default) and `cpu` (else none), the server's process bound; or why they are
    // refused, in one line.
    [[nodiscard]] std::variant<cgroup_limits, std::string> limits_of(const boost::json::object* resource_limits) const;

    // Starts sandbox `id`'s container with `limits`. Its last owner's release hands it to the
    // teardown thread. Throws std::system_error with what failed.
    [[nodiscard]] std::shared_ptr<process_sandbox> start(const std::string& id, const cgroup_limits& limits);

    // The real terminals and code kernels of all its sandboxes, each kind bounded together:
    // each holds a few of the server's descriptors (its streams, its exit's event), which the
    // process's limit bounds for every connection too. One takes a place while it lives
    // (none: refused).
    static constexpr std::size_t max_terminals = 256;
    static constexpr std::size_t max_kernels = 256;
    class held_place {
    public:
        explicit held_place(std::shared_ptr<std::atomic<std::size_t>> count) noexcept : count_(std::move(count)) {}
        held_place(const held_place&) = delete;
        held_place& operator=(const held_place&) = delete;
        ~held_place() { --*count_; }

    private:
        std::shared_ptr<std::atomic<std::size_t>> count_;
    };
    [[nodiscard]] std::unique_ptr<held_place> take_terminal_place() { return take_place(terminals_, max_terminals); }
    [[nodiscard]] std::unique_ptr<held_place> take_kernel_place() { return take_place(kernels_, max_kernels); }

    // Whether the runtime serves `operation` (as faults name it) yet; the others answer 501.
    [[nodiscard]] static bool serves(std::string_view operation) noexcept;

private:
    void tear_down();  // the teardown thread
    static std::unique_ptr<held_place> take_place(const std::shared_ptr<std::atomic<std::size_t>>& count,
                                                  std::size_t most);

    std::filesystem::path root_;
    bool owns_root_ = false;
    cgroup_limits defaults_;
    // Shared: a terminal or a kernel may outlive the runtime in the store's teardown.
    std::shared_ptr<std::atomic<std::size_t>> terminals_ = std::make_shared<std::atomic<std::size_t>>(0);
    std::shared_ptr<std::atomic<std::size_t>> kernels_ = std::make_shared<std::atomic<std::size_t>>(0);
    std::int64_t disk_bytes_;
    std::mutex mutex_;
    std::condition_variable pending_;
    std::deque<process_sandbox*> dying_;
    bool stopping_ = false;
    std::thread reaper_;
};

}  // namespace ngfail::opensandbox::testing::detail
