#include <ngfail/json.hpp>
#include <ngfail/failure_header.hpp>

#include "wire/details_schema.hpp"
#include "wire/strict_json.hpp"
#include "wire/report_links.hpp"
#include "wire/report_reader.hpp"
#include "wire/report_writer.hpp"
#include "text/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace ngfail {
namespace {

// Below this, no report could fit; a smaller configured limit is raised to it.
constexpr std::size_t min_header_bytes = 256;
// Shortened reasons and strings keep at least this much.
constexpr std::size_t min_kept_bytes = 16;

void shorten(std::string& text, std::size_t cap) { text::truncate_utf8(text, cap); }

// Text for people, before evidence goes: reasons, and the diagnostics a sandbox failure
// carries (display text no reader decides on).
void shorten_display_text(failure_report& r, std::size_t cap) {
    for (auto& [id, record] : r.events) {
        shorten(record.reason, cap);
        if (auto* sandbox = std::get_if<sandbox_details>(&record.details); sandbox && sandbox->diagnostics) {
            shorten(*sandbox->diagnostics, cap);
        }
    }
}

void shorten_strings(failure_report& r, std::size_t cap) {
    for (auto& [id, record] : r.events) {
        shorten(record.reason, cap);
        wire::detail::for_each_detail_string(record.details, [&](std::string_view, auto& field) {
            if (std::string* text = wire::detail::field_text(field)) shorten(*text, cap);
        });
    }
}

// The largest cap in [min_kept_bytes, longest] for which `apply` makes `r` fit, applied to
// `r`; false when even the smallest cap does not fit (then `r` is left unchanged). Each try
// serialises the report once: O(n log longest).
template <class Apply, class Fits>
bool shorten_to_fit(failure_report& r, std::size_t longest, Apply apply, Fits fits) {
    std::size_t low = min_kept_bytes;
    std::size_t high = std::max(longest, low);
    std::optional<failure_report> best;
    while (low <= high) {
        const std::size_t cap = low + (high - low) / 2;
        failure_report attempt = r;
        apply(attempt, cap);
        if (fits(attempt)) {
            best = std::move(attempt);
            low = cap + 1;
        } else {
            if (cap == min_kept_bytes) break;
            high = cap - 1;
        }
    }
    if (!best) return false;
    r = std::move(*best);
    return true;
}

std::size_t longest_string(const failure_report& r) {
    std::size_t longest = 0;
    for (const auto& [id, record] : r.events) {
        longest = std::max(longest, record.reason.size());
        wire::detail::for_each_detail_string(record.details, [&](std::string_view, const auto& field) {
            if (const std::string* text = wire::detail::field_text(field)) longest = std::max(longest, text->size());
        });
    }
    return longest;
}

// Sixteen bytes at a time in the compiler's vector types (SSE2 on x86-64, NEON on arm64, plain
// words elsewhere): a byte below 0x20 or above 0x7e is 0x20 or more above 0x7e - 0x20 once
// 0x20 is subtracted. The position of a bad byte is looked for only on failure.
bool outside_printable_ascii(char c) noexcept { return static_cast<unsigned char>(c - 0x20) > 0x5e; }

bool all_printable_ascii(std::string_view text) noexcept {
    using bytes16 = unsigned char __attribute__((vector_size(16)));
    using mask16 = signed char __attribute__((vector_size(16)));
    mask16 any_outside{};
    std::size_t i = 0;
    for (; i + 16 <= text.size(); i += 16) {
        bytes16 chunk;
        std::memcpy(&chunk, text.data() + i, 16);
        any_outside |= (chunk - 0x20) > 0x5e;
    }
    std::array<std::uint64_t, 2> words{};
    std::memcpy(words.data(), &any_outside, 16);
    return (words[0] | words[1]) == 0 &&
           std::none_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(), outside_printable_ascii);
}

