// Running the built `ngfail` binary the way a script would (through the shell), and what it
// printed. The test target defines NGFAIL_CLI_PATH, the binary's path.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace ngfail_test {

struct cli_run {
    int status = -1;  // the exit status; -1 when a signal ended it
    std::string out;
    std::string err;
};

struct cli_options {
    bool merge_stderr = false;             // stderr into `out`, in the order written (`err` stays empty)
    std::string stdin_file{};              // standard input (else the test's own)
    std::chrono::seconds limit{0};         // killed past it (timeout(1): status 124); 0: no limit
    std::string env{};                     // `NAME=value …` set for it (shell words)
};

// `ngfail ARGS`, ARGS as shell text (quote what needs it).
inline cli_run run_ngfail(const std::string& args, const cli_options& o = {}) {
    std::string err_path = testing::TempDir() + "ngfail-stderr-XXXXXX";
    const int err_fd = ::mkstemp(err_path.data());
    if (err_fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(err_fd);
    std::string command = o.env.empty() ? "" : o.env + " ";
    if (o.limit.count() > 0) command += "timeout -k 5 " + std::to_string(o.limit.count()) + " ";
    command += std::string(NGFAIL_CLI_PATH) + ' ' + args;
    if (!o.stdin_file.empty()) command += " < '" + o.stdin_file + "'";
    command += o.merge_stderr ? " 2>&1" : " 2>'" + err_path + "'";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) throw std::runtime_error("popen failed");
    cli_run run;
    std::array<char, 4096> buffer{};
    for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) run.out.append(buffer.data(), n);
    const int raw = ::pclose(pipe);
    run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ifstream err(err_path, std::ios::binary);
    run.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
    ::unlink(err_path.c_str());
    return run;
}

// What cli_test reads: the status and one of the streams (or both, merged).
struct outcome {
    int status;
    std::string out;
};

enum class capture { out, out_and_err, err };

inline outcome run_cli(const std::string& args, capture what) {
    cli_run run = run_ngfail(args, {.merge_stderr = what == capture::out_and_err});
    return {run.status, what == capture::err ? std::move(run.err) : std::move(run.out)};
}

inline outcome run_cli(const std::string& args, bool merge_stderr = false) {
    return run_cli(args, merge_stderr ? capture::out_and_err : capture::out);
}

}  // namespace ngfail_test
