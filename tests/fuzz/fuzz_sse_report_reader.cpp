// A relayed SSE stream in chunks whose sizes the input chooses: bytes pass unchanged, and a
// leading byte order mark changes nothing about the report found.
#include <ngfail/sse_report_reader.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

std::optional<ngfail::result<ngfail::failure_report>> read(std::string_view stream, std::size_t chunk) {
    ngfail::sse_report_reader reader(ngfail::limits{.max_json_bytes = 4096});
    std::string relayed;
    for (std::size_t at = 0; at < stream.size(); at += chunk) relayed += reader.relay(stream.substr(at, chunk));
    if (relayed != stream) std::abort();
    if (reader.report() && reader.report()->has_error() &&
        reader.report()->error().code() != ngfail::kind::protocol_violation) {
        std::abort();
    }
    return reader.report();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t chunk = 1 + data[0] % 64;
    const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
    const auto plain = read(stream, chunk);
    if (stream.starts_with("\xEF\xBB\xBF")) return 0;
    const auto marked = read("\xEF\xBB\xBF" + std::string(stream), chunk);
    if (plain.has_value() != marked.has_value()) std::abort();
    if (plain && plain->has_value() != marked->has_value()) std::abort();
    if (plain && plain->has_value() && plain->value() != marked->value()) std::abort();
    return 0;
}
