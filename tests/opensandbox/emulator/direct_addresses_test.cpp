// Each running sandbox's own direct address: opened on first use, closed while the sandbox
// does not run, opened again at the same port, forgotten when the sandbox is gone. The
// listeners here are stand-ins that record what was opened; embedded_server_test checks the
// real ones refuse connections.
#include "opensandbox/emulator/direct_addresses.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>

namespace {

using ngfail::opensandbox::testing::detail::direct_addresses;

struct ports {
    std::set<unsigned short> listening;
    std::set<unsigned short> taken_by_others;
    unsigned short next = 40000;

    void attach(direct_addresses& a) {
        a.attach(
            [this](unsigned short port) {
                if (port == 0) port = next++;
                if (listening.contains(port) || taken_by_others.contains(port)) throw std::runtime_error("in use");
                listening.insert(port);
                return port;
            },
            [this](unsigned short port) { listening.erase(port); });
    }
};

TEST(direct_addresses, a_running_sandbox_keeps_one_address_that_closes_and_reopens_with_its_state) {
    ports p;
    direct_addresses a;
    p.attach(a);
    std::map<std::string, std::optional<bool>> running{{"a", true}, {"b", true}};
    const auto check = [&](const std::string& id) { return running.at(id); };
    const auto port = a.port_for("a", true);
    ASSERT_TRUE(port);
    EXPECT_EQ(a.port_for("a", true), port);
    EXPECT_EQ(a.sandbox_at(*port), "a");
    EXPECT_FALSE(a.port_for("c", false)) << "a sandbox that does not run gets no address";
    running["a"] = false;
    a.reconcile(check);
    EXPECT_FALSE(p.listening.contains(*port));
    EXPECT_FALSE(a.sandbox_at(*port));
    running["a"] = true;
    a.reconcile(check);
    EXPECT_TRUE(p.listening.contains(*port)) << "the same address again";
    EXPECT_EQ(a.sandbox_at(*port), "a");
    running["a"] = std::nullopt;  // deleted
    a.reconcile(check);
    EXPECT_TRUE(p.listening.empty());
    EXPECT_FALSE(a.sandbox_at(*port));
}

TEST(direct_addresses, a_port_taken_meanwhile_gives_a_new_address) {
    ports p;
    direct_addresses a;
    p.attach(a);
    std::optional<bool> runs = true;
    const auto check = [&](const std::string&) { return runs; };
    const unsigned short first = *a.port_for("a", true);
    runs = false;
    a.reconcile(check);
    p.taken_by_others.insert(first);
    runs = true;
    a.reconcile(check);
    const auto again = a.port_for("a", true);
    ASSERT_TRUE(again);
    EXPECT_NE(*again, first);
    EXPECT_EQ(a.sandbox_at(*again), "a");
}

TEST(direct_addresses, at_most_max_open_addresses_are_open_at_once) {
    ports p;
    direct_addresses a;
    p.attach(a);
    for (std::size_t i = 0; i < direct_addresses::max_open; ++i) ASSERT_TRUE(a.port_for("s" + std::to_string(i), true));
    EXPECT_FALSE(a.port_for("one more", true)) << "the shared direct port stands in";
    EXPECT_EQ(p.listening.size(), direct_addresses::max_open);
    a.reconcile([](const std::string& id) { return id == "s0" ? std::nullopt : std::optional(true); });
    EXPECT_TRUE(a.port_for("one more", true)) << "room again once one has gone";
}

TEST(direct_addresses, without_listeners_no_address_is_given) {
    direct_addresses a;
    EXPECT_FALSE(a.port_for("a", true));
}

}  // namespace
