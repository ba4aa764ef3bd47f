// Every limit of SPEC §12 where wire input enters the core: at the limit, accepted; one
// past it, a protocol_violation that names it.
#include <ngfail/json.hpp>
#include <ngfail/transport.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using ngfail::kind;
using testing::HasSubstr;

constexpr std::string_view empty_report = R"({"events":{}})";

// A valid report of exactly `size` bytes (JSON allows trailing white space).
std::string report_of_size(std::size_t size) {
    std::string text(empty_report);
    text.append(size - text.size(), ' ');
    return text;
}

// A report whose unknown field nests `depth` levels in all.
std::string report_nested(std::size_t depth) {
    return R"({"events":{},"x":)" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
}

std::string report_with_string(std::size_t bytes) {
    return R"({"events":{},"x":")" + std::string(bytes, 's') + "\"}";
}

void expect_violation(const ngfail::result<ngfail::failure_report>& r, std::string_view says) {
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation);
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr(says));
}

TEST(limits, json_document_size) {
    const ngfail::limits lim{.max_json_bytes = 100};
    EXPECT_TRUE(ngfail::report_from_json(report_of_size(100), lim));
    expect_violation(ngfail::report_from_json(report_of_size(101), lim), "101 bytes; the limit is 100");
}

TEST(limits, json_depth) {
    EXPECT_TRUE(ngfail::report_from_json(report_nested(16)));
    expect_violation(ngfail::report_from_json(report_nested(17)), "nests deeper than 16 levels");
    const ngfail::limits shallow{.max_json_depth = 4};
    EXPECT_TRUE(ngfail::report_from_json(report_nested(4), shallow));
    expect_violation(ngfail::report_from_json(report_nested(5), shallow), "nests deeper than 4 levels");
}

TEST(limits, json_string_length) {
    EXPECT_TRUE(ngfail::report_from_json(report_with_string(4096)));
    expect_violation(ngfail::report_from_json(report_with_string(4097)), "longer than 4096 bytes");
}

TEST(limits, header_size) {
    EXPECT_TRUE(ngfail::decode_header(report_of_size(4096)));
    expect_violation(ngfail::decode_header(report_of_size(4097)), "4097 bytes; the limit is 4096");
}

TEST(limits, header_output_never_exceeds_the_limit) {
    ngfail::failure_report big;
    for (int i = 0; i < 64; ++i) {
        const auto id = ngfail::event_id::generate();
        big.events.emplace(id, ngfail::event_record{.id = id, .kind = "cancelled", .reason = std::string(2000, 'r')});
    }
    for (const std::size_t cap : {256u, 1000u, 8192u, 20000u}) {
        EXPECT_LE(ngfail::encode_header(big, {.max_header_bytes = cap}).size(), cap) << cap;
    }
}

TEST(limits, sse_report_data) {
    const ngfail::limits lim{.max_json_bytes = 200};
    const auto stream = [](const std::string& data) { return "event: ng-failure-report\ndata: " + data + "\n\n"; };
    ngfail::sse_report_reader at(lim);
    at.relay(stream(report_of_size(200)));
    ASSERT_TRUE(at.report());
    EXPECT_TRUE(*at.report());
    ngfail::sse_report_reader past(lim);
    past.relay(stream(report_of_size(201)));
    ASSERT_TRUE(past.report());
    expect_violation(*past.report(), "over 200 bytes");
}

TEST(limits, rollout_row_reports_are_validated_with_the_same_limits) {
    boost::json::object row;
    boost::json::object events;
    for (int i = 0; i < 65; ++i) {
        const auto id = ngfail::to_string(ngfail::event_id::generate());
        events[id] = boost::json::object{{"event_id", id}, {"failure_kind", "cancelled"}};
    }
    row["_ng_failure_events"] = events;
    expect_violation(ngfail::rollout_report(row), "65 events; the limit is 64");
    events.erase(events.begin());
    row["_ng_failure_events"] = events;
    EXPECT_TRUE(ngfail::rollout_report(row));
}

}  // namespace
