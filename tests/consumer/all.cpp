// Uses the umbrella header and a piece of every library, as code written before #42 did: the
// emulator under its old name (ngfail::opensandbox::embedded_server), found through
// <ngfail/ngfail.hpp> because the program links ngfail::opensandbox_emulator beside
// ngfail::ngfail, the one line such a program's build adds.
#include <ngfail/ngfail.hpp>

#include <cstdio>

int main() {
    ngfail::opensandbox::embedded_server server;
    ngfail::opensandbox::client sandboxes({.port = server.port()});
    const auto box = sandboxes.try_create({});
    const auto seen = ngfail::opensandbox::classify({.operation = "get", .http_status = 401});
    boost::beast::http::response<boost::beast::http::string_body> res;
    ngfail::http::attach(res, ngfail::failure_report{});
    const bool ok = box && seen.kind == ngfail::kind::provider_credentials_rejected &&
                    ngfail::http::report_of(res).has_value();
    std::printf("all libraries: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
