// Colours for a terminal, and none anywhere else (pipes, files, NO_COLOR).
#pragma once

#include <string>
#include <string_view>

namespace ngfail::cli {

class style {
public:
    // Colours when stdout (stderr) is a terminal and NO_COLOR is unset.
    static style for_stdout();
    static style for_stderr();

    [[nodiscard]] bool enabled() const noexcept { return enabled_; }
    [[nodiscard]] std::string kind(std::string_view text) const { return paint("\x1b[1;31m", text); }
    [[nodiscard]] std::string good(std::string_view text) const { return paint("\x1b[32m", text); }
    [[nodiscard]] std::string dim(std::string_view text) const { return paint("\x1b[2m", text); }
    [[nodiscard]] std::string bold(std::string_view text) const { return paint("\x1b[1m", text); }

private:
    explicit style(bool enabled) : enabled_(enabled) {}
    [[nodiscard]] std::string paint(std::string_view code, std::string_view text) const {
        if (!enabled_) return std::string(text);
        return std::string(code) + std::string(text) + "\x1b[0m";
    }
    bool enabled_;
};

}  // namespace ngfail::cli
