// The process runtime (`ngfail serve --runtime process`) as a harness meets it, for
// benchmarks/run: the round trip of `exec true` one at a time (the client against an
// embedded server on loopback: a fork in the sandbox's supervisor, bash, and execd's stream),
// as the median of each round; and what 100 idle sandboxes hold resident in all (the
// server's growth and every process of theirs, shared pages counted once: the sum of their
// proportional set sizes). Prints Google Benchmark JSON; values that are not times say their
// unit in their name. Prints no results, and says why, where this host cannot run it.
//   process_runtime_benchmark [ROUNDS]
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace json = boost::json;
namespace sandbox_testing = ngfail::opensandbox::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

json::object entry(const std::string& name, double value) {
    return {{"name", name}, {"run_name", name}, {"real_time", value}, {"time_unit", "ns"}, {"iterations", 1}};
}

// A field of /proc/<pid>/<file> in kB ("Pss:", "VmRSS:"), or 0.
double kib_field(const fs::path& file, std::string_view field) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with(field)) return std::atof(line.c_str() + field.size());
    }
    return 0;
}

// This process's descendants: every pid whose parents lead to it.
std::vector<int> descendants() {
    std::map<int, int> parent;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string text((std::istreambuf_iterator<char>(stat)), {});
        const auto close = text.rfind(')');  // the command may hold spaces and parentheses
        if (close == std::string::npos) continue;
        int ppid = 0;
        char state = 0;
        if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) == 2) parent[std::stoi(name)] = ppid;
    }
    std::vector<int> out;
    const int self = ::getpid();
    for (const auto& [pid, up] : parent) {
        for (int p = up; p > 1; p = parent.contains(p) ? parent[p] : 0) {
            if (p == self) {
                out.push_back(pid);
                break;
            }
        }
    }
    return out;
}

// The floor under an exec: `bash -c true` spawned and waited for here, with nothing between.
double bare_bash_ns() {
    static char bash[] = "bash", dash_c[] = "-c", command[] = "true";
    std::array<char*, 4> args{bash, dash_c, command, nullptr};
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (::posix_spawn(&pid, "/bin/bash", nullptr, nullptr, args.data(), environ) != 0) return 0;
    int status = 0;
    (void)::waitpid(pid, &status, 0);
    return static_cast<double>((std::chrono::steady_clock::now() - start).count());
}

double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

double resident_mib(double server_kib_before) {
    double kib = kib_field("/proc/self/status", "VmRSS:") - server_kib_before;
    for (const int pid : descendants()) kib += kib_field(fs::path("/proc") / std::to_string(pid) / "smaps_rollup", "Pss:");
    return kib / 1024;
}

}  // namespace

int measure(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
    json::array results;
    if (const std::string why = sandbox_testing::process_runtime_unavailable(); !why.empty()) {
        std::cerr << "process runtime rows skipped: " << why << '\n';
        std::cout << json::serialize(json::object{{"benchmarks", results}}) << '\n';
        return 0;
    }
    const double server_before = kib_field("/proc/self/status", "VmRSS:");
    // Idle sandboxes take the least memory a sandbox may have, so that 100 fit any host.
    sandbox_testing::embedded_server server(
        {.api_key = "sk-bench", .runtime = sandbox_testing::runtime::process, .sandbox_memory_bytes = 64 << 20});
    ngfail::opensandbox::client sandboxes({.port = server.port(), .api_key = "sk-bench", .timeout = 30s});
    const std::string box = sandboxes.create({}).id;
    for (int i = 0; i < 20; ++i) (void)sandboxes.exec(box, {.command = "true"});  // warm: connection, page cache
    // Each round alternates an exec and the bare spawn, so both see the machine alike.
    for (int r = 0; r < rounds; ++r) {
        std::vector<double> exec_ns;
        std::vector<double> bare_ns;
        for (int i = 0; i < 50; ++i) {
            const auto start = std::chrono::steady_clock::now();
            const auto ran = sandboxes.exec(box, {.command = "true"});
            exec_ns.push_back(static_cast<double>((std::chrono::steady_clock::now() - start).count()));
            if (ran.exit_code != 0) return 1;
            bare_ns.push_back(bare_bash_ns());
        }
        results.push_back(entry("process_exec_true_one_at_a_time", median(exec_ns)));
        results.push_back(entry("bare_bash_c_true_spawn", median(bare_ns)));
    }
    sandboxes.kill(box);
    std::vector<std::string> idle;
    for (int i = 0; i < 100; ++i) idle.push_back(sandboxes.create({}).id);
    std::this_thread::sleep_for(1s);  // each supervisor settled
    results.push_back(entry("process_100_idle_sandboxes_resident_mib", resident_mib(server_before)));
    for (const std::string& id : idle) sandboxes.kill(id);
    std::cout << json::serialize(json::object{{"benchmarks", results}}) << '\n';
    return 0;
}

int main(int argc, char** argv) {
    try {
        return measure(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "process_runtime_benchmark: " << e.what() << '\n';
        return 1;
    }
}
