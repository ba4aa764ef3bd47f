// The emulator alone (ngfail::opensandbox_emulator), as a test harness in another language's
// project would embed it: it serves until destroyed.
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <cstdio>

int main() {
    ngfail::opensandbox::testing::embedded_server server;
    const auto fault = ngfail::opensandbox::testing::parse_fault(R"({"operation":"exec","action":"oom_kill"})");
    const bool ok = server.port() != 0 && server.direct_port() != 0 && fault.has_value();
    std::printf("emulator alone: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
