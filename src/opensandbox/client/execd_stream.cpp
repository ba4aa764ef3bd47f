#include "execd_stream.hpp"
#include "reply.hpp"

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cstdint>
#include <utility>

namespace ngfail::opensandbox::detail {
namespace {

constexpr std::size_t max_line_bytes = 1 << 20;
constexpr std::size_t max_error_text = 4096;
constexpr std::size_t max_traceback_lines = 64;

std::string_view string_field(const boost::json::object& o, std::string_view key) {
    const boost::json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string_view(v->as_string()) : std::string_view{};
}

std::optional<int> integer(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() ? std::optional(value) : std::nullopt;
}

}  // namespace

void execd_stream::feed(std::string_view bytes) {
    while (!bytes.empty()) {
        const auto newline = bytes.find('\n');
        const std::string_view piece = bytes.substr(0, newline);
        if (line_.size() + piece.size() > max_line_bytes) malformed("an execd event line is over 1 MiB");
        line_.append(piece);
        if (newline == std::string_view::npos) return;
        take_line(line_);
        line_.clear();
        bytes.remove_prefix(newline + 1);
    }
}

void execd_stream::finish() {
    if (!line_.empty()) take_line(line_);
    line_.clear();
    if (!data_.empty()) take_event(data_);
    data_.clear();
}

// The SSE grammar, and execd's own framing within it: `data:` lines accumulate until a blank
// line ends the event (a JSON object may span several); a line that is no SSE field is a
// whole JSON event, as execd writes them; comments, `event:`, `id:` and `retry:` carry none.
void execd_stream::take_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
        if (!data_.empty()) take_event(data_);
        data_.clear();
        return;
    }
    if (line.starts_with("data:")) {
        line.remove_prefix(5);
        if (line.starts_with(' ')) line.remove_prefix(1);
        if (data_.size() + line.size() > max_line_bytes) malformed("an execd event is over 1 MiB");
        if (!data_.empty()) data_ += '\n';
        data_.append(line);
        return;
    }
    if (line.starts_with(':') || line.starts_with("event:") || line.starts_with("id:") || line.starts_with("retry:")) {
        return;
    }
    take_event(line);
}

// The two members most execd events are made of, read as the parser meets them, with no
// DOM: building one per event was three quarters of the client's JSON work in an exec
// (callgrind). Whatever else an event holds is skipped; an event whose type needs more (an
// error, a count, results) or that names "type" or "text" twice is read again as a DOM.
class execd_stream::event_head {
public:
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    enum class member : std::uint8_t { other, type, text };
    struct value {
        std::string text;
        bool is_string = false;  // absent, or not a string: as if ""
        bool seen = false;
    };

    value type;
    value text;
    bool an_object = false;
    bool repeated = false;

    bool on_document_begin(boost::json::error_code&) { return true; }
    bool on_document_end(boost::json::error_code&) { return true; }
    bool on_object_begin(boost::json::error_code&) { return begin(true); }
    bool on_object_end(std::size_t, boost::json::error_code&) { return end(); }
    bool on_array_begin(boost::json::error_code&) { return begin(false); }
    bool on_array_end(std::size_t, boost::json::error_code&) { return end(); }
    bool on_key_part(boost::json::string_view s, std::size_t, boost::json::error_code&) {
        if (depth_ == 1) key_.append(s.data(), s.size());
        return true;
    }
    bool on_key(boost::json::string_view s, std::size_t n, boost::json::error_code& ec) {
        if (depth_ != 1) return true;
        on_key_part(s, n, ec);
        pending_ = key_ == "type" ? member::type : key_ == "text" ? member::text : member::other;
        key_.clear();
        if (value* v = pending_value()) {
            repeated = repeated || v->seen;
            v->seen = true;
        }
        return true;
    }
    bool on_string_part(boost::json::string_view s, std::size_t, boost::json::error_code&) {
        if (value* v = depth_ == 1 ? pending_value() : nullptr) v->text.append(s.data(), s.size());
        return true;
    }
    bool on_string(boost::json::string_view s, std::size_t n, boost::json::error_code& ec) {
        on_string_part(s, n, ec);
        if (value* v = depth_ == 1 ? pending_value() : nullptr) v->is_string = true;
        return scalar();
    }
    bool on_number_part(boost::json::string_view, boost::json::error_code&) { return true; }
    bool on_int64(std::int64_t, boost::json::string_view, boost::json::error_code&) { return scalar(); }
    bool on_uint64(std::uint64_t, boost::json::string_view, boost::json::error_code&) { return scalar(); }
    bool on_double(double, boost::json::string_view, boost::json::error_code&) { return scalar(); }
    bool on_bool(bool, boost::json::error_code&) { return scalar(); }
    bool on_null(boost::json::error_code&) { return scalar(); }
    bool on_comment_part(boost::json::string_view, boost::json::error_code&) { return true; }
    bool on_comment(boost::json::string_view, boost::json::error_code&) { return true; }

private:
    value* pending_value() noexcept {
        return pending_ == member::type ? &type : pending_ == member::text ? &text : nullptr;
    }
    bool begin(bool object) {
        if (depth_ == 0) an_object = object;
        ++depth_;
        return true;
    }
    bool end() {
        --depth_;
        return scalar();
    }
    // A member's value is over (a string, another scalar, an object or array that ended).
    bool scalar() {
        if (depth_ == 1) pending_ = member::other;
        return true;
    }

