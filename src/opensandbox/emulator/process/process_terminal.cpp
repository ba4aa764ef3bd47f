#include "opensandbox/emulator/process/process_terminal.hpp"

#include "opensandbox/emulator/process/process_sandbox.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdint>
#include <system_error>
#include <optional>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {
namespace {

// The signals a signal frame may name (execd's parseSignalName); others are ignored.
constexpr std::array<std::pair<std::string_view, int>, 5> signals{{
    {"SIGINT", SIGINT}, {"SIGTERM", SIGTERM}, {"SIGKILL", SIGKILL}, {"SIGQUIT", SIGQUIT}, {"SIGHUP", SIGHUP}}};

void close_if_open(int& fd) noexcept {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

void set_nonblocking(int fd) noexcept {
    if (fd >= 0) (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

bool readable(int fd) noexcept {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    return fd >= 0 && ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

// bash as execd starts it: a login-free interactive shell, or `-c` its command.
std::string shell_line(const std::string& command) {
    std::string quoted = "'";
    for (const char ch : command) quoted += ch == '\'' ? std::string_view(R"('"'"')") : std::string_view(&ch, 1);
    return command.empty() ? "exec bash --noprofile --norc" : "exec bash --noprofile --norc -c " + quoted + "'";
}

}  // namespace

process_terminal::process_terminal(std::shared_ptr<process_sandbox> box, std::string cwd, std::string command,
                                   std::unique_ptr<process_runtime::held_place> place, std::size_t history)
    : box_(std::move(box)), place_(std::move(place)), cwd_(std::move(cwd)), command_(std::move(command)),
      output_(history) {}

process_terminal::~process_terminal() { kill(); }

void process_terminal::start(bool pipe, mono_clock::time_point now, const file_tree&) {
    if (running()) return;
    ++runs_;
    pipe_ = pipe;
    exit_code_ = -1;
    typed_.clear();
    cols_ = 80;
    rows_ = 24;
    try {
        // Asked for, not waited for: the sandbox's lock is held here, and its supervisor may
        // be starved of CPU. `advance` takes the answer when it has come.
        const auto asked = box_->request_start({.command = shell_line(command_), .cwd = cwd_,
                                                .streams = pipe ? process_streams::with_stdin : process_streams::terminal});
        ::close(asked.ready_fd);
        id_ = asked.id;
        starting_until_ = now + start_deadline;
    } catch (const std::system_error& e) {
        could_not_start(e.what());
    }
}

void process_terminal::could_not_start(const std::string& why) {
    // Said where the holder reads it (the supervisor is gone, or starved).
    output_.append("ngfail serve: the terminal's shell could not start: " + why + "\r\n", terminal_channel::stdout_bytes);
    ended(-1);
}

bool process_terminal::take_start(mono_clock::time_point now) {
    std::optional<process_sandbox::started> s;
    try {
        s = box_->finish_start(id_);
    } catch (const std::system_error& e) {
        box_->forget(id_);
        could_not_start(e.what());
        return false;
    }
    if (!s) {
        if (now < *starting_until_) return false;
        box_->abandon_start(id_);
        could_not_start("the sandbox's supervisor does not answer");
        return false;
    }
    starting_until_.reset();
    exit_fd_ = s->exit_fd;
    if (pipe_) {
        output_fd_ = s->stdout_fd;
        error_fd_ = s->stderr_fd;
        input_fd_ = s->stdin_fd;
    } else {
        output_fd_ = s->terminal_fd;
        input_fd_ = ::fcntl(s->terminal_fd, F_DUPFD_CLOEXEC, 0);
    }
    for (const int fd : {output_fd_, error_fd_, input_fd_}) set_nonblocking(fd);
    apply_size();
    return true;
}

void process_terminal::apply_size() {
    if (pipe_ || output_fd_ < 0) return;
    const winsize size{.ws_row = static_cast<unsigned short>(rows_), .ws_col = static_cast<unsigned short>(cols_),
                       .ws_xpixel = 0, .ws_ypixel = 0};
    (void)::ioctl(output_fd_, TIOCSWINSZ, &size);
}

void process_terminal::type(std::string_view bytes, mono_clock::time_point, const file_tree&) {
    if (!running()) return;
    typed_.append(bytes.substr(0, typed_ahead_bytes - std::min(typed_.size(), typed_ahead_bytes)));
    write_input();
}

void process_terminal::write_input() {
    while (!typed_.empty() && input_fd_ >= 0) {
        const ssize_t n = ::write(input_fd_, typed_.data(), typed_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // full for now (EAGAIN), or the shell's end has gone
        typed_.erase(0, static_cast<std::size_t>(n));
    }
}

void process_terminal::signal(std::string_view name, mono_clock::time_point, const file_tree&) {
    const auto* it = std::find_if(signals.begin(), signals.end(), [&](const auto& s) { return s.first == name; });
    if (running() && it != signals.end()) box_->signal(id_, it->second);
}

void process_terminal::resize(int cols, int rows) {
    if (!running()) return;
    cols_ = cols;
    rows_ = rows;
    apply_size();  // or once started
}

void process_terminal::read_output() {
    std::array<char, 32 * 1024> chunk{};  // execd's pump reads 32 KiB at a time
    std::size_t taken = 0;
    for (const auto& [fd, channel] : {std::pair{output_fd_, terminal_channel::stdout_bytes},
                                     std::pair{error_fd_, terminal_channel::stderr_bytes}}) {
        while (fd >= 0 && taken < most_read_at_once) {
            const ssize_t n = ::read(fd, chunk.data(), chunk.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;  // nothing more now (EAGAIN), the end (0), or no more writers (EIO)
            output_.append(std::string_view(chunk.data(), static_cast<std::size_t>(n)), channel);
            taken += static_cast<std::size_t>(n);
        }
    }
}

void process_terminal::advance(mono_clock::time_point now, const file_tree&) {
    if (!running()) return;
    if (starting_until_ && !take_start(now)) return;
    write_input();
    const bool over = readable(exit_fd_);  // checked first: what it wrote before its end is all there now
    read_output();
    if (!over) return;
    const int status = box_->wait_status(id_);
    ended(WIFEXITED(status) ? WEXITSTATUS(status) : -1);  // Go's ExitCode(): -1 for a signal
}

void process_terminal::kill() noexcept {
    if (!running()) return;
    try {
        if (starting_until_) {
            box_->abandon_start(id_);
        } else {
            box_->signal(id_, SIGKILL);
            box_->forget(id_);
        }
    } catch (...) {
        // the sandbox is gone, and its processes with it
    }
    ended(-1);
}

void process_terminal::ended(int code) noexcept {
    exit_code_ = code;
    id_ = 0;
    starting_until_.reset();
    typed_.clear();
    for (int* fd : {&output_fd_, &error_fd_, &input_fd_, &exit_fd_}) close_if_open(*fd);
}

}  // namespace ngfail::opensandbox::testing::detail
