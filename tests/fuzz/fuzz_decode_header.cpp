// Any bytes as an X-NG-Failure-Report value: a report or a protocol_violation, nothing else.
#include <ngfail/transport.hpp>

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto r = ngfail::decode_header(std::string_view(reinterpret_cast<const char*>(data), size));
    if (r.has_error() && r.error().code() != ngfail::kind::protocol_violation) std::abort();
    if (r && !ngfail::validate(r.value())) std::abort();  // what decodes is valid
    return 0;
}
