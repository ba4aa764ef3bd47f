#include "simulated_shell.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ngfail::opensandbox::emulator {
namespace {

using program = simulated_run (*)(std::string_view argument, const file_reader& read_file);

simulated_run echo(std::string_view text, const file_reader&) { return {.stdout_text = std::string(text) + "\n"}; }

simulated_run exit_with(std::string_view code, const file_reader&) {
    int n = 1;
    std::from_chars(code.data(), code.data() + code.size(), n);
    return {.exit_code = n};
}

simulated_run sleep_for(std::string_view seconds, const file_reader&) {
    const std::string text(seconds);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(value) || value < 0) {
        return {.stderr_text = "sleep: invalid time interval '" + text + "'\n", .exit_code = 1};
    }
    return {.runs_for = std::chrono::milliseconds(static_cast<long long>(std::min(value, 86400.0) * 1000))};
}

simulated_run cat(std::string_view path, const file_reader& read_file) {
    const auto content = read_file(std::string(path));
    if (!content) {
        return {.stderr_text = "cat: " + std::string(path) + ": No such file or directory\n", .exit_code = 1};
    }
    return {.stdout_text = *content};
}

struct command_row {
    std::string_view name;
    program run;
};

constexpr std::array programs{
    command_row{"echo", echo},
    command_row{"exit", exit_with},
    command_row{"sleep", sleep_for},
    command_row{"cat", cat},
};

}  // namespace

simulated_run simulate(std::string_view command, const file_reader& read_file) {
    const auto space = command.find(' ');
    const std::string_view name = command.substr(0, space);
    const std::string_view argument = space == std::string_view::npos ? std::string_view{} : command.substr(space + 1);
    for (const command_row& row : programs) {
        if (row.name == name) return row.run(argument, read_file);
    }
    return {.stdout_text = "ran: " + std::string(command) + "\n"};
}

}  // namespace ngfail::opensandbox::emulator
