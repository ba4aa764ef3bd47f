#include <ngfail/kind.hpp>
#include <ngfail/kind_extension.hpp>

#include <boost/system/error_code.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

// An extension vocabulary, defined the way a user defines one.
namespace swe {
enum class failure { patch_failed = 1, tests_failed };
}  // namespace swe
NGFAIL_KIND_EXTENSION(swe, failure, "swe", "patch_failed", "tests_failed");

namespace {

using ngfail::domain;
using ngfail::kind;

// SPEC §3.1, written out independently of the library's own table.
const std::map<std::string, std::string> spec_domains{
    {"transport_unreachable", "transport"},    {"transport_peer_drop", "transport"},
    {"transport_timeout", "transport"},        {"transport_local_resource", "transport"},
    {"agent_run_error", "agent"},              {"agent_request_failed", "agent"},
    {"agent_timeout", "agent"},                {"agent_command_not_allowed", "agent"},
    {"agent_no_generation", "agent"},          {"environment_server_failed", "environment"},
    {"protocol_violation", "environment"},     {"judge_failed", "verifier"},
    {"judge_unparseable", "verifier"},         {"verifier_error", "verifier"},
    {"provider_unavailable", "provider"},      {"provider_quota_exhausted", "provider"},
    {"provider_oom_killed", "provider"},       {"provider_credentials_rejected", "provider"},
    {"provider_request_rejected", "provider"}, {"provider_state_conflict", "provider"},
    {"provider_sandbox_lost", "provider"},     {"provider_start_failed", "provider"},
    {"provider_command_terminated", "provider"}, {"session_lost", "session"},
    {"session_expired", "session"},            {"session_release_failed", "session"},
    {"cancelled", "lifecycle"},                {"kill_shaped", "lifecycle"},
    {"shutdown", "lifecycle"},                 {"persistence_failed", "persistence"},
    {"cohort_incomplete", "persistence"},      {"undetermined", ""},
};

// Collects warnings for the duration of a test.
class captured_warnings {
public:
    captured_warnings() {
        previous_ = ngfail::set_warning_sink([this](std::string_view line) { lines_.emplace_back(line); });
    }
    ~captured_warnings() { ngfail::set_warning_sink(previous_); }
    captured_warnings(const captured_warnings&) = delete;
    captured_warnings& operator=(const captured_warnings&) = delete;

