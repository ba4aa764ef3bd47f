// The wire format alone (ngfail::wire): a failure's report through the header and back.
#include <ngfail/failure_header.hpp>

#include <cstdio>

int main() {
    const ngfail::failure f(ngfail::kind::provider_oom_killed);
    const auto back = ngfail::decode_header(ngfail::encode_header(ngfail::report_for(f)));
    const bool ok = back && back.value().failure_id.has_value() && back.value().events.size() == 1;
    std::printf("wire alone: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
