// A `noexcept` work loop that returns failures as results, then crosses into throwing code
// and back without losing an id or a cause.
#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>

#include <array>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

namespace {

struct job {
    std::string name;
    int exit_code;      // what the command returned, if it ran
    bool stream_lost;   // the connection dropped mid-run
};

// Leaf: returns a failure instead of throwing. Kind-only failures cost no allocation.
ngfail::result<int> run(const job& j) noexcept {
    if (j.stream_lost) {
        return ngfail::make_sandbox_failure({.operation = "exec",
                                             .kind = ngfail::kind::transport_peer_drop,
                                             .sandbox_id = "sbx-7",
                                             .reason = "stream closed before execution_complete",
                                             .delivery = ngfail::delivery::possibly_delivered});
    }
    if (j.exit_code == -1) return ngfail::kind::provider_command_terminated;
    return j.exit_code;  // a non-zero exit is a normal result
}

// Middle: BOOST_OUTCOME_TRY propagates a failure unchanged.
ngfail::result<std::string> describe(const job& j) noexcept {
    BOOST_OUTCOME_TRY(const int code, run(j));
    return j.name + " exited " + std::to_string(code);
}

// Throwing code that an old library might contain.
int legacy_score(const std::string& text) {
    if (text.find("exited 0") == std::string::npos) throw std::runtime_error("legacy scorer: cannot score " + text);
    return 1;
}

}  // namespace

int main() {
    const std::array<job, 4> jobs{{{"build", 0, false}, {"test", 1, false}, {"fuzz", -1, false}, {"lint", 0, true}}};

    std::cout << "noexcept loop:\n";
    std::map<std::string, int> failures_by_domain;
    ngfail::result<std::string> last_failed = std::string();
    for (const job& j : jobs) {
        const auto r = describe(j);
        if (r) {
            std::cout << "  ok      " << r.value() << '\n';
            continue;
        }
        const ngfail::failure& f = r.error();
        const auto d = ngfail::domain_of(static_cast<ngfail::kind>(f.code().value()));
        ++failures_by_domain[d ? std::string(ngfail::name(*d)) : "none"];
        std::cout << "  failed  " << j.name << ": " << f.what()
                  << (f.is_kind_only() ? "  (kind only, no allocation)" : "") << '\n';
        if (!f.is_kind_only()) last_failed = r;
    }
    for (const auto& [domain, count] : failures_by_domain) {
        std::cout << "  " << count << " failure(s) in domain " << domain << '\n';
    }

    std::cout << "into throwing code: .value() raises the full event\n";
    try {
        (void)last_failed.value();
    } catch (const ngfail::sandbox_failure& e) {
        std::cout << "  caught sandbox_failure " << e.what() << '\n';
        std::cout << "  same id as the result's failure: " << std::boolalpha << (e.id() == last_failed.error().id()) << '\n';
    }

    std::cout << "and back: capture() turns exceptions into results\n";
    for (const job& j : jobs) {
        const auto text = describe(j);
        if (!text) continue;
        const auto score = ngfail::capture([&] { return legacy_score(text.value()); }, ngfail::kind::verifier_error);
        if (score) {
            std::cout << "  scored  " << j.name << ": " << score.value() << '\n';
        } else {
            const auto& sdk = std::get<ngfail::sdk_error_details>(score.error().details());
            std::cout << "  failed  " << j.name << ": " << score.error().what() << "  (wrapped " << sdk.error_type
                      << ")\n";
        }
    }
}
