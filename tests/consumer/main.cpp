// Prints one kind's name and domain; exits non-zero if the installed library disagrees.
#include <ngfail/kind.hpp>

#include <cstdio>
#include <system_error>

int main() {
    const std::error_code ec = ngfail::kind::provider_oom_killed;
    const bool ok = ec == ngfail::domain::provider && ngfail::kind_name(ec) == "provider_oom_killed" &&
                    ngfail::kind_name(ngfail::kind_from_name("acme:thing")) == "acme:thing";
    const auto name = ngfail::kind_name(ec);
    std::printf("%.*s in %s: %s\n", static_cast<int>(name.size()), name.data(), ec.category().name(),
                ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
