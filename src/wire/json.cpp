#include <ngfail/json.hpp>

#include "text/printable.hpp"
#include "text/utf8.hpp"
#include "wire/report_reader.hpp"
#include "wire/details_schema.hpp"
#include "wire/envelope_schema.hpp"
#include "wire/report_writer.hpp"
#include "wire/strict_json.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_stack.hpp>
#include <boost/system/system_error.hpp>

#include <array>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

namespace ngfail {
namespace json = boost::json;

namespace {

// ---- writing: one field list, two sinks --------------------------------------------------

// The bytes a JSON string of printable ASCII holds as they are.
constexpr std::array<bool, 256> copied_as_is = [] {
    std::array<bool, 256> table{};
    for (int c = 0x20; c < 0x7f; ++c) table[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
    return table;
}();

// Appends the character at `text[i]` (not printable ASCII, not a quote or backslash) as
// JSON escapes, an invalid UTF-8 byte as \ufffd (JSON cannot carry it); returns the bytes read.
std::size_t append_escaped(std::string& out, std::string_view text, std::size_t i) {
    constexpr char hex[] = "0123456789abcdef";
    const auto append_u = [&](unsigned unit) {
        const char buf[6] = {'\\', 'u', hex[(unit >> 12) & 0xf], hex[(unit >> 8) & 0xf], hex[(unit >> 4) & 0xf],
                             hex[unit & 0xf]};
        out.append(buf, 6);
    };
    auto [cp, length] = text::decode_utf8(text, i);
    if (length == 0) {
        append_u(0xfffd);
        return 1;
    }
    if (cp >= 0x10000) {
        cp -= 0x10000;
        append_u(0xd800 + (cp >> 10));
        append_u(0xdc00 + (cp & 0x3ff));
    } else {
        append_u(cp);
    }
    return length;
}

// Appends `text` as a JSON string of printable ASCII: everything else is escaped.
void append_ascii_string(std::string& out, std::string_view text) {
    out += '"';
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t run = i;
        while (run < text.size() && copied_as_is[static_cast<unsigned char>(text[run])]) ++run;
        out.append(text.data() + i, run - i);
        if (run == text.size()) break;
        i = run;
        switch (text[i]) {
            case '"': out += "\\\""; ++i; continue;
            case '\\': out += "\\\\"; ++i; continue;
            case '\n': out += "\\n"; ++i; continue;
            case '\r': out += "\\r"; ++i; continue;
            case '\t': out += "\\t"; ++i; continue;
            default: i += append_escaped(out, text, i);
        }
    }
    out += '"';
}

// Text written at a position of a string kept larger than what is written, so that writing
// a member is one bound check and plain copies (no per-append capacity logic, no zero fill).
class text_buffer {
public:
    explicit text_buffer(std::size_t expected) { text_.resize(expected); }

    // Room for `n` more bytes, to be written now.
    char* claim(std::size_t n) {
        if (used_ + n > text_.size()) text_.resize(std::max(text_.size() * 2, used_ + n));
        char* at = text_.data() + used_;
        used_ += n;
        return at;
    }
    void put(char c) { *claim(1) = c; }
    std::string take() && {
        text_.resize(used_);
        return std::move(text_);
    }

private:
    std::string text_;
    std::size_t used_ = 0;
};

// Writes one compact JSON object.
class text_sink {
public:
    explicit text_sink(text_buffer& out) : out_(out) { out_.put('{'); }
    ~text_sink() { out_.put('}'); }
    text_sink(const text_sink&) = delete;
    text_sink& operator=(const text_sink&) = delete;

