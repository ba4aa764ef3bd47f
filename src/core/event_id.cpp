#include <ngfail/event_id.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <ctime>
#include <ostream>
#include <pthread.h>
#include <sys/random.h>

namespace ngfail {
namespace {

constexpr int counter_bits = 26;
constexpr std::uint64_t counter_limit = std::uint64_t{1} << counter_bits;
// A fresh millisecond starts its counter in the lower half, leaving room to count up.
constexpr std::uint64_t counter_start_mask = (counter_limit >> 1) - 1;

std::uint64_t now_unix_ms() noexcept {
    // The coarse clock costs a few nanoseconds; the counter keeps ids ordered within its tick.
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000000;
}

// Per-thread state; trivially constructible, so thread_local costs no initialisation guard.
struct generator {
    std::uint64_t last_ms;
    std::uint64_t counter;
    std::uint64_t rng;  // splitmix64 state
    bool seeded;

    std::uint64_t next_random() noexcept {
        std::uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    void seed() noexcept {
        std::uint64_t entropy = 0;
        if (::getrandom(&entropy, sizeof entropy, GRND_NONBLOCK) != sizeof entropy) {
            timespec ts{};
            ::clock_gettime(CLOCK_MONOTONIC, &ts);
            entropy = static_cast<std::uint64_t>(ts.tv_nsec) ^ (static_cast<std::uint64_t>(ts.tv_sec) << 32);
        }
        rng = entropy ^ reinterpret_cast<std::uintptr_t>(this);
        seeded = true;
    }

    // Strictly increasing (ms, counter) pairs, whatever the wall clock does.
    void advance() noexcept {
        const std::uint64_t now = now_unix_ms();
        if (now > last_ms) {
            last_ms = now;
            counter = next_random() & counter_start_mask;
        } else if (++counter == counter_limit) {
            ++last_ms;  // borrow from the future rather than repeat (RFC 9562 §6.2)
            counter = next_random() & counter_start_mask;
        }
    }
};

thread_local generator local_generator{};

// A forked child starts with a copy of the forking thread's generator: without a new seed
// every child would make the same ids as its siblings. Only the forking thread lives on in
// the child, so its generator is the only one to reseed.
void reseed_after_fork() noexcept { local_generator.seeded = false; }

const bool fork_handler_registered = [] { return ::pthread_atfork(nullptr, nullptr, reseed_after_fork) == 0; }();

// The first N bytes at `at` as a word, the first in the low bits; and back.
template <std::size_t N, class Byte>
std::uint64_t load_le(const Byte* at) noexcept {
    std::uint64_t word = 0;
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&word, at, N);
    } else {
        for (std::size_t k = 0; k < N; ++k) word |= std::uint64_t{static_cast<std::uint8_t>(at[k])} << 8 * k;
    }
    return word;
}

template <std::size_t N, class Byte>
void store_le(Byte* at, std::uint64_t word) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(at, &word, N);
    } else {
        for (std::size_t k = 0; k < N; ++k) at[k] = static_cast<Byte>(word >> 8 * k);
    }
}

// A word as eight bytes at `at`, its highest byte first.
template <class Byte>
void store_be(Byte* at, std::uint64_t word) noexcept {
    if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
    std::memcpy(at, &word, 8);
}

// Four bytes (the first in the low bits) as eight lowercase hex digits (the first digit in
// the low byte): each byte spread to a 16-bit lane of its own, split into its two nibbles,
// and each nibble made a digit without a branch (one above 9 gets the distance from '9' to 'a').
inline std::uint64_t hex_digits_of(std::uint64_t four) noexcept {
    std::uint64_t x = (four | four << 16) & 0x0000ffff0000ffffULL;
    x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
    const std::uint64_t nibbles = ((x >> 4) & 0x000f000f000f000fULL) | ((x & 0x000f000f000f000fULL) << 8);
    const std::uint64_t letters = ((nibbles + 0x7676767676767676ULL) & 0x8080808080808080ULL) >> 7;
    return nibbles + 0x3030303030303030ULL + letters * ('a' - '9' - 1);
}

constexpr std::uint64_t each_byte(std::uint8_t b) noexcept { return 0x0101010101010101ULL * b; }

