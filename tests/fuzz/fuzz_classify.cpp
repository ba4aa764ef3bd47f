// Observations built from the input: classify is total and its answer is a kind.
#include <ngfail/opensandbox/classify.hpp>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// Takes values off the front of the input (zeros once it runs out).
class byte_reader {
public:
    byte_reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
    bool flag() { return (byte() & 1) != 0; }
    int integer(int lo, int hi) {
        const unsigned span = static_cast<unsigned>(hi - lo) + 1;
        const unsigned raw = static_cast<unsigned>(byte()) << 8 | byte();
        return lo + static_cast<int>(raw % span);
    }
    std::string text(std::size_t max) {
        const std::size_t n = std::min<std::size_t>(byte() % (max + 1), size_ - std::min(at_, size_));
        std::string s(reinterpret_cast<const char*>(data_) + std::min(at_, size_), n);
        at_ += n;
        return s;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

const std::array<std::error_code, 8> transport_errors{
    std::error_code{},
    std::make_error_code(std::errc::connection_refused),
    std::make_error_code(std::errc::connection_reset),
    std::make_error_code(std::errc::timed_out),
    std::make_error_code(std::errc::too_many_files_open),
    make_error_code(ngfail::opensandbox::errc::stream_incomplete),
    make_error_code(ngfail::opensandbox::errc::malformed_response),
    make_error_code(ngfail::opensandbox::errc::readiness_timeout)};

template <class T>
std::optional<T> maybe(byte_reader& in, T value) {
    return in.flag() ? std::optional<T>(std::move(value)) : std::nullopt;
}

constexpr std::array<const char*, 8> operations{"create", "get", "kill", "renew", "endpoint", "exec", "exec_status", "x"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    byte_reader in(data, size);
    ngfail::opensandbox::observation seen;
    seen.operation = operations[in.byte() % operations.size()];
    seen.http_status = maybe(in, in.integer(0, 999));
    seen.exit_code = maybe(in, in.integer(-2, 300));
    seen.execution_id = maybe(in, in.text(16));
    seen.provider_code = maybe(in, in.text(40));
    seen.provider_status_reason = maybe(in, in.text(20));
    seen.sandbox_state = maybe(in, in.text(12));
    seen.transport_error = transport_errors[in.byte() % transport_errors.size()];
    if (in.flag()) seen.transport_phase = static_cast<ngfail::opensandbox::phase>(in.byte() % 3);
    if (in.flag()) seen.failure_kind = in.text(24);
    seen.signal = maybe(in, in.text(8));  // read last, so the corpus's inputs keep their meaning
    const auto c = ngfail::opensandbox::classify(seen);
    if (!ngfail::is_kind(c.kind)) std::abort();
    (void)ngfail::opensandbox::to_failure(seen);
    return 0;
}