    [[nodiscard]] const std::vector<std::string>& lines() const { return lines_; }

private:
    ngfail::warning_sink previous_;
    std::vector<std::string> lines_;
};

// ---- the core vocabulary ---------------------------------------------------------------

TEST(kind, vocabulary_is_exactly_the_spec_table) {
    std::set<std::string> names;
    for (const kind k : ngfail::all_kinds()) names.emplace(ngfail::name(k));
    std::set<std::string> expected;
    for (const auto& [n, d] : spec_domains) expected.insert(n);
    EXPECT_EQ(names, expected);
    EXPECT_EQ(ngfail::all_kinds().size(), spec_domains.size()) << "a name appears twice";
}

TEST(kind, every_core_name_round_trips) {
    for (const kind k : ngfail::all_kinds()) {
        const auto n = ngfail::name(k);
        EXPECT_EQ(ngfail::parse_kind(n), k) << n;
        EXPECT_EQ(ngfail::kind_from_name(n), ngfail::make_error_code(k)) << n;
        EXPECT_EQ(ngfail::kind_name(k), n);
    }
}

TEST(kind, names_match_the_name_pattern) {
    const std::regex pattern("[a-z][a-z0-9_]*");
    for (const kind k : ngfail::all_kinds()) {
        EXPECT_TRUE(std::regex_match(std::string(ngfail::name(k)), pattern)) << ngfail::name(k);
    }
}

TEST(kind, enumerator_spelling_is_the_wire_name) {
    EXPECT_EQ(ngfail::name(kind::transport_unreachable), "transport_unreachable");
    EXPECT_EQ(ngfail::name(kind::provider_oom_killed), "provider_oom_killed");
    EXPECT_EQ(ngfail::name(kind::cohort_incomplete), "cohort_incomplete");
    EXPECT_EQ(ngfail::name(kind::undetermined), "undetermined");
}

TEST(kind, each_kind_belongs_to_its_spec_domain) {
    for (const kind k : ngfail::all_kinds()) {
        const auto expected = spec_domains.at(std::string(ngfail::name(k)));
        const auto actual = ngfail::domain_of(k);
        EXPECT_EQ(actual ? std::string(ngfail::name(*actual)) : std::string(), expected) << ngfail::name(k);
    }
}

TEST(kind, kind_compares_equal_to_its_domain_and_no_other) {
    for (const kind k : ngfail::all_kinds()) {
        const std::error_code ec = k;
        for (int d = 1; d <= 8; ++d) {
            const auto dom = static_cast<domain>(d);
            EXPECT_EQ(ec == dom, ngfail::domain_of(k) == dom) << ngfail::name(k) << " vs " << ngfail::name(dom);
        }
    }
}

TEST(kind, undetermined_belongs_to_no_domain) {
    EXPECT_EQ(ngfail::domain_of(kind::undetermined), std::nullopt);
    const std::error_code ec = kind::undetermined;
    for (int d = 1; d <= 8; ++d) EXPECT_NE(ec, static_cast<domain>(d));
}

TEST(kind, value_zero_is_not_a_failure) {
    const std::error_code ec = kind{};
    EXPECT_FALSE(ec);
    EXPECT_FALSE(ngfail::is_kind(ec));
    EXPECT_EQ(ngfail::kind_name(ec), "");
    EXPECT_EQ(ngfail::name(kind{}), "");
}

TEST(kind, categories_have_their_spec_names) {
    EXPECT_STREQ(ngfail::kind_category().name(), "ngfail.kind");
    EXPECT_STREQ(ngfail::domain_category().name(), "ngfail.domain");
    EXPECT_EQ(&ngfail::make_error_code(kind::shutdown).category(), &ngfail::kind_category());
}

TEST(kind, message_is_a_distinct_description_per_kind) {
    std::set<std::string> messages;
    for (const kind k : ngfail::all_kinds()) {
        const std::error_code ec = k;
        EXPECT_EQ(ec.message(), ngfail::description(k));
        EXPECT_FALSE(ec.message().empty());
        messages.insert(ec.message());
    }
    EXPECT_EQ(messages.size(), ngfail::all_kinds().size());
}

TEST(kind, is_error_code_enum_and_adl_make_error_code) {
    static_assert(std::is_error_code_enum_v<kind>);
    static_assert(std::is_error_condition_enum_v<domain>);
    const std::error_code ec = make_error_code(kind::cancelled);  // found by ADL
    EXPECT_EQ(ec, kind::cancelled);
    EXPECT_EQ(ec, domain::lifecycle);
}

TEST(kind, codes_of_other_categories_are_not_kinds) {
    const auto errno_code = std::make_error_code(std::errc::connection_refused);
    EXPECT_FALSE(ngfail::is_kind(errno_code));
    EXPECT_EQ(ngfail::kind_name(errno_code), "");
    EXPECT_NE(errno_code, domain::transport);
}

TEST(kind, parse_kind_rejects_what_is_not_core) {
    EXPECT_EQ(ngfail::parse_kind(""), std::nullopt);
    EXPECT_EQ(ngfail::parse_kind("Provider_oom_killed"), std::nullopt);
    EXPECT_EQ(ngfail::parse_kind("provider_oom_killed\n"), std::nullopt);
    EXPECT_EQ(ngfail::parse_kind("swe:patch_failed"), std::nullopt);
}

// Names are looked up among the names of their own length: a name one byte longer, shorter or
// different anywhere must not be taken for a kind it is not.
TEST(kind, parse_kind_reads_a_name_only_when_every_byte_matches) {
    for (const kind k : ngfail::all_kinds()) {
        const std::string n(ngfail::name(k));
        EXPECT_EQ(ngfail::parse_kind(n + "_"), std::nullopt) << n;
        EXPECT_EQ(ngfail::parse_kind(std::string_view(n).substr(0, n.size() - 1)), std::nullopt) << n;
        for (std::size_t at = 0; at < n.size(); ++at) {
            std::string changed = n;
            changed[at] = changed[at] == 'x' ? 'y' : 'x';
            const auto parsed = ngfail::parse_kind(changed);
            EXPECT_TRUE(!parsed || ngfail::name(*parsed) == changed) << changed;
        }
    }
    EXPECT_EQ(ngfail::parse_kind(std::string(200, 'a')), std::nullopt);
}

// ---- Boost.System interop -----------------------------------------------------------------

TEST(boost_interop, std_code_converts_to_boost_and_back_with_equality_kept) {
    const std::error_code ec = kind::provider_oom_killed;
    const boost::system::error_code bec = ec;
    EXPECT_TRUE(bec == ec);
    EXPECT_TRUE(bec == kind::provider_oom_killed);
    EXPECT_TRUE(bec == domain::provider);
    const std::error_code back = bec;
    EXPECT_EQ(back, ec);
    EXPECT_EQ(ngfail::kind_name(back), "provider_oom_killed");
}

TEST(boost_interop, boost_code_from_the_enum_compares_with_kind_and_domain) {
    const boost::system::error_code bec = kind::transport_timeout;
    EXPECT_TRUE(bec == kind::transport_timeout);
    EXPECT_FALSE(bec == kind::transport_peer_drop);
    EXPECT_TRUE(bec == domain::transport);
    EXPECT_FALSE(bec == domain::provider);
    EXPECT_EQ(std::error_code(bec), std::error_code(kind::transport_timeout));
}

// ---- stages, boundaries, delivery, domains ---------------------------------------------------

template <class Enum>
void expect_round_trip(std::initializer_list<std::pair<Enum, std::string_view>> spec,
                       std::optional<Enum> (*parse)(std::string_view) noexcept) {
    for (const auto& [value, text] : spec) {
        EXPECT_EQ(ngfail::name(value), text);
        EXPECT_EQ(parse(text), value) << text;
    }
    EXPECT_EQ(parse(""), std::nullopt);
    EXPECT_EQ(parse("nonsense"), std::nullopt);
}

TEST(vocabulary, stage_names_round_trip) {
    using ngfail::stage;
    expect_round_trip<stage>({{stage::admission, "admission"},
                              {stage::seed, "seed"},
                              {stage::agent, "agent"},
                              {stage::verification, "verification"},
                              {stage::cleanup, "cleanup"}},
                             ngfail::parse_stage);
}

TEST(vocabulary, boundary_names_round_trip) {
    using ngfail::boundary;
    expect_round_trip<boundary>({{boundary::model, "model"},
                                 {boundary::harness, "harness"},
                                 {boundary::agent, "agent"},
                                 {boundary::resources_server, "resources_server"},
                                 {boundary::environment, "environment"},
                                 {boundary::collection, "collection"}},
                                ngfail::parse_boundary);
}

TEST(vocabulary, delivery_names_round_trip) {
    using ngfail::delivery;
    expect_round_trip<delivery>({{delivery::not_sent, "not_sent"},
                                 {delivery::possibly_delivered, "possibly_delivered"},
                                 {delivery::delivered, "delivered"}},
                                ngfail::parse_delivery);
}

TEST(vocabulary, domain_names_round_trip) {
    expect_round_trip<domain>({{domain::transport, "transport"},
                               {domain::agent, "agent"},
                               {domain::environment, "environment"},
                               {domain::verifier, "verifier"},
                               {domain::provider, "provider"},
                               {domain::session, "session"},
                               {domain::lifecycle, "lifecycle"},
                               {domain::persistence, "persistence"}},
                              ngfail::parse_domain);
    EXPECT_EQ(std::error_condition(domain::provider).message(), "provider");
}

TEST(vocabulary, names_are_usable_at_compile_time) {
    static_assert(ngfail::name(ngfail::stage::seed) == "seed");
    static_assert(ngfail::parse_delivery("not_sent") == ngfail::delivery::not_sent);
    static_assert(!ngfail::parse_boundary("nowhere"));
}

// ---- extension kinds -------------------------------------------------------------------------

TEST(extension_kind, prints_as_namespace_colon_kind) {
    const std::error_code ec = swe::failure::patch_failed;
    EXPECT_EQ(ngfail::kind_name(ec), "swe:patch_failed");
    EXPECT_EQ(ngfail::kind_name(swe::failure::tests_failed), "swe:tests_failed");
    EXPECT_EQ(ec.message(), "swe:patch_failed");
    EXPECT_STREQ(ec.category().name(), "ngfail.kind.swe");
    EXPECT_TRUE(ngfail::is_kind(ec));
}

TEST(extension_kind, wire_name_round_trips_to_the_same_code) {
    const std::error_code ec = swe::failure::tests_failed;
    EXPECT_EQ(ngfail::kind_from_name("swe:tests_failed"), ec);
    EXPECT_EQ(ngfail::kind_from_name(ngfail::kind_name(ec)), ec);
}

TEST(extension_kind, compares_as_an_error_code) {
    const std::error_code ec = swe::failure::patch_failed;
    EXPECT_EQ(ec, swe::failure::patch_failed);
    EXPECT_NE(ec, swe::failure::tests_failed);
    EXPECT_NE(ec, std::error_code(kind::agent_run_error));
    for (int d = 1; d <= 8; ++d) EXPECT_NE(ec, static_cast<domain>(d));
}

TEST(extension_kind, unknown_name_in_a_registered_namespace_is_interned_not_confused) {
    const auto ec = ngfail::kind_from_name("swe:never_defined");
    EXPECT_NE(&ec.category(), &ngfail::extension_category<swe::failure>());
    EXPECT_EQ(ngfail::kind_name(ec), "swe:never_defined");
}

// ---- unknown kinds ---------------------------------------------------------------------------

TEST(unknown_kind, future_kind_is_kept_verbatim_and_equals_itself) {
    const auto first = ngfail::kind_from_name("future_kind");
    const auto again = ngfail::kind_from_name("future_kind");
    EXPECT_TRUE(first);
    EXPECT_TRUE(ngfail::is_kind(first));
    EXPECT_EQ(first, again);
    EXPECT_EQ(ngfail::kind_name(first), "future_kind");
    EXPECT_NE(first, ngfail::kind_from_name("future_kind_2"));
}

TEST(unknown_kind, unregistered_namespaced_name_is_kept_verbatim) {
    const auto ec = ngfail::kind_from_name("acme:thing");
    EXPECT_EQ(ngfail::kind_name(ec), "acme:thing");
    EXPECT_EQ(ec, ngfail::kind_from_name("acme:thing"));
    EXPECT_EQ(ngfail::kind_from_name(ngfail::kind_name(ec)), ec);
}

TEST(unknown_kind, malformed_names_are_kept_byte_for_byte) {
    for (const std::string_view raw : {std::string_view("Bad Name"), std::string_view("tab\there"),
                                       std::string_view("nul\0byte", 8), std::string_view(""),
                                       std::string_view("\xff\xfe")}) {
        EXPECT_EQ(ngfail::kind_name(ngfail::kind_from_name(raw)), raw);
    }
}

TEST(unknown_kind, an_empty_name_is_a_kind_too) {
    // Found by the classify fuzzer: an empty explicit kind must still be kept as a kind.
    const auto ec = ngfail::kind_from_name("");
    EXPECT_TRUE(ngfail::is_kind(ec));
    EXPECT_EQ(ngfail::kind_name(ec), "");
}

TEST(unknown_kind, unknown_kind_is_in_no_domain) {
    const auto ec = ngfail::kind_from_name("transport_something_new");
    for (int d = 1; d <= 8; ++d) EXPECT_NE(ec, static_cast<domain>(d));
}

TEST(unknown_kind, eight_threads_interning_the_same_names_get_identical_codes) {
    constexpr int threads = 8;
    constexpr int names = 1000;
    std::vector<std::vector<std::error_code>> seen(threads, std::vector<std::error_code>(names));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([t, &seen] {
            for (int i = 0; i < names; ++i) {
                // Each thread walks the names in its own order, so first insertions race.
                const int n = (i * 7 + t * 131) % names;
                seen[t][n] = ngfail::kind_from_name("threaded_kind_" + std::to_string(n));
            }
        });
    }
    for (auto& w : workers) w.join();
    for (int n = 0; n < names; ++n) {
        for (int t = 1; t < threads; ++t) ASSERT_EQ(seen[t][n], seen[0][n]) << "name " << n;
        EXPECT_EQ(ngfail::kind_name(seen[0][n]), "threaded_kind_" + std::to_string(n));
    }
    std::set<int> distinct;
    for (const auto& ec : seen[0]) distinct.insert(ec.value());
    EXPECT_EQ(distinct.size(), std::size_t{names});
}

