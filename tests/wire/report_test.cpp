#include <ngfail/report.hpp>
#include <ngfail/sandbox.hpp>

#include "wire/report_links.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace {

using ngfail::kind;
using testing::HasSubstr;

// sandbox_failure ← failure_event ← std::runtime_error, thrown the standard way.
std::exception_ptr three_level_chain() {
    try {
        try {
            try {
                throw std::runtime_error("sdk: connection reset");
            } catch (...) {
                std::throw_with_nested(ngfail::failure_event(kind::transport_peer_drop, "stream dropped"));
            }
        } catch (...) {
            std::throw_with_nested(ngfail::sandbox_failure(
                {.operation = "exec", .kind = kind::agent_run_error, .boundary = ngfail::boundary::resources_server}));
        }
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

ngfail::event_record record(ngfail::event_id id, std::optional<ngfail::event_id> cause = {}) {
    return {.id = id, .kind = "cancelled", .code = kind::cancelled, .reason = "r", .cause_id = cause};
}

// A report of one record, changed by `change`.
template <class Change>
ngfail::failure_report report_with_one(Change change) {
    ngfail::failure_report r;
    const auto id = ngfail::event_id::generate();
    auto rec = record(id);
    change(rec);
    r.events.emplace(id, rec);
    return r;
}

std::string violation_reason(const ngfail::failure_report& r, const ngfail::limits& lim = {}) {
    const auto checked = ngfail::validate(r, lim);
    EXPECT_TRUE(checked.has_error());
    if (!checked.has_error()) return {};
    EXPECT_EQ(checked.error().code(), kind::protocol_violation);
    return std::string(checked.error().reason());
}

// ---- report_for ------------------------------------------------------------------------------

TEST(report_for, makes_one_linked_record_per_level) {
    const auto chain = three_level_chain();
    const auto report = ngfail::report_for(chain);
    ASSERT_EQ(report.events.size(), 3u);
    const auto levels = ngfail::cause_chain(chain);
    ASSERT_TRUE(report.failure_id);
    const auto& outer = report.events.at(*report.failure_id);
    EXPECT_EQ(outer.kind, "agent_run_error");
    EXPECT_EQ(outer.boundary, ngfail::boundary::resources_server);
    EXPECT_EQ(outer.id, levels[0].id());
    const auto& middle = report.events.at(*outer.cause_id);
    EXPECT_EQ(middle.kind, "transport_peer_drop");
    EXPECT_EQ(middle.id, levels[1].id());
    const auto& root = report.events.at(*middle.cause_id);
    EXPECT_EQ(std::get<ngfail::sdk_error_details>(root.details).error_type, "std::runtime_error");
    EXPECT_FALSE(root.cause_id);
    EXPECT_TRUE(ngfail::validate(report));
}

TEST(report_for, a_kind_only_level_gets_an_id) {
    const ngfail::failure f{ngfail::event_info{.kind = kind::agent_timeout, .reason = "r", .cause = kind::transport_timeout}};
    const auto report = ngfail::report_for(f);
    ASSERT_EQ(report.events.size(), 2u);
    for (const auto& [id, rec] : report.events) EXPECT_FALSE(id.is_nil());
    EXPECT_TRUE(ngfail::validate(report));
}

TEST(report_for, no_failure_is_the_success_report) {
    EXPECT_EQ(ngfail::report_for(std::exception_ptr{}), ngfail::failure_report{});
    EXPECT_EQ(ngfail::report_for(ngfail::failure{}), ngfail::failure_report{});
}

TEST(merge, adds_observed_events_without_changing_failure_id) {
    auto report = ngfail::report_for(three_level_chain());
    const auto own = report.failure_id;
    const auto observed = ngfail::report_for(ngfail::failure{ngfail::event_info{.kind = kind::transport_timeout,
                                                                                .reason = "attempt 1"}});
    ASSERT_TRUE(ngfail::merge(report, observed));
    EXPECT_EQ(report.failure_id, own);
    EXPECT_EQ(report.events.size(), 4u);
    EXPECT_TRUE(report.events.contains(*observed.failure_id));
    ASSERT_TRUE(ngfail::merge(report, observed));
    EXPECT_EQ(report.events.size(), 4u) << "merging twice adds nothing";
}

TEST(merge, a_twin_id_with_a_different_record_is_a_protocol_violation_and_changes_nothing) {
    const auto id = ngfail::event_id::generate();
    ngfail::failure_report report;
    report.events.emplace(id, record(id));
    ngfail::failure_report other;
    auto twin = record(id);
    twin.reason = "another failure that drew the same id";
    other.events.emplace(id, twin);
    const auto other_id = ngfail::event_id::generate();
    other.events.emplace(other_id, record(other_id));
    const auto before = report;
    const auto merged = ngfail::merge(report, other);
    ASSERT_FALSE(merged);
    EXPECT_EQ(merged.error().code(), kind::protocol_violation);
    EXPECT_THAT(std::string(merged.error().reason()), HasSubstr(ngfail::to_string(id)));
    EXPECT_EQ(report, before) << "nothing is overwritten or half-merged";
}

TEST(merge, the_same_event_twice_is_not_a_collision) {
    const auto id = ngfail::event_id::generate();
    ngfail::failure_report report;
    report.events.emplace(id, record(id));
    EXPECT_TRUE(ngfail::merge(report, report));
}

// ---- validate ---------------------------------------------------------------------------------

TEST(validate, rejects_a_key_that_differs_from_its_record_id) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    r.events.emplace(a, record(ngfail::event_id::generate()));
    EXPECT_THAT(violation_reason(r), HasSubstr("does not match its event_id"));
}

TEST(validate, rejects_a_dangling_cause_id) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    r.events.emplace(a, record(a, ngfail::event_id::generate()));
    EXPECT_THAT(violation_reason(r), HasSubstr("is not in the report"));
    EXPECT_THAT(violation_reason(r), HasSubstr("cause_id"));
}

