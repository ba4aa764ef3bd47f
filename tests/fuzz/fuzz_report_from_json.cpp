// Any bytes as a report document; what is accepted re-encodes to something accepted again.
#include <ngfail/json.hpp>

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto r = ngfail::report_from_json(std::string_view(reinterpret_cast<const char*>(data), size));
    if (r.has_error()) {
        if (r.error().code() != ngfail::kind::protocol_violation) std::abort();
        return 0;
    }
    const auto again = ngfail::report_from_json(ngfail::to_json(r.value()));
    if (!again) std::abort();
    (void)ngfail::rebuild(r.value());
    return 0;
}
