// The details field tables: every member of every details struct has a row, and each row
// reaches the writer, the reader, `validate`, truncation and the header. A field added to a
// details struct without its row fails the first test; with its row, the others cover it.
#include "wire/details_schema.hpp"

#include "support/member_count.hpp"

#include <ngfail/failure_header.hpp>
#include <ngfail/json.hpp>
#include <ngfail/report.hpp>

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace ngfail {

namespace {

using ngfail_test::member_count;

template <class Details>
constexpr std::size_t row_count = std::tuple_size_v<decltype(wire::detail::details_schema<Details>::fields)>;

static_assert(member_count<sandbox_details>() == row_count<sandbox_details>, "a sandbox_details member has no row");
static_assert(member_count<sdk_error_details>() == row_count<sdk_error_details>, "an sdk_error_details member has no row");
static_assert(member_count<model_details>() == row_count<model_details>, "a model_details member has no row");

// A distinct value in every member, whatever its type, so that a row that reaches the
// wrong member or none shows as a difference after a round trip.
void fill(std::string& s, std::string_view name, int) { s = "value of " + std::string(name); }
void fill(std::optional<std::string>& s, std::string_view name, int) { s = "value of " + std::string(name); }
void fill(std::optional<int>& n, std::string_view, int i) { n = 40 + i; }
void fill(std::optional<std::chrono::seconds>& n, std::string_view, int i) { n = std::chrono::seconds(60 + i); }
void fill(std::optional<delivery>& d, std::string_view, int) { d = delivery::possibly_delivered; }

template <class Details>
Details every_field_set() {
    Details d{};
    int i = 0;
    wire::detail::for_each_field<Details>([&](const auto& row) { fill(d.*row.member, row.name, i++); });
    return d;
}

template <class Details>
failure_report report_with(Details d) {
    failure_report r;
    const event_id id = event_id::generate();
    r.failure_id = id;
    r.events.emplace(id, event_record{.id = id, .kind = "provider_oom_killed", .reason = "r", .details = std::move(d)});
    return r;
}

template <class Details>
const Details& details_in(const failure_report& r) {
    return std::get<Details>(r.events.begin()->second.details);
}

template <class Details>
class details_schema_test : public testing::Test {};
using details_types = testing::Types<sandbox_details, sdk_error_details, model_details>;
TYPED_TEST_SUITE(details_schema_test, details_types);

TYPED_TEST(details_schema_test, every_field_survives_json_and_the_header) {
    const TypeParam sent = every_field_set<TypeParam>();
    const failure_report report = report_with(sent);
    ASSERT_TRUE(validate(report));

    const std::string json = to_json(report);
    wire::detail::for_each_field<TypeParam>([&](const auto& row) {
        EXPECT_NE(json.find('"' + std::string(row.name) + '"'), std::string::npos) << row.name;
    });
    auto from_json = report_from_json(json);
    ASSERT_TRUE(from_json) << from_json.error().reason();
    EXPECT_EQ(details_in<TypeParam>(from_json.value()), sent);

    auto from_header = decode_header(encode_header(report));
    ASSERT_TRUE(from_header) << from_header.error().reason();
    EXPECT_EQ(details_in<TypeParam>(from_header.value()), sent);
}

TYPED_TEST(details_schema_test, every_text_field_is_checked_and_shortened_by_name) {
    const limits lim{.max_string_bytes = 64};
    wire::detail::for_each_field<TypeParam>([&](const auto& row) {
        if constexpr (wire::detail::is_text<std::remove_cvref_t<decltype(std::declval<TypeParam&>().*row.member)>>) {
            TypeParam d = every_field_set<TypeParam>();
            d.*row.member = std::string(100, 'x');
            const failure_report long_one = report_with(d);

            const auto checked = validate(long_one, lim);
            ASSERT_FALSE(checked) << row.name;
            EXPECT_NE(checked.error().reason().find("details." + std::string(row.name) + " is 100 bytes"),
                      std::string::npos)
                << checked.error().reason();

            const failure_report cut = truncate_to_limits(long_one, lim);
            EXPECT_TRUE(validate(cut, lim)) << row.name;
            EXPECT_EQ(wire::detail::field_text(details_in<TypeParam>(cut).*row.member)->size(), 64u) << row.name;
        }
    });
}

TYPED_TEST(details_schema_test, every_number_field_is_held_to_its_range_by_name) {
    wire::detail::for_each_field<TypeParam>([&](const auto& row) {
        using member = std::remove_cvref_t<decltype(std::declval<TypeParam&>().*row.member)>;
        if constexpr (wire::detail::is_number<member>) {
            if (row.hi >= std::numeric_limits<int>::max()) return;  // no int is past it
            TypeParam d = every_field_set<TypeParam>();
            d.*row.member = typename member::value_type(row.hi + 1);
            const failure_report broken = report_with(d);

            const auto checked = validate(broken);
            ASSERT_FALSE(checked) << row.name;
            EXPECT_NE(checked.error().reason().find("details." + std::string(row.name) + " is " + std::to_string(row.hi + 1)),
                      std::string::npos)
                << checked.error().reason();
            const failure_report clamped = truncate_to_limits(broken);
            EXPECT_FALSE(details_in<TypeParam>(clamped).*row.member) << row.name;  // dropped, not guessed
        }
    });
}

TEST(details_schema, the_reader_names_each_details_type_by_its_table) {
    auto wrong = report_from_json(
        R"({"events":{"6f1c2a52-9f44-4a57-8f5e-0c1d2e3f4a5b":{"event_id":"6f1c2a52-9f44-4a57-8f5e-0c1d2e3f4a5b",)"
        R"("failure_kind":"undetermined","details":{"type":"sandbox","exit_code":"137"}}}})");
    ASSERT_FALSE(wrong);
    EXPECT_NE(wrong.error().reason().find("exit_code"), std::string::npos) << wrong.error().reason();
}

}  // namespace
}  // namespace ngfail
