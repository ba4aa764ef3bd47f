#include <ngfail/json.hpp>
#include <ngfail/sandbox.hpp>
#include <ngfail/transport.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace {

using ngfail::kind;
using testing::HasSubstr;

ngfail::failure chain_of(int levels, std::string reason = "r", std::size_t detail_bytes = 0) {
    ngfail::failure inner;
    for (int i = 0; i < levels; ++i) {
        inner = ngfail::make_sandbox_failure({.operation = "exec",
                                              .kind = kind::transport_peer_drop,
                                              .sandbox_id = std::string(detail_bytes, 's'),
                                              .cause = std::move(inner),
                                              .reason = reason + " level " + std::to_string(i)});
    }
    return inner;
}

bool printable_ascii(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// ---- encode / decode -------------------------------------------------------------------------

TEST(header, name_is_x_ng_failure_report) { EXPECT_EQ(ngfail::failure_header_name, "X-NG-Failure-Report"); }

TEST(header, value_is_printable_ascii_whatever_the_reason_holds) {
    const std::string nasty = std::string("CR\rLF\nNUL") + '\0' + "quote\"back\\slash tab\t bell\x07 del\x7f" +
                              " invalid\xff\xfe utf8 \xc3 cut, caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x92\xa5";
    const auto report =
        ngfail::report_for(ngfail::failure{ngfail::event_info{.kind = kind::agent_run_error, .reason = nasty}});
    const std::string value = ngfail::encode_header(report);
    EXPECT_TRUE(printable_ascii(value)) << value;
    const auto back = ngfail::decode_header(value);
    ASSERT_TRUE(back) << back.error().what();
    const std::string& reason = back.value().events.begin()->second.reason;
    EXPECT_THAT(reason, HasSubstr("CR\rLF\nNUL"));
    EXPECT_THAT(reason, HasSubstr("caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x92\xa5")) << "valid UTF-8 survives";
    EXPECT_THAT(reason, HasSubstr("invalid\xef\xbf\xbd\xef\xbf\xbd utf8")) << "invalid bytes become U+FFFD";
}

TEST(header, a_report_that_fits_is_its_json) {
    const auto report = ngfail::report_for(chain_of(3));
    EXPECT_EQ(ngfail::encode_header(report), ngfail::to_json(report));
    EXPECT_EQ(ngfail::decode_header(ngfail::encode_header(report)).value(), report);
}

TEST(header, observed_events_outside_the_chain_are_dropped_first) {
    auto report = ngfail::report_for(chain_of(2, std::string(100, 'x')));
    const std::size_t chain_events = report.events.size();
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(ngfail::merge(report, ngfail::report_for(ngfail::failure{ngfail::event_info{
                                  .kind = kind::transport_timeout, .reason = "attempt " + std::string(150, 'a')}})));
    }
    ASSERT_GT(ngfail::to_json(report).size(), 8192u);
    const auto decoded = ngfail::decode_header(ngfail::encode_header(report));
    ASSERT_TRUE(decoded) << decoded.error().what();
    const auto& d = decoded.value();
    EXPECT_EQ(d.failure_id, report.failure_id);
    EXPECT_GT(d.dropped_events, 0u);
    EXPECT_EQ(d.events.size() + d.dropped_events, report.events.size());
    EXPECT_GT(d.events.size(), chain_events) << "only as many observed events as needed are dropped";
    for (const auto& [id, rec] : report.events) {
        if (d.events.contains(id)) {
            EXPECT_EQ(d.events.at(id).reason, rec.reason) << "reasons untouched";
        }
    }
    // The dropped ones are the newest observed events.
    const auto oldest_dropped = std::find_if(report.events.begin(), report.events.end(),
                                             [&](const auto& e) { return !d.events.contains(e.first); });
    for (auto it = oldest_dropped; it != report.events.end(); ++it) EXPECT_FALSE(d.events.contains(it->first));
}

TEST(header, then_reasons_are_shortened) {
    const auto report = ngfail::report_for(chain_of(8, std::string(1900, 'x')));
    const std::string value = ngfail::encode_header(report);
    EXPECT_LE(value.size(), 8192u);
    const auto d = ngfail::decode_header(value).value();
    EXPECT_EQ(d.events.size(), 8u) << "every cause kept";
    EXPECT_EQ(d.dropped_events, 0u);
    for (const auto& [id, rec] : d.events) {
        EXPECT_LT(rec.reason.size(), 1900u);
        EXPECT_THAT(rec.reason, testing::EndsWith("\xe2\x80\xa6"));
    }
}