// Eight hex digits (the first in the low byte) as the four bytes they spell (the first in the
// low bits), all eight judged at once; `invalid` gains a bit when any is not a hex digit.
// A byte with its top bit is invalid as it is; one below 0x80 is at least `lo` when adding
// 0x80 - lo sets its top bit, and above `hi` when adding 0x7f - hi does, and no such sum
// carries into the next byte. `| 0x20` folds A-F onto a-f and leaves every other byte outside a-f.
inline std::uint64_t bytes_of_hex_digits(std::uint64_t digits, std::uint64_t& invalid) noexcept {
    const std::uint64_t top = each_byte(0x80);
    const std::uint64_t folded = digits | each_byte(0x20);
    const std::uint64_t decimal = (digits + each_byte(0x80 - '0')) & ~(digits + each_byte(0x7f - '9')) & top;
    const std::uint64_t letter = (folded + each_byte(0x80 - 'a')) & ~(folded + each_byte(0x7f - 'f')) & top;
    invalid |= (digits & top) | ((decimal | letter) ^ top);
    // '0'-'9' end in their value, 'a'-'f' and 'A'-'F' in their value less 9.
    const std::uint64_t nibbles = (digits & each_byte(0x0f)) + (letter >> 7) * 9;
    // Each pair of digits into one byte, in a 16-bit lane; then the lanes packed together.
    std::uint64_t x = ((nibbles & 0x00ff00ff00ff00ffULL) << 4) | ((nibbles >> 8) & 0x00ff00ff00ff00ffULL);
    x = (x | x >> 8) & 0x0000ffff0000ffffULL;
    return (x | x >> 16) & 0x00000000ffffffffULL;
}


}  // namespace

event_id event_id::generate() noexcept {
    (void)fork_handler_registered;
    generator& g = local_generator;
    if (!g.seeded) g.seed();
    g.advance();
    const std::uint64_t random = g.next_random();
    // Bytes 0-5 the millisecond, big-endian; 6: version 7 | counter[25:22]; 7: counter[21:14];
    // 8: variant 10 | counter[13:8]; 9: counter[7:0]; 10-15 random.
    const std::uint64_t version_and_counter = (0x70 | ((g.counter >> 22) & 0x0f)) << 8 | ((g.counter >> 14) & 0xff);
    const std::uint64_t variant_and_counter = (0x80 | ((g.counter >> 8) & 0x3f)) | (g.counter & 0xff) << 8;
    bytes_type b;
    store_be(b.data(), g.last_ms << 16 | version_and_counter);
    store_le<8>(b.data() + 8, variant_and_counter | random << 16);
    return event_id{b};
}

void format_event_id(const event_id& id, char* out) noexcept {
    const std::uint8_t* b = id.bytes().data();
    const std::uint64_t first = hex_digits_of(load_le<4>(b));  // eight digits each
    const std::uint64_t second = hex_digits_of(load_le<4>(b + 4));
    const std::uint64_t third = hex_digits_of(load_le<4>(b + 8));
    const std::uint64_t fourth = hex_digits_of(load_le<4>(b + 12));
    store_le<8>(out, first);
    out[8] = '-';
    store_le<4>(out + 9, second);
    out[13] = '-';
    store_le<4>(out + 14, second >> 32);
    out[18] = '-';
    store_le<4>(out + 19, third);
    out[23] = '-';
    store_le<4>(out + 24, third >> 32);
    store_le<8>(out + 28, fourth);
}

std::string to_string(const event_id& id) {
    std::string text(36, '\0');
    format_event_id(id, text.data());
    return text;
}

std::ostream& operator<<(std::ostream& out, const event_id& id) { return out << to_string(id); }

std::optional<event_id> parse_event_id(std::string_view text) noexcept {
    if (text.size() != 36) return std::nullopt;
    if (text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') return std::nullopt;
    const char* t = text.data();
    std::uint64_t invalid = 0;
    // Eight digits a word: 0-7, 9-12 and 14-17, 19-22 and 24-27, 28-35.
    const auto four_bytes = [&](std::uint64_t digits) { return bytes_of_hex_digits(digits, invalid); };
    const std::uint64_t bytes[2] = {
        four_bytes(load_le<8>(t)) | four_bytes(load_le<4>(t + 9) | load_le<4>(t + 14) << 32) << 32,
        four_bytes(load_le<4>(t + 19) | load_le<4>(t + 24) << 32) | four_bytes(load_le<8>(t + 28)) << 32};
    if (invalid != 0) return std::nullopt;
    event_id::bytes_type b;
    store_le<8>(b.data(), bytes[0]);
    store_le<8>(b.data() + 8, bytes[1]);
    return event_id{b};
}

}  // namespace ngfail
