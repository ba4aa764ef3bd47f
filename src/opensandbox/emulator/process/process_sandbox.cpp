#include "opensandbox/emulator/process/process_sandbox.hpp"

#include "opensandbox/emulator/process/supervisor.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <optional>
#include <span>
#include <system_error>
#include <limits>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <grp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {

namespace {

namespace fs = std::filesystem;

// The host's unprivileged user that a root server runs sandboxes as (nobody): inside, the
// sandbox's user 1000 is this user outside, so a host file is only what `nobody` may read.
constexpr uid_t host_user = 65534;
constexpr gid_t host_group = 65534;

[[noreturn]] void fail(const std::string& what, int error = errno) {
    throw std::system_error(error, std::generic_category(), what);
}

std::string which(const char* program) {
    for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin"}) {
        const std::string path = std::string(dir) + "/" + program;
        if (::access(path.c_str(), X_OK) == 0) return path;
    }
    return {};
}

// The host files a dynamically linked program needs to start, bound read-only when present.
constexpr std::array<const char*, 8> host_etc{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                               "/etc/alternatives", "/etc/localtime", "/etc/nsswitch.conf",
                                               "/etc/ssl", "/etc/mime.types"};

void write_text(const fs::path& path, std::string_view text) {
    std::ofstream out(path);
    out << text;
}

// The sandbox's folder: its tree (what its paths resolve in; a tmpfs of `disk_bytes` when
// given) and its own /etc beside it, owned by the user it runs as.
fs::path make_folder(const fs::path& dir, bool chown_to_sandbox, std::int64_t disk_bytes) {
    fs::create_directories(dir / "tree");
    if (disk_bytes > 0 && chown_to_sandbox) {
        const std::string size = "size=" + std::to_string(disk_bytes) + ",mode=0755";
        if (::mount("tmpfs", (dir / "tree").c_str(), "tmpfs", MS_NOSUID | MS_NODEV, size.c_str()) != 0) {
            fail("mounting the sandbox's tree (a tmpfs of " + std::to_string(disk_bytes >> 20) + " MiB)");
        }
    }
    for (const char* sub : {"tree/home/sandbox", "tree/root", "tree/tmp", "tree/workspace", "etc"}) {
        fs::create_directories(dir / sub);
    }
    write_text(dir / "etc/passwd", "root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1000::/home/sandbox:/bin/bash\n");
    write_text(dir / "etc/group", "root:x:0:\nsandbox:x:1000:\n");
    write_text(dir / "etc/hostname", "sandbox\n");
    write_text(dir / "etc/hosts", "127.0.0.1 localhost sandbox\n");
    if (chown_to_sandbox) {
        for (const auto& entry : fs::recursive_directory_iterator(dir)) {
            (void)::lchown(entry.path().c_str(), host_user, host_group);
        }
        (void)::lchown(dir.c_str(), host_user, host_group);
    }
    return dir;
}

// The folders of the tree, which commands see at the same paths (the rest of what they see
// is the host's, read-only, and out of the file routes' reach).
constexpr std::array<std::string_view, 4> writable{"home", "root", "tmp", "workspace"};

// Linux's PATH_MAX: a longer path is refused before any work (ENAMETOOLONG).
constexpr std::size_t max_path = 4096;

// A path inside the sandbox relative to its tree ("." for the tree itself); none for a path
// outside its writable folders.
std::optional<std::string> relative_inside(std::string_view path) {
    // A NUL ends the name the kernel is given: `..\0` would be `..` to it, and a name here.
    if (path.find('\0') != std::string_view::npos) return std::nullopt;
    std::string relative = file_tree::normal(path).substr(1);
    if (relative.empty()) return ".";
    const std::string_view first = std::string_view(relative).substr(0, relative.find('/'));
    if (std::find(writable.begin(), writable.end(), first) == writable.end()) return std::nullopt;
    return relative;
}

// Whether the open `fd` lies in one of the writable folders of the tree at `tree_path` (its
// host path, by /proc). A symlink resolved in the tree may lead beside them: `/usr`, which
// inside the sandbox is the host's, not a folder of the tree.
bool in_writable_folder(int fd, const std::string& tree_path) {
    std::array<char, max_path * 2> at{};
    const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), at.data(), at.size());
    if (n <= 0 || static_cast<std::size_t>(n) == at.size()) return false;
    std::string_view host(at.data(), static_cast<std::size_t>(n));
    if (!host.starts_with(tree_path) || host.size() <= tree_path.size() || host[tree_path.size()] != '/') return false;
    host.remove_prefix(tree_path.size() + 1);
    return std::find(writable.begin(), writable.end(), host.substr(0, host.find('/'))) != writable.end();
}

