// The OpenSandbox client against a running `ngfail serve`, for benchmarks/run, beside the
// official TypeScript SDK measured against the same server (tests/conformance/sdk_benchmark.mjs):
// exec round trips one at a time (through the asynchronous and the blocking face, and the floor: the same request bytes with bare Beast on
// one kept-alive connection, nothing classified, read asynchronously on the same io_context
// as the client and, for context, blocking; in alternating blocks), `parallel` execs at once
// from one thread,
// memory per exec in flight (bytes allocated, counted by this program's operator new, and
// resident memory beside them), the threads those add, and the same load with 5% of execs
// faulted (every outcome must be a success or the injected failure, classified), and a
// 1-second command streamed and detached (the detached one's polling costs). When
// NGFAIL_SERVER_PID names the `ngfail serve` process, also the server's CPU time per exec
// one at a time, in each of the client's blocks. When NGFAIL_PEER_BENCHMARK names a peer's
// benchmark program (benchmarks/go_sdk: the official Go SDK), it runs as a child taking the
// same arguments and `--paced`: each of its one-at-a-time blocks runs right after each of
// ours, and its results join ours. Built with ngfail::otel, also the client instrumented (an
// OpenTelemetry SDK whose exporters drop their batches), one at a time in the same blocks, and
// the least that SDK does for a call (its span and its attempt's, bare) as a baseline.
// Prints Google Benchmark JSON; values that are not times say their unit in their name.
//   client_benchmark HOST:PORT API_KEY ROUNDS PARALLEL
#include <ngfail/opensandbox/client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#ifdef NGFAIL_BENCHMARK_OTEL
#include <ngfail/otel/client_instrumentation.hpp>

#include "otel/traceparent.hpp"

#include <opentelemetry/sdk/metrics/export/periodic_exporting_metric_reader_factory.h>
#include <opentelemetry/sdk/metrics/meter_provider.h>
#include <opentelemetry/sdk/metrics/meter_provider_factory.h>
#include <opentelemetry/sdk/metrics/push_metric_exporter.h>
#include <opentelemetry/sdk/trace/simple_processor_factory.h>
#include <opentelemetry/sdk/trace/exporter.h>
#include <opentelemetry/sdk/trace/span_data.h>
#include <opentelemetry/sdk/trace/tracer_provider.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>
#endif

#include <malloc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

// Every allocation of this process is counted (the bytes the allocator gave, live and at
// their peak), so that memory per exec in flight is measured in bytes allocated, which page
// granularity cannot hide as it hides them in resident memory (one run read 0.0 KiB there).
namespace allocated {

std::atomic<std::size_t> live{0};
std::atomic<std::size_t> peak{0};

void* counted(void* p) {
    if (p == nullptr) throw std::bad_alloc();
    const std::size_t size = malloc_usable_size(p);
    const std::size_t now = live.fetch_add(size, std::memory_order_relaxed) + size;
    std::size_t seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
    return p;
}

void release(void* p) noexcept {
    if (p == nullptr) return;
    live.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
    std::free(p);
}

void* aligned(std::size_t n, std::align_val_t a) {
    const auto align = static_cast<std::size_t>(a);
    return counted(std::aligned_alloc(align, (std::max<std::size_t>(n, 1) + align - 1) / align * align));
}

}  // namespace allocated

