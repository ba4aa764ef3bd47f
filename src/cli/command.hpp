// The CLI's subcommands: each is a function from its arguments to an exit status.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

namespace ngfail::cli {

// Exit statuses shared by every subcommand.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_bad_input = 2;

struct streams {
    std::ostream& out;
    std::ostream& err;
};

using arguments = std::span<const std::string_view>;

struct command {
    std::string_view name;
    std::string_view summary;
    std::string (*usage)();  // the whole --help text
    int (*run)(arguments args, const streams& io);
};

int run_kinds(arguments args, const streams& io);
int run_classify(arguments args, const streams& io);
int run_decode(arguments args, const streams& io);
int run_stats(arguments args, const streams& io);
int run_policy(arguments args, const streams& io);
int run_demo(arguments args, const streams& io);
int run_serve(arguments args, const streams& io);
int run_sandbox(arguments args, const streams& io);

std::string kinds_usage();
std::string classify_usage();
std::string decode_usage();
std::string stats_usage();
std::string policy_usage();
std::string demo_usage();
std::string serve_usage();
std::string sandbox_usage();

}  // namespace ngfail::cli