    void string(std::string_view key, std::string_view value) {
        if (!std::all_of(value.begin(), value.end(), [](char c) { return copied_as_is[static_cast<unsigned char>(c)]; })) {
            std::string escaped;
            append_ascii_string(escaped, value);
            std::memcpy(begin(key, escaped.size()), escaped.data(), escaped.size());
            return;
        }
        char* at = begin(key, value.size() + 2);
        *at++ = '"';
        std::memcpy(at, value.data(), value.size());
        at[value.size()] = '"';
    }
    void id(std::string_view key, const event_id& value) {
        char* at = begin(key, 38);
        at[0] = '"';
        format_event_id(value, at + 1);
        at[37] = '"';
    }
    void integer(std::string_view key, std::int64_t value) {
        std::array<char, 24> buf{};
        const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), value).ptr;
        const auto length = static_cast<std::size_t>(end - buf.data());
        std::memcpy(begin(key, length), buf.data(), length);
    }
    template <class Fill>
    void object(std::string_view key, Fill&& fill) {
        begin(key, 0);
        text_sink inner(out_);
        fill(inner);
    }

private:
    // Writes the member's `,"key":` and claims `value_bytes` after it, returning where they go.
    // Keys are ngfail's own field names and event ids: plain ASCII, nothing to escape.
    char* begin(std::string_view key, std::size_t value_bytes) {
        const std::size_t comma = first_ ? 0 : 1;
        first_ = false;
        char* p = out_.claim(comma + key.size() + 3 + value_bytes);
        if (comma) *p++ = ',';
        *p++ = '"';
        std::memcpy(p, key.data(), key.size());
        p += key.size();
        *p++ = '"';
        *p++ = ':';
        return p;
    }
    text_buffer& out_;
    bool first_ = true;
};

// Counts the bytes a text_sink writes, writing nothing: the header's fitting takes its sizes
// from the writer itself, so they cannot drift from what is written.
class size_sink {
public:
    size_sink() = default;
    size_sink(const size_sink&) = delete;
    size_sink& operator=(const size_sink&) = delete;

    void string(std::string_view key, std::string_view value) {
        if (std::all_of(value.begin(), value.end(), [](char c) { return copied_as_is[static_cast<unsigned char>(c)]; })) {
            member(key, value.size() + 2);
            return;
        }
        std::string escaped;  // rare: a string with characters to escape is measured by escaping it
        append_ascii_string(escaped, value);
        member(key, escaped.size());
    }
    void id(std::string_view key, const event_id&) { member(key, 38); }
    void integer(std::string_view key, std::int64_t value) {
        std::array<char, 24> buf{};
        member(key, static_cast<std::size_t>(std::to_chars(buf.data(), buf.data() + buf.size(), value).ptr - buf.data()));
    }
    template <class Fill>
    void object(std::string_view key, Fill&& fill) {
        size_sink inner;
        fill(inner);
        member(key, inner.bytes());
    }
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

private:
    // `,"key":` and the value, as text_sink::begin lays them out.
    void member(std::string_view key, std::size_t value_bytes) noexcept {
        bytes_ += (first_ ? 0 : 1) + key.size() + 3 + value_bytes;
        first_ = false;
    }
    std::size_t bytes_ = 2;  // the braces
    bool first_ = true;
};

// Builds a boost::json::object.
class value_sink {
public:
    explicit value_sink(json::object& out) : out_(out) {}
    void string(std::string_view key, std::string_view value) { out_[key] = value; }
    void id(std::string_view key, const event_id& value) { out_[key] = to_string(value); }
    void integer(std::string_view key, std::int64_t value) { out_[key] = value; }
    template <class Fill>
    void object(std::string_view key, Fill&& fill) {
        value_sink inner(out_[key].emplace_object());
        fill(inner);
    }

private:
    json::object& out_;
};

template <class Sink>
void emit_value(Sink& s, std::string_view key, const std::string& value) {
    s.string(key, value);
}
template <class Sink>
void emit_value(Sink& s, std::string_view key, const std::optional<std::string>& value) {
    if (value) s.string(key, *value);
}
template <class Sink>
void emit_value(Sink& s, std::string_view key, const std::optional<int>& value) {
    if (value) s.integer(key, *value);
}
template <class Sink>
void emit_value(Sink& s, std::string_view key, const std::optional<std::chrono::seconds>& value) {
    if (value) s.integer(key, value->count());
}
template <class Sink, class Token>
    requires std::is_enum_v<Token>  // delivery, boundary, stage: by their wire names