void* operator new(std::size_t n) { return allocated::counted(std::malloc(std::max<std::size_t>(n, 1))); }
void* operator new[](std::size_t n) { return allocated::counted(std::malloc(std::max<std::size_t>(n, 1))); }
void* operator new(std::size_t n, std::align_val_t a) { return allocated::aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocated::aligned(n, a); }
void operator delete(void* p) noexcept { allocated::release(p); }
void operator delete[](void* p) noexcept { allocated::release(p); }
void operator delete(void* p, std::size_t) noexcept { allocated::release(p); }
void operator delete[](void* p, std::size_t) noexcept { allocated::release(p); }
void operator delete(void* p, std::align_val_t) noexcept { allocated::release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { allocated::release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { allocated::release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { allocated::release(p); }

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using clock_type = std::chrono::steady_clock;
using ngfail::opensandbox::client;
using ngfail::opensandbox::command;

struct server_address {
    std::string host;
    unsigned short port;
};

std::size_t status_field(const char* name) {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with(name)) return std::stoul(line.substr(std::string_view(name).size()));
    }
    return 0;
}
std::size_t rss_kib() { return status_field("VmRSS:"); }
std::size_t threads() { return status_field("Threads:"); }

// The CPU time all threads of process `pid` have had so far, in ns, from the scheduler's own
// accounting (/proc/PID/task/*/schedstat; /proc/PID/stat counts in 10 ms ticks, too coarse
// for a block of execs). A thread that ended between the listing and the read counts 0.
double cpu_ns_of(const std::string& pid) {
    double total = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + pid + "/task")) {
        std::ifstream schedstat(task.path() / "schedstat");
        double on_cpu = 0;
        if (schedstat >> on_cpu) total += on_cpu;
    }
    return total;
}

// The server named by NGFAIL_SERVER_PID, checked to be `ngfail` (a pid of a shell in front
// of it would read as a server that costs nothing).
std::optional<std::string> server_pid() {
    const char* pid = std::getenv("NGFAIL_SERVER_PID");
    if (pid == nullptr || *pid == 0) return std::nullopt;
    std::ifstream comm(std::string("/proc/") + pid + "/comm");
    std::string name;
    if (!(comm >> name) || name != "ngfail") {
        std::cerr << "NGFAIL_SERVER_PID=" << pid << " is not an ngfail process\n";
        std::exit(2);
    }
    return pid;
}

double ns_since(clock_type::time_point start) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - start).count());
}

json::object entry(const std::string& name, double value) {
    return {{"name", name}, {"run_name", name}, {"real_time", value}, {"time_unit", "ns"}};
}

[[noreturn]] void give_up(const std::string& why) {
    std::cerr << "client_benchmark: " << why << '\n';
    std::exit(1);
}

// A peer's benchmark program as a child, measuring one block when told to (it says "ready"
// once set up and warmed up): `block` sends it
// a line "block" and waits for its "done"; `finish` closes its input, upon which it measures
// the rest, prints its Google Benchmark JSON and exits. Its blocks so alternate with ours in
// time, and each pair of blocks shares the machine's drift (a peer run a minute after us
// paired its blocks with ours in order only, and once a pair fell 1.79x against 1.8x).
class peer_benchmark {
public:
    explicit peer_benchmark(std::vector<std::string> args) {
        std::signal(SIGPIPE, SIG_IGN);  // a peer that died is reported by its missing answer
        int to_child[2], from_child[2];
        if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) give_up("pipe failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
        for (const int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) {
            posix_spawn_file_actions_addclose(&actions, fd);
        }
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(to_child[0]);
        ::close(from_child[1]);
        if (spawned != 0) give_up("cannot start " + args[0]);
        to_ = ::fdopen(to_child[1], "w");
        from_ = ::fdopen(from_child[0], "r");
        // Its set-up and warm-up run before our first block, not beside it.
        if (read_line() != "ready") give_up("the peer benchmark did not start");
    }
    peer_benchmark(const peer_benchmark&) = delete;
    peer_benchmark& operator=(const peer_benchmark&) = delete;

    void block() {
        std::fputs("block\n", to_);
        std::fflush(to_);
        if (read_line() != "done") give_up("the peer benchmark did not finish its block");
    }

    // Its results; exits when it failed.
    json::array finish() {
        std::fclose(to_);
        std::string out;
        for (std::string line; !(line = read_line()).empty();) out += line;
        std::fclose(from_);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) give_up("the peer benchmark failed");
        boost::system::error_code ec;
        const json::value doc = json::parse(out, ec);
        if (ec || !doc.is_object() || !doc.as_object().contains("benchmarks")) give_up("the peer printed no results");
        return doc.at("benchmarks").as_array();
    }