TEST(header, then_the_deepest_causes_are_dropped_never_the_failure) {
    const auto report = ngfail::report_for(chain_of(32, "r", 4000));
    const std::string value = ngfail::encode_header(report);
    EXPECT_LE(value.size(), 8192u);
    const auto decoded = ngfail::decode_header(value);
    ASSERT_TRUE(decoded) << decoded.error().what();
    const auto& d = decoded.value();
    ASSERT_TRUE(d.events.contains(*report.failure_id));
    EXPECT_EQ(d.events.size() + d.dropped_events, 32u);
    // What is left is the outermost part of the chain, still linked.
    auto it = d.events.find(*report.failure_id);
    std::size_t walked = 1;
    while (it->second.cause_id) {
        it = d.events.find(*it->second.cause_id);
        ASSERT_NE(it, d.events.end());
        ++walked;
    }
    EXPECT_EQ(walked, d.events.size());
}

TEST(header, a_single_huge_event_still_fits) {
    const auto report = ngfail::report_for(chain_of(1, std::string(2000, 'x'), 4096));
    const ngfail::limits tiny{.max_header_bytes = 1024};
    const std::string value = ngfail::encode_header(report, tiny);
    EXPECT_LE(value.size(), 1024u);
    const auto d = ngfail::decode_header(value, tiny);
    ASSERT_TRUE(d) << d.error().what();
    EXPECT_TRUE(d.value().events.contains(*report.failure_id));
}

// Byte for byte what every sender writes for this report, whatever the process or the
// order the events were added in: receivers and caches may compare header values.
TEST(header, encoding_is_a_fixed_function_of_the_report) {
    const auto root = *ngfail::parse_event_id("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16");
    const auto top = *ngfail::parse_event_id("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17");
    ngfail::failure_report report;
    report.failure_id = top;
    report.events[top] = {.id = top, .kind = "agent_run_error", .reason = "agent failed",
                          .boundary = ngfail::boundary::agent, .stage = ngfail::stage::agent,
                          .http_status = 500, .cause_id = root};
    report.events[root] = {.id = root, .kind = "provider_oom_killed", .reason = "exec failed: \u00fcn\u00efcode \"q\"",
                           .details = ngfail::sandbox_details{.operation = "exec", .provider = "opensandbox",
                                                              .sandbox_id = "sbx-1", .exit_code = -1,
                                                              .delivery = ngfail::delivery::delivered}};
    EXPECT_EQ(ngfail::encode_header(report),
              R"({"failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","events":{)"
              R"("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16",)"
              R"("failure_kind":"provider_oom_killed","failure_reason":"exec failed: \u00fcn\u00efcode \"q\"",)"
              R"("details":{"type":"sandbox","operation":"exec","provider":"opensandbox","sandbox_id":"sbx-1",)"
              R"("exit_code":-1,"delivery":"delivered"}},)"
              R"("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17",)"
              R"("failure_kind":"agent_run_error","failure_reason":"agent failed","boundary":"agent","stage":"agent",)"
              R"("http_status":500,"cause_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16"}}})");
}

TEST(decode_header, rejects_a_value_over_the_limit_and_non_ascii) {
    EXPECT_THAT(std::string(ngfail::decode_header(std::string(8193, ' ')).error().reason()), HasSubstr("8193 bytes"));
    EXPECT_THAT(std::string(ngfail::decode_header("{\"events\":{}}\n").error().reason()),
                HasSubstr("not printable ASCII"));
}

// The check reads eight bytes at a time: a bad byte is found wherever it sits in a word.
TEST(decode_header, finds_a_non_printable_byte_at_every_position) {
    const std::string good = R"({"events":{},"x":"0123456789abcdefghij"})";
    ASSERT_TRUE(ngfail::decode_header(good));
    for (const char bad : {'\x00', '\x1f', '\x7f', '\x80', '\xff'}) {
        for (std::size_t at = 0; at < good.size(); ++at) {
            std::string value = good;
            value[at] = bad;
            const auto decoded = ngfail::decode_header(value);
            ASSERT_FALSE(decoded) << "byte " << at;
            EXPECT_THAT(std::string(decoded.error().reason()), HasSubstr("byte " + std::to_string(at) + " is not printable"));
        }
    }
}

