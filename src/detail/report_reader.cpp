#include "report_reader.hpp"

#include "printable.hpp"
#include "strict_json.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <cstdint>
#include <limits>
#include <set>
#include <span>

namespace ngfail::detail {
namespace {
namespace json = boost::json;

constexpr std::size_t max_quoted = 64;
constexpr std::int64_t int_min = std::numeric_limits<int>::min();
constexpr std::int64_t int_max = std::numeric_limits<int>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// What the next value must be, and so what reads it.
enum class expect : std::uint8_t { ignored, text, token, integer, report, events, record, details };

// Details members of every type, kept until the object ends: "type" may come last.
struct details_fields {
    std::optional<std::string> type, operation, provider, sandbox_id, execution_id, provider_status_reason,
        provider_code, signal, error_type, message, code, request_id, model;
    std::optional<int> exit_code, http_status, attempt;
    std::optional<ngfail::delivery> delivery;
    std::optional<std::chrono::seconds> retry_after;
};

class reader;

// One member a report object defines: what its value must be and where it goes.
struct field {
    std::string_view name;
    expect value = expect::ignored;
    bool required = false;
    std::string* (*text)(reader&) = nullptr;             // expect::text: the string to fill
    bool (*token)(reader&, std::string_view) = nullptr;  // expect::token: false when not accepted
    std::string_view not_accepted{};                     // ... and what the error says then
    void (*integer)(reader&, std::int64_t) = nullptr;    // expect::integer, within [lo, hi]
    std::int64_t lo = 0;
    std::int64_t hi = 0;
};

class reader : public boost_json_sizes {
public:
    reader(const limits& lim, failure_report* report, event_record* lone_record)
        : text_limits_(lim), report_(report), record_(lone_record) {}

    [[nodiscard]] const std::string& json_problem() const noexcept { return json_problem_; }
    [[nodiscard]] const std::string& shape_problem() const noexcept { return shape_problem_; }

    failure_report& report() noexcept { return *report_; }
    event_record& record() noexcept { return *record_; }
    details_fields& details() noexcept { return details_; }
    [[nodiscard]] std::string_view event_key() const noexcept { return {record_key_.data(), record_key_.size()}; }
    [[nodiscard]] const event_id& event_key_id() const noexcept { return record_id_; }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code& ec);
    bool on_object_end(std::size_t, json::error_code& ec);
    bool on_array_begin(json::error_code& ec) {
        if (expected() != expect::ignored) return wrong_type(ec);
        frames_.push_back(frame{.object = expect::ignored, .array = true});
        return true;
    }
    bool on_array_end(std::size_t, json::error_code&) {
        frames_.pop_back();
        return true;
    }
    bool on_key_part(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.key_fits(n, json_problem_)) return stop(ec);
        key_.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t n, json::error_code& ec);
    bool on_string_part(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.string_fits(n, json_problem_)) return stop(ec);
        return string_part(s, ec);
    }
    bool on_string(json::string_view s, std::size_t n, json::error_code& ec) {
        if (!text_limits_.string_fits(n, json_problem_)) return stop(ec);
        if (expected() == expect::token) return token_end(s, ec);
        const bool ok = string_part(s, ec);
        text_ = nullptr;
        return ok;
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code& ec) { return integer(i, ec); }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code& ec) {
        if (u > static_cast<std::uint64_t>(int64_max)) return expected() == expect::ignored || wrong_type(ec);
        return integer(static_cast<std::int64_t>(u), ec);
    }
    bool on_double(double, json::string_view, json::error_code& ec) { return scalar(ec); }
    bool on_bool(bool, json::error_code& ec) { return scalar(ec); }
    bool on_null(json::error_code& ec) { return scalar(ec); }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    struct frame {
        expect object = expect::ignored;                // report, events, record, details, or ignored
        bool array = false;                             // an ignored array
        std::uint32_t seen = 0;                         // which of `fields` have come
        std::uint8_t next = 0;                          // the field after the last one found
        std::set<std::string, std::less<>> other_keys{};  // members no field names (duplicates are caught too)
    };

    [[nodiscard]] expect expected() const noexcept;
    [[nodiscard]] static std::span<const field> fields_of(expect object) noexcept;
    bool begin_member(std::string_view key, json::error_code& ec);
    bool begin_event(std::string_view key, json::error_code& ec);
    bool string_part(json::string_view s, json::error_code& ec);
    bool token_end(json::string_view last, json::error_code& ec);
    bool duplicate(std::string_view key, json::error_code& ec);
    bool integer(std::int64_t n, json::error_code& ec);
    bool scalar(json::error_code& ec) { return expected() == expect::ignored || wrong_type(ec); }
    bool end_details(json::error_code& ec);

    [[nodiscard]] std::string path() const;
    [[nodiscard]] std::string value_path() const;
    bool wrong_type(json::error_code& ec);
    bool shape(json::error_code& ec, std::string problem) {
        shape_problem_ = std::move(problem);
        return stop(ec);
    }
    static bool stop(json::error_code& ec) {
        ec = json::error::syntax;
        return false;
    }

    text_limits text_limits_;
    failure_report* report_;
    event_record* record_;
    details_fields details_;
    boost::container::small_vector<frame, 8> frames_;
    expect pending_ = expect::ignored;  // what the member whose key came last must be
    const field* pending_field_ = nullptr;
    std::string* text_ = nullptr;  // the string a text value is going into
    std::string key_;              // a key that came in parts
    std::string token_;            // a token that came in parts
    std::array<char, 36> record_key_{};  // the current event's key as written
    event_id record_id_{};         // ... and as read
    std::string json_problem_;
    std::string shape_problem_;
};

