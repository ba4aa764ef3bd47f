// What a product links, through the umbrella header and target (ngfail::ngfail): the client,
// the classifier, the policy, the wire; not the emulator, a test tool, which neither brings.
// check.sh then looks for emulator symbols in the program and finds none.
#include <ngfail/ngfail.hpp>
#include <ngfail/opensandbox.hpp>

#include <cstdio>

#ifdef NGFAIL_WITH_OPENSANDBOX_EMULATOR
#error "ngfail::ngfail passes on the emulator's definition, and with it <ngfail/opensandbox.hpp> declares the emulator"
#endif

// Compiles only while the headers above declare no emulator: each alias would clash with the
// class of the same name.
namespace ngfail::opensandbox {
using embedded_server = void;
namespace testing {
using embedded_server = void;
}  // namespace testing
}  // namespace ngfail::opensandbox

int main() {
    // No request is made: the client's code is linked all the same.
    const ngfail::opensandbox::client sandboxes({.port = 1});
    const ngfail::opensandbox::observation seen{.operation = "get", .http_status = 401};
    const ngfail::failure failed = ngfail::opensandbox::to_failure(seen);
    const bool ok = failed.code() == ngfail::kind::provider_credentials_rejected &&
                    ngfail::validate(ngfail::report_for(failed)).has_value();
    std::printf("umbrella without the emulator: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