private:
    std::string read_line() {
        std::string line;
        for (int c; (c = std::fgetc(from_)) != EOF && c != '\n';) line += static_cast<char>(c);
        return line;
    }

    pid_t pid_ = 0;
    std::FILE* to_ = nullptr;
    std::FILE* from_ = nullptr;
};

#ifdef NGFAIL_BENCHMARK_OTEL
// An OpenTelemetry SDK whose exporters do nothing: spans handed over as each ends (the simple
// processor: a batch processor's thread would add its own scheduling to the measurement,
// not the instrumentation's cost), metrics read every second.
class dropping_span_exporter final : public opentelemetry::sdk::trace::SpanExporter {
public:
    std::unique_ptr<opentelemetry::sdk::trace::Recordable> MakeRecordable() noexcept override {
        return std::make_unique<opentelemetry::sdk::trace::SpanData>();
    }
    opentelemetry::sdk::common::ExportResult Export(
        const opentelemetry::nostd::span<std::unique_ptr<opentelemetry::sdk::trace::Recordable>>&) noexcept override {
        return opentelemetry::sdk::common::ExportResult::kSuccess;
    }
    bool ForceFlush(std::chrono::microseconds) noexcept override { return true; }
    bool Shutdown(std::chrono::microseconds) noexcept override { return true; }
};

class dropping_metric_exporter final : public opentelemetry::sdk::metrics::PushMetricExporter {
public:
    opentelemetry::sdk::common::ExportResult Export(const opentelemetry::sdk::metrics::ResourceMetrics&) noexcept override {
        return opentelemetry::sdk::common::ExportResult::kSuccess;
    }
    opentelemetry::sdk::metrics::AggregationTemporality GetAggregationTemporality(
        opentelemetry::sdk::metrics::InstrumentType) const noexcept override {
        return opentelemetry::sdk::metrics::AggregationTemporality::kCumulative;
    }
    bool ForceFlush(std::chrono::microseconds) noexcept override { return true; }
    bool Shutdown(std::chrono::microseconds) noexcept override { return true; }
};

class dropping_telemetry {
public:
    dropping_telemetry() {
        namespace sdk_trace = opentelemetry::sdk::trace;
        namespace sdk_metrics = opentelemetry::sdk::metrics;
        tracer_provider_ = sdk_trace::TracerProviderFactory::Create(
            sdk_trace::SimpleSpanProcessorFactory::Create(std::make_unique<dropping_span_exporter>()));
        meter_provider_ = sdk_metrics::MeterProviderFactory::Create();
        sdk_metrics::PeriodicExportingMetricReaderOptions reading;
        reading.export_interval_millis = std::chrono::milliseconds(1000);
        reading.export_timeout_millis = std::chrono::milliseconds(500);
        meter_provider_->AddMetricReader(sdk_metrics::PeriodicExportingMetricReaderFactory::Create(
            std::make_unique<dropping_metric_exporter>(), reading));
    }
    [[nodiscard]] ngfail::otel::instrumentation_options options() const {
        return {.names = ngfail::otel::naming::ngfail,
                .tracer_provider = opentelemetry::nostd::shared_ptr<opentelemetry::trace::TracerProvider>(tracer_provider_),
                .meter_provider = opentelemetry::nostd::shared_ptr<opentelemetry::metrics::MeterProvider>(meter_provider_)};
    }

    // The least any OpenTelemetry instrumentation of a call can do with this SDK: the call's
    // span and its attempt's, nothing on them, no measurement. Not a product: the baseline
    // that says how much of the instrumented client's cost is the SDK's, not ngfail's.
    [[nodiscard]] std::shared_ptr<ngfail::opensandbox::call_observer> least_observer() const {
        return std::make_shared<least_observer_type>(tracer_provider_->GetTracer("ngfail.benchmark.least"));
    }

private:
    class least_call final : public ngfail::opensandbox::observed_call {
    public:
        explicit least_call(opentelemetry::trace::Tracer& tracer) : tracer_(tracer), span_(tracer.StartSpan("call")) {}
        std::string_view attempt_began(int) override {
            opentelemetry::trace::StartSpanOptions options;
            options.parent = span_->GetContext();
            attempt_ = tracer_.StartSpan("attempt", options);
            return traceparent_.of(attempt_->GetContext());  // as the instrumented client does
        }
        void attempt_failed(const ngfail::failure&) override { attempt_->End(); }
        void ended(const ngfail::failure&, std::string_view) override {
            attempt_->End();
            span_->End();
        }

