#include "simulated_shell.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdlib>

namespace ngfail::opensandbox::emulator {
namespace {

// What one program sees: its argument, the files, the session's state (a scratch one outside
// a session), and the run it prints into, which holds at most `max_run_output`.
struct run_context {
    const file_reader& files;
    shell_state& shell;
    simulated_run& run;
    bool full = false;  // the run has printed all it may

    void print(std::string_view text, std::string simulated_run::*stream = &simulated_run::stdout_text) {
        const std::size_t used = run.stdout_text.size() + run.stderr_text.size();
        const std::size_t room = max_run_output - std::min(max_run_output, used);
        if (text.size() > room) {
            text = text.substr(0, room);
            full = true;
        }
        (run.*stream).append(text);
    }
    int fail(std::string_view message) {
        print(message, &simulated_run::stderr_text);
        return 1;
    }
};

// A program prints through its context and returns its exit status.
using program = int (*)(std::string_view argument, run_context& at);

int echo(std::string_view text, run_context& at) {
    at.print(text);
    at.print("\n");
    return 0;
}

int exit_with(std::string_view code, run_context&) {
    int n = 1;
    std::from_chars(code.data(), code.data() + code.size(), n);
    return n;
}

int sleep_for(std::string_view seconds, run_context& at) {
    const std::string text(seconds.substr(0, 64));
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(value) || value < 0) {
        return at.fail("sleep: invalid time interval '" + text + "'\n");
    }
    at.run.take_longer(std::chrono::milliseconds(static_cast<long long>(std::min(value, 86400.0) * 1000)));
    return 0;
}

// `path` from the session's working directory, as the shell resolves it; none past
// `max_path_bytes`.
std::optional<std::string> absolute(std::string_view path, const shell_state& shell) {
    const std::size_t length = path.starts_with('/') ? path.size() : shell.cwd.size() + 1 + path.size();
    if (length > max_path_bytes) return std::nullopt;
    if (path.starts_with('/')) return std::string(path);
    return (shell.cwd == "/" ? std::string() : shell.cwd) + "/" + std::string(path);
}

int cat(std::string_view path, run_context& at) {
    const auto full_path = absolute(path, at.shell);
    const auto content = full_path && at.files.read_file ? at.files.read_file(*full_path) : nullptr;
    if (!content) return at.fail("cat: " + std::string(path.substr(0, max_path_bytes)) + ": No such file or directory\n");
    at.print(*content);
    return 0;
}

int cd(std::string_view dir, run_context& at) {
    auto to = absolute(dir.empty() ? "/root" : dir, at.shell);  // bare `cd` goes home
    if (!to) return at.fail("bash: cd: File name too long\n");
    at.shell.cwd = std::move(*to);
    return 0;
}

int pwd(std::string_view, run_context& at) {
    at.print(at.shell.cwd);
    at.print("\n");
    return 0;
}

int export_variable(std::string_view assignment, run_context& at) {
    const auto eq = assignment.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        return at.fail("export: '" + std::string(assignment.substr(0, max_path_bytes)) + "': not a valid identifier\n");
    }
    if (!at.shell.set(std::string(assignment.substr(0, eq)), std::string(assignment.substr(eq + 1)))) {
        return at.fail("bash: export: the simulated shell keeps at most 64 KiB of variables\n");
    }
    return 0;
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

// `$NAME` replaced by the session's value (empty when unset), as bash expands it; none when
// the result would be longer than a run may print (it could only be printed, or kept).
std::optional<std::string> expanded(std::string_view text, const shell_state& shell) {
    std::string out;
    const auto add = [&](std::string_view piece) {
        if (out.size() + piece.size() > max_run_output) return false;
        out += piece;
        return true;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const std::size_t dollar = text.find('$', i);
        if (!add(text.substr(i, dollar - i))) return std::nullopt;
        if (dollar == std::string_view::npos) break;
        std::size_t end = dollar + 1;
        while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_')) ++end;
        if (end == dollar + 1) {
            if (!add("$")) return std::nullopt;
        } else if (const auto it = shell.env().find(std::string(text.substr(dollar + 1, end - dollar - 1)));
                   it != shell.env().end()) {
            if (!add(it->second)) return std::nullopt;
        }
        i = end - 1;
    }
    return out;
}

int simulate_one(std::string_view command, run_context& at) {
    const std::optional<std::string> text = expanded(command, at.shell);
    if (!text) {
        at.full = true;
        return 1;
    }
    const std::string_view line = *text;
    const auto space = line.find(' ');
    const std::string_view name = line.substr(0, space);
    const std::string_view argument = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    for (const command_row& row : programs) {
        if (row.name == name) return row.run(argument, at);
    }
    at.print("ran: ");
    at.print(command);
    at.print("\n");
    return 0;
}

// The first `; ` or ` && ` of a line, found in one pass: looking for each separator apart
// rescanned the rest of the line at every command (40,000 commands: 4 s).
struct separator {
    std::size_t at = std::string_view::npos;
    std::size_t length = 0;
    bool is_and = false;
};
separator next_separator(std::string_view line) {
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == ';' && line.substr(i).starts_with("; ")) return {i, 2, false};
        if (line[i] == ' ' && line.substr(i).starts_with(" && ")) return {i, 4, true};
    }
    return {};
}

}  // namespace

file_reader reader_of(const file_tree& tree) {
    return {.read_file = [&tree](const std::string& path) {
                const auto f = tree.file(path);
                return f ? f->content : nullptr;
            },
            .is_directory = [&tree](const std::string& path) { return tree.is_directory(path); }};
}

simulated_run simulate(std::string_view command, const file_reader& files, shell_state* shell) {
    shell_state scratch;
    simulated_run all;
    run_context at{files, shell ? *shell : scratch, all};
    // `a && b` runs b only when a succeeded; `a; b` runs both.
    for (std::string_view rest = command; !rest.empty();) {
        const separator cut = next_separator(rest);
        const std::string_view one = rest.substr(0, cut.at);
        all.exit_code = simulate_one(one, at);
        if (at.full) {
            all.stderr_text += "ngfail serve: a simulated run prints at most 16 MiB; this one was stopped there\n";
            all.exit_code = 1;
            break;
        }
        const bool exits = one.starts_with("exit");  // exit ends the shell
        if (cut.at == std::string_view::npos || exits || (cut.is_and && all.exit_code != 0)) break;
        rest = rest.substr(cut.at + cut.length);
    }
    return all;
}

}  // namespace ngfail::opensandbox::emulator