// Each file in tests/data/malformed_reports is one bad header value or report document.
std::vector<std::pair<std::string, std::string>> malformed_corpus() {
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const auto& entry : std::filesystem::directory_iterator(NGFAIL_TEST_DATA "/malformed_reports")) {
        std::ifstream in(entry.path(), std::ios::binary);
        inputs.emplace_back(entry.path().filename().string(),
                            std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    }
    // Too big to keep as files: made here.
    inputs.emplace_back("generated: 10,000-deep arrays", std::string(10000, '[') + std::string(10000, ']'));
    inputs.emplace_back("generated: 10,000-deep objects", [] {
        std::string s;
        for (int i = 0; i < 10000; ++i) s += "{\"a\":";
        s += "1";
        s.append(10000, '}');
        return s;
    }());
    inputs.emplace_back("generated: a 1 MiB string value",
                        "{\"events\":{},\"x\":\"" + std::string(std::size_t{1} << 20, 'v') + "\"}");
    inputs.emplace_back("generated: a 1 MiB number", "{\"events\":{},\"x\":" + std::string(std::size_t{1} << 20, '9') + "}");
    return inputs;
}

TEST(decode_header, turns_every_malformed_input_into_a_protocol_violation) {
    const auto inputs = malformed_corpus();
    ASSERT_GE(inputs.size(), 50u);
    for (const auto& [name, text] : inputs) {
        const auto as_header = ngfail::decode_header(text);
        ASSERT_TRUE(as_header.has_error()) << name << " was accepted as a header";
        EXPECT_EQ(as_header.error().code(), kind::protocol_violation) << name;
        EXPECT_FALSE(as_header.error().reason().empty()) << name;
        const auto as_json = ngfail::report_from_json(text);
        ASSERT_TRUE(as_json.has_error()) << name << " was accepted as JSON";
        EXPECT_EQ(as_json.error().code(), kind::protocol_violation) << name;
        EXPECT_TRUE(printable_ascii(as_json.error().reason())) << name << ": " << as_json.error().reason();
    }
}

// ---- request_failure_log -------------------------------------------------------------------------

TEST(request_failure_log, finish_reports_the_own_failure_and_everything_observed) {
    ngfail::request_failure_log log;
    const ngfail::failure attempt{ngfail::event_info{.kind = kind::transport_timeout, .reason = "attempt 1"}};
    log.observe_failure(attempt);
    const auto remote = ngfail::report_for(chain_of(2));
    log.observe_reply(remote);
    const ngfail::failure own{ngfail::event_info{.kind = kind::agent_run_error, .reason = "gave up"}};
    const auto report = log.finish(own);
    EXPECT_EQ(report.failure_id, own.id());
    EXPECT_TRUE(report.events.contains(attempt.id()));
    for (const auto& [id, rec] : remote.events) EXPECT_TRUE(report.events.contains(id));
    EXPECT_EQ(report.events.size(), 4u);
    EXPECT_TRUE(ngfail::validate(report));
}

TEST(request_failure_log, a_recovered_request_reports_success_with_its_attempts) {
    ngfail::request_failure_log log;
    const ngfail::failure attempt{ngfail::event_info{.kind = kind::transport_peer_drop, .reason = "attempt 1"}};
    log.observe_failure(attempt);
    const auto report = log.finish();
    EXPECT_FALSE(report.failure_id);
    EXPECT_TRUE(report.events.contains(attempt.id()));
}

TEST(request_failure_log, four_threads_observe_at_once) {
    ngfail::request_failure_log log;
    std::vector<std::thread> threads;
    std::vector<std::vector<ngfail::event_id>> ids(4);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 12; ++i) {
                const ngfail::failure f{ngfail::event_info{.kind = kind::transport_timeout,
                                                           .reason = "thread " + std::to_string(t)}};
                ids[t].push_back(f.id());
                log.observe_failure(f);
                if (i % 4 == 0) (void)log.finish();
            }
        });
    }
    for (auto& t : threads) t.join();
    const auto report = log.finish();
    EXPECT_EQ(report.events.size(), 48u);
    for (const auto& per_thread : ids) {
        for (const auto& id : per_thread) EXPECT_TRUE(report.events.contains(id));
    }
}

// ---- sse_report_reader ---------------------------------------------------------------------------

std::string sse_stream(const std::string& report_json, std::string_view eol = "\n") {
    std::string s;
    const auto line = [&](std::string_view l) {
        s += l;
        s += eol;
    };
    line(": keep-alive");
    line("event: stdout");
    line("data: {\"text\":\"hello\"}");
    line("");
    line("event: ping");
    line("data:");
    line("");
    line("data: first line");
    line("data: second line");
    line("");
    line("event: ng-failure-report");
    line("data: " + report_json);
    line("");
    return s;
}

