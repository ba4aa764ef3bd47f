#include "wire/report_reader.hpp"

#include "text/printable.hpp"
#include "wire/details_schema.hpp"
#include "wire/envelope_schema.hpp"
#include "wire/strict_json.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace ngfail::wire::detail {
namespace {
namespace json = boost::json;

constexpr std::size_t max_quoted = 64;
constexpr std::int64_t int_min = std::numeric_limits<int>::min();
constexpr std::int64_t int_max = std::numeric_limits<int>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// What the next value must be, and so what reads it. `details_type` is the "type" of a
// details object, which says what its other members are; `held` is a member that came before
// it, kept until then.
enum class expect : std::uint8_t { ignored, text, token, integer, report, events, record, details, details_type, held };

// A details member that came before "type": its value, if a string or an integer.
struct held_member {
    enum class shape : std::uint8_t { text, integer, other };
    std::string key;
    shape value = shape::other;
    std::string text{};
    std::int64_t number = 0;
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
    [[nodiscard]] std::string_view event_key() const noexcept { return {record_key_.data(), record_key_.size()}; }
    [[nodiscard]] const event_id& event_key_id() const noexcept { return record_id_; }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code& ec);
    bool on_object_end(std::size_t, json::error_code& ec);
    bool on_array_begin(json::error_code& ec) {
        const expect e = expected();
        if (e == expect::held) held_.back().value = held_member::shape::other;
        if (e != expect::ignored && e != expect::held) return wrong_type(ec);
        frames_.emplace_back(expect::ignored, std::span<const field>{}, true);
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
        if (const expect e = expected(); e == expect::token || e == expect::details_type) return token_end(s, ec);
        const bool ok = string_part(s, ec);
        text_ = nullptr;
        return ok;
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code& ec) { return integer(i, ec); }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code& ec) {
        if (u > static_cast<std::uint64_t>(int64_max)) return scalar(ec);
        return integer(static_cast<std::int64_t>(u), ec);
    }
    bool on_double(double, json::string_view, json::error_code& ec) { return scalar(ec); }
    bool on_bool(bool, json::error_code& ec) { return scalar(ec); }
    bool on_null(json::error_code& ec) { return scalar(ec); }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    struct frame {
        // Constructed in place from its parts: value-initialising one (`emplace_back()`)
        // zero-fills it with `rep stos`, whose start-up cost was most of `on_object_begin`.
        frame(expect object, std::span<const field> fields, bool array = false) noexcept
            : object(object), fields(fields), array(array) {}

        expect object;                                  // report, events, record, details, or ignored
        std::span<const field> fields;                  // the members it defines
        bool array;                                     // an ignored array
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
    bool scalar(json::error_code& ec) {
        const expect e = expected();
        if (e == expect::held) held_.back().value = held_member::shape::other;
        return e == expect::ignored || e == expect::held || wrong_type(ec);
    }
    bool begin_details(std::string_view type, json::error_code& ec);
    bool replay(held_member& held, json::error_code& ec);

    [[nodiscard]] std::string path() const;
    [[nodiscard]] std::string value_path() const;
    [[nodiscard]] static std::string expectation(expect e, const field* f);
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
    std::vector<held_member> held_;  // members of the current details object before its "type"
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

// Where a member goes: the object, then the member of it. One shape for every table: a
// string filled as it arrives, a token parsed and kept when it parses, a number kept.
failure_report& report_object(reader& r) noexcept { return r.report(); }
event_record& record_object(reader& r) noexcept { return r.record(); }
template <class Details>
Details& details_object(reader& r) noexcept {
    return std::get<Details>(r.record().details);
}

std::string* text_slot(std::string& s) noexcept { return &s; }
std::string* text_slot(std::optional<std::string>& s) { return &s.emplace(); }

template <auto object, auto member>
std::string* text_into(reader& r) {
    return text_slot(object(r).*member);
}
template <auto object, auto member, auto parse>
bool parsed_into(reader& r, std::string_view text) {
    const auto value = parse(text);
    if (value) object(r).*member = *value;
    return value.has_value();
}
template <auto object, auto member>
void number_into(reader& r, std::int64_t n) {
    using number = typename std::remove_reference_t<decltype(object(r).*member)>::value_type;
    object(r).*member = number(n);
}
void report_dropped(reader& r, std::int64_t n) { r.report().dropped_events = static_cast<std::size_t>(n); }

// The event_id member: most often the very text of its key, read already.
bool record_own_id(reader& r, std::string_view text) {
    if (text == r.event_key()) {
        r.record().id = r.event_key_id();
        return true;
    }
    return parsed_into<record_object, &event_record::id, parse_event_id>(r, text);
}

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
    token_field("failure_id", parsed_into<report_object, &failure_report::failure_id, parse_event_id>, not_a_uuid),
    field{.name = "events", .value = expect::events, .required = true},
    integer_field("dropped_events", report_dropped, 0, std::int64_t{1} << 40),
};

