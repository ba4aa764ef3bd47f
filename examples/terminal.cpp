// An interactive terminal through the client: a shell in a sandbox, typed into line by
// line, its output printed as it arrives; then a detach, and a re-attach that replays what
// the terminal wrote. Runs against the embedded server unless given a server; the lines
// come from stdin with `-`, else from a short script:
//   example_terminal [BASE_URL API_KEY] [-]
#include <ngfail/opensandbox.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace sandbox = ngfail::opensandbox;

// Prints the terminal's output until the shell prompts again ("$ "), or until it exits.
bool print_until_prompt(sandbox::terminal_session& term) {
    std::string recent;
    for (;;) {
        const sandbox::terminal_event event = term.read();  // throws a classified sandbox_failure
        if (const auto* exit = std::get_if<sandbox::terminal_exit>(&event)) {
            std::cout << "[the shell exited with " << exit->exit_code << "]\n";
            return false;
        }
        const auto& out = std::get<sandbox::terminal_output>(event);
        std::cout << out.bytes << std::flush;
        recent += out.bytes;
        if (recent.size() > 2) recent.erase(0, recent.size() - 2);  // the prompt's two bytes, at most
        if (recent == "$ ") return true;
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    const bool from_stdin = !args.empty() && args.back() == "-";
    if (from_stdin) args.pop_back();
    std::optional<sandbox::embedded_server> local;
    sandbox::client_options options;
    if (args.size() == 2) {
        options = {.base_url = args[0], .api_key = args[1]};
    } else {
        local.emplace();
        options = {.port = local->port()};
    }
    std::vector<std::string> lines{"cd /tmp", "pwd", "echo hello from the terminal"};
    if (from_stdin) {
        lines.clear();
        for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
    }
    try {
        sandbox::client sandboxes(options);
        const auto box = sandboxes.create({.image = "ubuntu:22.04"});
        const std::string terminal = sandboxes.create_terminal(box.id);
        std::int64_t seen = 0;
        {
            sandbox::terminal_session term = sandboxes.attach_terminal(box.id, terminal);
            print_until_prompt(term);
            for (const std::string& line : lines) {
                term.write(line + "\r");  // Enter sends a carriage return
                if (!print_until_prompt(term)) break;
            }
            seen = term.offset();
            term.detach();  // the shell runs on
        }
        std::cout << "\n[detached after " << seen << " bytes; the terminal is "
                  << (sandboxes.terminal_status(box.id, terminal).running ? "running" : "stopped") << "]\n";
        sandbox::terminal_session again = sandboxes.attach_terminal(box.id, terminal, {.since = 0});
        const auto replayed = std::get<sandbox::terminal_output>(again.read());
        std::cout << "[re-attached: " << replayed.bytes.size() << " bytes replayed from offset " << replayed.offset
                  << "]\n";
        again.write("exit 0\r");
        while (print_until_prompt(again)) {
        }
        sandboxes.delete_terminal(box.id, terminal);
        sandboxes.kill(box.id);
    } catch (const ngfail::sandbox_failure& e) {
        std::cerr << "failed: " << e.what() << " (delivery "
                  << (e.sandbox().delivery ? std::string(ngfail::name(*e.sandbox().delivery)) : "unknown") << ")\n";
        return 1;
    }
}