TEST(sse_report_reader, finds_the_report_at_every_split_point_and_relays_bytes_unchanged) {
    const auto report = ngfail::report_for(chain_of(3));
    for (const std::string_view eol : {std::string_view("\n"), std::string_view("\r\n"), std::string_view("\r")}) {
        const std::string stream = sse_stream(ngfail::to_json(report), eol);
        for (std::size_t split = 0; split <= stream.size(); ++split) {
            ngfail::sse_report_reader reader;
            std::string relayed;
            relayed += reader.relay(std::string_view(stream).substr(0, split));
            relayed += reader.relay(std::string_view(stream).substr(split));
            ASSERT_EQ(relayed, stream);
            ASSERT_TRUE(reader.report()) << "split " << split;
            ASSERT_TRUE(*reader.report()) << "split " << split << ": " << reader.report()->error().what();
            ASSERT_EQ(reader.report()->value(), report) << "split " << split;
        }
    }
}

TEST(sse_report_reader, reads_a_stream_byte_by_byte) {
    const auto report = ngfail::report_for(chain_of(2));
    const std::string stream = sse_stream(ngfail::to_json(report), "\r\n");
    ngfail::sse_report_reader reader;
    for (const char c : stream) reader.relay(std::string_view(&c, 1));
    ASSERT_TRUE(reader.report() && *reader.report());
    EXPECT_EQ(reader.report()->value(), report);
}

TEST(sse_report_reader, has_nothing_until_the_event_ends) {
    ngfail::sse_report_reader reader;
    reader.relay("event: ng-failure-report\ndata: {\"events\":{}}\n");
    EXPECT_FALSE(reader.report());
    reader.relay("\n");
    EXPECT_TRUE(reader.report());
}

TEST(sse_report_reader, an_oversized_report_is_a_protocol_violation_in_bounded_memory) {
    const ngfail::limits lim{.max_json_bytes = 1000};
    ngfail::sse_report_reader reader(lim);
    reader.relay("event: ng-failure-report\ndata: ");
    const std::string big(100000, 'x');
    for (int i = 0; i < 50; ++i) reader.relay(big);  // 5 MB on one line
    reader.relay("\n\n");
    ASSERT_TRUE(reader.report());
    ASSERT_TRUE(reader.report()->has_error());
    EXPECT_EQ(reader.report()->error().code(), kind::protocol_violation);
}

TEST(sse_report_reader, a_malformed_report_is_a_protocol_violation) {
    ngfail::sse_report_reader reader;
    reader.relay("event: ng-failure-report\ndata: {not json\n\n");
    ASSERT_TRUE(reader.report() && reader.report()->has_error());
    EXPECT_EQ(reader.report()->error().code(), kind::protocol_violation);
}

}  // namespace