void emit_value(Sink& s, std::string_view key, const std::optional<Token>& value) {
    if (value) s.string(key, name(*value));
}
template <class Sink>
void emit_value(Sink& s, std::string_view key, const event_id& value) {
    s.id(key, value);
}
template <class Sink>
void emit_value(Sink& s, std::string_view key, const std::optional<event_id>& value) {
    if (value) s.id(key, *value);
}

template <class Sink, class Details>
void emit_details(Sink& s, const Details& d) {
    s.string("type", wire::detail::details_schema<Details>::type);
    wire::detail::for_each_field<Details>([&](const auto& field) { emit_value(s, field.name, d.*field.member); });
}

// No details, no member.
template <class Sink>
void emit_value(Sink& s, std::string_view key, const event_details& value) {
    std::visit(
        [&](const auto& d) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(d)>, std::monostate>) {
                s.object(key, [&](Sink& inner) { emit_details(inner, d); });
            }
        },
        value);
}

template <class Sink>
void emit(Sink& s, const event_record& r) {
    wire::detail::for_each_envelope_field([&](const auto& field) { emit_value(s, field.name, r.*field.member); });
}

template <class Sink>
void emit_events(Sink& s, const std::map<event_id, event_record>& events) {
    for (const auto& entry : events) {
        std::array<char, 36> key{};
        format_event_id(entry.first, key.data());
        s.object(std::string_view(key.data(), key.size()), [&](Sink& inner) { emit(inner, entry.second); });
    }
}

template <class Sink>
void emit(Sink& s, const failure_report& r) {
    if (r.failure_id) s.id("failure_id", *r.failure_id);
    s.object("events", [&](Sink& events) { emit_events(events, r.events); });
    if (r.dropped_events != 0) s.integer("dropped_events", static_cast<std::int64_t>(r.dropped_events));
}

// `value` as compact JSON text, in a buffer made for about `expected` bytes.
template <class Value>
std::string write_text(const Value& value, std::size_t expected) {
    text_buffer out(expected);
    {
        text_sink sink(out);  // closes the object as it goes
        emit(sink, value);
    }
    return std::move(out).take();
}

// ---- reading ------------------------------------------------------------------------------------

constexpr std::size_t max_quoted = 64;

void assign_codes(failure_report& report) {
    for (auto& [id, record] : report.events) record.code = kind_from_name(record.kind);
}

// ---- parsing: Boost.JSON's DOM with limits and no duplicate keys ----------------------------------

class limited_handler : public wire::detail::boost_json_sizes {
public:
    limited_handler(const limits& lim, const json::storage_ptr& sp) : text_limits_(lim) { st.reset(sp); }

    [[nodiscard]] const std::string& json_problem() const noexcept { return problem_; }

    json::value_stack st;
    std::vector<std::size_t> member_counts;  // members each object had, in the order objects end

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) { return true; }
    bool on_object_end(std::size_t n, json::error_code&) {
        member_counts.push_back(n);
        st.push_object(n);
        return true;
    }
    bool on_array_begin(json::error_code&) { return true; }
    bool on_array_end(std::size_t n, json::error_code&) {
        st.push_array(n);
        return true;
    }
    bool on_key_part(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.key_fits(n, problem_)) return reject(ec);
        st.push_chars(s);
        return true;
    }
    bool on_key(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.key_fits(n, problem_)) return reject(ec);
        st.push_key(s);
        return true;
    }
    bool on_string_part(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.string_fits(n, problem_)) return reject(ec);
        st.push_chars(s);
        return true;
    }
    bool on_string(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.string_fits(n, problem_)) return reject(ec);
        st.push_string(s);
        return true;
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
        st.push_int64(i);
        return true;
    }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
        st.push_uint64(u);
        return true;
    }
    bool on_double(double d, json::string_view, json::error_code&) {
        st.push_double(d);
        return true;
    }
    bool on_bool(bool b, json::error_code&) {
        st.push_bool(b);
        return true;
    }
    bool on_null(json::error_code&) {
        st.push_null();
        return true;
    }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    static bool reject(json::error_code& ec) {
        ec = json::error::syntax;
        return false;
    }

    wire::detail::text_limits text_limits_;
    std::string problem_;  // set when the handler itself rejects the input
};

