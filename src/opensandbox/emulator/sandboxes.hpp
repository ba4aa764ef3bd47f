// The emulator's simulated world: sandboxes with their lifecycle, the commands run in them,
// and each sandbox's in-memory file system. Thread-safe. Everything a sandbox holds is
// reached through its id and goes when it goes; reads copy only what a request needs
// (file contents are shared, never copied under the lock).
//
// Two levels of locking, so that one sandbox's work never waits for another's: the store's
// lock guards the table of sandboxes, their records and the snapshots, and is held only for
// short, bounded steps; each sandbox's own lock guards what it holds (files, sessions, code
// contexts, terminals, commands) and may be held for as long as its work takes. The store's
// lock is never taken while a sandbox's is awaited.
#pragma once

#include "backends.hpp"
#include "file_tree.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

using wall_clock = std::chrono::system_clock;
using mono_clock = std::chrono::steady_clock;

// The longest any request may make the emulator wait or keep something: durations a
// client sends saturate here, so no deadline wraps into the past.
inline constexpr std::chrono::milliseconds longest_wait = std::chrono::hours(24 * 365 * 100);

// RFC 3339, UTC, whole seconds: "2026-11-30T14:00:00Z".
[[nodiscard]] std::string rfc3339(wall_clock::time_point t);
[[nodiscard]] std::optional<wall_clock::time_point> parse_rfc3339(std::string_view text);

// A command's status (its output is read separately, by range).
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
};

// What a running command should do next.
enum class command_fate { run_on, interrupted, gone };

// A slice of a command's combined stdout and stderr (background logs seek into it by byte).
struct command_output {
    std::string text{};
    std::size_t end = 0;  // the byte offset after the whole output so far
};

// What one shell's variables may hold, names and values together (a bash session's, a bash
// kernel's, a terminal's, a command's own): past it an `export` fails and changes nothing.
inline constexpr std::size_t max_shell_variable_bytes = 64 * 1024;

// A bash session's state between runs: its working directory, its exported variables and
// its last command's status (`$?`).
struct shell_state {
    std::string cwd = "/";
    int last_status = 0;

    [[nodiscard]] const std::map<std::string, std::string>& env() const noexcept { return env_; }
    // Sets a variable; false, and nothing changes, when the variables would hold more than
    // `max_shell_variable_bytes`.
    [[nodiscard]] bool set(std::string name, std::string value);

private:
    std::map<std::string, std::string> env_{};
    std::size_t bytes_ = 0;  // names and values in env_
};

// A sandbox's container in the process runtime (process/process_sandbox.hpp).
class process_sandbox;

// A sandbox's terminals (execd's PTY sessions) by id; terminal.hpp says what one does.
class terminal_session;
using terminal_map = std::map<std::string, std::shared_ptr<terminal_session>>;  // shared: deletable where incomplete

// A code context (execd's Jupyter session): its kernel's language and what the kernel holds
// between runs (simulated_interpreter.hpp says what runs in it).
using kernel_value = std::variant<std::int64_t, std::string>;
struct kernel_state {
    std::string language{};
    int execution_count = 0;  // the cells run so far
    std::map<std::string, kernel_value> names{};
    std::size_t name_bytes = 0;  // what `names` holds, names and values as text (max_kernel_bytes)
    shell_state shell{};  // a bash kernel's
};
class process_kernel;  // process/process_kernel.hpp
struct code_context {
    kernel_state kernel{};  // the simulated runtime's
    std::shared_ptr<process_kernel> real_kernel{};  // the process runtime's, once a cell has run
    std::string cwd{};
    std::string running{};  // the run in progress (a command run's id), if any: one at a time
};
// A sandbox's code contexts by id, and the one per language that a run naming no context
// uses (made on its first use, as execd makes it, and listed like the others).
struct code_contexts {
    std::map<std::string, code_context> by_id{};
    std::map<std::string, std::string> default_of{};
};