TEST(validate, rejects_a_cycle) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    const auto b = ngfail::event_id::generate();
    r.events.emplace(a, record(a, b));
    r.events.emplace(b, record(b, a));
    EXPECT_THAT(violation_reason(r), HasSubstr("has a cycle"));
}

TEST(validate, rejects_a_cycle_that_a_chain_leads_into) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    const auto b = ngfail::event_id::generate();
    const auto c = ngfail::event_id::generate();
    r.events.emplace(a, record(a, b));  // a → b → c → b
    r.events.emplace(b, record(b, c));
    r.events.emplace(c, record(c, b));
    EXPECT_THAT(violation_reason(r), HasSubstr("has a cycle"));
    const auto cut = ngfail::truncate_to_limits(r);
    EXPECT_TRUE(ngfail::validate(cut)) << ngfail::validate(cut).error().reason();
    EXPECT_EQ(cut.events.size(), 3u);
}

TEST(validate, rejects_a_self_cycle) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    r.events.emplace(a, record(a, a));
    EXPECT_THAT(violation_reason(r), HasSubstr("is its own cause"));
}

TEST(validate, rejects_a_failure_id_without_its_event) {
    ngfail::failure_report r{.failure_id = ngfail::event_id::generate()};
    EXPECT_THAT(violation_reason(r), HasSubstr("failure_id"));
}

TEST(validate, enforces_every_limit) {
    const ngfail::limits lim;
    std::set<std::string> reasons;
    {
        ngfail::failure_report r;
        for (std::size_t i = 0; i <= lim.max_events; ++i) {
            const auto id = ngfail::event_id::generate();
            r.events.emplace(id, record(id));
        }
        reasons.insert(violation_reason(r));
        EXPECT_THAT(*reasons.rbegin(), HasSubstr("65 events; the limit is 64"));
    }
    {
        ngfail::failure_report r;
        std::optional<ngfail::event_id> cause;
        for (std::size_t i = 0; i <= lim.max_chain_depth; ++i) {
            const auto id = ngfail::event_id::generate();
            r.events.emplace(id, record(id, cause));
            cause = id;
        }
        const auto why = violation_reason(r);
        EXPECT_THAT(why, HasSubstr("33 levels; the limit is 32"));
        reasons.insert(why);
    }
    const auto with_one = [](auto change) { return report_with_one(change); };
    const auto long_reason = violation_reason(with_one([&](auto& rec) { rec.reason.assign(2001, 'r'); }));
    EXPECT_THAT(long_reason, HasSubstr("failure_reason is 2001 bytes; the limit is 2000"));
    const auto long_kind = violation_reason(with_one([&](auto& rec) { rec.kind.assign(4097, 'k'); }));
    EXPECT_THAT(long_kind, HasSubstr("failure_kind is 4097 bytes"));
    const auto long_detail = violation_reason(with_one([&](auto& rec) {
        rec.details = ngfail::sandbox_details{.operation = "exec", .sandbox_id = std::string(4097, 's')};
    }));
    EXPECT_THAT(long_detail, HasSubstr("details.sandbox_id is 4097 bytes"));
    reasons.insert({long_reason, long_kind, long_detail});
    EXPECT_EQ(reasons.size(), 5u) << "each limit has its own message";
}

