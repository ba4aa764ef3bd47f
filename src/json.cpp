#include <ngfail/json.hpp>

#include "detail/printable.hpp"
#include "detail/report_writer.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value_stack.hpp>

#include <array>
#include <charconv>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

namespace ngfail {
namespace json = boost::json;

namespace {

// ---- writing: one field list, two sinks --------------------------------------------------

// Appends `text` as a JSON string of printable ASCII: everything else is escaped, and an
// invalid UTF-8 byte becomes \ufffd (JSON cannot carry it).
void append_ascii_string(std::string& out, std::string_view text) {
    constexpr char hex[] = "0123456789abcdef";
    const auto append_u = [&](unsigned unit) {
        const char buf[6] = {'\\', 'u', hex[(unit >> 12) & 0xf], hex[(unit >> 8) & 0xf], hex[(unit >> 4) & 0xf],
                             hex[unit & 0xf]};
        out.append(buf, 6);
    };
    out += '"';
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t run = i;
        while (run < text.size()) {
            const auto c = static_cast<unsigned char>(text[run]);
            if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') break;
            ++run;
        }
        out.append(text.data() + i, run - i);
        if (run == text.size()) break;
        i = run;
        const auto c = static_cast<unsigned char>(text[i]);
        switch (c) {
            case '"': out += "\\\""; ++i; continue;
            case '\\': out += "\\\\"; ++i; continue;
            case '\n': out += "\\n"; ++i; continue;
            case '\r': out += "\\r"; ++i; continue;
            case '\t': out += "\\t"; ++i; continue;
            default: break;
        }
        if (c < 0x80) {  // other controls and DEL
            append_u(c);
            ++i;
            continue;
        }
        // A UTF-8 sequence: decode it strictly (no overlongs, no surrogates, <= U+10FFFF).
        const std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
        std::uint32_t cp = length == 4 ? c & 0x07u : length == 3 ? c & 0x0fu : c & 0x1fu;
        bool valid = length != 0 && i + length <= text.size();
        for (std::size_t k = 1; valid && k < length; ++k) {
            const auto cc = static_cast<unsigned char>(text[i + k]);
            valid = (cc & 0xc0) == 0x80;
            cp = (cp << 6) | (cc & 0x3fu);
        }
        constexpr std::array<std::uint32_t, 5> min_for_length{0, 0, 0x80, 0x800, 0x10000};
        valid = valid && cp >= min_for_length[length] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
        if (!valid) {
            append_u(0xfffd);
            ++i;
            continue;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            append_u(0xd800 + (cp >> 10));
            append_u(0xdc00 + (cp & 0x3ff));
        } else {
            append_u(cp);
        }
        i += length;
    }
    out += '"';
}

// Writes compact JSON text.
class text_sink {
public:
    explicit text_sink(std::string& out) : out_(out) { out_ += '{'; }
    ~text_sink() { out_ += '}'; }
    text_sink(const text_sink&) = delete;
    text_sink& operator=(const text_sink&) = delete;

    void string(std::string_view key, std::string_view value) {
        begin(key);
        append_ascii_string(out_, value);
    }
    void id(std::string_view key, const event_id& value) {
        begin(key);
        out_ += '"';
        const std::size_t at = out_.size();
        out_.resize(at + 36);
        format_event_id(value, out_.data() + at);
        out_ += '"';
    }
    void integer(std::string_view key, std::int64_t value) {
        begin(key);
        std::array<char, 24> buf{};
        const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), value).ptr;
        out_.append(buf.data(), end);
    }
    template <class Fill>
    void object(std::string_view key, Fill&& fill) {
        begin(key);
        text_sink inner(out_);
        fill(inner);
    }

private:
    // Keys are ngfail's own field names and event ids: plain ASCII, nothing to escape.
    void begin(std::string_view key) {
        out_.append(first_ ? "\"" : ",\"");
        first_ = false;
        out_.append(key);
        out_.append("\":");
    }
    std::string& out_;
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
void emit_optional(Sink& s, std::string_view key, const std::optional<std::string>& value) {
    if (value) s.string(key, *value);
}
template <class Sink>
void emit_optional(Sink& s, std::string_view key, const std::optional<int>& value) {
    if (value) s.integer(key, *value);
}
template <class Sink>
void emit_optional(Sink& s, std::string_view key, const std::optional<std::chrono::seconds>& value) {
    if (value) s.integer(key, value->count());
}

