// A relayed SSE stream in chunks whose sizes the input chooses: bytes pass unchanged.
#include <ngfail/transport.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t chunk = 1 + data[0] % 64;
    const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
    ngfail::sse_report_reader reader(ngfail::limits{.max_json_bytes = 4096});
    std::string relayed;
    for (std::size_t at = 0; at < stream.size(); at += chunk) relayed += reader.relay(stream.substr(at, chunk));
    if (relayed != stream) std::abort();
    if (reader.report() && reader.report()->has_error() &&
        reader.report()->error().code() != ngfail::kind::protocol_violation) {
        std::abort();
    }
    return 0;
}
