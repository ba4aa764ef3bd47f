// ngfail — the command-line face of the library.
#include "command.hpp"

#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::cli {
namespace {

constexpr std::array commands{
    command{"kinds", "list the failure vocabulary: name, domain, code, description", kinds_usage, run_kinds},
    command{"classify", "classify OpenSandbox evidence into a kind and delivery", classify_usage, run_classify},
    command{"decode", "validate a failure header or report and print its chains", decode_usage, run_decode},
    command{"stats", "aggregate failures in rollout rows (JSONL)", stats_usage, run_stats},
    command{"policy", "check an outcome policy file, or decide one failure with it", policy_usage, run_policy},
    command{"demo", "run failures through the client against the embedded server", demo_usage, run_demo},
    command{"serve", "run a local OpenSandbox with injectable faults", serve_usage, run_serve},
    command{"sandbox", "drive an OpenSandbox server: create, exec, files, terminal, diagnostics, kill", sandbox_usage, run_sandbox},
};

void print_overview(std::ostream& out) {
    out << "usage: ngfail <command> [options]\n\ncommands:\n";
    for (const command& c : commands) out << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary << '\n';
    out << "\n'ngfail <command> --help' describes one command.\n";
}

int dispatch(std::span<const std::string_view> args, const streams& io) {
    if (args.empty()) {
        print_overview(io.err);
        return exit_bad_input;
    }
    if (args.front() == "--help" || args.front() == "-h" || args.front() == "help") {
        print_overview(io.out);
        return exit_ok;
    }
    const auto it = std::ranges::find(commands, args.front(), &command::name);
    if (it == commands.end()) {
        io.err << "ngfail: unknown command '" << args.front() << "'\n";
        print_overview(io.err);
        return exit_bad_input;
    }
    const auto rest = args.subspan(1);
    // After `--` the words are a command's own (`ngfail sandbox exec ID -- grep --help`).
    const auto options_end = std::ranges::find(rest, std::string_view{"--"});
    if (std::find(rest.begin(), options_end, std::string_view{"--help"}) != options_end) {
        io.out << it->usage();
        return exit_ok;
    }
    return it->run(rest, io);
}

}  // namespace
}  // namespace ngfail::cli

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    try {
        return ngfail::cli::dispatch(args, {std::cout, std::cerr});
    } catch (const std::exception& e) {
        std::cerr << "ngfail: " << e.what() << '\n';
        return ngfail::cli::exit_failure;
    }
}