// How much command history one sandbox keeps: past either bound the oldest finished
// commands are forgotten (execd's own logs live in the pod, which a delete removes too).
struct history_limits {
    std::size_t commands = 256;
    std::size_t sessions = 256;  // bash sessions open at once
    std::size_t terminals = 32;  // at once, each keeping up to 1 MiB of output to replay
    std::size_t output_bytes = 64u << 20;  // commands' output and their lines, together
    std::size_t snapshots = 256;  // kept at once, in the whole server (each holds a file tree)
    std::size_t sandboxes = 4096;  // alive at once, in the whole server
    // What every sandbox's and snapshot's files may take together (file_tree::footprint):
    // past it a write fails as on a full disk, and a restore is refused.
    std::size_t file_bytes = std::size_t{1} << 30;
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
    mono_clock::time_point ready_at{};  // the end of a passing phase (Pending, Pausing, Resuming)
    bool secure_access = false;
    std::string access_token{};  // sent as X-EXECD-ACCESS-TOKEN when secure_access
    std::string snapshot_id{};   // the snapshot it was restored from, if any
    // What its runtime said beyond its status, for the diagnostics API: lines of display text
    // ("<time> <scope> <text>"), the newest kept within `max_diagnostic_bytes`.
    std::string diagnostic_events{};
    std::string diagnostic_logs{};
    bool never_started = false;  // no container ever ran: no container log
};

inline constexpr std::size_t max_diagnostic_bytes = 16 * 1024;

// A point-in-time capture of a sandbox's file system, as the server's snapshot service keeps
// one: Creating until the backend has captured it, then Ready; it outlives its sandbox.
struct snapshot_record {
    std::string id{};
    std::string sandbox_id{};
    std::optional<std::string> name{};
    std::string state{};  // Creating, Ready
    std::string reason{};
    std::string message{};
    wall_clock::time_point created_at{};
    wall_clock::time_point transition_at{};
    mono_clock::time_point ready_at{};
};

class sandbox_store {
public:
    sandbox_store(const backend_profile& profile, std::chrono::milliseconds pending_for, history_limits limits = {},
                  std::chrono::milliseconds transition_for = {})
        : profile_(profile), pending_for_(pending_for), transition_for_(transition_for), limits_(limits) {}

    // A new sandbox, Pending until `pending_for` has passed (Running at once when zero).
    // Restored from a snapshot, it starts with the snapshot's files and names it. Refused
    // past `history_limits::sandboxes`, or when a restore's files would not fit.
    enum class create_refusal { too_many, no_space };
    [[nodiscard]] std::variant<sandbox_record, create_refusal> create(
        boost::json::object image, boost::json::array entrypoint, boost::json::object metadata,
        std::optional<std::chrono::seconds> timeout, bool secure_access, const snapshot_record* restored_from = nullptr);

    // The sandbox as it is now (a Pending one whose time has come is Running); none when it
    // does not exist or has expired (an expired one is removed, as the backend does).
    [[nodiscard]] std::optional<sandbox_record> find(const std::string& id);
    // What a request to the sandbox's execd needs to know of it, without copying its image,
    // entrypoint or metadata (which may be large, and a stream keeps this for its life).
    struct gate {
        std::string state{};
        bool secure_access = false;
        std::string access_token{};
    };
    [[nodiscard]] std::optional<gate> find_gate(const std::string& id);

    // Changes a sandbox under the lock; false when there is none.
    bool update(const std::string& id, const std::function<void(sandbox_record&)>& change);
    // A pause or a resume of `s` (under `update`): from `from` to `to`, through `passing` for
    // `transition_for` when the backend shows that phase; why not, when `s` is elsewhere
    // (another pause or resume still in progress, or not in `from`).
    [[nodiscard]] std::optional<std::string> pass(sandbox_record& s, std::string_view verb, const status_shape& from,
                                                  const std::optional<status_shape>& passing,
                                                  const status_shape& to) const;

    // Removes the sandbox with everything it holds (commands, output, files).
    bool erase(const std::string& id);

    // The process runtime's container of a sandbox: attached once it has started; released
    // (its processes killed) when the sandbox goes or reaches a state no process lives in
    // (failed, terminated, expired). None in the simulated runtime.
    void attach(const std::string& id, std::shared_ptr<process_sandbox> box);
    [[nodiscard]] std::shared_ptr<process_sandbox> box(const std::string& id);
    // Applies the passage of time to every sandbox: expired ones go (and their processes).
    // Returns the containers of those that still hold processes.
    std::vector<std::pair<std::string, std::shared_ptr<process_sandbox>>> sweep();

