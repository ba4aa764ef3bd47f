// The envelope table: every member of an event record but its code has a row (else the wire
// does not compile), and each row reaches the writer, the reader, `validate` and truncation
// under its own name, limit and range.
#include "wire/envelope_schema.hpp"

#include <ngfail/json.hpp>
#include <ngfail/report.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace ngfail {
namespace {

using wire::detail::envelope_schema;
using wire::detail::for_each_envelope_field;

template <class Row>
using member_of = std::remove_cvref_t<decltype(std::declval<event_record&>().*std::declval<Row>().member)>;

const event_id outer_id = *parse_event_id("6f1c2a52-9f44-4a57-8f5e-0c1d2e3f4a5b");
const event_id inner_id = *parse_event_id("0d6a3b8e-2c41-4f7a-9a55-3e2d1c0b9a87");

// A report whose failure has every envelope member set, and a cause for its cause_id.
failure_report every_member_set() {
    failure_report r{.failure_id = outer_id};
    r.events.emplace(inner_id, event_record{.id = inner_id, .kind = "cancelled", .code = kind::cancelled});
    r.events.emplace(outer_id, event_record{.id = outer_id,
                                            .kind = "provider_oom_killed",
                                            .code = kind::provider_oom_killed,
                                            .reason = "exec ended",
                                            .boundary = boundary::resources_server,
                                            .stage = stage::agent,
                                            .http_status = 502,
                                            .cause_id = inner_id,
                                            .details = sandbox_details{.operation = "exec"}});
    return r;
}

TEST(envelope_schema, every_member_is_written_under_its_name_and_read_back) {
    const failure_report sent = every_member_set();
    ASSERT_TRUE(validate(sent));
    const std::string json = to_json(sent);
    for_each_envelope_field([&](const auto& row) {
        EXPECT_NE(json.find('"' + std::string(row.name) + "\":"), std::string::npos) << row.name;
    });
    const auto back = report_from_json(json);
    ASSERT_TRUE(back) << back.error().reason();
    EXPECT_EQ(back.value(), sent);
}

TEST(envelope_schema, the_reader_refuses_a_record_without_a_required_member_by_name) {
    const boost::json::value sent = boost::json::parse(to_json(every_member_set()));
    for_each_envelope_field([&](const auto& row) {
        boost::json::value without = sent;
        auto& record = without.at("events").at(to_string(outer_id)).as_object();
        ASSERT_EQ(record.erase(row.name), 1u) << row.name;
        const auto read = report_from_value(without);
        if (row.required) {
            ASSERT_FALSE(read) << row.name;
            EXPECT_NE(read.error().reason().find("events." + to_string(outer_id) + "." + std::string(row.name) + ": missing"),
                      std::string::npos)
                << read.error().reason();
        } else {
            EXPECT_TRUE(read) << row.name << ": " << read.error().reason();
        }
    });
}

TEST(envelope_schema, every_text_member_is_held_to_its_own_limit_by_name) {
    const limits lim{.max_reason_bytes = 40, .max_string_bytes = 64};
    int texts = 0;
    for_each_envelope_field([&](const auto& row) {
        if constexpr (std::is_same_v<member_of<decltype(row)>, std::string>) {
            ++texts;
            const std::size_t max = lim.*row.max_bytes;
            failure_report r = every_member_set();
            r.events.at(outer_id).*row.member = std::string(max + 1, 'x');

            const auto checked = validate(r, lim);
            ASSERT_FALSE(checked) << row.name;
            EXPECT_NE(checked.error().reason().find(std::string(row.name) + " is " + std::to_string(max + 1) +
                                                    " bytes; the limit is " + std::to_string(max)),
                      std::string::npos)
                << checked.error().reason();

            const failure_report cut = truncate_to_limits(r, lim);
            EXPECT_TRUE(validate(cut, lim)) << row.name;
            EXPECT_EQ((cut.events.at(outer_id).*row.member).size(), max) << row.name;
        }
    });
    EXPECT_EQ(texts, 2);  // failure_kind, failure_reason
}

TEST(envelope_schema, every_number_member_is_held_to_its_range_by_name) {
    int numbers = 0;
    for_each_envelope_field([&](const auto& row) {
        if constexpr (std::is_same_v<member_of<decltype(row)>, std::optional<int>>) {
            ++numbers;
            for (const std::int64_t outside : {row.lo - 1, row.hi + 1}) {
                failure_report r = every_member_set();
                r.events.at(outer_id).*row.member = static_cast<int>(outside);

                const auto checked = validate(r);
                ASSERT_FALSE(checked) << row.name;
                EXPECT_NE(checked.error().reason().find(std::string(row.name) + " is " + std::to_string(outside) +
                                                        "; it must be from " + std::to_string(row.lo) + " to " +
                                                        std::to_string(row.hi)),
                          std::string::npos)
                    << checked.error().reason();
                EXPECT_FALSE(truncate_to_limits(r).events.at(outer_id).*row.member) << row.name;  // dropped, not guessed
            }
        }
    });
    EXPECT_EQ(numbers, 1);  // http_status
}

}  // namespace
}  // namespace ngfail