// ---- the schema: one table per object ------------------------------------------------------------

template <auto member>
std::string* record_text(reader& r) {
    return &(r.record().*member);
}
template <auto member>
std::string* details_text(reader& r) {
    return &(r.details().*member).emplace();
}
template <auto member>
bool report_id(reader& r, std::string_view text) {
    const auto id = parse_event_id(text);
    if (id) r.report().*member = *id;
    return id.has_value();
}
// The event_id member: most often the very text of its key, read already.
bool record_own_id(reader& r, std::string_view text) {
    if (text == r.event_key()) {
        r.record().id = r.event_key_id();
        return true;
    }
    const auto id = parse_event_id(text);
    if (id) r.record().id = *id;
    return id.has_value();
}
template <auto member>
bool record_id(reader& r, std::string_view text) {
    const auto id = parse_event_id(text);
    if (id) r.record().*member = *id;
    return id.has_value();
}
template <auto member, auto parse>
bool record_enum(reader& r, std::string_view text) {
    const auto value = parse(text);
    if (value) r.record().*member = *value;
    return value.has_value();
}
template <auto member, auto parse>
bool details_enum(reader& r, std::string_view text) {
    const auto value = parse(text);
    if (value) r.details().*member = *value;
    return value.has_value();
}
template <auto member>
void record_int(reader& r, std::int64_t n) {
    r.record().*member = static_cast<int>(n);
}
template <auto member>
void details_int(reader& r, std::int64_t n) {
    r.details().*member = static_cast<int>(n);
}
template <auto member>
void details_seconds(reader& r, std::int64_t n) {
    r.details().*member = std::chrono::seconds(n);
}
void report_dropped(reader& r, std::int64_t n) { r.report().dropped_events = static_cast<std::size_t>(n); }

constexpr std::string_view not_a_uuid = "is not a UUID";
constexpr std::string_view not_known = "is not a known value";

constexpr field text_field(std::string_view name, std::string* (*text)(reader&), bool required = false) {
    return {.name = name, .value = expect::text, .required = required, .text = text};
}
constexpr field token_field(std::string_view name, bool (*token)(reader&, std::string_view), std::string_view why,
                            bool required = false) {
    return {.name = name, .value = expect::token, .required = required, .token = token, .not_accepted = why};
}
constexpr field integer_field(std::string_view name, void (*integer)(reader&, std::int64_t), std::int64_t lo,
                              std::int64_t hi) {
    return {.name = name, .value = expect::integer, .integer = integer, .lo = lo, .hi = hi};
}

constexpr std::array report_fields{
    token_field("failure_id", report_id<&failure_report::failure_id>, not_a_uuid),
    field{.name = "events", .value = expect::events, .required = true},
    integer_field("dropped_events", report_dropped, 0, std::int64_t{1} << 40),
};

constexpr std::array record_fields{
    token_field("event_id", record_own_id, not_a_uuid, true),
    text_field("failure_kind", record_text<&event_record::kind>, true),  // its code is set once accepted
    text_field("failure_reason", record_text<&event_record::reason>),
    token_field("boundary", record_enum<&event_record::boundary, parse_boundary>, not_known),
    token_field("stage", record_enum<&event_record::stage, parse_stage>, not_known),
    integer_field("http_status", record_int<&event_record::http_status>, int_min, int_max),
    token_field("cause_id", record_id<&event_record::cause_id>, not_a_uuid),
    field{.name = "details", .value = expect::details},
};

