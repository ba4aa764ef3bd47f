#include <ngfail/event_id.hpp>

#include <array>
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

// Each byte's hex digit value, or -1.
constexpr std::array<std::int8_t, 256> hex_values = [] {
    std::array<std::int8_t, 256> table{};
    table.fill(-1);
    for (int c = '0'; c <= '9'; ++c) table[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) table[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
    for (int c = 'A'; c <= 'F'; ++c) table[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'A' + 10);
    return table;
}();

int hex_value(char c) noexcept { return hex_values[static_cast<unsigned char>(c)]; }

// Where each byte's two hex digits start in the 36-character text, and where the dashes are.
constexpr std::array<std::uint8_t, 16> digit_positions{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
constexpr std::array<std::uint8_t, 4> dash_positions{8, 13, 18, 23};

}  // namespace

event_id event_id::generate() noexcept {
    (void)fork_handler_registered;
    generator& g = local_generator;
    if (!g.seeded) g.seed();
    g.advance();
    const std::uint64_t random = g.next_random();
    bytes_type b{};
    for (int i = 0; i < 6; ++i) b[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(g.last_ms >> (40 - 8 * i));
    // version 7 | counter[25:22] ; counter[21:14] ; variant 10 | counter[13:8] ; counter[7:0]
    b[6] = static_cast<std::uint8_t>(0x70 | ((g.counter >> 22) & 0x0f));
    b[7] = static_cast<std::uint8_t>(g.counter >> 14);
    b[8] = static_cast<std::uint8_t>(0x80 | ((g.counter >> 8) & 0x3f));
    b[9] = static_cast<std::uint8_t>(g.counter);
    for (int i = 0; i < 6; ++i) b[static_cast<std::size_t>(10 + i)] = static_cast<std::uint8_t>(random >> (8 * i));
    return event_id{b};
}

// Each byte's two lowercase hex digits.
constexpr std::array<std::array<char, 2>, 256> hex_pairs = [] {
    constexpr char digits[] = "0123456789abcdef";
    std::array<std::array<char, 2>, 256> table{};
    for (std::size_t b = 0; b < 256; ++b) table[b] = {digits[b >> 4], digits[b & 0x0f]};
    return table;
}();

void format_event_id(const event_id& id, char* out) noexcept {
    for (std::size_t i = 0; i < 16; ++i) std::memcpy(out + digit_positions[i], hex_pairs[id.bytes()[i]].data(), 2);
    for (const std::size_t dash : dash_positions) out[dash] = '-';
}

std::string to_string(const event_id& id) {
    std::string text(36, '\0');
    format_event_id(id, text.data());
    return text;
}

std::ostream& operator<<(std::ostream& out, const event_id& id) { return out << to_string(id); }

std::optional<event_id> parse_event_id(std::string_view text) noexcept {
    if (text.size() != 36) return std::nullopt;
    for (const std::size_t dash : dash_positions) {
        if (text[dash] != '-') return std::nullopt;
    }
    event_id::bytes_type b{};
    int invalid = 0;  // negative once any digit was not hex: one test after the loop
    for (std::size_t i = 0; i < 16; ++i) {
        const int hi = hex_value(text[digit_positions[i]]);
        const int lo = hex_value(text[digit_positions[i] + 1]);
        invalid |= hi | lo;
        b[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    if (invalid < 0) return std::nullopt;
    return event_id{b};
}

}  // namespace ngfail
