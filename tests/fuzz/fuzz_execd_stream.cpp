// The client's reading of execd event streams, in chunks the input chooses: it reads or
// says malformed_response, and keeps output within its bound.
#include "opensandbox/client/execd_stream.hpp"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t chunk = 1 + data[0] % 32;
    const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
    ngfail::opensandbox::detail::execd_stream events(256);
    try {
        for (std::size_t at = 0; at < stream.size(); at += chunk) events.feed(stream.substr(at, chunk));
        events.finish();
    } catch (const std::system_error& e) {
        if (e.code() != ngfail::opensandbox::errc::malformed_response) std::abort();
        return 0;
    }
    const auto& r = events.result();
    if (r.stdout_text.size() + r.stderr_text.size() > 256) std::abort();
    return 0;
}
