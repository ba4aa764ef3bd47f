#include <ngfail/json.hpp>
#include <ngfail/sandbox.hpp>

#include "wire/report_writer.hpp"

#include <boost/json.hpp>
#include <boost/system/system_error.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using ngfail::kind;
using testing::HasSubstr;

ngfail::event_id id_of(std::string_view text) { return *ngfail::parse_event_id(text); }

// SPEC §7.1's example record, compacted.
constexpr std::string_view spec_record_json =
    R"({"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","failure_kind":"provider_oom_killed",)"
    R"("failure_reason":"exec in sbx-42 ended: container OOMKilled","boundary":"resources_server",)"
    R"("stage":"agent","http_status":502,"cause_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16",)"
    R"("details":{"type":"sandbox","operation":"exec","provider":"opensandbox","sandbox_id":"sbx-42",)"
    R"("provider_status_reason":"OOMKilled","exit_code":-1,"delivery":"delivered"}})";

ngfail::event_record spec_record() {
    return {.id = id_of("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17"),
            .kind = "provider_oom_killed",
            .code = kind::provider_oom_killed,
            .reason = "exec in sbx-42 ended: container OOMKilled",
            .boundary = ngfail::boundary::resources_server,
            .stage = ngfail::stage::agent,
            .http_status = 502,
            .cause_id = id_of("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16"),
            .details = ngfail::sandbox_details{.operation = "exec",
                                               .provider = "opensandbox",
                                               .sandbox_id = "sbx-42",
                                               .provider_status_reason = "OOMKilled",
                                               .exit_code = -1,
                                               .delivery = ngfail::delivery::delivered}};
}

ngfail::failure_report spec_report() {
    auto outer = spec_record();
    ngfail::event_record cause{.id = id_of("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16"),
                               .kind = "transport_peer_drop",
                               .code = kind::transport_peer_drop,
                               .reason = "stream dropped",
                               .details = ngfail::sdk_error_details{.error_type = "std::runtime_error",
                                                                    .message = "eof"}};
    ngfail::failure_report report{.failure_id = outer.id};
    report.events.emplace(outer.id, outer);
    report.events.emplace(cause.id, cause);
    return report;
}

// ---- golden -------------------------------------------------------------------------------

TEST(json_golden, the_spec_record_byte_for_byte) { EXPECT_EQ(ngfail::to_json(spec_record()), spec_record_json); }

TEST(json_golden, a_report_byte_for_byte) {
    const std::string expected =
        std::string(R"({"failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","events":{)") +
        R"("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16",)" +
        R"("failure_kind":"transport_peer_drop","failure_reason":"stream dropped",)" +
        R"("details":{"type":"sdk_error","error_type":"std::runtime_error","message":"eof"}},)" +
        R"("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17":)" + std::string(spec_record_json) + "}}";
    EXPECT_EQ(ngfail::to_json(spec_report()), expected);
}

TEST(json_golden, model_details_and_retry_after_in_seconds) {
    const ngfail::event_record r{.id = id_of("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17"),
                                 .kind = "agent_timeout",
                                 .reason = "",
                                 .details = ngfail::model_details{.operation = "chat", .model = "m", .attempt = 2,
                                                                  .retry_after = std::chrono::seconds(30)}};
    EXPECT_EQ(ngfail::to_json(r), R"({"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","failure_kind":"agent_timeout",)"
                                  R"("failure_reason":"","details":{"type":"model","operation":"chat","model":"m",)"
                                  R"("attempt":2,"retry_after_s":30}})");
}

TEST(json_golden, a_success_report_has_no_failure_id) {
    EXPECT_EQ(ngfail::to_json(ngfail::failure_report{}), R"({"events":{}})");
}

TEST(json, absent_fields_are_omitted_never_null) {
    const ngfail::event_record r{.id = ngfail::event_id::generate(), .kind = "cancelled"};
    const std::string text = ngfail::to_json(r);
    EXPECT_THAT(text, testing::Not(HasSubstr("null")));
    EXPECT_THAT(text, testing::Not(HasSubstr("details")));
    EXPECT_THAT(text, testing::Not(HasSubstr("stage")));
}

// ---- reading --------------------------------------------------------------------------------

