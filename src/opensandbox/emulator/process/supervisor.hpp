// The supervisor: the one long-lived process inside a sandbox's namespaces, which starts its
// commands. The server asks it over a socket pair (SOCK_SEQPACKET, one message a request);
// an exec is a vfork there, not a new namespace.
//
// It is the server's own program run again inside bubblewrap, with the socket's descriptor
// in `fd_variable`: any program that links the process runtime turns into the supervisor
// before its `main` when that variable is set (supervisor.cpp), so `ngfail serve` and a test
// linking `embedded_server` need no helper binary of their own.
//
// Messages are fields separated by NUL, the first naming what it is:
//   server → supervisor   exec <run> <mode> <cwd> <command> <NAME=value>...   (bash -c, in its
//                         own process group) where <mode> is `pipes` (stdout and stderr
//                         pipes, stdin /dev/null), `stdin` (a stdin pipe too) or `pty` (a
//                         terminal, in a session of its own)
//                         signal <run> <signal number>                  (to its process group)
//   supervisor → server   started <run> <pid>   with the server's ends (SCM_RIGHTS): stdout
//                         and stderr's, then stdin's; or the terminal's master
//                         failed <run> <errno>  (the fork or the pipes)
//                         exit <run> <wait status>
// When the server's end closes, every command's process group is killed and it exits.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail::supervisor {

inline constexpr const char* fd_variable = "NGFAIL_SANDBOX_SUPERVISOR_FD";
// Where the server's program is bound inside the sandbox.
inline constexpr const char* program_inside = "/.ngfail/supervisor";

// A message's bytes, and its fields back.
[[nodiscard]] std::string message(std::span<const std::string_view> fields);
[[nodiscard]] std::vector<std::string_view> fields(std::string_view message);

// Serves `control` until the server closes it; the process's exit status.
int serve(int control) noexcept;

}  // namespace ngfail::opensandbox::testing::detail::supervisor