// A details object's "type", until it has come: what its other members are depends on it.
constexpr std::array untyped_details_fields{field{.name = "type", .value = expect::details_type, .required = true}};
// ... and once it has, already seen: the first field of each type's table.
constexpr field typed = {.name = "type", .required = true};

// Whether a reader refuses an object without the member: a details member when it is plain
// text (never optional), an envelope member as its row says.
template <class Details, class Member>
constexpr bool required(const details_field<Details, Member>&) {
    return std::is_same_v<Member, std::string>;
}
template <class Member>
constexpr bool required(const envelope_field<Member>& row) {
    return row.required;
}

// A member's reader field, made from row I of `Schema` (details_schema.hpp,
// envelope_schema.hpp); `object` is where the member lives. How its value is read follows
// from the member's type. Ranges are the type's: what each field allows is `validate`'s to
// check.
template <auto object, class Schema, std::size_t I>
constexpr field schema_member() {
    constexpr auto row = std::get<I>(Schema::fields);
    using member = std::remove_cvref_t<decltype(object(std::declval<reader&>()).*row.member)>;
    if constexpr (std::is_same_v<member, std::string> || std::is_same_v<member, std::optional<std::string>>) {
        return text_field(row.name, text_into<object, row.member>, required(row));
    } else if constexpr (std::is_same_v<member, event_id>) {  // an event's own id, read first as its key
        return token_field(row.name, record_own_id, not_a_uuid, required(row));
    } else if constexpr (std::is_same_v<member, std::optional<event_id>>) {
        return token_field(row.name, parsed_into<object, row.member, parse_event_id>, not_a_uuid);
    } else if constexpr (std::is_same_v<member, std::optional<delivery>>) {
        return token_field(row.name, parsed_into<object, row.member, parse_delivery>, not_known);
    } else if constexpr (std::is_same_v<member, std::optional<boundary>>) {
        return token_field(row.name, parsed_into<object, row.member, parse_boundary>, not_known);
    } else if constexpr (std::is_same_v<member, std::optional<stage>>) {
        return token_field(row.name, parsed_into<object, row.member, parse_stage>, not_known);
    } else if constexpr (std::is_same_v<member, std::optional<int>>) {
        return integer_field(row.name, number_into<object, row.member>, int_min, int_max);
    } else if constexpr (std::is_same_v<member, std::optional<std::chrono::seconds>>) {
        return integer_field(row.name, number_into<object, row.member>, int64_min, int64_max);
    } else {
        static_assert(std::is_same_v<member, event_details>, "a member type no reader handles");
        return field{.name = row.name, .value = expect::details};
    }
}

// The reader's fields for `Schema`'s rows, in order, after `before`.
template <auto object, class Schema, class... Before, std::size_t... I>
constexpr auto fields_from(std::index_sequence<I...>, Before... before) {
    return std::array<field, sizeof...(Before) + sizeof...(I)>{before..., schema_member<object, Schema, I>()...};
}
template <auto object, class Schema, class... Before>
constexpr auto fields_from(Before... before) {
    return fields_from<object, Schema>(std::make_index_sequence<std::tuple_size_v<decltype(Schema::fields)>>{},
                                       before...);
}

constexpr auto record_fields = fields_from<record_object, envelope_schema>();

// "type" first (already seen when the table is used), then the schema's rows.
template <class Details>
constexpr auto fields_of_details = fields_from<details_object<Details>, details_schema<Details>>(typed);

static_assert(fields_of_details<sandbox_details>.size() <= 32 && record_fields.size() <= 32, "frame::seen has a bit per field");

// details.type → its members, and the details it starts: adding a type is one row.
struct details_kind {
    std::string_view name;
    std::span<const field> fields;
    void (*start)(event_details&);
};
template <class Details>
constexpr details_kind details_kind_of() {
    return {details_schema<Details>::type, fields_of_details<Details>, [](event_details& d) { d.emplace<Details>(); }};
}
constexpr std::array details_kinds{
    details_kind_of<sandbox_details>(),
    details_kind_of<sdk_error_details>(),
    details_kind_of<model_details>(),
};

// ---- the reader -----------------------------------------------------------------------------------

std::span<const field> reader::fields_of(expect object) noexcept {
    switch (object) {
        case expect::report: return report_fields;
        case expect::record: return record_fields;
        case expect::details: return untyped_details_fields;
        default: return {};
    }
}

expect reader::expected() const noexcept {
    if (frames_.empty()) return report_ ? expect::report : expect::record;
    return frames_.back().array ? expect::ignored : pending_;
}

