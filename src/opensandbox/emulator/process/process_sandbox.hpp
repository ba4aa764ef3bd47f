// A real sandbox on this machine: its own mount, PID, IPC, UTS, user and network namespaces
// (bubblewrap), the host's /usr read-only, a private writable /home, /root, /tmp and
// /workspace under the server's state folder, a non-root user inside, its memory and
// processes bounded by its own control group, and one long-lived supervisor inside that
// starts its commands (supervisor.hpp).
//
//   process_sandbox box("sbx-1", {.state_root = dir, .limits = {.memory_bytes = 64 << 20}});
//   auto run = box.start({.command = "python3 -c 'print(6*7)'"});
//   … read run.stdout_fd and run.stderr_fd to their end …
//   int exit_code = box.wait(run.id);   // 137 after the kernel's OOM kill; box.oom_kills() says so
#pragma once

#include "opensandbox/emulator/file_tree.hpp"
#include "opensandbox/emulator/process/cgroup.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

struct process_sandbox_options {
    std::filesystem::path state_root{};  // the sandbox's files go in a folder of its own under it
    cgroup_limits limits{};
    bool network = false;  // off: its own network namespace, with loopback only
    // The most its writable tree holds (0: no bound). A root server mounts the tree as a
    // tmpfs of this size, whose pages also count toward the memory of the sandbox's group
    // when its processes write them (as a Kubernetes emptyDir in memory); past it a write
    // fails with ENOSPC. A server that is not root cannot mount: its trees are unbounded.
    std::int64_t disk_bytes = 0;
};

// Removes a sandbox's folder (`state_root / id`), unmounting its tree first if it is one.
void remove_sandbox_folder(const std::filesystem::path& folder) noexcept;

// How a command's standard streams reach the server: pipes for stdout and stderr (stdin
// empty), the same with a stdin pipe, or a terminal (a PTY whose master the server holds).
enum class process_streams { pipes, with_stdin, terminal };

struct process_command {
    std::string command{};  // run by bash -c
    std::string cwd{};      // empty: the user's home
    std::vector<std::string> envs{};  // NAME=value
    process_streams streams = process_streams::pipes;
};

class process_sandbox {
public:
    // Empty when this host can run process sandboxes; else one line saying what is missing
    // and what to install or enable.
    [[nodiscard]] static std::string unavailable();

    // Starts the sandbox's supervisor; throws std::system_error with what failed.
    process_sandbox(std::string id, const process_sandbox_options& options);
    process_sandbox(const process_sandbox&) = delete;
    process_sandbox& operator=(const process_sandbox&) = delete;
    // Kills every process of the sandbox and removes its files and its control group.
    ~process_sandbox();

    // A command started: the server's ends of its streams (the caller owns and closes them).
    struct started {
        int id = 0;
        int stdout_fd = -1;    // pipes, with_stdin
        int stderr_fd = -1;    // pipes, with_stdin
        int stdin_fd = -1;     // with_stdin
        int terminal_fd = -1;  // terminal: the PTY's master, read for output, written for input
        int exit_fd = -1;      // an eventfd, readable once the command has ended (`wait` then returns at once)
    };
    // Throws std::system_error: EINVAL for a NUL byte in any field, or what the start met;
    // waits up to 10 s for the supervisor's answer (ETIMEDOUT).
    [[nodiscard]] started start(const process_command& command);
    // The same without waiting: the start is asked for, and `ready_fd` (an eventfd the
    // caller owns) becomes readable once the supervisor has answered, or is gone; then
    // `finish_start` says how it went. A start nobody will finish is abandoned (the command
    // killed if it starts). A supervisor starved of CPU holds no thread of the server's.
    struct start_request {
        int id = 0;
        int ready_fd = -1;
    };
    [[nodiscard]] start_request request_start(const process_command& command);
    // The command started; none while unanswered; std::system_error for a failed start.
    [[nodiscard]] std::optional<started> finish_start(int id);
    void abandon_start(int id);
    // Waits for the command's end: its exit code as bash gives it (128 + a signal's number).
    int wait(int id);
    // The same as waitpid's status (WIFSIGNALED tells a kill from an `exit 137`).
    int wait_status(int id);
    // Forgets the command's exit, now or when it comes (a command nobody will `wait` for).
    void forget(int id);
    // A signal to the command's process group.
    void signal(int id, int signal_number);
    // SIGKILL to every process of the sandbox (its supervisor too: the sandbox is dead).
    void kill_all() const { group_.kill_all(); }

    // Whether its supervisor (the sandbox's init) still runs.
    [[nodiscard]] bool alive() {
        const std::lock_guard lock(mutex_);
        return !gone_;
    }
    // The kernel's count of OOM kills in the sandbox.
    [[nodiscard]] std::int64_t oom_kills() const { return group_.oom_kills(); }
    [[nodiscard]] std::int64_t memory_used() const { return group_.memory_used(); }

    // What execd's /metrics reports, of the sandbox's own group: its CPUs (its CPU limit, else
    // the host's), the share of them it used since the last sample (since it started, for the
    // first), its memory limit (else the host's memory) and what it uses now.
    struct usage {
        double cpu_count = 0;
        double cpu_used_pct = 0;
        double mem_total_mib = 0;
        double mem_used_mib = 0;
    };
    [[nodiscard]] usage sample();