// EAGAIN: a rename or a mount anywhere raced a `..` of the walk (openat2(2): try again), or
// a lease holds the file. A sandbox renaming in a loop, or taking leases, could make either
// last for ever: a few tries, then the error.
int openat2_retrying(int dir, const char* path, const open_how& how) {
    for (int tries = 0;;) {
        const long fd = ::syscall(SYS_openat2, dir, path, &how, sizeof how);
        if (fd >= 0) return static_cast<int>(fd);
        if (errno == EINTR) continue;
        if (errno != EAGAIN || ++tries == 64) return -1;
    }
}

// A path inside the sandbox, opened within its tree (the host folder `tree_path`, opened as
// `tree`); -1 with ENOENT for a path outside its writable folders, ENAMETOOLONG past PATH_MAX.
int open_inside(int tree, const std::string& tree_path, std::string_view path, std::uint64_t flags, std::uint64_t mode = 0) {
    if (path.size() > max_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    const std::optional<std::string> relative = relative_inside(path);
    if (!relative) {
        errno = ENOENT;
        return -1;
    }
    const open_how how{.flags = flags | O_CLOEXEC, .mode = mode, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    const int fd = openat2_retrying(tree, relative->c_str(), how);
    if (fd >= 0 && *relative != "." && !in_writable_folder(fd, tree_path)) {
        ::close(fd);
        errno = ENOENT;
        return -1;
    }
    return fd;
}

std::vector<std::string> bwrap_arguments(const fs::path& folder, const std::string& self, bool network) {
    const fs::path tree = folder / "tree";
    // The supervisor is the namespace's init (--as-pid-1): the kernel drops the signals its
    // commands send it (they run as the same user), so none can stop or kill it.
    std::vector<std::string> a{"bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
                               "--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
                               "--ro-bind", "/usr", "/usr",
                               "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
                               "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                               "--proc", "/proc", "--dev", "/dev"};
    if (network) a.push_back("--share-net");
    for (const char* sub : {"home", "root", "tmp", "workspace"}) {
        a.insert(a.end(), {"--bind", (tree / sub).string(), std::string("/") + sub});
    }
    for (const char* file : {"passwd", "group", "hostname", "hosts"}) {
        a.insert(a.end(), {"--ro-bind", (folder / "etc" / file).string(), std::string("/etc/") + file});
    }
    for (const char* file : host_etc) {
        if (::access(file, F_OK) == 0) a.insert(a.end(), {"--ro-bind", file, file});
    }
    a.insert(a.end(), {"--ro-bind", self, supervisor::program_inside, "--chdir", "/home/sandbox", "--clearenv",
                       "--setenv", supervisor::fd_variable, "3", "--", supervisor::program_inside});
    return a;
}

}  // namespace

std::string process_sandbox::unavailable() {
    if (which("bwrap").empty()) return "bubblewrap is not installed (apt-get install bubblewrap)";
    if (std::ifstream limit("/proc/sys/user/max_user_namespaces"); limit) {
        long n = 0;
        if (limit >> n && n == 0) return "user namespaces are disabled (sysctl user.max_user_namespaces is 0)";
    }
    if (const auto groups = cgroup::detect(); !groups.missing.empty()) return groups.missing;
    if (which("bash").empty()) return "bash is not installed";
    // A root server starts bubblewrap as `nobody`, which must reach its program (bound inside).
    if (::geteuid() == 0) {
        std::error_code ec;
        const fs::path self = fs::read_symlink("/proc/self/exe", ec);
        for (fs::path at = self; !ec && !at.empty(); at = at.parent_path()) {
            struct stat st {};
            const bool file = at == self;
            const mode_t needed = file ? (S_IROTH | S_IXOTH) : S_IXOTH;
            if (::stat(at.c_str(), &st) != 0 || (st.st_mode & needed) != needed) {
                return "the server's program is not readable by the sandboxes' user (nobody): " + at.string();
            }
            if (at == at.root_path()) break;
        }
    }
    return {};
}

process_sandbox::process_sandbox(std::string id, const process_sandbox_options& options)
    : id_(std::move(id)),
      state_(make_folder(options.state_root / id_, ::geteuid() == 0, options.disk_bytes)),
      files_(state_ / "tree"),
      tree_(::open(files_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
      tree_path_(fs::weakly_canonical(files_).string()),
      millicpus_(options.limits.millicpus),
      group_("ngfail-" + std::to_string(::getpid()) + "-" + id_, options.limits) {
    if (tree_ < 0) fail("opening " + files_.string());
    std::array<int, 2> pair{};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair.data()) != 0) fail("socketpair");
    std::array<int, 2> go{};  // the child waits until it is in the control group
    if (::pipe2(go.data(), O_CLOEXEC) != 0) fail("pipe");
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    const auto args = bwrap_arguments(state_, self, options.network);
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const std::string bwrap = which("bwrap");
    const bool root = ::geteuid() == 0;
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    const pid_t pid = ::fork();
    if (pid == 0) {
        char ready = 0;
        (void)!::read(go[0], &ready, 1);
        // The sandbox gets the control socket as fd 3 and nothing else of the server's: not
        // its listeners, its log, what its own parent left open; nor its blocked signals.
        for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
        ::dup2(pair[1], 3);  // without close-on-exec: the supervisor's end
        ::close_range(4, ~0U, 0);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
        if (root && (::setgroups(0, nullptr) != 0 || ::setgid(host_group) != 0 || ::setuid(host_user) != 0)) {
            ::_exit(126);
        }
        ::execv(bwrap.c_str(), argv.data());
        ::_exit(127);
    }
    if (null >= 0) ::close(null);
    ::close(pair[1]);
    ::close(go[0]);
    if (pid < 0) {
        ::close(pair[0]);
        ::close(go[1]);
        fail("fork");
    }
    bwrap_pid_ = pid;
    control_ = pair[0];
    try {
        group_.add(pid);
    } catch (...) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        ::close(go[1]);
        ::close(control_);
        throw;
    }
    (void)!::write(go[1], "g", 1);
    ::close(go[1]);
    receiver_ = std::thread([this] { receive(); });
}

process_sandbox::~process_sandbox() {
    ::shutdown(control_, SHUT_RDWR);  // the supervisor kills its commands and exits
    if (receiver_.joinable()) receiver_.join();
    ::close(control_);
    group_.kill_all();
    ::waitpid(bwrap_pid_, nullptr, 0);
    std::lock_guard lock(mutex_);
    for (auto& [id, run] : started_) {
        for (const int fd : {run.stdout_fd, run.stderr_fd, run.stdin_fd, run.terminal_fd}) {
            if (fd >= 0) ::close(fd);
        }
    }
    for (const auto& [id, event] : exit_events_) ::close(event);
    for (const auto& [id, event] : start_events_) ::close(event);
    ::close(tree_);
    remove_sandbox_folder(state_);
}

void remove_sandbox_folder(const fs::path& folder) noexcept {
    // EINVAL when the tree is no mount (a server that is not root, or a tree never bounded).
    (void)::umount2((folder / "tree").c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::remove_all(folder, ignored);
}

process_sandbox::usage process_sandbox::sample() {
    constexpr double mib = 1024.0 * 1024.0;
    const double host_cpus = std::max(1u, std::thread::hardware_concurrency());
    const double host_memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    usage u;
    u.cpu_count = millicpus_ ? static_cast<double>(*millicpus_) / 1000.0 : host_cpus;
    u.mem_total_mib = static_cast<double>(group_.memory_limit().value_or(static_cast<std::int64_t>(host_memory))) / mib;
    u.mem_used_mib = static_cast<double>(group_.memory_used()) / mib;
    const std::lock_guard lock(sample_mutex_);
    const auto now = std::chrono::steady_clock::now();
    const std::int64_t cpu_ns = group_.cpu_used_ns().value_or(cpu_ns_at_sample_);
    const double wall_ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - sampled_at_).count());
    if (wall_ns > 0) {
        u.cpu_used_pct = std::clamp(100.0 * static_cast<double>(cpu_ns - cpu_ns_at_sample_) / (wall_ns * u.cpu_count), 0.0, 100.0);
    }
    sampled_at_ = now;
    cpu_ns_at_sample_ = cpu_ns;
    return u;
}