bool reader::on_object_begin(json::error_code& ec) {
    expect e = expected();
    switch (e) {
        case expect::report:
        case expect::events:
        case expect::record:
        case expect::ignored: break;
        case expect::details: held_.clear(); break;
        case expect::held:
            held_.back().value = held_member::shape::other;
            e = expect::ignored;
            break;
        default: return wrong_type(ec);
    }
    frames_.emplace_back(e, fields_of(e));
    return true;
}

bool reader::on_object_end(std::size_t, json::error_code& ec) {
    const frame& f = frames_.back();
    for (std::size_t i = 0; i < f.fields.size(); ++i) {
        if (f.fields[i].required && (f.seen & (1u << i)) == 0) {
            return shape(ec, path() + "." + std::string(f.fields[i].name) + ": missing");
        }
    }
    frames_.pop_back();
    return true;
}

// The type has come: the details start, and the members held for it are read as it defines them.
bool reader::begin_details(std::string_view type, json::error_code& ec) {
    const auto kind = std::find_if(details_kinds.begin(), details_kinds.end(),
                                   [&](const details_kind& row) { return row.name == type; });
    if (kind == details_kinds.end()) {
        return shape(ec, value_path() + ": \"" + text::printable(type, max_quoted) +
                             "\" is not one of sandbox, sdk_error, model");
    }
    kind->start(record_->details);
    frame& f = frames_.back();
    f.fields = kind->fields;
    f.seen = 1;  // the type, the first field of every table
    f.next = 1;
    for (held_member& held : held_) {
        if (!replay(held, ec)) return false;
    }
    held_.clear();
    return true;
}

bool reader::replay(held_member& held, json::error_code& ec) {
    frame& f = frames_.back();
    const auto known = std::find_if(f.fields.begin(), f.fields.end(), [&](const field& x) { return x.name == held.key; });
    if (known == f.fields.end()) return true;  // a member this type does not define
    f.seen |= 1u << (known - f.fields.begin());
    const auto fail = [&](std::string what) { return shape(ec, path() + "." + held.key + ": " + std::move(what)); };
    const bool text = held.value == held_member::shape::text;
    switch (known->value) {
        case expect::text:
            if (!text) return fail(expectation(known->value, &*known));
            *known->text(*this) = std::move(held.text);
            return true;
        case expect::token:
            if (!text) return fail(expectation(known->value, &*known));
            if (!known->token(*this, held.text)) {
                return fail("\"" + text::printable(held.text, max_quoted) + "\" " + std::string(known->not_accepted));
            }
            return true;
        case expect::integer:
            if (held.value != held_member::shape::integer || held.number < known->lo || held.number > known->hi) {
                return fail(expectation(known->value, &*known));
            }
            known->integer(*this, held.number);
            return true;
        default: return true;
    }
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
    const auto fields = f.fields;
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
    // Held until the type comes, when some type defines it: at most one per name, so what a
    // details object holds is bounded by the schema, not by the document.
    const bool held = f.object == expect::details && fields.data() == untyped_details_fields.data() &&
                      std::any_of(details_kinds.begin(), details_kinds.end(), [&](const details_kind& kind) {
                          return std::any_of(kind.fields.begin(), kind.fields.end(),
                                             [&](const field& x) { return x.name == key; });
                      });
    if (held) held_.push_back(held_member{.key = std::string(key)});
    pending_ = held ? expect::held : expect::ignored;
    pending_field_ = nullptr;
    return true;
}

bool reader::duplicate(std::string_view key, json::error_code& ec) {
    json_problem_ = "duplicate key \"" + text::printable(key, max_quoted) + "\"";
    return stop(ec);
}

// Makes the map's node hold `event_record{}` in place, member by member: `try_emplace(id)`
// would value-initialise it, zero-filling its ~450 bytes before constructing the members.
struct fresh_record {
    operator event_record() const { return {}; }  // NOLINT: converts implicitly, for emplace
};