    // Pause and resume: every process stops where it stands, or goes on. `can_freeze` is false
    // where the host has no freezer (cgroup v1 without its freezer hierarchy).
    [[nodiscard]] bool can_freeze() const noexcept { return group_.can_freeze(); }
    void freeze(bool frozen) const { (void)group_.freeze(frozen); }
    // The host folder that holds the sandbox's writable tree (home, root, tmp, workspace).
    [[nodiscard]] const std::filesystem::path& files() const noexcept { return files_; }

    // The sandbox's files by their paths inside it (/workspace/a.txt), resolved within its
    // tree by the kernel (openat2 RESOLVE_IN_ROOT): `..`, an absolute symlink or a /proc path
    // cannot leave it. Failures are std::system_error with the errno (ENOENT, EISDIR, …).
    // Only regular files of at most `max_read_bytes` (EINVAL, EFBIG), and only in its writable
    // folders: /home, /root, /tmp, /workspace (ENOENT elsewhere).
    static constexpr std::size_t max_read_bytes = 64 << 20;
    [[nodiscard]] std::string read_file(std::string_view path) const;
    // A regular file of any size, opened for reading on the same terms (what a download
    // streams a piece at a time): the caller owns `fd`; `size` is the size when opened.
    struct opened_file {
        int fd = -1;
        std::uint64_t size = 0;
    };
    [[nodiscard]] opened_file open_file(std::string_view path) const;
    // Makes the directory and its parents (as mkdir -p) with `mode` (written as execd takes
    // it, see `write_file`); fails with ENOTDIR when a file is in the way.
    void make_directories(std::string_view path, int mode = 755) const;
    // Writes the file with `mode` (octal digits written as a decimal number, as execd takes
    // them: 644), making its parent directories (as mkdir -p).
    void write_file(std::string_view path, std::string_view bytes, int mode = 644) const;

    // execd's file operations on the same terms (paths resolved in the tree, only in its
    // writable folders, never following a link out of them; std::system_error with the errno).
    // Owners are named as the sandbox names them: `root`, `sandbox`, else the number.
    [[nodiscard]] entry_info info(std::string_view path) const;
    // The entries under a directory, `depth` levels down (links not followed), by name within
    // each directory, each directory's entries right after it; E2BIG past `most` entries, or
    // past `max_listed_path_bytes` of their paths.
    static constexpr std::size_t max_listed_path_bytes = std::size_t{64} << 20;
    [[nodiscard]] std::vector<entry_info> list(std::string_view path, int depth, std::size_t most) const;
    // Deletes a file (EISDIR for a directory; a missing one is no error).
    void remove_file(std::string_view path) const;
    // rm -rf (a missing one is no error); a writable folder itself keeps its place (EBUSY, as
    // a mount point does), once emptied.
    void remove_all(std::string_view path) const;
    // mv, making the destination's parents; EEXIST when it exists, EINVAL into itself.
    void move(std::string_view src, std::string_view dest) const;
    // Whether the sandbox has this user (or group): `root` and `sandbox`.
    [[nodiscard]] static bool has_user(std::string_view name);
    // chmod unless `mode` is 0 (written as execd takes it, see `write_file`), and chown to
    // the named user and group unless empty (EINVAL for one the sandbox has not), following
    // links, as chmod and chown do.
    void set_permissions(std::string_view path, int mode, std::string_view owner, std::string_view group) const;
    // Replaces every `old` in a file (its mode and owner kept); how many there were. EFBIG
    // when the result would pass `max_read_bytes`.
    std::size_t replace(std::string_view path, std::string_view old, std::string_view replacement) const;

    // Runs a command to its end and keeps its output: for tests and short probes.
    struct finished {
        int exit_code = -1;
        std::string stdout_text{};
        std::string stderr_text{};
    };
    finished run(const process_command& command);  // pipes, whatever `command.streams` says

private:
    void receive();  // the dispatcher: the supervisor's replies
    void signal_end(int id);  // under mutex_: sets and forgets the command's exit event
    void signal_answered(int id);  // under mutex_: the same for a start's answer

    std::string id_;
    std::filesystem::path state_;  // the sandbox's folder: its tree (`files_`) and its own /etc
    std::filesystem::path files_;
    int tree_ = -1;                // files_, opened: the root its paths resolve in
    std::string tree_path_;        // files_ as /proc names what is opened in it
    std::optional<std::int64_t> millicpus_;
    std::mutex sample_mutex_;
    std::chrono::steady_clock::time_point sampled_at_ = std::chrono::steady_clock::now();
    std::int64_t cpu_ns_at_sample_ = 0;
    cgroup group_;
    int control_ = -1;
    int bwrap_pid_ = -1;
    std::mutex mutex_;
    std::condition_variable changed_;
    int next_id_ = 1;
    std::map<int, started> started_;
    std::map<int, int> exits_;  // id → wait status
    std::map<int, int> failed_;  // id → errno
    std::map<int, int> exit_events_;  // id → the eventfd its end is signalled on (our copy)
    std::set<int> forgotten_;         // ids whose exit nobody waits for
    std::set<int> pending_;           // ids whose start the server waits for
    std::map<int, int> start_events_;  // id → the eventfd its start's answer is signalled on (our copy)
    bool gone_ = false;          // the supervisor's end closed
    std::thread receiver_;
};

}  // namespace ngfail::opensandbox::testing::detail
