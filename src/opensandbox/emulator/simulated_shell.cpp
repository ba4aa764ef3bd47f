#include "simulated_shell.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdlib>

namespace ngfail::opensandbox::emulator {
namespace {

// What one program sees: its argument, the files, and the session's state (a scratch one
// outside a session).
struct run_context {
    const file_reader& read_file;
    shell_state& shell;
};

using program = simulated_run (*)(std::string_view argument, run_context& at);

simulated_run echo(std::string_view text, run_context&) { return {.stdout_text = std::string(text) + "\n"}; }

simulated_run exit_with(std::string_view code, run_context&) {
    int n = 1;
    std::from_chars(code.data(), code.data() + code.size(), n);
    return {.exit_code = n};
}

simulated_run sleep_for(std::string_view seconds, run_context&) {
    const std::string text(seconds);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(value) || value < 0) {
        return {.stderr_text = "sleep: invalid time interval '" + text + "'\n", .exit_code = 1};
    }
    return {.runs_for = std::chrono::milliseconds(static_cast<long long>(std::min(value, 86400.0) * 1000))};
}

// `path` from the session's working directory, as the shell resolves it.
std::string absolute(std::string_view path, const shell_state& shell) {
    if (path.starts_with('/')) return std::string(path);
    return (shell.cwd == "/" ? std::string() : shell.cwd) + "/" + std::string(path);
}

simulated_run cat(std::string_view path, run_context& at) {
    const auto content = at.read_file(absolute(path, at.shell));
    if (!content) {
        return {.stderr_text = "cat: " + std::string(path) + ": No such file or directory\n", .exit_code = 1};
    }
    return {.stdout_text = *content};
}

simulated_run cd(std::string_view dir, run_context& at) {
    at.shell.cwd = absolute(dir.empty() ? "/root" : dir, at.shell);  // bare `cd` goes home
    return {};
}

simulated_run pwd(std::string_view, run_context& at) { return {.stdout_text = at.shell.cwd + "\n"}; }

simulated_run export_variable(std::string_view assignment, run_context& at) {
    const auto eq = assignment.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        return {.stderr_text = "export: '" + std::string(assignment) + "': not a valid identifier\n", .exit_code = 1};
    }
    at.shell.env[std::string(assignment.substr(0, eq))] = std::string(assignment.substr(eq + 1));
    return {};
}

struct command_row {
    std::string_view name;
    program run;
};

constexpr std::array programs{
    command_row{"echo", echo},     command_row{"exit", exit_with}, command_row{"sleep", sleep_for},
    command_row{"cat", cat},       command_row{"cd", cd},          command_row{"pwd", pwd},
    command_row{"export", export_variable},
};

// `$NAME` replaced by the session's value (empty when unset), as bash expands it.
std::string expanded(std::string_view text, const shell_state& shell) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '$') {
            out += text[i];
            continue;
        }
        std::size_t end = i + 1;
        while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_')) ++end;
        if (end == i + 1) {
            out += '$';
            continue;
        }
        if (const auto it = shell.env.find(std::string(text.substr(i + 1, end - i - 1))); it != shell.env.end()) {
            out += it->second;
        }
        i = end - 1;
    }
    return out;
}

simulated_run simulate_one(std::string_view command, run_context& at) {
    const std::string text = expanded(command, at.shell);
    const std::string_view line = text;
    const auto space = line.find(' ');
    const std::string_view name = line.substr(0, space);
    const std::string_view argument = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    for (const command_row& row : programs) {
        if (row.name == name) return row.run(argument, at);
    }
    return {.stdout_text = "ran: " + std::string(command) + "\n"};
}

}  // namespace

simulated_run simulate(std::string_view command, const file_reader& read_file, shell_state* shell) {
    shell_state scratch;
    run_context at{read_file, shell ? *shell : scratch};
    simulated_run all;
    // `a && b` runs b only when a succeeded; `a; b` runs both.
    for (std::string_view rest = command; !rest.empty();) {
        const auto and_at = rest.find(" && ");
        const auto then_at = rest.find("; ");
        const bool is_and = and_at != std::string_view::npos && (then_at == std::string_view::npos || and_at < then_at);
        const std::size_t cut = is_and ? and_at : then_at;
        const simulated_run one = simulate_one(rest.substr(0, cut), at);
        all.stdout_text += one.stdout_text;
        all.stderr_text += one.stderr_text;
        all.exit_code = one.exit_code;
        all.runs_for += one.runs_for;
        const bool exits = rest.substr(0, cut).starts_with("exit");  // exit ends the shell
        if (cut == std::string_view::npos || exits || (is_and && one.exit_code != 0)) break;
        rest = rest.substr(cut + (is_and ? 4 : 2));
    }
    return all;
}

}  // namespace ngfail::opensandbox::emulator