TEST(json, reads_what_it_writes) {
    const auto report = spec_report();
    const auto back = ngfail::report_from_json(ngfail::to_json(report));
    ASSERT_TRUE(back) << back.error().what();
    EXPECT_EQ(back.value(), report);
}

TEST(json, ignores_unknown_fields) {
    std::string text(spec_record_json);
    text.insert(1, R"("added_in_v9":{"deep":[1,2,{"x":null}]},)");
    text.insert(text.find(R"("type":"sandbox")"), R"("gpu":"h100",)");
    const auto record = boost::json::value_to<ngfail::event_record>(boost::json::parse(text));
    EXPECT_EQ(record, spec_record());
}

// A number too large for a double (Boost.JSON reads 1e400 as infinity, and would write it
// back as text no strict reader takes) in a member nobody knows: every reader skips it, so
// no path drops a failure that another path counts.
TEST(json, every_reader_skips_an_unknown_member_holding_a_number_no_double_holds) {
    const auto report = spec_report();
    std::string text = ngfail::to_json(report);
    const std::string record_start = R"("failure_kind":"provider_oom_killed",)";
    ASSERT_NE(text.find(record_start), std::string::npos);
    text.insert(text.find(record_start), R"("note":1e400,"tiny":-1e400,)");

    const auto from_text = ngfail::report_from_json(text);
    ASSERT_TRUE(from_text) << from_text.error().what();
    EXPECT_EQ(from_text.value(), report);
    const auto value = ngfail::parse_json(text);
    ASSERT_TRUE(value) << value.error().what();
    const auto from_value = ngfail::report_from_value(value.value());
    ASSERT_TRUE(from_value) << from_value.error().what();
    EXPECT_EQ(from_value.value(), report);
    EXPECT_EQ(boost::json::value_to<ngfail::failure_report>(value.value()), report);

    boost::json::object row{{"reward", 0.5}};
    ngfail::set_rollout_report(row, report);
    row["_ng_failure_events"].as_object().begin()->value().as_object()["note"] = std::numeric_limits<double>::infinity();
    const auto from_row = ngfail::rollout_report(row);
    ASSERT_TRUE(from_row) << from_row.error().what();
    EXPECT_EQ(from_row.value(), report);
}

TEST(json, a_value_and_its_text_are_held_to_the_same_rules) {
    const auto report = spec_report();
    auto value = boost::json::value_from(report);
    value.as_object()["events"].as_object().begin()->value().as_object()["http_status"] = 502.5;
    const auto from_value = ngfail::report_from_value(value);
    ASSERT_FALSE(from_value);
    EXPECT_THAT(std::string(from_value.error().reason()), testing::HasSubstr("http_status"));
    boost::json::value deep = boost::json::object{{"events", boost::json::object{}}};
    boost::json::value* at = &deep.as_object()["extra"];
    for (int i = 0; i < 200; ++i) at = &(at->emplace_object()["x"]);
    const auto too_deep = ngfail::report_from_value(deep);
    ASSERT_FALSE(too_deep) << "nested deeper than the limit, as the parser refuses it";
    EXPECT_FALSE(ngfail::report_from_json(boost::json::serialize(deep)));
}

TEST(json, keeps_unknown_kind_strings_verbatim) {
    auto report = spec_report();
    report.events.at(*report.failure_id).kind = "future_kind";
    report.events.begin()->second.kind = "acme:thing";
    const auto back = ngfail::report_from_json(ngfail::to_json(report));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value().events.at(*report.failure_id).kind, "future_kind");
    EXPECT_EQ(ngfail::kind_name(back.value().events.at(*report.failure_id).code), "future_kind");
    EXPECT_EQ(back.value().events.begin()->second.kind, "acme:thing");
}

TEST(json, rejects_duplicate_keys) {
    std::string text(spec_record_json);
    text.insert(1, R"("failure_kind":"cancelled",)");
    const auto r = ngfail::parse_json(text);
    ASSERT_TRUE(r.has_error());
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr("duplicate key \"failure_kind\""));
}