// ---- validation ------------------------------------------------------------------------------

TEST(validate_kind_name, returns_every_name_unchanged) {
    captured_warnings warnings;
    for (const std::string_view n : {"provider_oom_killed", "swe:patch_failed", "future_kind", "", "A B"}) {
        EXPECT_EQ(ngfail::validate_kind_name(n), n);
        EXPECT_EQ(ngfail::validate_kind_name(n).data(), n.data()) << "returned a copy";
    }
}

TEST(validate_kind_name, good_names_do_not_warn) {
    captured_warnings warnings;
    ngfail::validate_kind_name("provider_oom_killed");
    ngfail::validate_kind_name("undetermined");
    ngfail::validate_kind_name("swe:patch_failed");
    ngfail::validate_kind_name("acme:thing");  // another server's extension
    EXPECT_THAT(warnings.lines(), testing::IsEmpty());
}

TEST(validate_kind_name, sink_fires_exactly_once_per_distinct_bad_name) {
    captured_warnings warnings;
    const std::vector<std::string> bad{"validate_once_unknown", "Validate Once", "swe:validate_once_missing",
                                       "a:b:c_validate_once", ":validate_once", "validate_once:"};
    for (int round = 0; round < 3; ++round) {
        for (const auto& n : bad) ngfail::validate_kind_name(n);
    }
    ASSERT_EQ(warnings.lines().size(), bad.size());
    for (std::size_t i = 0; i < bad.size(); ++i) {
        EXPECT_THAT(warnings.lines()[i], testing::HasSubstr("unknown failure kind")) << warnings.lines()[i];
    }
    EXPECT_THAT(warnings.lines()[0], testing::HasSubstr("\"validate_once_unknown\""));
}