bool reader::begin_event(std::string_view key, json::error_code& ec) {
    const auto id = parse_event_id(key);
    if (!id) return shape(ec, "events." + text::printable(key, max_quoted) + ": the key is not a UUID");
    std::copy(key.begin(), key.end(), record_key_.begin());  // 36 characters, as it parsed
    const auto [at, added] = report_->events.try_emplace(*id, fresh_record{});
    if (!added) {
        return shape(ec, "events." + text::printable(key, max_quoted) + ": the key repeats event " + to_string(*id) +
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
        case expect::token:
        case expect::details_type: token_.append(s.data(), s.size()); return true;
        case expect::held:
            held_.back().value = held_member::shape::text;
            held_.back().text.append(s.data(), s.size());
            return true;
        default: return wrong_type(ec);
    }
}

bool reader::token_end(json::string_view last, json::error_code& ec) {
    std::string_view token(last.data(), last.size());
    if (!token_.empty()) {  // it came in parts
        token_.append(token);
        token = token_;
    }
    if (expected() == expect::details_type) {
        const bool begun = begin_details(token, ec);
        token_.clear();
        return begun;
    }
    if (!pending_field_->token(*this, token)) {
        return shape(ec, value_path() + ": \"" + text::printable(token, max_quoted) + "\" " +
                             std::string(pending_field_->not_accepted));
    }
    token_.clear();
    return true;
}

bool reader::integer(std::int64_t n, json::error_code& ec) {
    const expect e = expected();
    if (e == expect::ignored) return true;
    if (e == expect::held) {
        held_.back().value = held_member::shape::integer;
        held_.back().number = n;
        return true;
    }
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

std::string reader::expectation(expect e, const field* f) {
    switch (e) {
        case expect::text:
        case expect::token:
        case expect::details_type: return "expected a string";
        case expect::integer: return "expected an integer from " + std::to_string(f->lo) + " to " + std::to_string(f->hi);
        default: return "expected an object";
    }
}

bool reader::wrong_type(json::error_code& ec) {
    return shape(ec, value_path() + ": " + expectation(expected(), pending_field_));
}

// Drives the reader with a DOM's events, as the parser drives it with text: one reader, so
// a value and its text are held to the same rules. Depth is bounded as the parser bounds it.
bool walk(reader& r, const json::value& v, std::size_t depth, const limits& lim, json::error_code& ec) {
    const auto nested = [&] {
        if (depth < lim.max_json_depth) return true;
        ec = json::error::too_deep;
        return false;
    };
    switch (v.kind()) {
        case json::kind::object: {
            if (!nested() || !r.on_object_begin(ec)) return false;
            for (const auto& member : v.get_object()) {
                if (!r.on_key(member.key(), member.key().size(), ec)) return false;
                if (!walk(r, member.value(), depth + 1, lim, ec)) return false;
            }
            return r.on_object_end(v.get_object().size(), ec);
        }
        case json::kind::array: {
            if (!nested() || !r.on_array_begin(ec)) return false;
            for (const auto& element : v.get_array()) {
                if (!walk(r, element, depth + 1, lim, ec)) return false;
            }
            return r.on_array_end(v.get_array().size(), ec);
        }
        case json::kind::string: return r.on_string(v.get_string(), v.get_string().size(), ec);
        case json::kind::int64: return r.on_int64(v.get_int64(), {}, ec);
        case json::kind::uint64: return r.on_uint64(v.get_uint64(), {}, ec);
        case json::kind::double_: return r.on_double(v.get_double(), {}, ec);
        case json::kind::bool_: return r.on_bool(v.get_bool(), ec);
        case json::kind::null: return r.on_null(ec);
    }
    return true;
}

// Where the reader puts what it reads: a report, or one event record on its own.
template <class Out>
std::pair<failure_report*, event_record*> destination(Out& out) {
    if constexpr (std::is_same_v<Out, failure_report>) {
        return {&out, nullptr};
    } else {
        return {nullptr, &out};
    }
}

template <class Out>
result<Out> finish(Out out, const reader& r, const result<void>& parsed) {
    if (!r.shape_problem().empty()) return protocol_violation("failure report: " + r.shape_problem());
    if (!parsed) return parsed.error();
    return out;
}

template <class Out>
result<Out> read(std::string_view text, const limits& lim, text_check checked = text_check::none) {
    Out out{};
    const auto [report, record] = destination(out);
    json::parse_options options = strict_options(lim);
    options.allow_invalid_utf8 = checked == text_check::printable_ascii;  // no byte above 0x7e to check
    json::basic_parser<reader> parser(options, lim, report, record);
    const auto parsed = parse_strict(parser, text, lim);
    return finish(std::move(out), parser.handler(), parsed);
}

template <class Out>
result<Out> read(const json::value& value, const limits& lim) {
    Out out{};
    const auto [report, record] = destination(out);
    reader r(lim, report, record);
    json::error_code ec;
    result<void> walked = boost::outcome_v2::success();
    if (!walk(r, value, 0, lim, ec)) {
        walked = protocol_violation("JSON: " + (r.json_problem().empty() ? ec.message() : r.json_problem()));
    }
    return finish(std::move(out), r, walked);
}

}  // namespace

result<failure_report> read_report(std::string_view text, const limits& lim, text_check checked) {
    return read<failure_report>(text, lim, checked);
}

result<event_record> read_record(std::string_view text, const limits& lim) { return read<event_record>(text, lim); }

result<failure_report> read_report(const json::value& value, const limits& lim) {
    return read<failure_report>(value, lim);
}

result<event_record> read_record(const json::value& value, const limits& lim) { return read<event_record>(value, lim); }

}  // namespace ngfail::wire::detail