TEST(json, rejects_invalid_utf8_and_trailing_bytes) {
    EXPECT_TRUE(ngfail::parse_json("{\"a\":\"\xff\"}").has_error());
    const auto trailing = ngfail::report_from_json(R"({"events":{}} x)");
    ASSERT_TRUE(trailing.has_error());
    EXPECT_THAT(std::string(trailing.error().reason()), HasSubstr("trailing"));
}

TEST(json, names_the_field_with_the_wrong_type) {
    const auto r = ngfail::report_from_json(
        R"({"events":{"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17",)"
        R"("failure_kind":"cancelled","http_status":"502"}}})");
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation);
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr("http_status: expected an integer"));
}

// The report reader reads straight from the text, in whatever order members come.
TEST(report_reader, reads_members_in_any_order_with_the_details_type_last) {
    const std::string id = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    const auto r = ngfail::report_from_json(
        R"({"events":{")" + id + R"(":{"details":{"sandbox_id":"sbx-1","exit_code":137,"operation":"exec",)"
        R"("delivery":"delivered","type":"sandbox"},"failure_kind":"cancelled","event_id":")" + id + R"("}},)"
        R"("failure_id":")" + id + R"("})");
    ASSERT_TRUE(r) << r.error().reason();
    const auto& details = std::get<ngfail::sandbox_details>(r.value().events.begin()->second.details);
    EXPECT_EQ(details.operation, "exec");
    EXPECT_EQ(details.sandbox_id, "sbx-1");
    EXPECT_EQ(details.exit_code, 137);
    EXPECT_EQ(details.delivery, ngfail::delivery::delivered);
    // Members another type defines, or none does, are ignored whatever their value.
    const auto other = ngfail::report_from_json(
        R"({"events":{")" + id + R"(":{"event_id":")" + id + R"(","failure_kind":"cancelled","details":{)"
        R"("model":{"a":[1,{"b":2}]},"attempt":"x","future":null,"type":"sandbox","operation":"exec"}}}})");
    ASSERT_TRUE(other) << other.error().reason();
    EXPECT_EQ(std::get<ngfail::sandbox_details>(other.value().events.begin()->second.details).operation, "exec");
}

TEST(report_reader, strings_with_escapes_and_upper_case_ids_read_as_written) {
    const auto r = ngfail::report_from_json(
        R"({"events":{"0192F1C4-7D2A-7C3E-9A51-2B8F6C0D4E17":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17",)"
        R"("failure_kind":"cancel\u006ced","failure_reason":"a \"quoted\"\nline \u00e9"}}})");
    ASSERT_TRUE(r) << r.error().reason();
    const auto& record = r.value().events.begin()->second;
    EXPECT_EQ(record.kind, "cancelled");
    EXPECT_EQ(record.code, kind::cancelled);
    EXPECT_EQ(record.reason, "a \"quoted\"\nline \xc3\xa9");
}

// Long escaped strings and keys reach a reader in parts (Boost.JSON unescapes through a
// buffer of its own): every part lands, in order.
TEST(report_reader, a_string_that_arrives_in_parts_is_whole) {
    const std::string id = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    std::string reason;
    for (int i = 0; i < 1900; ++i) reason += static_cast<char>('a' + i % 26);
    std::string text_reason;
    for (const char c : reason) {
        constexpr char hex[] = "0123456789abcdef";
        text_reason += "\\u00";
        text_reason += hex[static_cast<unsigned char>(c) >> 4];
        text_reason += hex[static_cast<unsigned char>(c) & 0xf];
    }
    const auto r = ngfail::report_from_json(R"({"events":{")" + id + R"(":{"event_id":")" + id +
                                            R"(","failure_kind":"cancelled","failure_reason":")" + text_reason + R"("}}})");
    ASSERT_TRUE(r) << r.error().reason();
    EXPECT_EQ(r.value().events.begin()->second.reason, reason);
}

TEST(report_reader, a_duplicate_inside_an_unknown_member_is_rejected) {
    const auto r = ngfail::report_from_json(R"({"events":{},"later":[{"a":1},{"b":{"c":1,"c":2}}]})");
    ASSERT_TRUE(r.has_error());
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr("duplicate key \"c\""));
    const auto twice = ngfail::report_from_json(R"({"events":{},"later":1,"later":2})");
    ASSERT_TRUE(twice.has_error());
    EXPECT_THAT(std::string(twice.error().reason()), HasSubstr("duplicate key \"later\""));
}

