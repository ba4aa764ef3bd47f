// Any bytes as a report document; what is accepted re-encodes to something accepted again,
// and the DOM path (parse_json, then report_from_value) agrees with the text path.
// What Boost.JSON's `value_to` reads without validation (cycles, dangling links, values out
// of range) every writer still turns into a header that fits its cap and decodes.
#include <ngfail/json.hpp>
#include <ngfail/failure_header.hpp>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

void writers_cope_with_unvalidated(const boost::json::value& value, std::size_t cap) {
    ngfail::failure_report report;
    try {
        report = boost::json::value_to<ngfail::failure_report>(value);
    } catch (const std::exception&) {
        return;  // not the shape of a report
    }
    const ngfail::limits lim{.max_header_bytes = cap};
    const std::string header = ngfail::encode_header(report, lim);
    if (header.size() > cap) std::abort();
    const auto back = ngfail::decode_header(header, lim);
    if (!back) std::abort();
    if (report.failure_id && !back.value().failure_id) std::abort();  // a failure stays a failure
    if (!ngfail::report_from_json(ngfail::to_json(report))) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto r = ngfail::report_from_json(text);
    if (r.has_error()) {
        if (r.error().code() != ngfail::kind::protocol_violation) std::abort();
    } else {
        const auto again = ngfail::report_from_json(ngfail::to_json(r.value()));
        if (!again) std::abort();
        (void)ngfail::rebuild(r.value());
    }
    // The text and its parsed value read alike: both accepted and equal, or both refused.
    const auto parsed = ngfail::parse_json(text);
    if (parsed.has_value()) {
        const auto from_value = ngfail::report_from_value(parsed.value());
        if (from_value.has_value() != r.has_value()) std::abort();
        if (r.has_value() && !(from_value.value() == r.value())) std::abort();
        writers_cope_with_unvalidated(parsed.value(), 256 + size % 2048);
    } else if (r.has_value()) {
        std::abort();  // a report whose text the strict parser refuses
    }
    return 0;
}