// Boost.JSON keeps the last of duplicate keys, so an object built from n members with
// fewer than n had a duplicate. Objects end in post-order; this walk visits them alike.
bool has_duplicate_key(const json::value& v, const std::vector<std::size_t>& counts, std::size_t& next) {
    if (const auto* array = v.if_array()) {
        return std::any_of(array->begin(), array->end(), [&](const json::value& e) { return has_duplicate_key(e, counts, next); });
    }
    if (const auto* object = v.if_object()) {
        for (const auto& member : *object) {
            if (has_duplicate_key(member.value(), counts, next)) return true;
        }
        return next < counts.size() && counts[next++] != object->size();
    }
    return false;
}

// A dropped duplicate that held objects leaves their counts behind, which shifts the walk:
// every count must be consumed, or a duplicate was dropped.
bool has_duplicate_key(const json::value& v, const std::vector<std::size_t>& counts) {
    std::size_t next = 0;
    return has_duplicate_key(v, counts, next) || next != counts.size();
}

// Only on the error path: reads the text again to name the first duplicate key.
class duplicate_finder : public wire::detail::boost_json_sizes {
public:
    std::optional<std::string> found;

    bool on_object_begin(json::error_code&) {
        keys_.emplace_back();
        return true;
    }
    bool on_object_end(std::size_t, json::error_code&) {
        keys_.pop_back();
        return true;
    }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        key_.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
        key_.append(s.data(), s.size());
        if (!keys_.back().insert(key_).second && !found) {
            found = key_;
            ec = json::error::syntax;
            return false;
        }
        key_.clear();
        return true;
    }
    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_array_begin(json::error_code&) { return true; }
    bool on_array_end(std::size_t, json::error_code&) { return true; }
    bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
    bool on_string(json::string_view, std::size_t, json::error_code&) { return true; }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t, json::string_view, json::error_code&) { return true; }
    bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return true; }
    bool on_double(double, json::string_view, json::error_code&) { return true; }
    bool on_bool(bool, json::error_code&) { return true; }
    bool on_null(json::error_code&) { return true; }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    std::string key_;
    std::vector<std::set<std::string>> keys_;
};

std::string name_duplicate(std::string_view text, const json::parse_options& options) {
    json::basic_parser<duplicate_finder> finder(options);
    json::error_code ec;
    const std::size_t at = finder.write_some(false, text.data(), text.size(), ec);
    const auto& key = finder.handler().found;
    return "JSON: duplicate key \"" + text::printable(key.value_or("?"), max_quoted) + "\" at byte " +
           std::to_string(at);
}

result<json::value> parse_limited(std::string_view text, const limits& lim, const json::storage_ptr& sp) {
    const json::parse_options options = wire::detail::strict_options(lim);
    json::basic_parser<limited_handler> parser(options, lim, sp);
    BOOST_OUTCOME_TRY(wire::detail::parse_strict(parser, text, lim));
    json::value value = parser.handler().st.release();
    if (has_duplicate_key(value, parser.handler().member_counts)) {
        return wire::detail::protocol_violation(name_duplicate(text, options));
    }
    return value;
}

// Whatever the reader found, then the report's rules; kinds are interned only once accepted.
result<failure_report> accept(result<failure_report> read, const limits& lim) {
    if (!read) return read;
    if (auto valid = validate(read.value(), lim); !valid) return std::move(valid).error();
    assign_codes(read.value());
    return read;
}

// The DOM read by the one reader, walked rather than written out as text and parsed again.
template <class T>
T from_value_or_throw(const json::value& value, result<T> (*read)(const json::value&, const limits&)) {
    auto read_value = read(value, limits{});
    // As Boost.JSON's own value_to reports a value it cannot convert: a system_error, whose
    // code here is the reader's kind (protocol_violation, limit_exceeded, …).
    if (!read_value) {
        throw boost::system::system_error(read_value.error().code(), std::string(read_value.error().reason()));
    }
    return std::move(read_value).value();
}

}  // namespace

