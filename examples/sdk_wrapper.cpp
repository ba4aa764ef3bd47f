// A sandbox SDK wrapper that throws ngfail events, and a caller that handles them.
//
// The wrapper catches the SDK's own exception and raises a `sandbox_failure` *from* it: the
// SDK's exception becomes the nested cause, so nothing the SDK said is lost, while callers
// get one typed vocabulary. The caller then catches by kind, by domain, and walks the chain.
#include <ngfail/event.hpp>
#include <ngfail/sandbox.hpp>

#include <iostream>
#include <stdexcept>
#include <string>

namespace toy_sdk {

// A third-party SDK's exception. It carries the reply's facts as data, so it implements
// ngfail::structured_error and ngfail reads them without parsing the message.
class http_error : public std::runtime_error, public ngfail::structured_error {
public:
    http_error(int status, std::string code)
        : std::runtime_error("HTTP " + std::to_string(status) + " " + code), status_(status), code_(std::move(code)) {}
    std::optional<int> http_status() const noexcept override { return status_; }
    std::optional<std::string> error_code_name() const override { return code_; }
    std::optional<std::string> request_id() const override { return "req-" + std::to_string(status_); }

private:
    int status_;
    std::string code_;
};

// Pretends to run a command: sandbox "sbx-gone" no longer exists; "sbx-busy" is over quota.
std::string run(const std::string& sandbox_id, const std::string& command) {
    if (sandbox_id == "sbx-gone") throw http_error(404, "KUBERNETES::SANDBOX_NOT_FOUND");
    if (sandbox_id == "sbx-busy") throw http_error(429, "RATE_LIMITED");
    return "ran '" + command + "'";
}

}  // namespace toy_sdk

// The wrapper: one place decides the kind, from the SDK's structured facts.
std::string exec(const std::string& sandbox_id, const std::string& command) {
    try {
        return toy_sdk::run(sandbox_id, command);
    } catch (const toy_sdk::http_error& e) {
        const int status = e.http_status().value_or(0);
        const auto kind = status == 404 ? ngfail::kind::provider_sandbox_lost : ngfail::kind::provider_quota_exhausted;
        std::throw_with_nested(ngfail::sandbox_failure({.operation = "exec",
                                                        .kind = kind,
                                                        .sandbox_id = sandbox_id,
                                                        .http_status = status,
                                                        .provider_code = e.error_code_name(),
                                                        .delivery = ngfail::delivery::not_sent}));
    }
}

void print_chain(const std::exception& e) {
    std::cout << "  chain, outermost first:\n";
    for (const ngfail::failure& level : ngfail::cause_chain(e)) {
        std::cout << "    - " << level.what() << "  [id " << ngfail::to_string(level.id()).substr(24) << "]\n";
        if (const auto* sdk = std::get_if<ngfail::sdk_error_details>(&level.details())) {
            std::cout << "      from " << sdk->error_type << ", code " << sdk->code.value_or("-") << ", request "
                      << sdk->request_id.value_or("-") << '\n';
        }
    }
}

int main() {
    for (const std::string sandbox : {"sbx-ok", "sbx-gone", "sbx-busy"}) {
        std::cout << "exec in " << sandbox << ":\n";
        try {
            const std::string output = exec(sandbox, "pytest -q");
            std::cout << "  " << output << '\n';
        } catch (const ngfail::sandbox_failure& e) {
            if (e.code() == ngfail::kind::provider_sandbox_lost) {
                std::cout << "  caught by kind: the sandbox is gone; make a new one\n";
            } else if (e.code() == ngfail::domain::provider) {
                std::cout << "  caught by domain: a provider failure (" << e.kind_name() << ")\n";
            }
            std::cout << "  what(): " << e.what() << '\n';
            std::cout << "  delivery: " << ngfail::name(*e.sandbox().delivery) << ", http status "
                      << e.http_status().value_or(0) << '\n';
            print_chain(e);
            try {
                std::rethrow_if_nested(e);  // the standard way reaches the SDK's own exception
            } catch (const toy_sdk::http_error& original) {
                std::cout << "  rethrow_if_nested reached the SDK's exception: " << original.what() << '\n';
            }
        }
    }
}