template <class Sink>
void emit_details(Sink& s, const sandbox_details& d) {
    s.string("type", "sandbox");
    s.string("operation", d.operation);
    emit_optional(s, "provider", d.provider);
    emit_optional(s, "sandbox_id", d.sandbox_id);
    emit_optional(s, "execution_id", d.execution_id);
    emit_optional(s, "provider_status_reason", d.provider_status_reason);
    emit_optional(s, "provider_code", d.provider_code);
    emit_optional(s, "exit_code", d.exit_code);
    emit_optional(s, "signal", d.signal);
    if (d.delivery) s.string("delivery", name(*d.delivery));
    emit_optional(s, "retry_after_s", d.retry_after);
}

template <class Sink>
void emit_details(Sink& s, const sdk_error_details& d) {
    s.string("type", "sdk_error");
    s.string("error_type", d.error_type);
    emit_optional(s, "message", d.message);
    emit_optional(s, "http_status", d.http_status);
    emit_optional(s, "code", d.code);
    emit_optional(s, "request_id", d.request_id);
}

template <class Sink>
void emit_details(Sink& s, const model_details& d) {
    s.string("type", "model");
    emit_optional(s, "operation", d.operation);
    emit_optional(s, "model", d.model);
    emit_optional(s, "attempt", d.attempt);
    emit_optional(s, "retry_after_s", d.retry_after);
}

template <class Sink>
void emit(Sink& s, const event_record& r) {
    s.id("event_id", r.id);
    s.string("failure_kind", r.kind);
    s.string("failure_reason", r.reason);
    if (r.boundary) s.string("boundary", name(*r.boundary));
    if (r.stage) s.string("stage", name(*r.stage));
    emit_optional(s, "http_status", r.http_status);
    if (r.cause_id) s.id("cause_id", *r.cause_id);
    std::visit(
        [&](const auto& d) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(d)>, std::monostate>) {
                s.object("details", [&](Sink& inner) { emit_details(inner, d); });
            }
        },
        r.details);
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

// ---- reading: a value into records, with errors that name the field -----------------------------

class shape_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

constexpr std::size_t max_quoted = 64;

// Where a value sits in the document, rendered only when an error names it.
struct json_path {
    const json_path* parent = nullptr;
    std::string_view name;

    [[nodiscard]] std::string str() const {
        std::string text = parent ? parent->str() + "." : std::string();
        return text + detail::printable(name, max_quoted);
    }
};

class object_reader {
public:
    object_reader(const json::value& value, const json_path& path) : path_(path) {
        obj_ = value.if_object();
        if (!obj_) throw shape_error(path_.str() + ": expected an object");
    }

    [[nodiscard]] const json::object& object() const { return *obj_; }

    [[nodiscard]] std::string required_string(std::string_view key) const {
        auto s = optional_string(key);
        if (!s) fail(key, "missing");
        return std::move(*s);
    }

    [[nodiscard]] std::optional<std::string> optional_string(std::string_view key) const {
        const json::value* v = obj_->if_contains(key);
        if (!v) return std::nullopt;
        const json::string* s = v->if_string();
        if (!s) fail(key, "expected a string");
        return std::string(s->data(), s->size());
    }