// ---- public functions ---------------------------------------------------------------------------

std::string to_json(const failure_report& report, const limits& lim) {
    if (!validate(report, lim)) return wire::detail::write_report(truncate_to_limits(report, lim));
    return wire::detail::write_report(report);
}

std::string to_json(const event_record& record) { return write_text(record, 384); }

std::string wire::detail::write_report(const failure_report& report) {
    return write_text(report, 256 + 384 * report.events.size());
}

std::size_t wire::detail::written_size(const failure_report& report) {
    size_sink sink;
    emit(sink, report);
    return sink.bytes();
}

std::size_t wire::detail::written_event_size(const event_record& record) {
    size_sink events;  // an events object holding this one member
    std::array<char, 36> key{};
    format_event_id(record.id, key.data());
    events.object(std::string_view(key.data(), key.size()), [&](size_sink& inner) { emit(inner, record); });
    return events.bytes() - 2;  // the member alone, without the object's braces
}

std::string serialize_ascii(const json::value& value) {
    const std::string text = json::serialize(value);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        // Outside strings JSON is ASCII, and Boost.JSON escaped the controls below DEL.
        if (static_cast<unsigned char>(text[i]) < 0x7f) {
            out += text[i++];
        } else {
            i += append_escaped(out, text, i);
        }
    }
    return out;
}

result<json::value> parse_json(std::string_view text, const limits& lim) {
    return parse_limited(text, lim, json::storage_ptr());
}

result<failure_report> report_from_value(const json::value& value, const limits& lim) {
    return accept(wire::detail::read_report(value, lim), lim);
}

result<failure_report> report_from_json(std::string_view text, const limits& lim) {
    return accept(wire::detail::read_report(text, lim), lim);
}

result<failure_report> wire::detail::report_from_json(std::string_view text, const limits& lim, text_check checked) {
    return accept(read_report(text, lim, checked), lim);
}

void set_rollout_report(json::object& row, const failure_report& report, const limits& lim) {
    std::optional<failure_report> fitted;
    if (!validate(report, lim)) fitted = truncate_to_limits(report, lim);
    const failure_report& written = fitted ? *fitted : report;
    if (written.failure_id) row[rollout_failure_id_key] = to_string(*written.failure_id);
    value_sink sink(row);
    sink.object(rollout_failure_events_key, [&](value_sink& events) { emit_events(events, written.events); });
    if (written.dropped_events != 0) {
        row[rollout_dropped_events_key] = static_cast<std::int64_t>(written.dropped_events);
    }
}

result<failure_report> rollout_report(const json::object& row, const limits& lim) {
    json::object report;
    // Collection writes null for "no failure"; it means the same as an absent key.
    const auto present = [&](std::string_view key) {
        const json::value* v = row.if_contains(key);
        return v && !v->is_null() ? v : nullptr;
    };
    if (const json::value* id = present(rollout_failure_id_key)) report["failure_id"] = *id;
    const json::value* events = present(rollout_failure_events_key);
    report["events"] = events ? *events : json::object();
    if (const json::value* dropped = present(rollout_dropped_events_key)) report["dropped_events"] = *dropped;
    return report_from_value(report, lim);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const event_record& record) {
    value_sink sink(out.emplace_object());
    emit(sink, record);
}

event_record tag_invoke(const json::value_to_tag<event_record>&, const json::value& in) {
    event_record record = from_value_or_throw<event_record>(in, wire::detail::read_record);
    record.code = kind_from_name(record.kind);
    return record;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const failure_report& report) {
    value_sink sink(out.emplace_object());
    emit(sink, report);
}

failure_report tag_invoke(const json::value_to_tag<failure_report>&, const json::value& in) {
    failure_report report = from_value_or_throw<failure_report>(in, wire::detail::read_report);
    assign_codes(report);
    return report;
}

}  // namespace ngfail