// Ranges are `int`'s (or any for seconds): what each field allows is `validate`'s to check.
constexpr std::array details_member_fields{
    text_field("type", details_text<&details_fields::type>, true),
    text_field("operation", details_text<&details_fields::operation>),
    text_field("provider", details_text<&details_fields::provider>),
    text_field("sandbox_id", details_text<&details_fields::sandbox_id>),
    text_field("execution_id", details_text<&details_fields::execution_id>),
    text_field("provider_status_reason", details_text<&details_fields::provider_status_reason>),
    text_field("provider_code", details_text<&details_fields::provider_code>),
    integer_field("exit_code", details_int<&details_fields::exit_code>, int_min, int_max),
    text_field("signal", details_text<&details_fields::signal>),
    token_field("delivery", details_enum<&details_fields::delivery, parse_delivery>, not_known),
    integer_field("retry_after_s", details_seconds<&details_fields::retry_after>, int64_min, int64_max),
    text_field("error_type", details_text<&details_fields::error_type>),
    text_field("message", details_text<&details_fields::message>),
    integer_field("http_status", details_int<&details_fields::http_status>, int_min, int_max),
    text_field("code", details_text<&details_fields::code>),
    text_field("request_id", details_text<&details_fields::request_id>),
    text_field("model", details_text<&details_fields::model>),
    integer_field("attempt", details_int<&details_fields::attempt>, int_min, int_max),
};
static_assert(details_member_fields.size() <= 32, "frame::seen has a bit per field");

// details.type → the member it requires and the details it makes: adding a type is one row.
struct details_type {
    std::string_view name;
    std::optional<std::string> details_fields::*required;
    std::string_view required_name;
    event_details (*make)(details_fields&);
};
constexpr std::array details_types{
    details_type{"sandbox", &details_fields::operation, "operation",
                 [](details_fields& d) -> event_details {
                     return sandbox_details{.operation = std::move(*d.operation),
                                            .provider = std::move(d.provider),
                                            .sandbox_id = std::move(d.sandbox_id),
                                            .execution_id = std::move(d.execution_id),
                                            .provider_status_reason = std::move(d.provider_status_reason),
                                            .provider_code = std::move(d.provider_code),
                                            .exit_code = d.exit_code,
                                            .signal = std::move(d.signal),
                                            .delivery = d.delivery,
                                            .retry_after = d.retry_after};
                 }},
    details_type{"sdk_error", &details_fields::error_type, "error_type",
                 [](details_fields& d) -> event_details {
                     return sdk_error_details{.error_type = std::move(*d.error_type),
                                              .message = std::move(d.message),
                                              .http_status = d.http_status,
                                              .code = std::move(d.code),
                                              .request_id = std::move(d.request_id)};
                 }},
    details_type{"model", nullptr, {},
                 [](details_fields& d) -> event_details {
                     return model_details{.operation = std::move(d.operation),
                                          .model = std::move(d.model),
                                          .attempt = d.attempt,
                                          .retry_after = d.retry_after};
                 }},
};

// ---- the reader -----------------------------------------------------------------------------------

std::span<const field> reader::fields_of(expect object) noexcept {
    switch (object) {
        case expect::report: return report_fields;
        case expect::record: return record_fields;
        case expect::details: return details_member_fields;
        default: return {};
    }
}

expect reader::expected() const noexcept {
    if (frames_.empty()) return report_ ? expect::report : expect::record;
    return frames_.back().array ? expect::ignored : pending_;
}

bool reader::on_object_begin(json::error_code& ec) {
    const expect e = expected();
    switch (e) {
        case expect::report:
        case expect::events:
        case expect::record:
        case expect::ignored: break;
        case expect::details: details_ = {}; break;
        default: return wrong_type(ec);
    }
    frames_.push_back(frame{.object = e});
    return true;
}

bool reader::on_object_end(std::size_t, json::error_code& ec) {
    const frame& f = frames_.back();
    const auto fields = fields_of(f.object);
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].required && (f.seen & (1u << i)) == 0) return shape(ec, path() + "." + std::string(fields[i].name) + ": missing");
    }
    if (f.object == expect::details && !end_details(ec)) return false;
    frames_.pop_back();
    return true;
}

bool reader::end_details(json::error_code& ec) {
    const auto type = std::find_if(details_types.begin(), details_types.end(),
                                   [&](const details_type& row) { return row.name == *details_.type; });
    if (type == details_types.end()) {
        return shape(ec, path() + ".type: \"" + printable(*details_.type, max_quoted) +
                             "\" is not one of sandbox, sdk_error, model");
    }
    if (type->required && !(details_.*type->required)) {
        return shape(ec, path() + "." + std::string(type->required_name) + ": missing");
    }
    record_->details = type->make(details_);
    return true;
}

bool reader::on_key(json::string_view s, std::size_t n, json::error_code& ec) {
    if (!text_limits_.key_fits(n, json_problem_)) return stop(ec);
    std::string_view key(s.data(), s.size());
    if (!key_.empty()) {
        key_.append(key);
        key = key_;
    }
    const bool ok = frames_.back().object == expect::events ? begin_event(key, ec) : begin_member(key, ec);
    key_.clear();
    return ok;
}

