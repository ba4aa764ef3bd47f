// The classifier alone (ngfail::opensandbox): no Beast, no Asio.
#include <ngfail/opensandbox/classify.hpp>

#include <cstdio>

int main() {
    const auto seen = ngfail::opensandbox::classify({.operation = "get", .http_status = 401});
    const bool ok = seen.kind == ngfail::kind::provider_credentials_rejected;
    std::printf("classifier alone: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
