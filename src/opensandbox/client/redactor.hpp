// Secrets scrubbed from what the client records. A server may echo a request back (into an
// error message, a code, a request id, a status reason, an execution id), so every text the
// client takes from a reply into a failure passes through here first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::detail {

class redactor {
public:
    static constexpr std::string_view mark = "[redacted]";

    // Adds a secret (an empty one is ignored).
    void add(std::string_view secret);

    // `text` with every occurrence of every secret replaced by `mark`.
    void scrub(std::string& text) const;
    void scrub(std::optional<std::string>& text) const {
        if (text) scrub(*text);
    }
    [[nodiscard]] std::string scrubbed(std::string_view text) const {
        std::string copy(text);
        scrub(copy);
        return copy;
    }

private:
    std::vector<std::string> secrets_;
};

}  // namespace ngfail::opensandbox::detail