    private:
        opentelemetry::trace::Tracer& tracer_;
        opentelemetry::nostd::shared_ptr<opentelemetry::trace::Span> span_;
        opentelemetry::nostd::shared_ptr<opentelemetry::trace::Span> attempt_;
        ngfail::otel::detail::traceparent traceparent_;
    };
    class least_observer_type final : public ngfail::opensandbox::call_observer {
    public:
        explicit least_observer_type(opentelemetry::nostd::shared_ptr<opentelemetry::trace::Tracer> tracer)
            : tracer_(std::move(tracer)) {}
        std::unique_ptr<ngfail::opensandbox::observed_call> begin(ngfail::opensandbox::operation, std::string_view,
                                                                  std::span<const ngfail::opensandbox::trace_label>) override {
            return std::make_unique<least_call>(*tracer_);
        }

    private:
        opentelemetry::nostd::shared_ptr<opentelemetry::trace::Tracer> tracer_;
    };

    std::shared_ptr<opentelemetry::sdk::trace::TracerProvider> tracer_provider_;
    std::shared_ptr<opentelemetry::sdk::metrics::MeterProvider> meter_provider_;
};
#endif

// 1 for a failed exec, which is said on stderr (the first few): a benchmark's run must not
// fail, and one that does says how.
const char* phase = "warm-up";  // which part of the run is measuring, for a failure's report

int unexpected(const ngfail::result<ngfail::opensandbox::exec_result>& r) {
    static int said = 0;
    if (r) return 0;
    if (said++ < 5) std::cerr << "client: unexpected failure (" << phase << "): " << r.error() << '\n';
    return 1;
}

// One request on a fresh connection, for the server's own control route.
void post(const server_address& to, const std::string& target, const std::string& key, const std::string& body) {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address(to.host), to.port});
    http::request<http::string_body> req(http::verb::post, target, 11);
    req.set(http::field::host, to.host);
    req.set("OPEN-SANDBOX-API-KEY", key);
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
}

// `count` execs of `cmd` by `parallel` workers on `io`'s one thread, each starting the next
// exec when its last one ends (the Go SDK's program and the TypeScript SDK's do the same);
// calls `each` with every result.
template <class Each>
double run_workers(asio::io_context& io, client& c, const std::string& id, const command& cmd, int count, int parallel,
                   Each each) {
    const auto start = clock_type::now();
    int started = 0;
    for (int i = 0; i < parallel; ++i) {
        asio::co_spawn(io, [&]() -> asio::awaitable<void> {
            while (started < count) {
                ++started;
                each(co_await c.async_exec(id, cmd));
            }
        }, asio::detached);
    }
    io.restart();
    io.run();
    return ns_since(start) / count;
}

// `count` execs, each awaited before the next.
double one_at_a_time(asio::io_context& io, client& c, const std::string& id, const command& cmd, int count,
                     int& failed) {
    const auto start = clock_type::now();
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
        for (int i = 0; i < count; ++i) failed += unexpected(co_await c.async_exec(id, cmd));
    }, asio::detached);
    io.restart();
    io.run();
    return ns_since(start) / count;
}

// The same through the blocking face: each call runs on this thread, on an I/O context the
// client lends it.
double one_at_a_time_blocking(client& c, const std::string& id, const command& cmd, int count, int& failed) {
    const auto start = clock_type::now();
    for (int i = 0; i < count; ++i) failed += unexpected(c.try_exec(id, cmd));
    return ns_since(start) / count;
}