namespace {

// A descriptor closed when it goes out of scope.
class owned_fd {
public:
    explicit owned_fd(int fd) noexcept : fd_(fd) {}
    owned_fd(owned_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    owned_fd& operator=(owned_fd&&) = delete;
    ~owned_fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

private:
    int fd_;
};

// A regular file of the tree opened with `flags` (non-blocking: a FIFO would hold the thread
// until something wrote to it), checked to be one of at most `max_read_bytes`.
owned_fd open_regular(int tree, const std::string& tree_path, std::string_view path, int flags,
                      std::uint64_t most = process_sandbox::max_read_bytes) {
    owned_fd fd(open_inside(tree, tree_path, path, static_cast<std::uint64_t>(flags) | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) fail(std::string(path));
    struct stat st {};
    const bool regular = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode);
    const int refused = !regular ? (S_ISDIR(st.st_mode) ? EISDIR : EINVAL)
                                 : static_cast<std::uint64_t>(st.st_size) > most ? EFBIG : 0;
    if (refused != 0) fail(std::string(path), refused);
    return fd;
}

std::string read_all(const owned_fd& fd, std::string_view path) {
    std::string bytes;
    std::array<char, 1 << 16> chunk{};
    for (;;) {
        const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
        if (n > 0 && bytes.size() + static_cast<std::size_t>(n) > process_sandbox::max_read_bytes) {
            fail(std::string(path), EFBIG);  // it grew while read
        }
        if (n > 0) {
            bytes.append(chunk.data(), static_cast<std::size_t>(n));
        } else if (n == 0) {
            return bytes;
        } else if (errno != EINTR) {
            fail(std::string(path));
        }
    }
}

void write_all(const owned_fd& fd, std::string_view bytes, std::string_view path) {
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail(std::string(path));
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace

std::string process_sandbox::read_file(std::string_view path) const {
    return read_all(open_regular(tree_, tree_path_, path, O_RDONLY), path);
}

process_sandbox::opened_file process_sandbox::open_file(std::string_view path) const {
    owned_fd fd = open_regular(tree_, tree_path_, path, O_RDONLY, std::numeric_limits<std::uint64_t>::max());
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail(std::string(path));
    return {.fd = fd.release(), .size = static_cast<std::uint64_t>(st.st_size)};
}

std::size_t process_sandbox::replace(std::string_view path, std::string_view old, std::string_view replacement) const {
    const owned_fd fd = open_regular(tree_, tree_path_, path, O_RDWR);
    const std::string before = read_all(fd, path);
    const std::size_t count = occurrences(before, old);
    if (count == 0) return 0;
    // count <= size / old.size(), both bounded: no overflow.
    if (before.size() - count * old.size() + count * replacement.size() > max_read_bytes) fail(std::string(path), EFBIG);
    const std::string after = replaced(before, old, replacement);
    if (::ftruncate(fd.get(), 0) != 0 || ::lseek(fd.get(), 0, SEEK_SET) != 0) fail(std::string(path));
    write_all(fd, after, path);
    return count;
}

namespace {

// execd's modes: octal digits written as a decimal number (644); permission bits only (a
// set-user-id file of the sandbox's has no business on the host).
mode_t permissions_of(int mode) {
    mode_t permissions = 0;
    for (const char digit : std::to_string(mode)) permissions = permissions * 8 + static_cast<mode_t>((digit - '0') & 7);
    return permissions & 0777;
}

}  // namespace

void process_sandbox::make_directories(std::string_view path, int mode) const {
    const bool root = ::geteuid() == 0;
    if (path.size() > max_path) fail(std::string(path).substr(0, 64) + "...", ENAMETOOLONG);
    if (!relative_inside(path)) fail(std::string(path), ENOENT);
    // One component at a time from its parent, opened as it was made: linear in the path. A
    // symlink on the way is resolved from the tree's root, and must stay in its writable folders.
    int parent = open_inside(tree_, tree_path_, "/", O_PATH | O_DIRECTORY);
    if (parent < 0) fail(std::string(path));
    fs::path made = "/";
    for (const auto& part : fs::path(std::string(path)).lexically_normal().relative_path()) {
        const bool created = ::mkdirat(parent, part.c_str(), permissions_of(mode)) == 0;
        const int error = errno;
        if (created && root) (void)::fchownat(parent, part.c_str(), host_user, host_group, AT_SYMLINK_NOFOLLOW);
        made /= part;
        int next = -1;
        if (created || error == EEXIST) {
            const open_how beneath{.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .mode = 0,
                                   .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
            next = openat2_retrying(parent, part.c_str(), beneath);
            if (next < 0 && errno == ELOOP) next = open_inside(tree_, tree_path_, made.string(), O_PATH | O_DIRECTORY);
        } else {
            errno = error;
        }
        const int failed = errno;
        ::close(parent);
        if (next < 0) fail(std::string(path), failed);  // ENOTDIR: a file in the way, as mkdir -p says
        parent = next;
    }
    ::close(parent);
}

namespace {

// A directory or a file's parent, opened in the tree, and the entry's name in it; fails as
// open_inside does, and with EBUSY for the tree or one of its writable folders (what a
// container's root and mount points are: not removed or moved).
struct entry_at {
    int dir = -1;
    std::string name;
    entry_at(const entry_at&) = delete;
    entry_at& operator=(const entry_at&) = delete;
    entry_at(int d, std::string n) : dir(d), name(std::move(n)) {}
    ~entry_at() {
        if (dir >= 0) ::close(dir);
    }
};

std::unique_ptr<entry_at> parent_of(int tree, const std::string& tree_path, std::string_view path) {
    if (path.size() > max_path) fail(std::string(path.substr(0, 64)) + "...", ENAMETOOLONG);
    const std::optional<std::string> relative = relative_inside(path);
    const fs::path inside = file_tree::normal(path);  // never `.`, `..` or an empty name last
    if (!relative) fail(std::string(path), ENOENT);
    if (relative->find('/') == std::string::npos) fail(std::string(path), EBUSY);  // "." or a folder itself
    const int dir = open_inside(tree, tree_path, inside.parent_path().string(), O_PATH | O_DIRECTORY);
    if (dir < 0) fail(std::string(path));
    return std::make_unique<entry_at>(dir, inside.filename().string());
}

std::string owner_name(unsigned id) {
    if (id == 0) return "root";
    if (id == host_user || id == ::geteuid()) return "sandbox";
    return std::to_string(id);
}

// The host's id for one of the sandbox's users or groups (its /etc/passwd and /etc/group).
std::optional<unsigned> host_id_of(std::string_view name) {
    if (name == "root") return 0U;
    if (name == "sandbox") return ::geteuid() == 0 ? unsigned{host_user} : unsigned{::geteuid()};
    return std::nullopt;
}

entry_info info_of(std::string path, const struct stat& st) {
    const auto at = [](const timespec& t) {
        return std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec)));
    };
    int mode = 0;
    for (const int shift : {6, 3, 0}) mode = mode * 10 + static_cast<int>((st.st_mode >> shift) & 7);
    return {.path = std::move(path), .directory = S_ISDIR(st.st_mode), .size = static_cast<std::uint64_t>(st.st_size),
            .mode = mode, .modified_at = at(st.st_mtim), .created_at = at(st.st_ctim), .owner = owner_name(st.st_uid),
            .group = owner_name(st.st_gid)};
}

// A directory's entries' names, sorted; E2BIG past `most` (a directory of millions is not read whole).
std::vector<std::string> names_in(int dir, std::size_t most) {
    const int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail("opening a directory");
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        fail("opening a directory");
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (names.size() == most) {
            ::closedir(d);
            fail("listing a directory", E2BIG);
        }
        names.emplace_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

// How deep a listing goes at most, whatever it asks: each level holds a descriptor.
constexpr int deepest_listing = 256;

// `path_bytes` is what the paths listed may still take: a deep tree of long names makes each
// path tens of kilobytes (30,000 entries took 1.8 GB), so their bytes are bounded, not only
// their number.
void list_into(int dir, const std::string& path, int depth, std::size_t most, std::size_t& path_bytes,
               std::vector<entry_info>& out) {
    for (const std::string& name : names_in(dir, most)) {
        if (out.size() == most) fail("listing " + path, E2BIG);
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        const std::string child = (path == "/" ? path : path + "/") + name;
        if (child.size() > path_bytes) fail("listing " + path, E2BIG);
        path_bytes -= child.size();
        out.push_back(info_of(child, st));
        if (depth <= 1 || !S_ISDIR(st.st_mode)) continue;
        const int sub = ::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        try {
            list_into(sub, child, depth - 1, most, path_bytes, out);
        } catch (...) {
            ::close(sub);
            throw;
        }
        ::close(sub);
    }
}

DIR* open_directory_at(int dir, const std::string& name) {
    const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) fail("removing " + name);
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        fail("removing " + name);
    }
    return d;
}

// How deep a removal goes at most: each level holds a descriptor (a sandbox can nest
// directories a million deep, and the server's descriptors are every sandbox's).
constexpr std::size_t deepest_removal = 256;

// rm -rf of `name` in `dir`, without following a link and without recursion (a tree may be
// deeper than a thread's stack): a directory's entries first, a descriptor per level; ELOOP
// past `deepest_removal` levels.
void remove_all_at(int dir, const std::string& name, bool keep_top) {
    if (!keep_top && (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT)) return;
    if (!keep_top && errno != EISDIR) fail("removing " + name);
    std::vector<std::pair<DIR*, std::string>> open;  // a directory, and its name in the one before
    const auto closing = [&] {
        for (auto& [d, n] : open) ::closedir(d);
    };
    try {
        open.emplace_back(open_directory_at(dir, name), name);
        while (!open.empty()) {
            DIR* d = open.back().first;
            errno = 0;
            const dirent* e = ::readdir(d);
            if (!e) {
                const std::string done = std::move(open.back().second);
                ::closedir(d);
                open.pop_back();
                if (open.empty() && keep_top) return;
                const int parent = open.empty() ? dir : ::dirfd(open.back().first);
                if (::unlinkat(parent, done.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) fail("removing " + done);
                continue;
            }
            const std::string entry = e->d_name;
            if (entry == "." || entry == "..") continue;
            if (::unlinkat(::dirfd(d), entry.c_str(), 0) == 0 || errno == ENOENT) continue;
            if (errno != EISDIR) fail("removing " + entry);
            if (open.size() == deepest_removal) fail("removing " + name + ": deeper than 256 levels", ELOOP);
            open.emplace_back(open_directory_at(::dirfd(d), entry), entry);
        }
    } catch (...) {
        closing();
        throw;
    }
}

}  // namespace

entry_info process_sandbox::info(std::string_view path) const {
    const int fd = open_inside(tree_, tree_path_, path, O_PATH);
    if (fd < 0) fail(std::string(path));
    struct stat st {};
    const int error = ::fstat(fd, &st) == 0 ? 0 : errno;
    ::close(fd);
    if (error != 0) fail(std::string(path), error);
    return info_of(file_tree::normal(path), st);
}

std::vector<entry_info> process_sandbox::list(std::string_view path, int depth, std::size_t most) const {
    const int fd = open_inside(tree_, tree_path_, path, O_PATH | O_DIRECTORY);
    if (fd < 0) fail(std::string(path));
    std::vector<entry_info> out;
    try {
        std::size_t path_bytes = max_listed_path_bytes;
        if (depth > 0) list_into(fd, file_tree::normal(path), std::min(depth, deepest_listing), most, path_bytes, out);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return out;
}

void process_sandbox::remove_file(std::string_view path) const {
    const auto at = parent_of(tree_, tree_path_, path);
    if (::unlinkat(at->dir, at->name.c_str(), 0) != 0 && errno != ENOENT) fail(std::string(path));
}

void process_sandbox::remove_all(std::string_view path) const {
    const std::optional<std::string> relative = relative_inside(path);
    if (!relative) return;  // nothing of the tree is there: nothing to remove
    if (relative->find('/') == std::string::npos) {
        // The tree, or one of its writable folders: emptied and kept, as a container's root
        // and mount points are. Each folder is one name in the tree's root (no link there).
        const std::array<std::string_view, 1> one{*relative};
        using names = std::span<const std::string_view>;
        const names folders = *relative == "." ? names(writable) : names(one);
        for (const std::string_view folder : folders) remove_all_at(tree_, std::string(folder), true);
        return;
    }
    try {
        const auto at = parent_of(tree_, tree_path_, path);
        remove_all_at(at->dir, at->name, false);
    } catch (const std::system_error& e) {
        if (e.code().value() != ENOENT) throw;  // nothing there: nothing to remove
    }
}

bool process_sandbox::has_user(std::string_view name) { return host_id_of(name).has_value(); }

void process_sandbox::set_permissions(std::string_view path, int mode, std::string_view owner, std::string_view group) const {
    // chown's "leave it as it is" for an empty name (-1), else the name's host id.
    const auto id_for = [&](std::string_view name) {
        if (name.empty()) return static_cast<unsigned>(-1);
        const auto id = host_id_of(name);
        if (!id) fail(std::string(path), EINVAL);
        return *id;
    };
    const unsigned uid = id_for(owner);
    const unsigned gid = id_for(group);
    // The tree itself is no folder of the sandbox's (no path inside names it but `/`), and
    // its mode on the host keeps other users out: a writable folder is the most it changes.
    if (relative_inside(path) == ".") fail(std::string(path), EPERM);
    // Where its links lead, as chmod and chown go; an O_PATH descriptor takes neither, its
    // /proc name does, and it names what was checked, whatever is renamed meanwhile.
    const owned_fd fd(open_inside(tree_, tree_path_, path, O_PATH));
    if (fd.get() < 0) fail(std::string(path));
    const std::string self = "/proc/self/fd/" + std::to_string(fd.get());
    if (mode != 0 && ::chmod(self.c_str(), permissions_of(mode)) != 0) fail(std::string(path));
    if ((!owner.empty() || !group.empty()) && ::chown(self.c_str(), uid, gid) != 0) fail(std::string(path));
}

void process_sandbox::move(std::string_view src, std::string_view dest) const {
    const auto from = parent_of(tree_, tree_path_, src);
    struct stat st {};
    if (::fstatat(from->dir, from->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) fail(std::string(src));
    make_directories(fs::path(std::string(dest)).lexically_normal().parent_path().string());
    const auto to = parent_of(tree_, tree_path_, dest);
    if (::renameat2(from->dir, from->name.c_str(), to->dir, to->name.c_str(), RENAME_NOREPLACE) != 0) fail(std::string(dest));
}

void process_sandbox::write_file(std::string_view path, std::string_view bytes, int mode) const {
    const bool root = ::geteuid() == 0;
    const fs::path inside = fs::path(std::string(path)).lexically_normal();
    make_directories(inside.parent_path().string());
    // Non-blocking, and checked before a byte is written: a FIFO is no file to write. A file
    // that is there is opened where its links lead (inside the writable folders); a new one
    // is made beside its checked parent, never through a link, which could make it anywhere
    // in the tree before the check that it lies in a writable folder.
    constexpr int writing = O_WRONLY | O_NONBLOCK | O_NOCTTY;
    int fd = open_inside(tree_, tree_path_, inside.string(), writing);
    if (fd < 0 && errno == ENOENT) {
        const auto at = parent_of(tree_, tree_path_, inside.string());
        fd = ::openat(at->dir, at->name.c_str(), writing | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST) fd = open_inside(tree_, tree_path_, inside.string(), writing);  // made meanwhile, or a link
    }
    if (fd < 0) fail(std::string(path), errno == ENXIO ? EINVAL : errno);
    const owned_fd owned(fd);
    if (struct stat st {}; ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ::ftruncate(fd, 0) != 0) fail(std::string(path), EINVAL);
    if (root) (void)::fchown(fd, host_user, host_group);
    (void)::fchmod(fd, permissions_of(mode));
    write_all(owned, bytes, path);
}

void process_sandbox::receive() {
    std::array<char, 256> buffer{};
    for (;;) {
        alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 3)> space{};
        iovec io{.iov_base = buffer.data(), .iov_len = buffer.size()};
        msghdr m{};
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        m.msg_control = space.data();
        m.msg_controllen = space.size();
        const ssize_t n = ::recvmsg(control_, &m, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        std::lock_guard lock(mutex_);
        if (n <= 0) {
            gone_ = true;
            while (!exit_events_.empty()) signal_end(exit_events_.begin()->first);
            while (!start_events_.empty()) signal_answered(start_events_.begin()->first);
            changed_.notify_all();
            return;
        }
        std::array<int, 3> fds{-1, -1, -1};
        std::size_t passed = 0;
        if (const cmsghdr* c = CMSG_FIRSTHDR(&m); c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            passed = std::min<std::size_t>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int), fds.size());
            std::memcpy(fds.data(), CMSG_DATA(c), passed * sizeof(int));
        }
        const auto f = supervisor::fields(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
        const int id = f.size() == 3 ? std::atoi(std::string(f[1]).c_str()) : 0;
        const int value = f.size() == 3 ? std::atoi(std::string(f[2]).c_str()) : 0;
        // Only a start the server waits for takes descriptors, once: a message that names any
        // other has its descriptors closed (whoever sent it holds none of the server's).
        if (f.size() == 3 && f[0] == "started" && pending_.contains(id) && !started_.contains(id) && passed >= 1) {
            started_[id] = passed == 1 ? started{.id = id, .terminal_fd = fds[0]}
                                       : started{.id = id, .stdout_fd = fds[0], .stderr_fd = fds[1], .stdin_fd = fds[2]};
            signal_answered(id);
        } else {
            for (std::size_t i = 0; i < passed; ++i) ::close(fds[i]);
            if (f.size() == 3 && f[0] == "exit") {
                if (forgotten_.erase(id) == 0) exits_[id] = value;
                signal_end(id);
            }
            if (f.size() == 3 && f[0] == "failed" && pending_.contains(id)) {
                failed_[id] = value;
                signal_answered(id);
            }
        }
        changed_.notify_all();
    }
}

process_sandbox::start_request process_sandbox::request_start(const process_command& command) {
    // A NUL ends the string a process is given: what follows it would be lost, or misread.
    const auto holds_nul = [](std::string_view text) { return text.find('\0') != std::string_view::npos; };
    if (holds_nul(command.command) || holds_nul(command.cwd) || std::any_of(command.envs.begin(), command.envs.end(), holds_nul)) {
        fail("a command, its directory or its variables hold a NUL byte", EINVAL);
    }
    const std::lock_guard lock(mutex_);
    const int id = next_id_++;
    const std::string number = std::to_string(id);
    static constexpr std::array<std::string_view, 3> modes{"pipes", "stdin", "pty"};
    std::vector<std::string_view> fields{"exec", number, modes.at(static_cast<std::size_t>(command.streams)),
                                         command.cwd, command.command};
    for (const auto& env : command.envs) fields.emplace_back(env);
    const std::string bytes = supervisor::message(fields);
    // Never waits: a supervisor that reads nothing (starved of CPU, stopped) fills its socket,
    // and the caller then learns it at once rather than holding its thread.
    if (::send(control_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        fail(errno == EMSGSIZE ? "the command is longer than the sandbox's control socket carries"
             : errno == EAGAIN ? "the sandbox's supervisor does not answer"
                               : "the sandbox's supervisor is gone");
    }
    const int ready = ::eventfd(gone_ ? 1 : 0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ready < 0) fail("eventfd");
    const int ours = ::fcntl(ready, F_DUPFD_CLOEXEC, 0);
    if (ours < 0) {
        ::close(ready);
        fail("eventfd");
    }
    pending_.insert(id);
    start_events_[id] = ours;
    return {.id = id, .ready_fd = ready};
}

std::optional<process_sandbox::started> process_sandbox::finish_start(int id) {
    const std::lock_guard lock(mutex_);
    if (const auto it = failed_.find(id); it != failed_.end()) {
        const int error = it->second;
        failed_.erase(it);
        pending_.erase(id);
        fail("starting a command", error);
    }
    const auto it = started_.find(id);
    if (it == started_.end()) {
        if (!gone_) return std::nullopt;  // not answered yet
        pending_.erase(id);
        fail("the sandbox's supervisor is gone", EPIPE);
    }
    pending_.erase(id);
    started out = it->second;
    started_.erase(it);
    // The end may have come already (a command that exits at once): the event is then set.
    const int event = ::eventfd(exits_.contains(id) ? 1 : 0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (event < 0) fail("eventfd");
    out.exit_fd = ::fcntl(event, F_DUPFD_CLOEXEC, 0);
    if (exits_.contains(id)) {
        ::close(event);
    } else {
        exit_events_[id] = event;
    }
    return out;
}

void process_sandbox::abandon_start(int id) {
    {
        const std::lock_guard lock(mutex_);
        pending_.erase(id);
        failed_.erase(id);
        if (const auto it = started_.find(id); it != started_.end()) {
            for (const int fd : {it->second.stdout_fd, it->second.stderr_fd, it->second.stdin_fd, it->second.terminal_fd}) {
                if (fd >= 0) ::close(fd);
            }
            started_.erase(it);
        }
        if (const auto it = start_events_.find(id); it != start_events_.end()) {
            ::close(it->second);
            start_events_.erase(it);
        }
    }
    signal(id, SIGKILL);  // after the exec in the supervisor's order: if it starts, it ends
    forget(id);
}

process_sandbox::started process_sandbox::start(const process_command& command) {
    const start_request asked = request_start(command);
    ::close(asked.ready_fd);  // this caller waits on the condition instead
    {
        std::unique_lock lock(mutex_);
        if (!changed_.wait_for(lock, std::chrono::seconds(10),
                               [&] { return gone_ || started_.contains(asked.id) || failed_.contains(asked.id); })) {
            lock.unlock();
            abandon_start(asked.id);
            fail("the sandbox's supervisor does not answer", ETIMEDOUT);
        }
    }
    auto out = finish_start(asked.id);
    if (!out) fail("the sandbox's supervisor is gone", EPIPE);
    return *out;
}

int process_sandbox::wait_status(int id) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return gone_ || exits_.contains(id); });
    const auto it = exits_.find(id);
    if (it == exits_.end()) return SIGKILL;  // the sandbox went with it: as a wait status, killed
    const int status = it->second;
    exits_.erase(it);
    return status;
}

int process_sandbox::wait(int id) {
    const int status = wait_status(id);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

void process_sandbox::forget(int id) {
    const std::lock_guard lock(mutex_);
    if (exits_.erase(id) == 0 && !gone_) forgotten_.insert(id);
}

namespace {

// Sets command `id`'s eventfd in `events` (our copy: its waiter holds another) and forgets it.
void set_and_forget(std::map<int, int>& events, int id) {
    const auto it = events.find(id);
    if (it == events.end()) return;
    const std::uint64_t one = 1;
    (void)!::write(it->second, &one, sizeof one);
    ::close(it->second);
    events.erase(it);
}

}  // namespace

void process_sandbox::signal_end(int id) { set_and_forget(exit_events_, id); }

void process_sandbox::signal_answered(int id) { set_and_forget(start_events_, id); }

void process_sandbox::signal(int id, int signal_number) {
    const std::string number = std::to_string(id), sig = std::to_string(signal_number);
    const std::array<std::string_view, 3> fields{"signal", number, sig};
    const std::string bytes = supervisor::message(fields);
    (void)::send(control_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

process_sandbox::finished process_sandbox::run(const process_command& command) {
    process_command piped = command;
    piped.streams = process_streams::pipes;
    const started s = start(piped);
    finished out;
    std::array<pollfd, 2> pipes{pollfd{.fd = s.stdout_fd, .events = POLLIN, .revents = 0},
                                pollfd{.fd = s.stderr_fd, .events = POLLIN, .revents = 0}};
    std::array<std::string*, 2> into{&out.stdout_text, &out.stderr_text};
    std::array<char, 4096> chunk{};
    for (int open = 2; open > 0;) {
        if (::poll(pipes.data(), pipes.size(), -1) < 0 && errno != EINTR) break;
        for (std::size_t i = 0; i < pipes.size(); ++i) {
            if (pipes[i].fd < 0 || !(pipes[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = ::read(pipes[i].fd, chunk.data(), chunk.size());
            if (n > 0) {
                into[i]->append(chunk.data(), static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(pipes[i].fd);
                pipes[i].fd = -1;
                --open;
            }
        }
    }
    out.exit_code = wait(s.id);
    ::close(s.exit_fd);
    return out;
}

}  // namespace ngfail::opensandbox::testing::detail