    // The live records `keep` accepts, in id order: how many there are, and copies of at most
    // `count` of them from the `first` on. A list copies only the page it answers (4,096
    // sandboxes of 256 labels each are 100 MB of records).
    struct record_page {
        std::vector<sandbox_record> records;
        std::size_t total = 0;
    };
    [[nodiscard]] record_page page(const std::function<bool(const sandbox_record&)>& keep, std::size_t first,
                                   std::size_t count);

    // Snapshots. Taking one needs a Running sandbox and room (`history_limits::snapshots`,
    // and the files' footprint within `history_limits::file_bytes`);
    // it is Creating until `pending_for` has passed, with the files as they were when taken.
    enum class snapshot_refusal { no_sandbox, not_running, full, no_space };
    [[nodiscard]] std::variant<snapshot_record, snapshot_refusal> take_snapshot(const std::string& sandbox_id,
                                                                              std::optional<std::string> name);
    [[nodiscard]] std::optional<snapshot_record> snapshot(const std::string& id);
    [[nodiscard]] std::vector<snapshot_record> snapshots();  // oldest first
    enum class snapshot_erase { erased, no_snapshot, creating };
    snapshot_erase erase_snapshot(const std::string& id);

    // Runs `use` on the sandbox's file system under the lock and returns what it returns;
    // none when the sandbox does not exist.
    template <class Use>
    auto with_files(const std::string& sandbox_id, Use use) -> std::optional<decltype(use(std::declval<file_tree&>()))> {
        const std::shared_ptr<held_sandbox> s = live_shared(sandbox_id);
        if (!s) return std::nullopt;
        const std::lock_guard lock(s->mutex);
        const std::size_t before = s->counted_bytes.load();
        if (before == gone_mark) return std::nullopt;
        // The tree may grow into what the server's budget has left, and no further.
        const std::size_t others = file_bytes_.load() - before;
        s->files.set_room(limits_.file_bytes - std::min(limits_.file_bytes, others));
        auto used = use(s->files);
        recount(*s, before);
        return used;
    }
    // What every tree holds together (for tests and `ngfail serve`'s own bound).
    [[nodiscard]] std::size_t file_bytes() const noexcept { return file_bytes_.load(); }
    [[nodiscard]] std::optional<file_entry> file(const std::string& sandbox_id, const std::string& path);
    // The same for its bash sessions, by id (at most `history_limits::sessions` of them).
    template <class Use>
    auto with_sessions(const std::string& sandbox_id, Use use) {
        return with_part(sandbox_id, &held_sandbox::sessions, use);
    }
    [[nodiscard]] std::size_t sessions_per_sandbox() const noexcept { return limits_.sessions; }
    [[nodiscard]] std::size_t terminals_per_sandbox() const noexcept { return limits_.terminals; }
    // The same for its code contexts (at most `history_limits::sessions` of them too).
    template <class Use>
    auto with_contexts(const std::string& sandbox_id, Use use) {
        return with_part(sandbox_id, &held_sandbox::contexts, use);
    }

    // The same for its terminals (at most `history_limits::terminals` of them), with its files
    // as the commands typed into them read them.
    template <class Use>
    auto with_terminals(const std::string& sandbox_id, Use use)
        -> std::optional<decltype(use(std::declval<terminal_map&>(), std::declval<const file_tree&>()))> {
        const std::shared_ptr<held_sandbox> s = live_shared(sandbox_id);
        if (!s) return std::nullopt;
        const std::lock_guard lock(s->mutex);
        if (s->counted_bytes.load() == gone_mark) return std::nullopt;
        return use(s->terminals, s->files);
    }

