// Any bytes as an X-NG-Failure-Report value: a report or a protocol_violation, nothing else.
#include <ngfail/failure_header.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto r = ngfail::decode_header(std::string_view(reinterpret_cast<const char*>(data), size));
    if (r.has_error() && r.error().code() != ngfail::kind::protocol_violation) std::abort();
    if (!r) return 0;
    if (!ngfail::validate(r.value())) std::abort();  // what decodes is valid
    // What the writer makes of it, under a tighter cap, is read back with the same failure.
    const ngfail::limits tight{.max_header_bytes = 256 + size % 1024};
    const std::string again = ngfail::encode_header(r.value(), tight);
    if (again.size() > tight.max_header_bytes) std::abort();
    const auto back = ngfail::decode_header(again, tight);
    if (!back || back.value().failure_id != r.value().failure_id) std::abort();
    return 0;
}