TEST(report_reader, names_the_path_of_a_wrong_or_missing_member) {
    const std::string id = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    const auto event = [&](const std::string& members) {
        return R"({"events":{")" + id + R"(":{"event_id":")" + id + R"(","failure_kind":"cancelled")" + members + "}}}";
    };
    const std::vector<std::pair<std::string, std::string>> cases{
        {event(R"(,"details":{"type":"sandbox","operation":"exec","exit_code":1.5})"),
         "events." + id + ".details.exit_code: expected an integer"},
        {event(R"(,"details":{"type":"sandbox"})"), "events." + id + ".details.operation: missing"},
        {event(R"(,"details":{"operation":"exec","exit_code":"1","type":"sandbox"})"),
         "events." + id + ".details.exit_code: expected an integer"},
        {event(R"(,"details":{"delivery":"maybe","operation":"exec","type":"sandbox"})"),
         "events." + id + R"(.details.delivery: "maybe" is not a known value)"},
        {event(R"(,"details":{"error_type":{"x":1},"type":"sdk_error"})"),
         "events." + id + ".details.error_type: expected a string"},
        {event(R"(,"details":{"operation":"exec","type":"sandbox","operation":"exec"})"), R"(duplicate key "operation")"},
        {event(R"(,"details":{"operation":"exec"})"), "events." + id + ".details.type: missing"},
        {event(R"(,"details":{"type":7})"), "events." + id + ".details.type: expected a string"},
        {event(R"(,"details":{"type":"gpu"})"), "details.type: \"gpu\" is not one of sandbox, sdk_error, model"},
        {event(R"(,"details":[])"), "events." + id + ".details: expected an object"},
        {event(R"(,"stage":"lunch")"), "events." + id + ".stage: \"lunch\" is not a known value"},
        {event(R"(,"cause_id":7)"), "events." + id + ".cause_id: expected a string"},
        {R"({"events":{")" + id + R"(":"x"}})", "events." + id + ": expected an object"},
        {R"({"events":{")" + id + R"(":{"failure_kind":"cancelled"}}})", "events." + id + ".event_id: missing"},
        {R"({"failure_id":"nope","events":{}})", R"(report.failure_id: "nope" is not a UUID)"},
        {R"({"events":{"nope":{}}})", "events.nope: the key is not a UUID"},
        {R"([])", "report: expected an object"},
    };
    for (const auto& [text, expected] : cases) {
        const auto r = ngfail::report_from_json(text);
        ASSERT_TRUE(r.has_error()) << text;
        EXPECT_EQ(r.error().code(), kind::protocol_violation) << text;
        EXPECT_THAT(std::string(r.error().reason()), HasSubstr(expected)) << text;
    }
}

TEST(json, value_from_and_value_to_round_trip) {
    const auto report = spec_report();
    const boost::json::value v = boost::json::value_from(report);
    EXPECT_EQ(v.at("failure_id").as_string(), "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17");
    EXPECT_EQ(boost::json::value_to<ngfail::failure_report>(v), report);
    EXPECT_EQ(boost::json::serialize(v), ngfail::to_json(report)) << "the same fields in the same order";
}

TEST(json, value_to_throws_on_a_bad_shape) {
    // As Boost.JSON's own conversions do: a system_error, its code the reader's kind.
    try {
        (void)boost::json::value_to<ngfail::event_record>(boost::json::parse("[1]"));
        ADD_FAILURE() << "a bad shape was read";
    } catch (const boost::system::system_error& e) {
        EXPECT_TRUE(ngfail::is_kind(e.code())) << e.code().message();
        EXPECT_NE(std::string_view(e.what()).size(), 0u);
    }
}

TEST(json, a_duplicate_whose_dropped_twin_held_an_object_is_still_found) {
    const std::string text =
        R"({"events":{},"failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","z":{"p":1,"q":1,"r":1},"z":0,)"
        R"("failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e18"})";
    const auto r = ngfail::report_from_json(text);
    ASSERT_TRUE(r.has_error()) << "accepted with failure_id " << ngfail::to_string(*r.value().failure_id);
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr("duplicate key"));
}