namespace {

// ---- the outside review's findings -----------------------------------------------------------

TEST(header, ten_thousand_observed_failures_are_cut_to_the_limit_and_counted) {
    ngfail::request_failure_log log;
    for (int i = 0; i < 10'000; ++i) {
        log.observe_failure(ngfail::failure(kind::transport_timeout, "attempt " + std::to_string(i)));
    }
    const auto report = log.finish(ngfail::failure(kind::transport_unreachable, "gave up"));
    EXPECT_LE(report.events.size(), 65u) << "the log itself is bounded";
    EXPECT_EQ(report.events.size() + report.dropped_events, 10'001u) << "every dropped event is counted";
    const std::string header = ngfail::encode_header(report);
    EXPECT_LE(header.size(), 4096u);
    const auto back = ngfail::decode_header(header);
    ASSERT_TRUE(back) << back.error().reason();
    EXPECT_EQ(back.value().failure_id, report.failure_id);
    EXPECT_EQ(back.value().events.size() + back.value().dropped_events, 10'001u);
}

TEST(header, a_ten_thousand_level_chain_is_cut_to_the_limit) {
    const auto report = ngfail::report_for(chain_of(10'000));  // walking keeps 32 levels
    const auto back = ngfail::decode_header(ngfail::encode_header(report));
    ASSERT_TRUE(back) << back.error().reason();
    EXPECT_EQ(back.value().failure_id, report.failure_id);
}

TEST(header, the_cap_counts_escaped_bytes_and_always_holds) {
    std::string e_acute;
    for (int i = 0; i < 2048; ++i) e_acute += "\xc3\xa9";  // 4,096 bytes, 12,288 once escaped
    const auto id = ngfail::event_id::generate();
    ngfail::failure_report unknown_kind{.failure_id = id};
    unknown_kind.events.emplace(id, ngfail::event_record{.id = id, .kind = e_acute, .reason = e_acute});

    const std::string controls(200, '\x01');  // each one six bytes once escaped
    const auto id2 = ngfail::event_id::generate();
    ngfail::failure_report control_details{.failure_id = id2};
    control_details.events.emplace(
        id2, ngfail::event_record{.id = id2, .kind = "cancelled", .reason = controls,
                                  .details = ngfail::sandbox_details{.operation = controls,
                                                                     .provider = controls,
                                                                     .sandbox_id = controls,
                                                                     .execution_id = controls,
                                                                     .provider_status_reason = controls,
                                                                     .provider_code = controls,
                                                                     .signal = controls}});
    for (const auto* report : {&unknown_kind, &control_details}) {
        for (const std::size_t cap : {256u, 300u, 1000u, 4096u}) {
            const std::string header = ngfail::encode_header(*report, {.max_header_bytes = cap});
            EXPECT_LE(header.size(), cap);
            const auto back = ngfail::decode_header(header, {.max_header_bytes = cap});
            ASSERT_TRUE(back) << back.error().reason();
            EXPECT_EQ(back.value().failure_id, report->failure_id) << "the failure event's id is kept";
        }
    }
    const auto kept = ngfail::decode_header(ngfail::encode_header(control_details, {.max_header_bytes = 256}),
                                            {.max_header_bytes = 256});
    EXPECT_EQ(kept.value().events.begin()->second.kind, "cancelled") << "a kind that fits is kept whole";
}

TEST(header, a_report_value_to_read_with_a_cycle_is_encoded_as_a_header_decode_accepts) {
    ngfail::failure_report r;
    const auto a = ngfail::event_id::generate();
    const auto b = ngfail::event_id::generate();
    r.events.emplace(a, ngfail::event_record{.id = a, .kind = "cancelled", .cause_id = b});
    r.events.emplace(b, ngfail::event_record{.id = b, .kind = "cancelled", .cause_id = a});
    r.failure_id = a;
    const auto back = ngfail::decode_header(ngfail::encode_header(r));
    ASSERT_TRUE(back) << back.error().reason();
    EXPECT_EQ(back.value().failure_id, a);
}

TEST(request_failure_log, a_twin_id_from_a_reply_is_kept_as_a_protocol_violation) {
    ngfail::request_failure_log log;
    const auto id = ngfail::event_id::generate();
    ngfail::failure_report first;
    first.events.emplace(id, ngfail::event_record{.id = id, .kind = "cancelled", .reason = "from child one"});
    ngfail::failure_report second;
    second.events.emplace(id, ngfail::event_record{.id = id, .kind = "cancelled", .reason = "from child two"});
    log.observe_reply(first);
    log.observe_reply(second);
    const auto report = log.finish();
    EXPECT_EQ(report.events.at(id).reason, "from child one") << "never silently overwritten";
    const auto violations = std::count_if(report.events.begin(), report.events.end(),
                                          [](const auto& e) { return e.second.kind == "protocol_violation"; });
    EXPECT_EQ(violations, 1);
}

TEST(sse_report_reader, a_leading_byte_order_mark_is_ignored_at_every_split) {
    const std::string stream = "\xEF\xBB\xBF" + sse_stream(ngfail::to_json(ngfail::report_for(chain_of(2))));
    for (std::size_t split = 0; split <= 4; ++split) {
        ngfail::sse_report_reader reader;
        std::string relayed;
        relayed += reader.relay(std::string_view(stream).substr(0, split));
        relayed += reader.relay(std::string_view(stream).substr(split));
        EXPECT_EQ(relayed, stream) << "relayed unchanged, the mark included";
        ASSERT_TRUE(reader.report()) << "split " << split;
        EXPECT_TRUE(reader.report()->has_value());
    }
}

TEST(sse_report_reader, an_overlong_comment_before_the_report_does_not_void_it) {
    const ngfail::limits lim{.max_json_bytes = 4096};
    ngfail::sse_report_reader reader(lim);
    reader.relay(":" + std::string(10'000, 'c') + "\n");
    reader.relay(sse_stream(ngfail::to_json(ngfail::report_for(chain_of(2)))));
    ASSERT_TRUE(reader.report());
    EXPECT_TRUE(reader.report()->has_value()) << reader.report()->error().reason();
}

TEST(sse_report_reader, an_overlong_data_line_still_voids_its_event) {
    const ngfail::limits lim{.max_json_bytes = 4096};
    ngfail::sse_report_reader reader(lim);
    reader.relay("event: ng-failure-report\ndata: " + std::string(10'000, 'd') + "\n\n");
    ASSERT_TRUE(reader.report());
    EXPECT_TRUE(reader.report()->has_error());
}

}  // namespace
