// The Beast helpers alone (ngfail::http): a report attached to a reply and read back.
#include <ngfail/http.hpp>

#include <cstdio>

int main() {
    boost::beast::http::response<boost::beast::http::string_body> res;
    ngfail::http::attach(res, ngfail::failure_report{});
    const bool ok = ngfail::http::report_of(res).has_value();
    std::printf("http alone: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