TEST(json, event_keys_that_differ_only_in_case_are_one_id_twice) {
    const auto event = [](std::string_view id, std::string_view reason) {
        return "\"" + std::string(id) + R"(":{"event_id":")" + std::string(id) +
               R"(","failure_kind":"cancelled","failure_reason":")" + std::string(reason) + "\"}";
    };
    const std::string text = R"({"events":{)" + event("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d000a", "one") + "," +
                             event("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d000A", "another") + "}}";
    const auto r = ngfail::report_from_json(text);
    ASSERT_TRUE(r.has_error());
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr("case-insensitive"));
}

TEST(json, a_nil_event_id_is_rejected_not_replaced) {
    const std::string nil = "00000000-0000-0000-0000-000000000000";
    const auto r = ngfail::report_from_json(R"({"failure_id":")" + nil + R"(","events":{")" + nil +
                                            R"(":{"event_id":")" + nil + R"(","failure_kind":"cancelled"}}})");
    ASSERT_TRUE(r.has_error());
    EXPECT_THAT(std::string(r.error().reason()), HasSubstr("nil UUID"));
}

TEST(json, a_rejected_report_interns_none_of_its_kinds) {
    // 200 events is over the limit of 64: each report is rejected. Before the fix its kinds
    // were interned while reading, and 83 such reports filled the process-wide table.
    for (int report = 0; report < 100; ++report) {
        std::string text = R"({"events":{)";
        for (int e = 0; e < 200; ++e) {
            const std::string id = ngfail::to_string(ngfail::event_id::generate());
            text += (e ? ",\"" : "\"") + id + R"(":{"event_id":")" + id + R"(","failure_kind":"flood:k)" +
                    std::to_string(report * 200 + e) + "\"}";
        }
        text += "}}";
        ASSERT_TRUE(ngfail::report_from_json(text).has_error());
    }
    const std::error_code peer_kind = ngfail::kind_from_name("acme:gpu_fell_off_bus");
    EXPECT_EQ(ngfail::kind_name(peer_kind), "acme:gpu_fell_off_bus") << "the table must still have room";
}

TEST(json, value_to_reads_without_validating_and_writers_cope_with_what_it_gives) {
    const std::string a = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    const std::string b = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e18";
    const auto cyclic = boost::json::value_to<ngfail::failure_report>(boost::json::parse(
        R"({"failure_id":")" + a + R"(","events":{")" + a + R"(":{"event_id":")" + a +
        R"(","failure_kind":"cancelled","cause_id":")" + b + R"("},")" + b + R"(":{"event_id":")" + b +
        R"(","failure_kind":"cancelled","cause_id":")" + a + R"("}}})"));
    ASSERT_FALSE(ngfail::validate(cyclic));
    const auto back = ngfail::report_from_json(ngfail::to_json(cyclic));
    ASSERT_TRUE(back) << back.error().reason();
    EXPECT_EQ(back.value().failure_id, cyclic.failure_id);
    EXPECT_EQ(back.value().events.size(), 2u);
}

// ---- rollout rows ---------------------------------------------------------------------------

TEST(rollout_rows, store_and_read_a_report) {
    boost::json::object row{{"reward", 0.0}};
    ngfail::set_rollout_report(row, spec_report());
    EXPECT_EQ(row.at("_ng_failure_id").as_string(), "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17");
    EXPECT_EQ(row.at("_ng_failure_events").as_object().size(), 2u);
    const auto back = ngfail::rollout_report(row);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), spec_report());
}

TEST(rollout_rows, what_a_writer_stores_its_reader_accepts) {
    ngfail::failure_report r;
    std::optional<ngfail::event_id> cause;
    for (int i = 0; i < 40; ++i) {  // a 40-level chain with a 5,000-byte sandbox id
        const auto id = ngfail::event_id::generate();
        r.events.emplace(id, ngfail::event_record{
                                 .id = id, .kind = "cancelled", .cause_id = cause,
                                 .details = ngfail::sandbox_details{.operation = "exec", .sandbox_id = std::string(5000, 's')}});
        cause = id;
    }
    r.failure_id = cause;
    for (int i = 0; i < 61; ++i) {  // 101 events in all
        const auto id = ngfail::event_id::generate();
        r.events.emplace(id, ngfail::event_record{.id = id, .kind = "transport_timeout"});
    }
    boost::json::object row;
    ngfail::set_rollout_report(row, r);
    const auto back = ngfail::rollout_report(row);
    ASSERT_TRUE(back) << back.error().reason();
    EXPECT_EQ(back.value().failure_id, r.failure_id);
    EXPECT_EQ(back.value().events.size() + back.value().dropped_events, r.events.size());
}

