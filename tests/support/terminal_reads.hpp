// Reading a client terminal session in tests: output gathered until it holds what is waited for.
#pragma once

#include <ngfail/opensandbox/terminal.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <variant>

namespace ngfail_test {

// Output read until it holds `wanted`; an exit or a failure ends it first, appended as
// "<exit N>" or "<failed: …>", and so does `give_up` (checked between reads: a read waits
// for the next event).
inline std::string read_until(ngfail::opensandbox::terminal_session& t, std::string_view wanted,
                              std::chrono::steady_clock::duration give_up = std::chrono::seconds(5)) {
    using ngfail::opensandbox::terminal_exit;
    using ngfail::opensandbox::terminal_output;
    std::string seen;
    const auto until = std::chrono::steady_clock::now() + give_up;
    while (seen.find(wanted) == std::string::npos && std::chrono::steady_clock::now() < until) {
        auto event = t.try_read();
        if (!event) return seen + "<failed: " + std::string(event.error().what()) + ">";
        if (const auto* out = std::get_if<terminal_output>(&event.value())) {
            seen += out->bytes;
        } else {
            return seen + "<exit " + std::to_string(std::get<terminal_exit>(event.value()).exit_code) + ">";
        }
    }
    return seen;
}

}  // namespace ngfail_test
