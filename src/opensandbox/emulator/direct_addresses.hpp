// Each running sandbox's own direct address, as a pod has its own IP: a port opened when the
// sandbox's direct endpoint is first asked for while it runs, closed while it does not run
// (a connection is then refused, as one to a dead pod's address is), and opened again at the
// same port when it runs again. At most `max_open` are open at once; past that, and for a
// sandbox that does not run, the server's shared direct port stands in (it answers 502, as
// the proxy does when nothing listens).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace ngfail::opensandbox::testing::detail {

class direct_addresses {
public:
    // Listens on a port (0: any) and returns it; throws when it cannot.
    using opener = std::function<unsigned short(unsigned short port)>;
    using closer = std::function<void(unsigned short port)>;
    // Whether a sandbox runs now; none when it is gone.
    using running_check = std::function<std::optional<bool>(const std::string& sandbox_id)>;

    static constexpr std::size_t max_open = 256;

    // How ports are opened and closed (the HTTP server's listeners); before any other call.
    void attach(opener open, closer close);

    // The sandbox's own port while it runs (opened on first use); none when it does not run
    // or no more may open.
    [[nodiscard]] std::optional<unsigned short> port_for(const std::string& sandbox_id, bool running);

    // Closes the ports of sandboxes that no longer run, forgets those that are gone, and opens
    // again, at the same port when it is free, those that run again.
    void reconcile(const running_check& running);

    // The sandbox a port is the address of; none for any other port.
    [[nodiscard]] std::optional<std::string> sandbox_at(unsigned short port) const;

private:
    struct address {
        unsigned short port = 0;
        bool open = false;
    };
    void open(const std::string& sandbox_id, address& a);  // under the lock

    mutable std::mutex mutex_;
    std::map<std::string, address> by_sandbox_;
    std::map<unsigned short, std::string> by_port_;
    std::size_t open_count_ = 0;
    opener open_;
    closer close_;
};

}  // namespace ngfail::opensandbox::testing::detail