TEST(validate, holds_exactly_at_the_limits) {
    ngfail::failure_report r;
    std::optional<ngfail::event_id> cause;
    for (int i = 0; i < 32; ++i) {
        const auto id = ngfail::event_id::generate();
        auto rec = record(id, cause);
        rec.reason.assign(2000, 'r');
        rec.kind.assign(4096, 'k');
        r.events.emplace(id, rec);
        cause = id;
    }
    for (int i = 0; i < 32; ++i) {
        const auto id = ngfail::event_id::generate();
        r.events.emplace(id, record(id));
    }
    EXPECT_TRUE(ngfail::validate(r));
}

TEST(validate, rejects_the_nil_id) {
    ngfail::failure_report r;
    r.events.emplace(ngfail::event_id{}, record(ngfail::event_id{}));
    EXPECT_THAT(violation_reason(r), HasSubstr("nil UUID"));
}

TEST(validate, applies_the_same_number_ranges_as_the_json_reader) {
    const auto one = [](auto change) { return report_with_one(change); };
    EXPECT_THAT(violation_reason(one([](auto& r) { r.http_status = -1; })), HasSubstr("http_status is -1"));
    EXPECT_THAT(violation_reason(one([](auto& r) { r.http_status = 1000; })), HasSubstr("http_status is 1000"));
    EXPECT_THAT(violation_reason(one([](auto& r) {
                    r.details = ngfail::sandbox_details{.operation = "create", .retry_after = std::chrono::seconds(-1)};
                })),
                HasSubstr("details.retry_after_s is -1"));
    EXPECT_THAT(violation_reason(one([](auto& r) { r.details = ngfail::model_details{.attempt = -2}; })),
                HasSubstr("details.attempt is -2"));
    EXPECT_TRUE(ngfail::validate(one([](auto& r) { r.http_status = 0; })));
}

// ---- truncate_to_limits: what every writer sends ----------------------------------------------

TEST(truncate_to_limits, makes_every_report_valid_and_counts_what_it_dropped) {
    ngfail::failure_report r;
    std::optional<ngfail::event_id> cause;
    for (int i = 0; i < 40; ++i) {  // a 40-level chain
        const auto id = ngfail::event_id::generate();
        r.events.emplace(id, record(id, cause));
        cause = id;
    }
    r.failure_id = cause;
    for (int i = 0; i < 61; ++i) {  // 101 events in all
        const auto id = ngfail::event_id::generate();
        auto rec = record(id);
        rec.details = ngfail::sandbox_details{.operation = "exec", .sandbox_id = std::string(5000, 's')};
        rec.http_status = -1;
        r.events.emplace(id, rec);
    }
    ASSERT_FALSE(ngfail::validate(r));
    const auto cut = ngfail::truncate_to_limits(r);
    EXPECT_TRUE(ngfail::validate(cut)) << ngfail::validate(cut).error().reason();
    EXPECT_EQ(cut.failure_id, r.failure_id) << "the failure event is never dropped";
    EXPECT_EQ(cut.events.size(), 64u);
    EXPECT_EQ(cut.dropped_events, 101u - 64u);
    EXPECT_EQ(cut.events.size() + cut.dropped_events, r.events.size()) << "every dropped event is counted";
}

TEST(truncate_to_limits, opens_cycles_and_removes_dangling_links_and_restores_the_failure_record) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    const auto b = ngfail::event_id::generate();
    const auto c = ngfail::event_id::generate();
    r.events.emplace(a, record(a, b));
    r.events.emplace(b, record(b, a));
    r.events.emplace(c, record(c, ngfail::event_id::generate()));
    r.failure_id = ngfail::event_id::generate();
    const auto cut = ngfail::truncate_to_limits(r);
    EXPECT_TRUE(ngfail::validate(cut)) << ngfail::validate(cut).error().reason();
    EXPECT_EQ(cut.events.count(*r.failure_id), 1u);
    EXPECT_EQ(cut.events.at(*r.failure_id).code, kind::undetermined);
    EXPECT_EQ(cut.events.size(), 4u) << "nothing is dropped to open a cycle";
}