// The size of the report's JSON, kept as events are dropped, so that each drop costs O(1)
// instead of a serialisation: what keeps `encode_header` linear in the number of events.
// Every size is the writer's own count (`written_size`), so none can drift from the text.
class size_ledger {
public:
    explicit size_ledger(const failure_report& r) : report_(r), events_(r.events.size()) {
        for (const auto& [id, record] : r.events) event_bytes_ += wire::detail::written_event_size(record);
    }
    void remove(const event_record& record) {
        event_bytes_ -= wire::detail::written_event_size(record);
        --events_;
    }
    // `outer` is about to lose its cause_id.
    void unlink(const event_record& outer) {
        event_record without = outer;
        without.cause_id.reset();
        event_bytes_ -= wire::detail::written_event_size(outer) - wire::detail::written_event_size(without);
    }
    // The frame (failure_id, an empty "events", dropped_events as it is now), the events and
    // the commas between them.
    [[nodiscard]] bool fits(std::size_t max_bytes) const {
        const failure_report frame{.failure_id = report_.failure_id, .dropped_events = report_.dropped_events};
        return wire::detail::written_size(frame) + event_bytes_ + (events_ > 1 ? events_ - 1 : 0) <= max_bytes;
    }

private:
    const failure_report& report_;
    std::size_t events_;
    std::size_t event_bytes_ = 0;
};

// The last resort: the failure event alone, its id and as much of its kind as fits.
void keep_only_the_failure(failure_report& r, const std::function<bool(const failure_report&)>& fits) {
    if (!r.failure_id) return;
    const auto it = r.events.find(*r.failure_id);
    event_record bare{.id = it->second.id, .kind = it->second.kind, .code = it->second.code};
    r.dropped_events += r.events.size() - 1;
    r.events.clear();
    r.events.emplace(bare.id, bare);
    std::string& kind = r.events.begin()->second.kind;
    const std::string full = kind;
    std::size_t low = 0;
    std::size_t high = full.size();
    while (low < high) {  // the longest prefix of the kind that fits
        const std::size_t mid = low + (high - low + 1) / 2;
        kind = full;
        text::truncate_utf8(kind, mid);
        if (fits(r)) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    kind = full;
    text::truncate_utf8(kind, low);
}

}  // namespace

std::string encode_header(const failure_report& report, const limits& lim) {
    const std::size_t max_bytes = std::max(lim.max_header_bytes, min_header_bytes);
    std::optional<failure_report> fitted;
    if (!validate(report, lim)) fitted = wire::detail::fitted_copy(report, lim);
    std::string text = wire::detail::write_report(fitted ? *fitted : report);
    if (text.size() <= max_bytes) return text;  // the common case: the report is not copied

    failure_report r = fitted ? std::move(*fitted) : report;
    // `r` is valid from here on, and every step below keeps it so: written without re-validating.

    const auto fits = [&](const failure_report& candidate) {
        text = wire::detail::write_report(candidate);
        return text.size() <= max_bytes;
    };
    const std::vector<event_id> chain = wire::detail::failure_chain_ids(r);

    // 1. Observed events outside the failure's cause chain, newest first.
    {
        size_ledger ledger(r);
        wire::detail::drop_observed(
            r, chain, [&] { return ledger.fits(max_bytes); }, [&](const event_record& gone) { ledger.remove(gone); });
        if (fits(r)) return text;
    }
    // 2. Reasons and diagnostics text, all cut to the longest length that fits.
    if (shorten_to_fit(r, longest_string(r), shorten_display_text, fits)) return wire::detail::write_report(r);
    // 3. The deepest causes, never the failure_id event.
    {
        size_ledger ledger(r);
        wire::detail::drop_deepest(
            r, chain, [&] { return ledger.fits(max_bytes); }, [&](const event_record& gone) { ledger.remove(gone); },
            [&](const event_record& outer) { ledger.unlink(outer); });
        if (fits(r)) return text;
    }
    // 4. Every remaining string.
    if (shorten_to_fit(r, longest_string(r), shorten_strings, fits)) return wire::detail::write_report(r);
    // 5. The failure event's id and kind, as much of it as fits.
    keep_only_the_failure(r, fits);
    return wire::detail::write_report(r);
}

result<failure_report> decode_header(std::string_view value, const limits& lim) {
    if (value.size() > lim.max_header_bytes) {
        return wire::detail::protocol_violation("failure header: the value is " + std::to_string(value.size()) +
                                                " bytes; the limit is " + std::to_string(lim.max_header_bytes));
    }
    if (!all_printable_ascii(value)) {
        const auto bad = std::find_if(value.begin(), value.end(), outside_printable_ascii);
        return wire::detail::protocol_violation("failure header: byte " + std::to_string(bad - value.begin()) +
                                                " is not printable ASCII");
    }
    return wire::detail::report_from_json(value, lim, wire::detail::text_check::printable_ascii);
}

}  // namespace ngfail