TEST(validate_kind_name, warning_is_one_printable_line) {
    captured_warnings warnings;
    ngfail::validate_kind_name("evil\nkind\x1b[31m\"quoted\"");
    ASSERT_EQ(warnings.lines().size(), 1u);
    const auto& line = warnings.lines()[0];
    for (const char c : line) {
        EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << static_cast<int>(static_cast<unsigned char>(c));
    }
    EXPECT_THAT(line, testing::HasSubstr("evil\\x0akind\\x1b[31m\\x22quoted\\x22"));
}

TEST(validate_kind_name, set_warning_sink_returns_the_previous_sink) {
    int calls = 0;
    auto original = ngfail::set_warning_sink([&calls](std::string_view) { ++calls; });
    auto mine = ngfail::set_warning_sink(original);
    ASSERT_TRUE(mine);
    mine("x");
    EXPECT_EQ(calls, 1);
}

TEST(validate_kind_name, a_throwing_sink_does_not_escape) {
    auto previous = ngfail::set_warning_sink([](std::string_view) { throw std::runtime_error("sink"); });
    EXPECT_EQ(ngfail::validate_kind_name("throwing_sink_kind"), "throwing_sink_kind");
    ngfail::set_warning_sink(previous);
}

// The header teaches each kind with a one-line comment; `description` must say the same,
// so the two cannot drift.
TEST(kind, each_description_is_its_declarations_comment) {
    std::ifstream header(NGFAIL_INCLUDE_DIR "/ngfail/kind.hpp");
    ASSERT_TRUE(header) << "cannot read kind.hpp";
    const std::regex declaration(R"(^\s+(\w+)(?: = 1)?,\s+// (.*)$)");
    std::map<std::string, std::string> commented;
    bool in_enum = false;
    for (std::string line; std::getline(header, line);) {
        if (line.starts_with("enum class kind")) in_enum = true;
        if (in_enum && line.starts_with("};")) break;
        std::smatch m;
        if (in_enum && std::regex_match(line, m, declaration)) commented[m[1]] = m[2];
    }
    ASSERT_EQ(commented.size(), ngfail::all_kinds().size());
    for (const ngfail::kind k : ngfail::all_kinds()) {
        EXPECT_EQ(commented[std::string(ngfail::name(k))], ngfail::description(k)) << ngfail::name(k);
    }
}

}  // namespace
