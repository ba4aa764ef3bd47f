// execd's metrics: one sample (GET /metrics), and the watch (GET /metrics/watch), a stream of
// bare JSON lines, one sample a second, for as long as the caller wants them.
#include "call.hpp"

#include <boost/json.hpp>

namespace ngfail::opensandbox::detail {
namespace {

namespace json = boost::json;
using verb = beast_http::verb;

constexpr std::size_t max_sample_line = 64 * 1024;
constexpr std::chrono::milliseconds watch_silence{60000};

double number_in(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    if (!v || !v->is_number()) malformed("a metrics sample lacks one of its numbers");
    return v->to_number<double>();
}

metrics_sample sample_of(const json::value& v) {
    const json::object& o = as_object(v);
    if (const json::value* error = o.if_contains("error"); error && error->is_string()) {
        return {.error = std::string(error->as_string())};
    }
    const json::value* at = o.if_contains("timestamp");
    if (!at || !at->is_int64()) malformed("a metrics sample has no timestamp");
    return {.cpu_count = number_in(o, "cpu_count"),
            .cpu_used_pct = number_in(o, "cpu_used_pct"),
            .mem_total_mib = number_in(o, "mem_total_mib"),
            .mem_used_mib = number_in(o, "mem_used_mib"),
            .timestamp_ms = at->as_int64()};
}

// The caller said it has seen enough: the watch ends well, its connection closed.
struct enough {};

// Splits the stream into lines in any chunking and hands each sample on. A `data:` prefix is
// read too (the SSE form), a blank line skipped.
class sample_reader {
public:
    explicit sample_reader(const metrics_callback& on_sample) : on_sample_(on_sample) {}

    void feed(std::string_view bytes) {
        for (std::size_t at = 0; at < bytes.size();) {
            const std::size_t end = bytes.find('\n', at);
            line_.append(bytes.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
            if (line_.size() > max_sample_line) malformed("a metrics line is over 64 KiB");
            if (end == std::string_view::npos) return;
            take_line();
            at = end + 1;
        }
    }
    void finish() { take_line(); }
    [[nodiscard]] std::size_t samples() const noexcept { return samples_; }

private:
    void take_line() {
        std::string_view line = line_;
        if (line.starts_with("data:")) line.remove_prefix(5);
        while (!line.empty() && (line.front() == ' ' || line.back() == '\r' || line.back() == ' ')) {
            line = line.front() == ' ' ? line.substr(1) : line.substr(0, line.size() - 1);
        }
        if (line.empty()) return line_.clear();
        json::error_code ec;
        const json::value v = json::parse(line, ec);
        if (ec) malformed("a metrics line is not JSON");
        const metrics_sample sample = sample_of(v);
        line_.clear();
        ++samples_;
        bool more = false;
        try {
            more = on_sample_(sample);
        } catch (...) {
            throw std::system_error(make_error_code(errc::cancelled), "the metrics callback threw");
        }
        if (!more) throw enough{};
    }

    const metrics_callback& on_sample_;
    std::string line_;
    std::size_t samples_ = 0;
};

// GET /metrics/watch and hand each sample on until the callback has enough or the stream
// ends; quiet for at most a minute.
awaitable<std::size_t> watch(const call_context& context, std::string_view sandbox_id, const metrics_callback& on_sample) {
    const shared_route route = co_await context.execd_endpoint(sandbox_id);
    auto req = execd_request(context, verb::get, route->where, route->endpoint, "/metrics/watch");
    req.set(beast_http::field::accept, "text/event-stream");
    const lease on = co_await context.connect_to_execd(sandbox_id, route->where);
    co_await on->send(req, context.deadline);
    sample_reader samples(on_sample);
    std::optional<beast_http::response_header<>> error_head;
    std::string error_body;
    try {
        co_await on->receive_stream(
            context.deadline, stream_limits{watch_silence},
            [&](const beast_http::response_header<>& head) {
                if (head.result_int() >= 300) error_head = head;
            },
            [&](std::string_view bytes) {
                if (!error_head) return samples.feed(bytes);
                error_body.append(bytes.substr(0, max_header_bytes - std::min(error_body.size(), max_header_bytes)));
            });
    } catch (const enough&) {
        co_return samples.samples();
    }
    if (error_head) throw api_error_of(*error_head, error_body, context.secrets);
    try {
        samples.finish();
    } catch (const enough&) {
    }
    co_return samples.samples();
}

}  // namespace

awaitable<result<metrics_sample>> get_metrics_operation(client_state& s, std::string sandbox_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<metrics_sample>(s, per_call, operation::metrics, sandbox_id, std::move(problem),
                                            [&](const call_context& c, observation&) -> attempt_result<metrics_sample> {
        co_return sample_of(json_of(co_await c.execd_call(sandbox_id, verb::get, "/metrics"), "the metrics reply is not JSON"));
    });
}

awaitable<result<std::size_t>> watch_metrics_operation(client_state& s, std::string sandbox_id,
                                                       metrics_callback on_sample, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    if (!problem && !on_sample) problem = "watching metrics needs a callback for the samples";
    co_return co_await call<std::size_t>(s, per_call, operation::watch_metrics, sandbox_id, std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::size_t> {
        co_return co_await watch(c, sandbox_id, on_sample);
    });
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<metrics_sample> client::make_get_metrics(std::string_view sandbox_id, const call_options& options) {
    return detail::get_metrics_operation(*state_, std::string(sandbox_id), options);
}

client::awaitable<std::size_t> client::make_watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                                                           const call_options& options) {
    return detail::watch_metrics_operation(*state_, std::string(sandbox_id), on_sample, options);
}

}  // namespace ngfail::opensandbox
