#include <ngfail/http.hpp>

namespace ngfail::http::detail {

failure repeated_header(std::size_t count) {
    return failure(kind::protocol_violation, "failure header: the message carries " + std::to_string(count) + " " +
                                                 std::string(failure_header_name) + " fields; at most one is allowed");
}

void raise_remote(const failure& f, unsigned status, std::string body) {
    visit_event(f, [&](const auto& event) {
        using event_type = std::decay_t<decltype(event)>;
        raise(remote_event<event_type>(event, status, std::move(body)));
    });
    std::abort();  // unreachable: the visitor always throws
}

void raise_for_reply(const result<failure_report>& report, unsigned status, std::string body) {
    if (report.has_error()) raise_remote(report.error(), status, std::move(body));
    if (const failure remote = rebuild_failure(report.value())) raise_remote(remote, status, std::move(body));
    if (status >= 200 && status < 300) return;
    raise_remote(failure(event_info{.kind = kind::undetermined,
                                    .reason = "HTTP " + std::to_string(status) + " without a failure report",
                                    .http_status = static_cast<int>(status)}),
                 status, std::move(body));
}

}  // namespace ngfail::http::detail