// encode_header cuts a report that is over only its event count without copying the events
// it drops (wire::detail::fitted_copy); what it keeps must be what truncate_to_limits keeps.
TEST(truncate_to_limits, a_report_over_only_its_count_is_cut_alike_without_copying_what_goes) {
    ngfail::failure_report r;
    std::optional<ngfail::event_id> cause;
    for (int i = 0; i < 5; ++i) {  // the failure's chain, 5 levels
        const auto id = ngfail::event_id::generate();
        r.events.emplace(id, record(id, cause));
        cause = id;
    }
    r.failure_id = cause;
    std::optional<ngfail::event_id> previous;
    for (int i = 0; i < 300; ++i) {  // observed events, in chains of three
        const auto id = ngfail::event_id::generate();
        r.events.emplace(id, record(id, i % 3 == 0 ? std::nullopt : previous));
        previous = id;
    }
    for (const std::size_t max : {1u, 3u, 5u, 6u, 64u, 304u, 305u, 400u}) {
        const ngfail::limits lim{.max_events = max};
        const auto fitted = ngfail::wire::detail::fitted_copy(r, lim);
        EXPECT_EQ(fitted, ngfail::truncate_to_limits(r, lim)) << max;
        EXPECT_TRUE(ngfail::validate(fitted, lim)) << max;
    }
}

TEST(truncate_to_limits, leaves_a_valid_report_as_it_is) {
    const auto report = ngfail::report_for(three_level_chain());
    EXPECT_EQ(ngfail::truncate_to_limits(report), report);
}

// ---- rebuild ---------------------------------------------------------------------------------

TEST(rebuild, gives_each_level_its_class_and_keeps_ids) {
    const auto original = three_level_chain();
    const auto report = ngfail::report_for(original);
    const auto rebuilt = ngfail::rebuild(report);
    ASSERT_TRUE(rebuilt);
    const auto levels = ngfail::cause_chain(rebuilt);
    ASSERT_EQ(levels.size(), 3u);
    auto expected = report.failure_id;
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(levels[i].id(), *expected) << "level " << i;
        expected = report.events.at(*expected).cause_id;
    }
    try {
        std::rethrow_exception(rebuilt);
    } catch (const ngfail::sandbox_failure& outer) {
        EXPECT_EQ(outer.sandbox().operation, "exec");
        try {
            std::rethrow_if_nested(outer);
        } catch (const ngfail::failure_event& middle) {
            EXPECT_EQ(middle.code(), kind::transport_peer_drop);
            try {
                std::rethrow_if_nested(middle);
            } catch (const ngfail::foreign_failure& root) {
                EXPECT_EQ(root.sdk_error().error_type, "std::runtime_error");
                EXPECT_EQ(root.cause(), nullptr) << "the original type cannot travel";
            }
        }
    }
    EXPECT_EQ(ngfail::report_for(rebuilt), report) << "a rebuilt chain reports the same";
}

TEST(rebuild, a_success_report_rebuilds_nothing) {
    EXPECT_EQ(ngfail::rebuild(ngfail::failure_report{}), nullptr);
    EXPECT_FALSE(ngfail::rebuild_failure(ngfail::failure_report{}));
}

TEST(rebuild, keeps_unknown_kinds_verbatim) {
    ngfail::failure_report r;
    const auto id = ngfail::event_id::generate();
    r.events.emplace(id, ngfail::event_record{.id = id, .kind = "future_kind", .reason = "from a newer peer"});
    r.failure_id = id;
    const auto f = ngfail::rebuild_failure(r);
    EXPECT_EQ(f.kind_name(), "future_kind");
    EXPECT_EQ(f.id(), id);
}

TEST(rebuild, dropped_events_travel_to_the_next_hop) {
    auto report = ngfail::report_for(three_level_chain());
    report.dropped_events = 3;
    EXPECT_EQ(ngfail::report_for(ngfail::rebuild(report)).dropped_events, 3u);
}

TEST(rebuild, a_kind_travels_verbatim_even_when_it_could_not_be_interned) {
    ngfail::failure_report r;
    const auto id = ngfail::event_id::generate();
    // A code that names another kind, as when the intern table overflowed: the text rules.
    r.events.emplace(id, ngfail::event_record{.id = id, .kind = "acme:gpu_fell_off_bus",
                                              .code = ngfail::kind_from_name("ngfail:unknown_kind_overflow")});
    r.failure_id = id;
    const auto again = ngfail::report_for(ngfail::rebuild(r));
    EXPECT_EQ(again.events.at(id).kind, "acme:gpu_fell_off_bus");
}

}  // namespace