// The floor: the client's exec request, byte for byte, on one kept-alive connection to the
// sandbox's endpoint, the reply read whole and nothing classified.
class bare_beast {
public:
    bare_beast(client& c, const std::string& id, asio::io_context& io) : socket_(io) {
        const auto endpoint = c.endpoint(id);
        const std::string& text = endpoint.endpoint;
        const auto colon = text.find(':');
        const auto slash = text.find('/');
        const std::string host = text.substr(0, colon);
        const auto port = static_cast<unsigned short>(std::stoi(text.substr(colon + 1, slash - colon - 1)));
        socket_.connect({asio::ip::make_address(host), port});
        socket_.set_option(asio::ip::tcp::no_delay(true));
        req_ = {http::verb::post, (slash == std::string::npos ? "" : text.substr(slash)) + "/command", 11};
        req_.set(http::field::host, host + ":" + std::to_string(port));
        for (const auto& [name, value] : endpoint.headers) req_.set(name, value);
        req_.set(http::field::content_type, "application/json");
        req_.set(http::field::accept, "text/event-stream");
        req_.body() = R"({"command":"echo 1","background":false})";
        req_.prepare_payload();
    }

    // Blocking reads: the thread sleeps in recv.
    double per_exec(int rounds) {
        const auto start = clock_type::now();
        for (int i = 0; i < rounds; ++i) {
            http::write(socket_, req_);
            http::response<http::string_body> res;
            http::read(socket_, buffer_, res);
        }
        return ns_since(start) / rounds;
    }

    // Asynchronous reads on the socket's io_context, as the client's asynchronous face does:
    // the same reactor, so what is left between the two is the client's own work.
    double per_exec_async(asio::io_context& io, int rounds) {
        const auto start = clock_type::now();
        asio::co_spawn(io, [&]() -> asio::awaitable<void> {
            for (int i = 0; i < rounds; ++i) {
                co_await http::async_write(socket_, req_, asio::use_awaitable);
                http::response<http::string_body> res;
                co_await http::async_read(socket_, buffer_, res, asio::use_awaitable);
            }
        }, asio::detached);
        io.restart();
        io.run();
        return ns_since(start) / rounds;
    }

private:
    asio::ip::tcp::socket socket_;
    http::request<http::string_body> req_;
    boost::beast::flat_buffer buffer_;
};

// Each block's time per exec as a repetition of its own: the report pairs a subject's
// blocks with its baseline's in order, and judges the median ratio and its spread.
void add_blocks(json::array& results, const std::string& name, const std::vector<double>& blocks) {
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        json::object run = entry(name, blocks[i]);
        run["repetition_index"] = i;
        results.push_back(std::move(run));
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::cerr << "usage: client_benchmark HOST:PORT API_KEY ROUNDS PARALLEL\n";
        return 2;
    }
    const std::string where = argv[1];
    const server_address server{where.substr(0, where.rfind(':')),
                                static_cast<unsigned short>(std::stoi(where.substr(where.rfind(':') + 1)))};
    const std::string key = argv[2];
    const int rounds = std::stoi(argv[3]);
    const int parallel = std::stoi(argv[4]);
    const ngfail::opensandbox::client_options options{.host = server.host, .port = server.port, .api_key = key};

    client blocking(options);
    const std::string id = blocking.create({}).id;
    asio::io_context io(1);
    client c(io.get_executor(), options);
#ifdef NGFAIL_BENCHMARK_OTEL
    // The same client instrumented: an OpenTelemetry SDK whose exporters drop what they get
    // (the cost is recording, batching and aggregating, not the network).
    dropping_telemetry telemetry;
    ngfail::opensandbox::client_options traced_options = options;
    traced_options.observer = ngfail::otel::instrument_client(telemetry.options());
    client traced(io.get_executor(), traced_options);
    ngfail::opensandbox::client_options least_options = options;
    least_options.observer = telemetry.least_observer();
    client least(io.get_executor(), least_options);