    [[nodiscard]] std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t lo,
                                                               std::int64_t hi) const {
        const json::value* v = obj_->if_contains(key);
        if (!v) return std::nullopt;
        std::int64_t n = 0;
        if (const auto* i = v->if_int64()) {
            n = *i;
        } else if (const auto* u = v->if_uint64(); u && *u <= static_cast<std::uint64_t>(hi)) {
            n = static_cast<std::int64_t>(*u);
        } else {
            fail(key, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
        }
        if (n < lo || n > hi) fail(key, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
        return n;
    }

    // Any `int`: the range each field allows is checked once, by `validate`, for every reader.
    [[nodiscard]] std::optional<int> optional_int(std::string_view key) const {
        constexpr int lo = std::numeric_limits<int>::min();
        constexpr int hi = std::numeric_limits<int>::max();
        const auto n = optional_integer(key, lo, hi);
        return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
    }

    [[nodiscard]] std::optional<std::chrono::seconds> optional_seconds(std::string_view key) const {
        const auto n = optional_integer(key, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max());
        return n ? std::optional<std::chrono::seconds>(*n) : std::nullopt;
    }

    [[nodiscard]] std::optional<event_id> optional_id(std::string_view key) const {
        const auto text = optional_string(key);
        if (!text) return std::nullopt;
        const auto id = parse_event_id(*text);
        if (!id) fail(key, "\"" + detail::printable(*text, max_quoted) + "\" is not a UUID");
        return id;
    }

    template <class Enum>
    [[nodiscard]] std::optional<Enum> optional_enum(std::string_view key,
                                                    std::optional<Enum> (*parse)(std::string_view) noexcept) const {
        const auto text = optional_string(key);
        if (!text) return std::nullopt;
        const auto value = parse(*text);
        if (!value) fail(key, "\"" + detail::printable(*text, max_quoted) + "\" is not a known value");
        return value;
    }

    [[noreturn]] void fail(std::string_view key, const std::string& what) const {
        throw shape_error(path_.str() + "." + std::string(key) + ": " + what);
    }


private:
    const json::object* obj_ = nullptr;
    const json_path& path_;
};

sandbox_details read_sandbox(const object_reader& r) {
    return {.operation = r.required_string("operation"),
            .provider = r.optional_string("provider"),
            .sandbox_id = r.optional_string("sandbox_id"),
            .execution_id = r.optional_string("execution_id"),
            .provider_status_reason = r.optional_string("provider_status_reason"),
            .provider_code = r.optional_string("provider_code"),
            .exit_code = r.optional_int("exit_code"),
            .signal = r.optional_string("signal"),
            .delivery = r.optional_enum<delivery>("delivery", parse_delivery),
            .retry_after = r.optional_seconds("retry_after_s")};
}

sdk_error_details read_sdk_error(const object_reader& r) {
    return {.error_type = r.required_string("error_type"),
            .message = r.optional_string("message"),
            .http_status = r.optional_int("http_status"),
            .code = r.optional_string("code"),
            .request_id = r.optional_string("request_id")};
}

model_details read_model(const object_reader& r) {
    return {.operation = r.optional_string("operation"),
            .model = r.optional_string("model"),
            .attempt = r.optional_int("attempt"),
            .retry_after = r.optional_seconds("retry_after_s")};
}

// details.type → reader: adding a details type is one row.
struct details_row {
    std::string_view type;
    event_details (*read)(const object_reader&);
};
constexpr std::array details_table{
    details_row{"sandbox", [](const object_reader& r) -> event_details { return read_sandbox(r); }},
    details_row{"sdk_error", [](const object_reader& r) -> event_details { return read_sdk_error(r); }},
    details_row{"model", [](const object_reader& r) -> event_details { return read_model(r); }},
};

event_details read_details(const json::value& value, const json_path& path) {
    const object_reader r(value, path);
    const std::string type = r.required_string("type");
    for (const details_row& row : details_table) {
        if (row.type == type) return row.read(r);
    }
    r.fail("type", "\"" + detail::printable(type, max_quoted) + "\" is not one of sandbox, sdk_error, model");
}

event_record read_record(const json::value& value, const json_path& path) {
    const object_reader r(value, path);
    event_record record;
    const auto id = r.optional_id("event_id");
    if (!id) r.fail("event_id", "missing");
    record.id = *id;
    record.kind = r.required_string("failure_kind");  // its code is set once the report is accepted
    record.reason = r.optional_string("failure_reason").value_or("");
    record.boundary = r.optional_enum<boundary>("boundary", parse_boundary);
    record.stage = r.optional_enum<stage>("stage", parse_stage);
    record.http_status = r.optional_int("http_status");
    record.cause_id = r.optional_id("cause_id");
    if (const json::value* details = r.object().if_contains("details")) {
        record.details = read_details(*details, json_path{&path, "details"});
    }
    return record;
}

std::map<event_id, event_record> read_events(const json::value& value, const json_path& path) {
    const object_reader r(value, path);
    std::map<event_id, event_record> events;
    for (const auto& [key, record] : r.object()) {
        const auto id = parse_event_id(key);
        const json_path record_path{&path, key};
        if (!id) throw shape_error(record_path.str() + ": the key is not a UUID");
        // Ids are case-insensitive text: two spellings of one id are one key, twice.
        if (!events.emplace(*id, read_record(record, record_path)).second) {
            throw shape_error(record_path.str() + ": the key repeats event " + to_string(*id) +
                              " (ids are case-insensitive)");
        }
    }
    return events;
}

failure_report read_report(const json::value& value) {
    const json_path root{nullptr, "report"};
    const object_reader r(value, root);
    failure_report report;
    report.failure_id = r.optional_id("failure_id");
    const json::value* events = r.object().if_contains("events");
    if (!events) r.fail("events", "missing");
    report.events = read_events(*events, json_path{nullptr, "events"});
    report.dropped_events =
        static_cast<std::size_t>(r.optional_integer("dropped_events", 0, std::int64_t{1} << 40).value_or(0));
    return report;
}

failure violation(std::string reason) {
    return failure(event_info{.kind = kind::protocol_violation, .reason = std::move(reason)});
}

void assign_codes(failure_report& report) {
    for (auto& [id, record] : report.events) record.code = kind_from_name(record.kind);
}

// ---- parsing: Boost.JSON's DOM with limits and no duplicate keys ----------------------------------

class limited_handler {
public:
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    limited_handler(const limits& lim, const json::storage_ptr& sp)
        : max_string_(std::max(lim.max_string_bytes, lim.max_reason_bytes)), max_key_(lim.max_string_bytes) {
        st.reset(sp);
    }

    json::value_stack st;
    std::string problem;                     // set when the handler itself rejects the input
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
        if (n > max_key_) return reject(ec, "a key is longer than " + std::to_string(max_key_) + " bytes");
        st.push_chars(s);
        return true;
    }
    bool on_key(json::string_view s, std::size_t n, json::error_code& ec) {
        if (n > max_key_) return reject(ec, "a key is longer than " + std::to_string(max_key_) + " bytes");
        st.push_key(s);
        return true;
    }
    bool on_string_part(json::string_view s, std::size_t n, json::error_code& ec) {
        if (n > max_string_) return reject(ec, "a string is longer than " + std::to_string(max_string_) + " bytes");
        st.push_chars(s);
        return true;
    }
    bool on_string(json::string_view s, std::size_t n, json::error_code& ec) {
        if (n > max_string_) return reject(ec, "a string is longer than " + std::to_string(max_string_) + " bytes");
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
    bool reject(json::error_code& ec, std::string why) {
        problem = std::move(why);
        ec = json::error::syntax;
        return false;
    }

    std::size_t max_string_;
    std::size_t max_key_;
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
class duplicate_finder {
public:
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

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
    return "JSON: duplicate key \"" + detail::printable(key.value_or("?"), max_quoted) + "\" at byte " + std::to_string(at);
}

result<json::value> parse_limited(std::string_view text, const limits& lim, const json::storage_ptr& sp) {
    if (text.size() > lim.max_json_bytes) {
        return violation("JSON: the document is " + std::to_string(text.size()) + " bytes; the limit is " +
                         std::to_string(lim.max_json_bytes));
    }
    json::parse_options options;
    options.max_depth = lim.max_json_depth;
    json::basic_parser<limited_handler> parser(options, lim, sp);
    json::error_code ec;
    const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
    if (!ec && consumed < text.size()) {
        return violation("JSON: trailing bytes after the document at byte " + std::to_string(consumed));
    }
    if (ec) {
        const std::string& problem = parser.handler().problem;
        return violation("JSON: " + (problem.empty() ? ec.message() : problem) + " at byte " + std::to_string(consumed));
    }
    json::value value = parser.handler().st.release();
    if (has_duplicate_key(value, parser.handler().member_counts)) return violation(name_duplicate(text, options));
    return value;
}

}  // namespace

// ---- public functions ---------------------------------------------------------------------------

std::string to_json(const failure_report& report, const limits& lim) {
    if (!validate(report, lim)) return detail::write_report(truncate_to_limits(report, lim));
    return detail::write_report(report);
}

std::string to_json(const event_record& record) {
    std::string out;
    {
        text_sink sink(out);
        emit(sink, record);
    }
    return out;
}

std::string detail::write_report(const failure_report& report) {
    std::string out;
    out.reserve(256 + 384 * report.events.size());
    {
        text_sink sink(out);
        emit(sink, report);
    }
    return out;
}

result<json::value> parse_json(std::string_view text, const limits& lim) {
    return parse_limited(text, lim, json::storage_ptr());
}

result<failure_report> report_from_value(const json::value& value, const limits& lim) {
    failure_report report;
    try {
        report = read_report(value);
    } catch (const shape_error& e) {
        return violation(std::string("failure report: ") + e.what());
    } catch (const std::exception& e) {
        return violation(std::string("failure report: ") + e.what());
    }
    BOOST_OUTCOME_TRY(validate(report, lim));
    assign_codes(report);  // only an accepted report may intern its unknown kinds
    return report;
}

result<failure_report> report_from_json(std::string_view text, const limits& lim) {
    std::array<unsigned char, 4096> buffer{};
    json::monotonic_resource scratch(buffer.data(), buffer.size());
    BOOST_OUTCOME_TRY(const json::value value, parse_limited(text, lim, &scratch));
    return report_from_value(value, lim);
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
    event_record record = read_record(in, json_path{nullptr, "event"});
    record.code = kind_from_name(record.kind);
    return record;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const failure_report& report) {
    value_sink sink(out.emplace_object());
    emit(sink, report);
}

failure_report tag_invoke(const json::value_to_tag<failure_report>&, const json::value& in) {
    failure_report report = read_report(in);
    assign_codes(report);
    return report;
}

}  // namespace ngfail
