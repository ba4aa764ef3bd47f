#include <ngfail/json.hpp>
#include <ngfail/transport.hpp>

#include "detail/detail_fields.hpp"
#include "detail/report_links.hpp"
#include "detail/report_writer.hpp"
#include "detail/utf8.hpp"

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

failure violation(std::string reason) {
    return failure(event_info{.kind = kind::protocol_violation, .reason = std::move(reason)});
}

void shorten(std::string& text, std::size_t cap) { detail::truncate_utf8(text, cap); }

void shorten_reasons(failure_report& r, std::size_t cap) {
    for (auto& [id, record] : r.events) shorten(record.reason, cap);
}

void shorten_strings(failure_report& r, std::size_t cap) {
    for (auto& [id, record] : r.events) {
        shorten(record.reason, cap);
        detail::for_each_detail_string(record.details, [&](std::string_view, auto& field) {
            if (std::string* text = detail::field_text(field)) shorten(*text, cap);
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
        detail::for_each_detail_string(record.details, [&](std::string_view, const auto& field) {
            if (const std::string* text = detail::field_text(field)) longest = std::max(longest, text->size());
        });
    }
    return longest;
}

std::size_t digits(std::size_t n) { return std::to_string(n).size(); }

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
class size_ledger {
public:
    explicit size_ledger(const failure_report& r) : report_(r), events_(r.events.size()) {
        for (const auto& [id, record] : r.events) event_bytes_ += key_bytes + to_json(record).size();
    }
    void remove(const event_record& record) {
        event_bytes_ -= key_bytes + to_json(record).size();
        --events_;
    }
    void unlink(const event_record&) { event_bytes_ -= cause_id_bytes; }
    [[nodiscard]] bool fits(std::size_t max_bytes) const { return total(events_) <= max_bytes; }

private:
    // {"failure_id":"<id>","events":{<events, comma-separated>},"dropped_events":N}
    [[nodiscard]] std::size_t total(std::size_t events) const {
        return 2 + (report_.failure_id ? failure_id_bytes : 0) + events_frame_bytes + event_bytes_ +
               (events > 1 ? events - 1 : 0) +
               (report_.dropped_events ? dropped_frame_bytes + digits(report_.dropped_events) : 0);
    }

    static constexpr std::size_t key_bytes = 36 + 3;            // "<id>":
    static constexpr std::size_t cause_id_bytes = 13 + 36 + 1;  // ,"cause_id":"<id>"
    static constexpr std::size_t failure_id_bytes = 14 + 36 + 2;
    static constexpr std::size_t events_frame_bytes = 11;       // "events":{ … }
    static constexpr std::size_t dropped_frame_bytes = 18;      // ,"dropped_events":
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
        detail::truncate_utf8(kind, mid);
        if (fits(r)) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    kind = full;
    detail::truncate_utf8(kind, low);
}

}  // namespace

std::string encode_header(const failure_report& report, const limits& lim) {
    const std::size_t max_bytes = std::max(lim.max_header_bytes, min_header_bytes);
    std::optional<failure_report> fitted;
    if (!validate(report, lim)) fitted = truncate_to_limits(report, lim);
    std::string text = detail::write_report(fitted ? *fitted : report);
    if (text.size() <= max_bytes) return text;  // the common case: the report is not copied

    failure_report r = fitted ? std::move(*fitted) : report;
    // `r` is valid from here on, and every step below keeps it so: written without re-validating.

    const auto fits = [&](const failure_report& candidate) {
        text = detail::write_report(candidate);
        return text.size() <= max_bytes;
    };
    const std::vector<event_id> chain = detail::failure_chain_ids(r);

    // 1. Observed events outside the failure's cause chain, newest first.
    {
        size_ledger ledger(r);
        detail::drop_observed(
            r, chain, [&] { return ledger.fits(max_bytes); }, [&](const event_record& gone) { ledger.remove(gone); });
        if (fits(r)) return text;
    }
    // 2. Reasons, all cut to the longest length that fits.
    if (shorten_to_fit(r, longest_string(r), shorten_reasons, fits)) return detail::write_report(r);
    // 3. The deepest causes, never the failure_id event.
    {
        size_ledger ledger(r);
        detail::drop_deepest(
            r, chain, [&] { return ledger.fits(max_bytes); }, [&](const event_record& gone) { ledger.remove(gone); },
            [&](const event_record& outer) { ledger.unlink(outer); });
        if (fits(r)) return text;
    }
    // 4. Every remaining string.
    if (shorten_to_fit(r, longest_string(r), shorten_strings, fits)) return detail::write_report(r);
    // 5. The failure event's id and kind, as much of it as fits.
    keep_only_the_failure(r, fits);
    return detail::write_report(r);
}

result<failure_report> decode_header(std::string_view value, const limits& lim) {
    if (value.size() > lim.max_header_bytes) {
        return violation("failure header: the value is " + std::to_string(value.size()) + " bytes; the limit is " +
                         std::to_string(lim.max_header_bytes));
    }
    if (!all_printable_ascii(value)) {
        const auto bad = std::find_if(value.begin(), value.end(), outside_printable_ascii);
        return violation("failure header: byte " + std::to_string(bad - value.begin()) + " is not printable ASCII");
    }
    return report_from_json(value, lim);
}

// ---- request_failure_log ------------------------------------------------------------------

request_failure_log::request_failure_log(const limits& lim) : limits_(lim) {}

void request_failure_log::observe_failure(const failure& f) {
    failure_report observed = report_for(f);
    observed.failure_id.reset();
    const std::lock_guard lock(mutex_);
    add(observed);
}

void request_failure_log::observe_reply(const failure_report& report) {
    const std::lock_guard lock(mutex_);
    add(report);
}

failure_report request_failure_log::finish(const failure& own) const {
    failure_report report = report_for(own);
    const std::lock_guard lock(mutex_);
    if (auto merged = merge(report, observed_); !merged) {
        failure_report violation = report_for(merged.error());
        violation.failure_id.reset();
        (void)merge(report, violation);  // fresh ids: nothing to collide with
    }
    return report;
}

// Bounded: past `max_events`, the newest observed events are dropped and counted, as the
// header would drop them. A twin id is kept as a `protocol_violation` observed in its place.
void request_failure_log::add(const failure_report& observed) {
    if (auto merged = merge(observed_, observed); !merged) {
        failure_report violation = report_for(merged.error());
        violation.failure_id.reset();
        (void)merge(observed_, violation);
    }
    if (observed_.events.size() > limits_.max_events) observed_ = truncate_to_limits(std::move(observed_), limits_);
}

// ---- sse_report_reader --------------------------------------------------------------------

sse_report_reader::sse_report_reader(const limits& lim) : limits_(lim) {}

std::string_view sse_report_reader::relay(std::string_view chunk) {
    read(skip_bom(chunk));
    return chunk;
}

// A stream may start with a UTF-8 byte order mark, which the SSE grammar ignores; it may
// arrive split across chunks.
std::string_view sse_report_reader::skip_bom(std::string_view chunk) {
    static constexpr std::string_view bom = "\xEF\xBB\xBF";
    while (bom_matched_ < bom.size() && !chunk.empty()) {
        if (chunk.front() != bom[bom_matched_]) {
            read(bom.substr(0, bom_matched_));  // not a BOM after all: those bytes are the stream's
            bom_matched_ = bom.size();
            break;
        }
        ++bom_matched_;
        chunk.remove_prefix(1);
    }
    return chunk;
}

void sse_report_reader::read(std::string_view chunk) {
    const std::size_t max_line = limits_.max_json_bytes + 64;
    std::size_t i = 0;
    while (i < chunk.size()) {
        if (after_cr_) {
            after_cr_ = false;
            if (chunk[i] == '\n') {
                ++i;
                continue;
            }
        }
        const std::size_t end = chunk.find_first_of("\r\n", i);
        const std::string_view piece = chunk.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
        if (!line_too_long_ && line_.size() + piece.size() > max_line) {
            line_too_long_ = true;
            overlong_field_ = field_of_overlong(piece);
            line_.clear();
            line_.shrink_to_fit();
        }
        if (!line_too_long_) line_.append(piece);
        if (end == std::string_view::npos) break;
        if (line_too_long_) {
            take_overlong_line();
            line_too_long_ = false;
        } else {
            take_line(line_);
        }
        line_.clear();
        after_cr_ = chunk[end] == '\r';
        i = end + 1;
    }
}

// Which field a line over the limit was, from its first bytes: only an overlong `data` line
// may have been the report's (never half-read it); a comment or another field is skipped.
sse_report_reader::overlong sse_report_reader::field_of_overlong(std::string_view piece) const {
    std::string start = line_.substr(0, 6);
    start.append(piece.substr(0, 6 - start.size()));
    const auto is_field = [&](std::string_view name) {
        return start.starts_with(name) && (start.size() == name.size() || start[name.size()] == ':');
    };
    if (is_field("data")) return overlong::data;
    if (is_field("event")) return overlong::event;
    return overlong::other;
}

void sse_report_reader::take_overlong_line() {
    if (overlong_field_ == overlong::data) data_too_long_ = true;
    if (overlong_field_ == overlong::event) event_.assign("(an event name over the line limit)");
}

void sse_report_reader::take_line(std::string_view line) {
    if (line.empty()) {
        dispatch();
        return;
    }
    if (line.front() == ':') return;  // a comment
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "event") {
        event_.assign(value);
    } else if (field == "data" && !data_too_long_) {
        if (has_data_) data_ += '\n';
        data_.append(value);
        has_data_ = true;
        if (data_.size() > limits_.max_json_bytes) {
            data_too_long_ = true;
            data_.clear();
        }
    }
}

void sse_report_reader::dispatch() {
    if (event_ == sse_report_event) {
        report_ = data_too_long_ ? result<failure_report>(violation("SSE failure report: the data is over " +
                                                                     std::to_string(limits_.max_json_bytes) + " bytes"))
                                 : report_from_json(data_, limits_);
    }
    event_.clear();
    data_.clear();
    has_data_ = false;
    data_too_long_ = false;
}

}  // namespace ngfail
