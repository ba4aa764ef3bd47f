#include <ngfail/json.hpp>
#include <ngfail/transport.hpp>

#include "detail/detail_fields.hpp"
#include "detail/utf8.hpp"

#include <algorithm>
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

// The ids of the failure's cause chain, outermost first.
std::vector<event_id> chain_of(const failure_report& r) {
    std::vector<event_id> chain;
    if (!r.failure_id) return chain;
    for (auto it = r.events.find(*r.failure_id); it != r.events.end() && chain.size() <= r.events.size();) {
        chain.push_back(it->first);
        if (!it->second.cause_id) break;
        it = r.events.find(*it->second.cause_id);
    }
    return chain;
}

// The newest observed event that no other event names as its cause (so dropping it leaves
// every link intact); none when only the failure's chain is left.
std::optional<event_id> droppable_observed(const failure_report& r, const std::set<event_id>& chain) {
    std::set<event_id> referenced;
    for (const auto& [id, record] : r.events) {
        if (record.cause_id) referenced.insert(*record.cause_id);
    }
    for (auto it = r.events.rbegin(); it != r.events.rend(); ++it) {
        if (!chain.contains(it->first) && !referenced.contains(it->first)) return it->first;
    }
    return std::nullopt;
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
// `r`; false when even the smallest cap does not fit (then `r` is left unchanged).
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

}  // namespace

std::string encode_header(const failure_report& report, const limits& lim) {
    const std::size_t max_bytes = std::max(lim.max_header_bytes, min_header_bytes);
    std::string text = to_json(report);
    if (text.size() <= max_bytes) return text;

    failure_report r = report;
    const auto fits = [&](const failure_report& candidate) {
        text = to_json(candidate);
        return text.size() <= max_bytes;
    };
    const auto drop = [&](const event_id& id) {
        r.events.erase(id);
        ++r.dropped_events;
    };

    // 1. Observed events outside the failure's cause chain, newest first.
    const std::vector<event_id> chain = chain_of(r);
    const std::set<event_id> in_chain(chain.begin(), chain.end());
    while (const auto id = droppable_observed(r, in_chain)) {
        drop(*id);
        if (fits(r)) return text;
    }
    // 2. Reasons, all cut to the longest length that fits.
    if (shorten_to_fit(r, longest_string(r), shorten_reasons, fits)) return to_json(r);
    // 3. The deepest causes, never the failure_id event.
    for (std::size_t depth = chain.size(); depth > 1; --depth) {
        drop(chain[depth - 1]);
        r.events.at(chain[depth - 2]).cause_id.reset();
        if (fits(r)) return text;
    }
    // 4. Every remaining string.
    if (shorten_to_fit(r, longest_string(r), shorten_strings, fits)) return to_json(r);
    shorten_strings(r, min_kept_bytes);
    return to_json(r);
}

result<failure_report> decode_header(std::string_view value, const limits& lim) {
    if (value.size() > lim.max_header_bytes) {
        return violation("failure header: the value is " + std::to_string(value.size()) + " bytes; the limit is " +
                         std::to_string(lim.max_header_bytes));
    }
    // One pass the compiler can vectorise; the position is looked for only on failure.
    const auto outside = [](char c) { return static_cast<unsigned char>(c - 0x20) > 0x5e; };
    bool any_outside = false;
    for (const char c : value) any_outside |= outside(c);
    if (any_outside) {
        const auto bad = std::find_if(value.begin(), value.end(), outside);
        return violation("failure header: byte " + std::to_string(bad - value.begin()) + " is not printable ASCII");
    }
    return report_from_json(value, lim);
}

// ---- request_failure_log ------------------------------------------------------------------

void request_failure_log::observe_failure(const failure& f) {
    failure_report observed = report_for(f);
    observed.failure_id.reset();
    const std::lock_guard lock(mutex_);
    merge(observed_, observed);
}

void request_failure_log::observe_reply(const failure_report& report) {
    const std::lock_guard lock(mutex_);
    merge(observed_, report);
}

failure_report request_failure_log::finish(const failure& own) const {
    failure_report report = report_for(own);
    const std::lock_guard lock(mutex_);
    merge(report, observed_);
    return report;
}

// ---- sse_report_reader --------------------------------------------------------------------

sse_report_reader::sse_report_reader(const limits& lim) : limits_(lim) {}

std::string_view sse_report_reader::relay(std::string_view chunk) {
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
            line_.clear();
            line_.shrink_to_fit();
        }
        if (!line_too_long_) line_.append(piece);
        if (end == std::string_view::npos) break;
        if (line_too_long_) {
            data_too_long_ = true;  // it may have been the report's data: never half-read it
            line_too_long_ = false;
        } else {
            take_line(line_);
        }
        line_.clear();
        after_cr_ = chunk[end] == '\r';
        i = end + 1;
    }
    return chunk;
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