TEST(rollout_rows, a_row_without_failures_is_a_success) {
    const auto plain = ngfail::rollout_report(boost::json::object{{"reward", 1.0}});
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain.value().failure_id);
    const auto nulls = ngfail::rollout_report(
        boost::json::object{{"_ng_failure_id", nullptr}, {"_ng_failure_events", nullptr}});
    ASSERT_TRUE(nulls);
    EXPECT_TRUE(nulls.value().events.empty());
}

// ---- property: random chains survive the whole round trip ----------------------------------------

class chain_generator {
public:
    explicit chain_generator(unsigned seed) : rng_(seed) {}

    ngfail::failure chain() {
        const int levels = pick(1, 32);
        ngfail::failure inner;
        for (int i = 0; i < levels; ++i) inner = level(std::move(inner), i == 0);
        return inner;
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool coin() { return pick(0, 1) == 1; }

    // Text with ASCII, controls, quotes, backslashes and 2-, 3- and 4-byte UTF-8.
    std::string text(int max_units) {
        static const std::vector<std::string> units{"a", "Z", " ", "\"", "\\", "\n", "\r", "\t", std::string(1, '\0'),
                                                    "\x1f", "\x7f", "/", "\xc3\xa9", "\xe2\x80\xa6", "\xe6\xbc\xa2",
                                                    "\xf0\x9f\x92\xa5", "\xef\xbf\xbd", "<", "{"};
        std::string out;
        const int n = pick(0, max_units);
        for (int i = 0; i < n; ++i) out += units[static_cast<std::size_t>(pick(0, static_cast<int>(units.size()) - 1))];
        return out;
    }

    std::optional<std::string> maybe_text() { return coin() ? std::optional(text(12)) : std::nullopt; }
    std::optional<int> maybe_int(int lo, int hi) { return coin() ? std::optional(pick(lo, hi)) : std::nullopt; }

    std::error_code any_kind() {
        switch (pick(0, 3)) {
            case 0: return ngfail::kind_from_name("future_kind_" + std::to_string(pick(0, 5)));
            case 1: return ngfail::kind_from_name("acme:thing");
            default: {
                const auto all = ngfail::all_kinds();
                return all[static_cast<std::size_t>(pick(0, static_cast<int>(all.size()) - 1))];
            }
        }
    }

    ngfail::event_details details(bool root) {
        switch (pick(root ? 0 : 1, 3)) {
            case 0:
                return ngfail::sdk_error_details{.error_type = "sdk::" + text(4), .message = maybe_text(),
                                                 .http_status = maybe_int(100, 599), .code = maybe_text(),
                                                 .request_id = maybe_text()};
            case 1:
                return ngfail::sandbox_details{
                    .operation = text(6), .provider = maybe_text(), .sandbox_id = maybe_text(),
                    .execution_id = maybe_text(), .provider_status_reason = maybe_text(),
                    .provider_code = maybe_text(), .exit_code = maybe_int(-1, 255), .signal = maybe_text(),
                    .delivery = coin() ? std::optional(static_cast<ngfail::delivery>(pick(0, 2))) : std::nullopt,
                    .retry_after = coin() ? std::optional(std::chrono::seconds(pick(0, 3600))) : std::nullopt};
            case 2:
                return ngfail::model_details{.operation = maybe_text(), .model = maybe_text(),
                                             .attempt = maybe_int(0, 9),
                                             .retry_after = coin() ? std::optional(std::chrono::seconds(pick(0, 60)))
                                                                   : std::nullopt};
            default:
                return std::monostate{};
        }
    }

    ngfail::failure level(ngfail::failure cause, bool root) {
        ngfail::event_info info{
            .kind = any_kind(),
            .reason = text(60),
            .boundary = coin() ? std::optional(static_cast<ngfail::boundary>(pick(0, 5))) : std::nullopt,
            .stage = coin() ? std::optional(static_cast<ngfail::stage>(pick(0, 4))) : std::nullopt,
            .http_status = maybe_int(100, 599),
            .cause = std::move(cause)};
        return ngfail::failure(std::move(info), details(root));
    }

    std::mt19937 rng_;
};

TEST(json_property, a_thousand_random_chains_survive_the_round_trip) {
    chain_generator generate(20261129);
    for (int i = 0; i < 1000; ++i) {
        const ngfail::failure original = generate.chain();
        const auto report = ngfail::report_for(original);
        const std::string text = ngfail::to_json(report);
        const auto decoded = ngfail::report_from_json(text);
        ASSERT_TRUE(decoded) << "chain " << i << ": " << decoded.error().what();
        const auto rebuilt = ngfail::rebuild(decoded.value());
        ASSERT_TRUE(rebuilt);
        const auto again = ngfail::report_for(rebuilt);
        ASSERT_EQ(again, report) << "chain " << i << " changed: " << text;
        ASSERT_EQ(ngfail::to_json(again), text);
    }
}

// The writer copies a string as it is or escapes it: every byte value at every position of
// short and longer strings must come out printable ASCII that reads back as the string (an
// invalid UTF-8 byte as U+FFFD).
TEST(json, every_byte_at_every_position_is_written_as_json_reads_it) {
    for (const std::size_t length : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 23u}) {
        for (std::size_t at = 0; at < length; ++at) {
            for (int value = 0; value < 256; ++value) {
                std::string reason(length, 'a');
                reason[at] = static_cast<char>(value);
                const ngfail::event_record record{.id = id_of("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17"),
                                                  .kind = "cancelled", .reason = reason};
                const std::string text = ngfail::to_json(record);
                ASSERT_TRUE(std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; }))
                    << "byte " << value << " at " << at << " of " << length;
                std::string expected = reason;
                if (value >= 0x80) expected.replace(at, 1, "\xef\xbf\xbd");
                ASSERT_EQ(boost::json::parse(text).at("failure_reason").as_string(), expected)
                    << "byte " << value << " at " << at << " of " << length;
            }
        }
    }
}