bool reader::begin_member(std::string_view key, json::error_code& ec) {
    frame& f = frames_.back();
    const auto fields = fields_of(f.object);
    // Writers put members in table order, so the search starts after the last one found.
    for (std::size_t n = 0, i = f.next; n < fields.size(); ++n, i = i + 1 == fields.size() ? 0 : i + 1) {
        if (fields[i].name != key) continue;
        if ((f.seen & (1u << i)) != 0) return duplicate(key, ec);
        f.seen |= 1u << i;
        f.next = static_cast<std::uint8_t>(i + 1 == fields.size() ? 0 : i + 1);
        pending_ = fields[i].value;
        pending_field_ = &fields[i];
        return true;
    }
    if (!f.other_keys.emplace(key).second) return duplicate(key, ec);
    pending_ = expect::ignored;
    pending_field_ = nullptr;
    return true;
}

bool reader::duplicate(std::string_view key, json::error_code& ec) {
    json_problem_ = "duplicate key \"" + printable(key, max_quoted) + "\"";
    return stop(ec);
}

bool reader::begin_event(std::string_view key, json::error_code& ec) {
    const auto id = parse_event_id(key);
    if (!id) return shape(ec, "events." + printable(key, max_quoted) + ": the key is not a UUID");
    std::copy(key.begin(), key.end(), record_key_.begin());  // 36 characters, as it parsed
    const auto [at, added] = report_->events.try_emplace(*id);
    if (!added) {
        return shape(ec, "events." + printable(key, max_quoted) + ": the key repeats event " + to_string(*id) +
                             " (ids are case-insensitive)");
    }
    record_ = &at->second;
    record_id_ = *id;
    pending_ = expect::record;
    pending_field_ = nullptr;
    return true;
}

bool reader::string_part(json::string_view s, json::error_code& ec) {
    switch (expected()) {
        case expect::ignored: return true;
        case expect::text:
            if (!text_) text_ = pending_field_->text(*this);
            text_->append(s.data(), s.size());
            return true;
        case expect::token: token_.append(s.data(), s.size()); return true;
        default: return wrong_type(ec);
    }
}

bool reader::token_end(json::string_view last, json::error_code& ec) {
    std::string_view token(last.data(), last.size());
    if (!token_.empty()) {  // it came in parts
        token_.append(token);
        token = token_;
    }
    if (!pending_field_->token(*this, token)) {
        return shape(ec, value_path() + ": \"" + printable(token, max_quoted) + "\" " +
                             std::string(pending_field_->not_accepted));
    }
    token_.clear();
    return true;
}

bool reader::integer(std::int64_t n, json::error_code& ec) {
    const expect e = expected();
    if (e == expect::ignored) return true;
    if (e != expect::integer || n < pending_field_->lo || n > pending_field_->hi) return wrong_type(ec);
    pending_field_->integer(*this, n);
    return true;
}

std::string reader::path() const {
    std::string text;
    for (const frame& f : frames_) {
        switch (f.object) {
            case expect::report: text = "report"; break;
            case expect::events: text = "events"; break;
            case expect::record: text = report_ ? "events." + to_string(record_id_) : "event"; break;
            case expect::details: text += ".details"; break;
            default: return text;
        }
    }
    return text;
}

// Where the value being read sits: the member whose key came last, or the document itself.
std::string reader::value_path() const {
    if (frames_.empty()) return report_ ? "report" : "event";
    if (frames_.back().object == expect::events) return "events." + to_string(record_id_);
    return path() + "." + std::string(pending_field_->name);
}

bool reader::wrong_type(json::error_code& ec) {
    const expect e = expected();
    std::string what = "expected an object";
    if (e == expect::text || e == expect::token) what = "expected a string";
    if (e == expect::integer) {
        what = "expected an integer from " + std::to_string(pending_field_->lo) + " to " + std::to_string(pending_field_->hi);
    }
    return shape(ec, value_path() + ": " + what);
}

template <class Out>
result<Out> read(std::string_view text, const limits& lim) {
    Out out{};
    failure_report* report = nullptr;
    event_record* record = nullptr;
    if constexpr (std::is_same_v<Out, failure_report>) {
        report = &out;
    } else {
        record = &out;
    }
    json::basic_parser<reader> parser(strict_options(lim), lim, report, record);
    const auto parsed = parse_strict(parser, text, lim);
    if (!parser.handler().shape_problem().empty()) {
        return protocol_violation("failure report: " + parser.handler().shape_problem());
    }
    if (!parsed) return parsed.error();
    return out;
}

}  // namespace

result<failure_report> read_report(std::string_view text, const limits& lim) { return read<failure_report>(text, lim); }

result<event_record> read_record(std::string_view text, const limits& lim) { return read<event_record>(text, lim); }

}  // namespace ngfail::detail