#endif
    const command echo{.command = "echo 1"};
    json::array results;

    // One at a time, each awaited before the next.
    int failed = 0;
    // In alternating blocks, so that the machine's noise falls on both alike. The peer starts
    // (and warms up) first, so that our warm-up, not our first block, follows its start.
    std::optional<peer_benchmark> peer;
    if (const char* program = std::getenv("NGFAIL_PEER_BENCHMARK"); program != nullptr && *program != 0) {
        peer.emplace(std::vector<std::string>{program, argv[1], argv[2], argv[3], argv[4], "--paced"});
    }
    bare_beast floor(blocking, id, io);
    (void)one_at_a_time(io, c, id, echo, 50, failed);  // warm up
    (void)floor.per_exec(50);
    (void)floor.per_exec_async(io, 50);
    std::vector<double> client_blocks, client_blocking_blocks, floor_blocks, blocking_floor_blocks, server_cpu_blocks,
        traced_blocks, least_blocks;
#ifdef NGFAIL_BENCHMARK_OTEL
    (void)one_at_a_time(io, traced, id, echo, 50, failed);  // warm up
    (void)one_at_a_time(io, least, id, echo, 50, failed);
#endif
    const int block_rounds = std::max(1, rounds / 10);
    const std::optional<std::string> server_process = server_pid();
    (void)one_at_a_time_blocking(blocking, id, echo, 50, failed);
    phase = "one at a time";
    for (int block = 0; block < 10; ++block) {
#ifdef NGFAIL_BENCHMARK_OTEL
        // The instrumented client and the SDK's least right before the plain one in every other
        // block, right after it in the rest, their own order swapped too: they are compared,
        // and none always follows the same neighbour.
        const auto traced_ones = [&] {
            if (block % 4 < 2) traced_blocks.push_back(one_at_a_time(io, traced, id, echo, block_rounds, failed));
            least_blocks.push_back(one_at_a_time(io, least, id, echo, block_rounds, failed));
            if (block % 4 >= 2) traced_blocks.push_back(one_at_a_time(io, traced, id, echo, block_rounds, failed));
        };
        if (block % 2 == 1) traced_ones();
#endif
        const double server_cpu_before = server_process ? cpu_ns_of(*server_process) : 0;
        client_blocks.push_back(one_at_a_time(io, c, id, echo, block_rounds, failed));
        if (server_process) server_cpu_blocks.push_back((cpu_ns_of(*server_process) - server_cpu_before) / block_rounds);
#ifdef NGFAIL_BENCHMARK_OTEL
        if (block % 2 == 0) traced_ones();
#endif
        client_blocking_blocks.push_back(one_at_a_time_blocking(blocking, id, echo, block_rounds, failed));
        floor_blocks.push_back(floor.per_exec_async(io, block_rounds));
        blocking_floor_blocks.push_back(floor.per_exec(block_rounds));
        if (peer) {
            peer->block();
            // Our first execs after its block paid for waking from its wait (our next block ran
            // 60 us an exec against 53 us without the peer): warmed up again, as before block 0.
            (void)one_at_a_time(io, c, id, echo, 50, failed);
        }
    }
    if (peer) {
        for (json::value& run : peer->finish()) results.push_back(std::move(run));
    }
    add_blocks(results, "client_exec_one_at_a_time", client_blocks);
    add_blocks(results, "client_blocking_exec_one_at_a_time", client_blocking_blocks);
    add_blocks(results, "floor_exec_one_at_a_time", floor_blocks);
    add_blocks(results, "blocking_floor_exec_one_at_a_time", blocking_floor_blocks);
    if (server_process) add_blocks(results, "server_cpu_per_exec_one_at_a_time", server_cpu_blocks);
    if (!traced_blocks.empty()) add_blocks(results, "client_instrumented_exec_one_at_a_time", traced_blocks);
    if (!least_blocks.empty()) add_blocks(results, "client_sdk_least_exec_one_at_a_time", least_blocks);

    phase = "at once";
    // `parallel` at once (as many workers); the threads the process has meanwhile.
    const std::size_t threads_before = threads();
    std::size_t most_threads = threads_before;
    const double at_once = run_workers(io, c, id, echo, std::max(rounds, parallel), parallel,
                                       [&](const auto& r) {
                                           failed += unexpected(r);
                                           most_threads = std::max(most_threads, threads());
                                       });
    results.push_back(entry("client_exec_" + std::to_string(parallel) + "_at_once", at_once));
    results.push_back(entry("client_threads_added", static_cast<double>(most_threads - threads_before)));

    phase = "1-second commands";
    // A 1-second command, streamed and detached (started in the background, its status and
    // logs read until it ends), in alternating pairs through the blocking face.
    std::vector<double> streamed_blocks, detached_blocks;
    const command second{.command = "sleep 1; echo done"};
    command second_detached = second;
    second_detached.detached = true;
    for (int pair = 0; pair < (rounds >= 100 ? 5 : 1); ++pair) {
        streamed_blocks.push_back(one_at_a_time_blocking(blocking, id, second, 1, failed));
        detached_blocks.push_back(one_at_a_time_blocking(blocking, id, second_detached, 1, failed));
    }
    add_blocks(results, "client_exec_1s_command_streamed", streamed_blocks);
    add_blocks(results, "client_exec_1s_command_detached", detached_blocks);

    phase = "in flight";
    // Memory: 1,024 execs that each stay in flight for a second: the peak of the bytes
    // allocated, and resident memory sampled beside it.
    constexpr int in_flight = 1024;
    const std::size_t idle_bytes = allocated::live.load();
    allocated::peak.store(idle_bytes);
    const std::size_t idle = rss_kib();
    std::size_t peak = idle;
    asio::steady_timer sampler(io);
    bool sampling = true;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
        while (sampling) {
            peak = std::max(peak, rss_kib());
            sampler.expires_after(std::chrono::milliseconds(20));
            co_await sampler.async_wait(asio::use_awaitable);
        }
    }, asio::detached);
    const command sleeper{.command = "sleep 1"};
    int finished = 0;
    for (int i = 0; i < in_flight; ++i) {
        asio::co_spawn(io, [&]() -> asio::awaitable<void> {
            failed += unexpected(co_await c.async_exec(id, sleeper));
            if (++finished == in_flight) sampling = false;
        }, asio::detached);
    }
    io.restart();
    io.run();
    results.push_back(entry("client_kib_per_exec_in_flight",
                            static_cast<double>(allocated::peak.load() - idle_bytes) / 1024 / in_flight));
    results.push_back(entry("client_rss_kib_per_exec_in_flight", static_cast<double>(peak - idle) / in_flight));

    phase = "faulted";
    // 5% of the execs faulted: each outcome a success or the injected 503, classified.
    const int faulted_runs = std::max(rounds, parallel);
    const int injected = faulted_runs / 20;
    post(server, "/_ngfail/faults", key,
         R"({"operation":"exec","action":"http_error","status":503,"code":"UNAVAILABLE","message":"busy","times":)" +
             std::to_string(injected) + "}");
    int succeeded = 0, classified = 0;
    const double with_faults = run_workers(io, c, id, echo, faulted_runs, parallel, [&](const auto& r) {
        if (r) {
            ++succeeded;
        } else if (r.error().code() == ngfail::kind::provider_unavailable) {
            ++classified;
        }
    });
    results.push_back(entry("client_exec_" + std::to_string(parallel) + "_at_once_with_5pct_faults", with_faults));
    results.push_back(entry("client_faults_unaccounted",
                            static_cast<double>(std::abs(classified - injected) + (faulted_runs - succeeded - classified))));
    std::cerr << "client: " << failed << " unexpected failures; faults " << classified << " classified of " << injected
              << " injected\n";
    blocking.kill(id);
    std::cout << json::serialize(json::object{{"benchmarks", std::move(results)}}) << '\n';
    return failed == 0 ? 0 : 1;
}
