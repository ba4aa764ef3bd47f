// <ngfail/event_id.hpp> — the identity of one failure event.
//
// An event id is a UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 26-bit counter
// that restarts at a random value each millisecond, then 48 random bits. Ids made by one
// thread are strictly increasing, so sorting ids sorts events by creation; generation takes
// no lock and allocates nothing.
//
//   auto id = ngfail::event_id::generate();
//   std::string text = ngfail::to_string(id);        // "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17"
//   ngfail::parse_event_id(text) == id;               // true
//
// An id is assigned when an event is created and kept across every conversion: exception,
// result, report record, wire and rebuilt exception.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail {

class event_id {
public:
    using bytes_type = std::array<std::uint8_t, 16>;

    // The nil id (all zero bytes): "no id", as a kind-only failure has.
    constexpr event_id() noexcept = default;
    constexpr explicit event_id(const bytes_type& bytes) noexcept : bytes_(bytes) {}

    // A new UUIDv7, greater than every id this thread generated before.
    [[nodiscard]] static event_id generate() noexcept;

    [[nodiscard]] constexpr const bytes_type& bytes() const noexcept { return bytes_; }
    [[nodiscard]] constexpr bool is_nil() const noexcept { return *this == event_id{}; }

    // Milliseconds since the Unix epoch, from the id's first 48 bits.
    [[nodiscard]] constexpr std::uint64_t unix_ms() const noexcept {
        std::uint64_t ms = 0;
        for (std::size_t i = 0; i < 6; ++i) ms = (ms << 8) | bytes_[i];
        return ms;
    }

    // Byte order (so ids of one thread sort by creation), compared as two words, not sixteen bytes.
    friend constexpr std::strong_ordering operator<=>(const event_id& a, const event_id& b) noexcept {
        if (const auto high = a.word(0) <=> b.word(0); high != 0) return high;
        return a.word(8) <=> b.word(8);
    }
    friend constexpr bool operator==(const event_id& a, const event_id& b) noexcept {
        return a.word(0) == b.word(0) && a.word(8) == b.word(8);
    }

private:
    // The eight bytes from `at` as one big-endian number.
    [[nodiscard]] constexpr std::uint64_t word(std::size_t at) const noexcept {
        if (std::is_constant_evaluated()) {
            std::uint64_t w = 0;
            for (std::size_t i = at; i < at + 8; ++i) w = (w << 8) | bytes_[i];
            return w;
        }
        std::uint64_t w = 0;
        std::memcpy(&w, bytes_.data() + at, 8);
        return std::endian::native == std::endian::little ? __builtin_bswap64(w) : w;
    }

    bytes_type bytes_{};
};

// The canonical text form: 36 lowercase characters, 8-4-4-4-12 hex digits.
[[nodiscard]] std::string to_string(const event_id& id);

// Writes `to_string(id)`: `std::cout << e.id()`.
std::ostream& operator<<(std::ostream& out, const event_id& id);

// Writes the canonical text form into `out` (36 characters, no terminator).
void format_event_id(const event_id& id, char* out) noexcept;

// Reads the 36-character form (hex digits in either case); any UUID version is accepted,
// since ids from peers are evidence and never dropped.
[[nodiscard]] std::optional<event_id> parse_event_id(std::string_view text) noexcept;

}  // namespace ngfail

template <>
struct std::hash<ngfail::event_id> {
    std::size_t operator()(const ngfail::event_id& id) const noexcept {
        // The last 8 bytes are mostly random: a good hash as they are.
        std::size_t h = 0;
        for (std::size_t i = 8; i < 16; ++i) h = (h << 8) | id.bytes()[i];
        return h ^ static_cast<std::size_t>(id.unix_ms());
    }
};