    // Commands of one sandbox: each is found only through the sandbox that ran it. A start
    // is refused when the sandbox is gone, or (for a background command) when it already
    // runs `history_limits::commands` in the background: what a stranger's background
    // commands hold is bounded too (foreground ones are bounded by the connection cap, and
    // end with their connection). A command's first ending stands: finishing it again does
    // nothing. The run returned has no `content`: the store keeps the one copy of the line.
    enum class refused_start { no_sandbox, too_many_running };
    [[nodiscard]] std::variant<command_run, refused_start> start_command(const std::string& sandbox_id,
                                                                         std::string content, bool background);
    // Commands started so far, in every sandbox.
    [[nodiscard]] std::size_t commands_started() const noexcept { return started_.load(); }
    // A command keeps its first `max_command_output` bytes of output, then a line saying the
    // rest was not kept (a real command may print without end; its logs must not).
    static constexpr std::size_t max_command_output = 16 << 20;
    void append_output(const std::string& sandbox_id, const std::string& command_id, std::string_view text);
    void finish_command(const std::string& sandbox_id, const std::string& command_id, int exit_code,
                        std::string error);
    [[nodiscard]] std::optional<command_run> command(const std::string& sandbox_id, const std::string& command_id);
    // The output from byte `from` on (clamped to the output's end).
    [[nodiscard]] std::optional<command_output> output(const std::string& sandbox_id, const std::string& command_id,
                                                       std::size_t from);
    // Marks a running command interrupted; false when it is not running.
    bool interrupt(const std::string& sandbox_id, const std::string& command_id);
    [[nodiscard]] command_fate fate(const std::string& sandbox_id, const std::string& command_id);

private:
    struct held_command {
        command_run run;
        std::string output{};
        bool output_capped = false;  // past max_command_output: the rest is not kept
        bool interrupted = false;
    };
    // `record` is the store's (under its lock); the rest is the sandbox's, under `mutex`.
    struct held_sandbox {
        sandbox_record record;
        std::shared_ptr<process_sandbox> box{};  // the store's, as `record` is
        std::recursive_mutex mutex{};  // recursive: a bash kernel's `cat` reads files while it holds the kernel
        // What `files` counts in the server's budget (`file_bytes_`); `gone_mark` once the
        // sandbox has left the table (a request that still holds it then finds nothing).
        std::atomic<std::size_t> counted_bytes{0};
        file_tree files{};
        std::map<std::string, shell_state> sessions{};
        code_contexts contexts{};
        terminal_map terminals{};
        std::map<std::string, held_command> commands{};
        std::deque<std::string> finished{};  // command ids, in the order they finished
        std::size_t output_bytes = 0;
    };

    // Runs `use` on one part of a live sandbox under its lock; none when there is no sandbox.
    template <class Part, class Use>
    auto with_part(const std::string& sandbox_id, Part held_sandbox::*part, Use& use)
        -> std::optional<decltype(use(std::declval<Part&>()))> {
        const std::shared_ptr<held_sandbox> s = live_shared(sandbox_id);
        if (!s) return std::nullopt;
        const std::lock_guard lock(s->mutex);
        if (s->counted_bytes.load() == gone_mark) return std::nullopt;
        return use((*s).*part);
    }

    static constexpr std::size_t gone_mark = static_cast<std::size_t>(-1);
    // The sandbox, found under the store's lock (and released before its own is taken).
    [[nodiscard]] std::shared_ptr<held_sandbox> live_shared(const std::string& id);
    // Under the sandbox's lock, after its files may have changed: brings the server's budget
    // in line, unless the sandbox went meanwhile (its bytes were then taken out already).
    void recount(held_sandbox& s, std::size_t counted_before);

    void settle(sandbox_record& s) const;  // applies the passage of time
    [[nodiscard]] bool expired(const sandbox_record& s) const;
    [[nodiscard]] held_sandbox* live(const std::string& id);  // under the lock; expires and settles
    [[nodiscard]] bool holds_processes(std::string_view state) const noexcept;
    // A command and the sandbox holding it, found under the lock; both null when either is gone.
    // A command's sandbox, locked, and the command in it; both empty when either is gone.
    struct found_command {
        std::shared_ptr<held_sandbox> sandbox{};
        std::unique_lock<std::recursive_mutex> lock{};
        held_command* command = nullptr;
    };
    [[nodiscard]] found_command held(const std::string& sandbox_id, const std::string& command_id);
    void forget_old_commands(held_sandbox& s);

    const backend_profile& profile_;
    std::chrono::milliseconds pending_for_;
    std::chrono::milliseconds transition_for_;
    history_limits limits_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<held_sandbox>> sandboxes_;
    struct held_snapshot {
        snapshot_record record;
        file_tree files;
    };
    void settle(snapshot_record& s) const;
    std::map<std::string, held_snapshot> snapshots_;
    std::atomic<std::size_t> started_{0};
    std::atomic<std::size_t> file_bytes_{0};  // the footprints of every sandbox's and snapshot's files
    void forget_sandbox(std::map<std::string, std::shared_ptr<held_sandbox>>::iterator it);  // under the store's lock
};

}  // namespace ngfail::opensandbox::testing::detail
