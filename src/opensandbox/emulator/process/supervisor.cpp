#include "opensandbox/emulator/process/supervisor.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ngfail::opensandbox::emulator::supervisor {

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
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 2)> space{};
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

// The child's side of an exec: its own process group, the pipes, the directory, bash.
[[noreturn]] void become(const std::vector<std::string_view>& f, int out, int err) {
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::string cwd(f[2]);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
        const std::string said = "bash: line 1: cd: " + cwd + ": " + std::strerror(errno) + "\n";
        (void)!::write(2, said.data(), said.size());
        ::_exit(1);
    }
    std::vector<std::string> env{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/sandbox", "USER=sandbox",
                                 "LANG=C.UTF-8"};
    for (std::size_t i = 4; i < f.size(); ++i) env.emplace_back(f[i]);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string command(f[3]);
    std::array<char*, 4> argv{const_cast<char*>("bash"), const_cast<char*>("-c"), command.data(), nullptr};
    ::execve("/bin/bash", argv.data(), envp.data());
    ::_exit(127);
}

void start(int control, const std::vector<std::string_view>& f, std::map<pid_t, std::string>& runs) {
    std::array<int, 2> out{-1, -1}, err{-1, -1};
    if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
        send_fields(control, {"failed", f[1], std::to_string(errno)});
        for (int fd : {out[0], out[1], err[0], err[1]}) {
            if (fd >= 0) ::close(fd);
        }
        return;
    }
    const pid_t pid = ::fork();
    if (pid == 0) become(f, out[1], err[1]);
    ::close(out[1]);
    ::close(err[1]);
    if (pid < 0) {
        send_fields(control, {"failed", f[1], std::to_string(errno)});
    } else {
        ::setpgid(pid, pid);  // as the child does: whichever runs first
        runs.emplace(pid, std::string(f[1]));
        const std::array<int, 2> pipes{out[0], err[0]};
        send_fields(control, {"started", f[1], std::to_string(pid)}, pipes);
    }
    ::close(out[0]);
    ::close(err[0]);
}

}  // namespace

int serve(int control) noexcept {
    sigset_t child;
    sigemptyset(&child);
    sigaddset(&child, SIGCHLD);
    sigprocmask(SIG_BLOCK, &child, nullptr);
    const int children = ::signalfd(-1, &child, SFD_CLOEXEC);
    std::map<pid_t, std::string> runs;
    std::vector<char> buffer(std::size_t{1} << 20);  // the longest request the server sends
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
            const ssize_t n = ::recv(control, buffer.data(), buffer.size(), 0);
            if (n <= 0) break;  // the server is gone
            const auto f = fields(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
            if (f.size() >= 4 && f[0] == "exec") {
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

}  // namespace ngfail::opensandbox::emulator::supervisor
