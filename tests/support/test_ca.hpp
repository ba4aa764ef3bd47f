// A certificate authority for the HTTPS tests, made at test time with the openssl tool.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <stdlib.h>

namespace ngfail_test {

// A certificate authority made with the openssl tool in a fresh directory, and two server
// certificates it signed: `server` for localhost and 127.0.0.1, `other` for another name.
struct test_ca {
    std::filesystem::path dir;
    test_ca() {
        char name[] = "/tmp/ngfail-ca-XXXXXX";
        dir = ::mkdtemp(name);
        const std::string in = "cd " + dir.string() + " && ";
        const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        run(in + "openssl req -x509" + ec + " -keyout ca.key -out ca.pem -days 2 -subj /CN=ngfail-test-ca");
        for (const auto& [cert, names] : {std::pair{"server", "DNS:localhost,IP:127.0.0.1"},
                                          std::pair{"other", "DNS:other.example"}}) {
            const std::string c(cert);
            std::ofstream(dir / (c + ".cnf")) << "subjectAltName=" << names << "\n";
            run(in + "openssl req" + ec + " -keyout " + c + ".key -out " + c + ".csr -subj /CN=" + c);
            run(in + "openssl x509 -req -in " + c + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile " +
                c + ".cnf -out " + c + ".pem");
        }
    }
    ~test_ca() { std::filesystem::remove_all(dir); }
    static void run(const std::string& command) {
        ASSERT_EQ(std::system((command + " >/dev/null 2>&1").c_str()), 0) << command;
    }
    [[nodiscard]] std::string file(const char* name) const { return (dir / name).string(); }
};

inline const test_ca& ca() {
    static const test_ca made;
    return made;
}

}  // namespace ngfail_test
