#include "opensandbox/emulator/process/supervisor.hpp"

#include "core/sanitized.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail::supervisor {

std::string message(std::span<const std::string_view> fields) {
    std::string out;
    for (const auto field : fields) {
        out.append(field);
        out.push_back('\0');
    }
    return out;
}

std::vector<std::string_view> fields(std::string_view message) {
    std::vector<std::string_view> out;
    while (!message.empty()) {
        const auto end = message.find('\0');
        out.push_back(message.substr(0, end));
        if (end == std::string_view::npos) break;
        message.remove_prefix(end + 1);
    }
    return out;
}

namespace {

void send_fields(int control, std::initializer_list<std::string_view> list, std::span<const int> fds = {}) {
    const std::string bytes = message(std::span(list.begin(), list.size()));
    iovec io{.iov_base = const_cast<char*>(bytes.data()), .iov_len = bytes.size()};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 3)> space{};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    if (!fds.empty()) {
        m.msg_control = space.data();
        m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    while (::sendmsg(control, &m, MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

// How a command's standard streams are connected (the `exec` message's <mode>).
enum class wiring { pipes, with_stdin, terminal };

std::optional<wiring> wiring_named(std::string_view name) {
    if (name == "pipes") return wiring::pipes;
    if (name == "stdin") return wiring::with_stdin;
    if (name == "pty") return wiring::terminal;
    return std::nullopt;
}

// A sanitizer's runtime keeps its own state per thread and knows nothing of a child sharing the
// supervisor's memory: under one, commands are forked.
using ngfail::detail::sanitized;

// What a command's child is given, all of it made before the child starts: the child shares
// the supervisor's memory until its execve (a vfork: copying the supervisor's page tables, and
// the faults of its copy-on-write pages, cost each exec milliseconds), so it may neither
// allocate nor return.
struct launch {
    std::array<int, 3> streams;
    bool terminal;
    std::string_view cwd;  // empty: the supervisor's
    char* const* argv;
    char* const* envp;
};

// The child's side of an exec: its own process group (a session of its own, with the
// terminal as its controlling one), its streams, the directory, bash.
int become(void* arg) noexcept {
    const launch& l = *static_cast<const launch*>(arg);
    if (l.terminal) {
        ::setsid();
        ::ioctl(l.streams[0], TIOCSCTTY, 0);
    } else {
        ::setpgid(0, 0);
    }
    for (int i = 0; i < 3; ++i) ::dup2(l.streams[static_cast<std::size_t>(i)], i);
    // A command holds its streams only: not the control socket, nor the supervisor's mask.
    ::close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!l.cwd.empty() && ::chdir(l.cwd.data()) != 0) {
        const char* why = ::strerrordesc_np(errno);  // strerror's text, without its locale
        const auto part = [](std::string_view text) {
            return iovec{.iov_base = const_cast<char*>(text.data()), .iov_len = text.size()};
        };
        const std::array<iovec, 5> said{part("bash: line 1: cd: "), part(l.cwd), part(": "),
                                        part(why != nullptr ? why : "Unknown error"), part("\n")};
        (void)!::writev(2, said.data(), static_cast<int>(said.size()));
        ::_exit(1);
    }
    ::execve("/bin/bash", l.argv, l.envp);
    ::_exit(127);
}

// Starts `f`'s command on `streams`; its pid, or -1 (errno set).
pid_t spawn(const std::vector<std::string_view>& f, std::array<int, 3> streams, bool terminal) {
    std::vector<std::string> env{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/sandbox", "USER=sandbox",
                                 "LANG=C.UTF-8"};
    if (terminal) env.emplace_back("TERM=xterm-256color");
    for (std::size_t i = 5; i < f.size(); ++i) env.emplace_back(f[i]);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string command(f[4]);
    std::string cwd(f[3]);  // NUL-terminated for chdir
    std::array<char*, 4> argv{const_cast<char*>("bash"), const_cast<char*>("-c"), command.data(), nullptr};
    launch l{.streams = streams, .terminal = terminal, .cwd = cwd, .argv = argv.data(), .envp = envp.data()};
    if constexpr (sanitized) {
        const pid_t pid = ::fork();
        if (pid == 0) ::_exit(become(&l));
        // As the child does, whichever runs first: a signal to its group may come at once.
        if (pid > 0 && !terminal) ::setpgid(pid, pid);
        return pid;
    }
    // The child's stack, for as long as the supervisor waits (CLONE_VFORK) for its execve.
    alignas(16) std::array<char, 64 * 1024> stack;
    return ::clone(become, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, &l);
}

// Closes each descriptor that is open.
void close_all(std::initializer_list<int> fds) {
    for (const int fd : fds) {
        if (fd >= 0) ::close(fd);
    }
}

// The child's streams and the server's ends, made for `how`; false (errno set) if they
// could not be.
bool make_streams(wiring how, std::array<int, 3>& child, std::vector<int>& server) {
    if (how == wiring::terminal) {
        const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
            close_all({master});
            return false;
        }
        const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0) {
            close_all({master});
            return false;
        }
        child = {slave, slave, slave};
        server = {master};
        return true;
    }
    std::array<int, 2> out{-1, -1}, err{-1, -1}, in{-1, -1};
    const bool made = ::pipe2(out.data(), O_CLOEXEC) == 0 && ::pipe2(err.data(), O_CLOEXEC) == 0 &&
                      (how == wiring::with_stdin ? ::pipe2(in.data(), O_CLOEXEC) == 0
                                                 : (in[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
    if (!made) {
        close_all({out[0], out[1], err[0], err[1], in[0], in[1]});
        return false;
    }
    child = {in[0], out[1], err[1]};
    server = {out[0], err[0]};
    if (how == wiring::with_stdin) server.push_back(in[1]);
    return true;
}

void start(int control, const std::vector<std::string_view>& f, std::map<pid_t, std::string>& runs) {
    const auto how = wiring_named(f[2]);
    std::array<int, 3> child{-1, -1, -1};
    std::vector<int> server;
    if (!how || !make_streams(*how, child, server)) {
        send_fields(control, {"failed", f[1], std::to_string(how ? errno : EINVAL)});
        return;
    }
    const pid_t pid = spawn(f, child, how == wiring::terminal);
    const int fork_error = errno;
    close_all({child[0], child[1] == child[0] ? -1 : child[1], child[2] == child[0] ? -1 : child[2]});
    if (pid < 0) {
        send_fields(control, {"failed", f[1], std::to_string(fork_error)});
    } else {
        runs.emplace(pid, std::string(f[1]));
        send_fields(control, {"started", f[1], std::to_string(pid)}, server);
    }
    for (const int fd : server) ::close(fd);
}

}  // namespace

int serve(int control) noexcept {
    // Its commands run as the same user: undumpable, it cannot be traced, nor its descriptors
    // taken (pidfd_getfd, /proc/1/fd).
    ::prctl(PR_SET_DUMPABLE, 0);
    sigset_t child;
    sigemptyset(&child);
    sigaddset(&child, SIGCHLD);
    sigprocmask(SIG_BLOCK, &child, nullptr);
    const int children = ::signalfd(-1, &child, SFD_CLOEXEC);
    std::map<pid_t, std::string> runs;
    // The longest request the server sends; left uninitialised, so that an idle supervisor
    // holds only the pages its requests have touched (zeroed, it held 1 MiB each).
    constexpr std::size_t longest_request = std::size_t{1} << 20;
    const std::unique_ptr<char[]> buffer(new char[longest_request]);
    for (;;) {
        std::array<pollfd, 2> wait{pollfd{.fd = control, .events = POLLIN, .revents = 0},
                                   pollfd{.fd = children, .events = POLLIN, .revents = 0}};
        if (::poll(wait.data(), wait.size(), -1) < 0 && errno != EINTR) break;
        if (wait[1].revents & POLLIN) {
            signalfd_siginfo info{};
            (void)!::read(children, &info, sizeof info);
            int status = 0;
            for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
                const auto it = runs.find(pid);
                if (it == runs.end()) continue;
                send_fields(control, {"exit", it->second, std::to_string(status)});
                runs.erase(it);
            }
        }
        if (wait[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t n = ::recv(control, buffer.get(), longest_request, 0);
            if (n <= 0) break;  // the server is gone
            const auto f = fields(std::string_view(buffer.get(), static_cast<std::size_t>(n)));
            if (f.size() >= 5 && f[0] == "exec") {
                start(control, f, runs);
            } else if (f.size() == 3 && f[0] == "signal") {
                for (const auto& [pid, run] : runs) {
                    if (run == f[1]) ::kill(-pid, std::atoi(std::string(f[2]).c_str()));
                }
            }
        }
    }
    for (const auto& [pid, run] : runs) ::kill(-pid, SIGKILL);
    return 0;
}

namespace {

// The server's program, run again inside a sandbox, becomes its supervisor here, before main.
const bool supervising = [] {
    if (const char* fd = std::getenv(fd_variable)) std::_Exit(serve(std::atoi(fd)));
    return false;
}();

}  // namespace

}  // namespace ngfail::opensandbox::testing::detail::supervisor
