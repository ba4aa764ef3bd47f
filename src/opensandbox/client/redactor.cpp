#include "redactor.hpp"

#include <algorithm>

namespace ngfail::opensandbox::detail {

void redactor::add(std::string_view secret) {
    if (secret.empty() || std::find(secrets_.begin(), secrets_.end(), secret) != secrets_.end()) return;
    secrets_.emplace_back(secret);
    // Longest first, so a secret that contains another is replaced whole.
    std::sort(secrets_.begin(), secrets_.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

void redactor::scrub(std::string& text) const {
    for (const std::string& secret : secrets_) {
        for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + mark.size())) {
            text.replace(at, secret.size(), mark);
        }
    }
}

}  // namespace ngfail::opensandbox::detail