    int depth_ = 0;
    member pending_ = member::other;
    std::string key_;
};

namespace {

// The event types whose members are read from a DOM.
bool needs_dom(std::string_view type) noexcept {
    return type == "error" || type == "execution_count" || type == "result";
}

// What each escape a plain event's text may hold stands for (0: one it may not, such as \u).
constexpr std::array<char, 128> unescaped_as = [] {
    std::array<char, 128> table{};
    for (const auto& [escape, byte] : {std::pair{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', '\b'}, {'f', '\f'},
                                      {'n', '\n'}, {'r', '\r'}, {'t', '\t'}}) {
        table[static_cast<std::size_t>(escape)] = byte;
    }
    return table;
}();

}  // namespace

// execd's simple events byte for byte as its Go encoder (and ngfail serve) writes them,
// {"type":"<a-z_>","text":"<text>","execution_time":<digits>,"timestamp":<digits>} with all
// but the type optional and the text printable ASCII with single-character escapes, read in
// one pass: the parser's machinery over these few bytes was most of an exec's JSON work
// (callgrind). Anything else (other members or order, whitespace, \u escapes, bytes that are
// not printable ASCII, a type read from a DOM) is left to the parser, which also judges
// whether it is JSON at all.
bool execd_stream::take_plain_event(std::string_view in) {
    const auto skip = [&](std::string_view prefix) {
        if (!in.starts_with(prefix)) return false;
        in.remove_prefix(prefix.size());
        return true;
    };
    if (!skip(R"({"type":")")) return false;
    const std::size_t type_end = in.find('"');
    const std::string_view type = in.substr(0, type_end);
    if (type.empty() || type_end == std::string_view::npos ||
        !std::all_of(type.begin(), type.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }) ||
        needs_dom(type)) {
        return false;
    }
    in.remove_prefix(type_end + 1);
    std::string_view text;
    if (skip(R"(,"text":")")) {
        bool escaped = false;
        std::size_t i = 0;
        for (; i < in.size() && in[i] != '"'; ++i) {
            const auto c = static_cast<unsigned char>(in[i]);
            if (c < 0x20 || c > 0x7e) return false;
            if (c != '\\') continue;
            const std::size_t escape = i + 1 < in.size() ? static_cast<unsigned char>(in[i + 1]) : 0;
            if (escape >= unescaped_as.size() || unescaped_as[escape] == 0) return false;
            escaped = true;
            ++i;
        }
        if (i == in.size()) return false;
        text = in.substr(0, i);
        in.remove_prefix(i + 1);
        if (escaped) {
            unescaped_.clear();
            for (std::size_t k = 0; k < text.size(); ++k) {
                unescaped_ += text[k] == '\\' ? unescaped_as[static_cast<unsigned char>(text[++k])] : text[k];
            }
            text = unescaped_;
        }
    }
    // JSON's integers, no leading zero, and few enough digits for an int64 (18).
    const auto skip_number = [&] {
        // Not find_first_not_of: it searches the set of digits once per character.
        const std::size_t digits = static_cast<std::size_t>(
            std::find_if(in.begin(), in.end(), [](char c) { return c < '0' || c > '9'; }) - in.begin());
        if (digits == 0 || digits > 18 || (in[0] == '0' && digits > 1)) return false;
        in.remove_prefix(digits);
        return true;
    };
    if (skip(R"(,"execution_time":)") && !skip_number()) return false;
    if (skip(R"(,"timestamp":)") && !skip_number()) return false;
    if (in != "}") return false;
    take_simple_event(type, text);
    return true;
}

void execd_stream::take_event(std::string_view text) {
    if (take_plain_event(text)) return;
    {
        boost::json::basic_parser<event_head> head({});
        boost::json::error_code ec;
        const std::size_t read = head.write_some(false, text.data(), text.size(), ec);
        const event_head& event = head.handler();
        if (ec || read != text.size() || !event.an_object) malformed("an execd event is not a JSON object");
        if (!event.repeated && !(event.type.is_string && needs_dom(event.type.text))) {
            if (event.type.is_string) take_simple_event(event.type.text, event.text.is_string ? event.text.text : "");
            return;
        }
    }
    // The event lives only in this function: its DOM is built in a buffer on the stack (the
    // heap only past it), not allocated piece by piece.
    std::array<unsigned char, 2048> room;
    boost::json::monotonic_resource memory(room.data(), room.size());
    boost::json::error_code ec;
    const boost::json::value v = boost::json::parse(text, ec, &memory);
    if (ec || !v.is_object()) malformed("an execd event is not a JSON object");
    const auto& event = v.as_object();
    const boost::json::value* type = event.if_contains("type");
    if (!type || !type->is_string()) return;  // the spec does not require a type: nothing to act on
    const std::string_view kind = type->as_string();
    if (kind == "error") {
        const boost::json::value* error = event.if_contains("error");
        if (!error || !error->is_object()) malformed("an execd error event has no error object");
        take_error(error->as_object());
        terminal_ = true;
    } else if (kind == "execution_count") {
        if (const auto* count = event.if_contains("execution_count"); count && count->is_int64()) {
            code_.execution_count = static_cast<int>(std::clamp<std::int64_t>(count->as_int64(), 0, INT_MAX));
        }
    } else if (kind == "result") {
        if (const auto* results = event.if_contains("results"); results && results->is_object()) {
            take_results(results->as_object());
        }
    }
    take_simple_event(kind, string_field(event, "text"));
}

void execd_stream::take_simple_event(std::string_view type, std::string_view text) {
    if (type == "init") {
        result_.execution_id = std::string(text);
    } else if (type == "stdout") {
        deliver(callbacks_.on_stdout, text);
        append_line(result_.stdout_text, text);
    } else if (type == "stderr") {
        deliver(callbacks_.on_stderr, text);
        append_line(result_.stderr_text, text);
    } else if (type == "execution_complete") {
        result_.exit_code = 0;
        terminal_ = true;
    }
    // ping, status: nothing to keep
}

void execd_stream::take_error(const boost::json::object& error) {
    const std::string_view evalue = string_field(error, "evalue");
    result_.error_value = std::string(evalue.substr(0, max_error_text));
    result_.exit_code = integer(evalue);  // not a number: the command failed to start
    if (const auto* name = error.if_contains("ename"); name && name->is_string()) {
        code_.error_name = std::string(name->as_string().subview().substr(0, max_error_text));
    }
    if (const auto* traceback = error.if_contains("traceback"); traceback && traceback->is_array()) {
        for (const auto& line : traceback->as_array()) {
            if (code_.traceback.size() == max_traceback_lines) break;
            if (line.is_string()) code_.traceback.emplace_back(line.as_string().subview().substr(0, max_error_text));
        }
    }
}

// Each value by its MIME type (execd names text/plain "text"): text as it is, anything else
// as its JSON; types and values together within the output limit, as output is (a server
// that sends new types forever fills the limit, not the memory).
void execd_stream::take_results(const boost::json::object& results) {
    for (const auto& [type, value] : results) {
        std::string text = value.is_string() ? std::string(value.as_string()) : boost::json::serialize(value);
        if (const auto held = code_.results.find(type); held != code_.results.end()) {
            results_bytes_ -= held->first.size() + held->second.size();
            code_.results.erase(held);
        }
        const std::size_t used = result_.stdout_text.size() + result_.stderr_text.size() + results_bytes_;
        const std::size_t room = max_output_ - std::min(used, max_output_);
        if (type.size() + text.size() > room) {
            result_.output_truncated = true;
            if (type.size() >= room) continue;
            text.resize(room - type.size());
        }
        results_bytes_ += type.size() + text.size();
        code_.results.emplace(std::string(type), std::move(text));
    }
}

void execd_stream::deliver(const std::function<void(std::string_view)>& callback, std::string_view text) {
    if (!callback) return;
    try {
        callback(text);
    } catch (...) {
        throw std::system_error(make_error_code(errc::cancelled), "an output callback threw");
    }
}

// execd sends a command's output a line per event, without its terminator (it tails the
// command's log by line): the lines are joined as the command wrote them, each ended by
// "\n", as the official Python SDK joins them. An event that ends its own line (a code
// kernel's, a server that sends whole output) is kept as it is.
void execd_stream::append_line(std::string& to, std::string_view text) {
    append_output(to, text);
    if (!text.empty() && text.back() != '\n') append_output(to, "\n");
}

void execd_stream::append_output(std::string& to, std::string_view text) {
    const std::size_t used = result_.stdout_text.size() + result_.stderr_text.size();
    if (used + text.size() > max_output_) {
        text = text.substr(0, max_output_ - std::min(used, max_output_));
        result_.output_truncated = true;
    }
    to.append(text);
}

}  // namespace ngfail::opensandbox::detail