// The sizes the header's fitting works with are the writer's own count of what it writes.
TEST(json_property, the_writers_count_is_the_length_of_what_it_writes) {
    chain_generator generate(20261201);
    for (int i = 0; i < 300; ++i) {
        auto report = ngfail::report_for(generate.chain());
        if (i % 3 == 0) report.dropped_events = static_cast<std::size_t>(i) * 977;
        if (i % 5 == 0) report.failure_id.reset();
        const std::string text = ngfail::wire::detail::write_report(report);
        ASSERT_EQ(ngfail::wire::detail::written_size(report), text.size()) << text;
        std::size_t members = 0;
        for (const auto& [id, record] : report.events) members += ngfail::wire::detail::written_event_size(record);
        const ngfail::failure_report frame{.failure_id = report.failure_id, .dropped_events = report.dropped_events};
        const std::size_t commas = report.events.empty() ? 0 : report.events.size() - 1;
        ASSERT_EQ(ngfail::wire::detail::written_size(frame) + members + commas, text.size()) << text;
    }
}

// What the CLI writes with --json: whatever bytes a name from a file holds, the line is
// valid JSON of printable ASCII, so it parses and never drives a terminal.
TEST(serialize_ascii, escapes_everything_outside_printable_ascii_and_stays_valid_json) {
    const boost::json::value v{{"class", "esc\x1b[31m del\x7f c1\xc2\x9b lone\x9b \xe2\x86\x92 \xf0\x9f\x99\x82"},
                               {"n", 1}};
    const auto text = ngfail::serialize_ascii(v);
    EXPECT_EQ(text, R"({"class":"esc\u001b[31m del\u007f c1\u009b lone\ufffd \u2192 \ud83d\ude42","n":1})");
    EXPECT_TRUE(std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    EXPECT_EQ(boost::json::parse(text).at("class"), "esc\x1b[31m del\x7f c1\xc2\x9b lone\xef\xbf\xbd \xe2\x86\x92 \xf0\x9f\x99\x82");
}

}  // namespace
