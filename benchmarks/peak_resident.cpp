// Runs a command and prints its peak resident memory as a benchmark entry (Google Benchmark
// JSON, the value in KiB), for benchmarks/run's memory rows; the command's stdout is dropped.
//   peak_resident NAME COMMAND [ARGS...]
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: peak_resident NAME COMMAND [ARGS...]\n");
        return 2;
    }
    const pid_t child = ::fork();
    if (child < 0) return 2;
    if (child == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, 1);
        ::execvp(argv[2], argv + 2);
        std::perror("peak_resident: exec");
        ::_exit(127);
    }
    int status = 0;
    rusage usage{};
    if (::wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "peak_resident: %s failed\n", argv[2]);
        return 1;
    }
    std::printf("{\"benchmarks\":[{\"name\":\"%s\",\"run_name\":\"%s\",\"real_time\":%ld,\"time_unit\":\"ns\"}]}\n",
                argv[1], argv[1], usage.ru_maxrss);
    return 0;
}
