// The helper's JSON lines (gpu/README.md) into a DiagRun: every line type,
// strict types, garbage, a cut-off last line, the ceilings a hostile helper
// meets, last_started, and error lines that stay one printable line.
#include <gtest/gtest.h>

#include <string>

#include "diag/protocol.h"

namespace gd {
namespace {

// Every error message: one line of printable ASCII.
void expect_printable(const DiagRun& run) {
  for (const DiagError& e : run.errors) {
    for (char c : e.message) {
      ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in: " << e.message;
    }
    EXPECT_LE(e.message.size(), kDiagMaxMessage + 4);
  }
}

std::string all_errors(const DiagRun& run) {
  std::string out;
  for (const DiagError& e : run.errors) out += e.test + "|" + e.bus_id + "|" + e.message + "\n";
  return out;
}

TEST(DiagProtocol, HelloAndDeviceLines) {
  DiagRun run;
  bool done = parse_helper_output(
      R"({"type":"hello","schema":"gpudoctor.diag-helper/v1","cuda_runtime":13000,"cuda_driver":12080,"cublas":130100,"nccl":22809}
{"type":"device","gpu":"00000000:17:00.0","cuda_index":0,"name":"NVIDIA H200","cc_major":9,"cc_minor":0,"multiprocessors":132,"memory_bytes":150754820096,"free_bytes":150000000000,"clock_khz":1980000,"mem_clock_khz":3201000,"mem_bus_width_bits":6144,"new_field":[1,2]}
{"type":"device","gpu":"0000:3B:00.0","cuda_index":1}
)",
      &run);
  EXPECT_FALSE(done);
  EXPECT_TRUE(run.errors.empty()) << all_errors(run);
  EXPECT_EQ(run.cuda_runtime_version, 13000);
  EXPECT_EQ(run.cuda_driver_version, 12080);
  EXPECT_EQ(run.cublas_version, 130100);
  EXPECT_EQ(run.nccl_version, 22809);
  ASSERT_EQ(run.devices.size(), 2u);
  const DiagDevice& d = run.devices[0];
  EXPECT_EQ(d.bus_id, "0000:17:00.0");  // NVML's 8-digit domain normalized
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.multiprocessors, 132);
  EXPECT_EQ(d.memory_bytes, 150754820096u);
  EXPECT_EQ(d.free_bytes, 150000000000u);
  EXPECT_EQ(d.clock_khz, 1980000);
  EXPECT_EQ(d.mem_clock_khz, 3201000);
  EXPECT_EQ(d.mem_bus_width_bits, 6144);
  EXPECT_EQ(run.devices[1].bus_id, "0000:3b:00.0");  // upper case normalized
  EXPECT_EQ(run.devices[1].memory_bytes, 0u);        // missing numbers default
  EXPECT_EQ(run.devices[1].name, "");
}

TEST(DiagProtocol, EveryResultType) {
  DiagRun run;
  bool done = parse_helper_output(
      R"({"type":"result","test":"context","gpu":"0000:17:00.0","status":"pass","duration_ms":210.5}
{"type":"result","test":"kernel","gpu":"0000:17:00.0","status":"error","message":"cudaLaunchKernel: too many resources","duration_ms":1.2}
{"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"h2d","status":"pass","bytes":268435456,"bytes_per_s":5.4e10,"verified":true,"mismatches":0,"duration_ms":4.97}
{"type":"result","test":"memtest","gpu":"0000:17:00.0","status":"fail","bytes":1000000,"passes":2,"patterns":["address","walking-ones","walking-zeros","random"],"seed":7,"errors":1,"failures":[{"offset":4096,"address":140737488355328,"expected":18446744073709551615,"actual":3,"pattern":"random"}],"duration_ms":9.5}
{"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"pass","m":8192,"n":8192,"k":8192,"iterations":400,"flops_per_s":7.1e14,"checked":200,"mismatches":0,"max_rel_error":0.0009,"duration_ms":20000}
{"type":"result","test":"p2p","src":"0000:17:00.0","dst":"0000:2A:00.0","status":"pass","access":true,"bytes_per_s":3.7e11,"latency_us":2.1,"verified":true,"mismatches":0}
{"type":"result","test":"nccl","gpus":["0000:17:00.0","0000:2a:00.0"],"status":"pass","nccl_version":22809,"mismatches":0,"points":[{"bytes":1048576,"time_us":30.1,"algbw_bytes_per_s":3.5e10,"busbw_bytes_per_s":6.1e10}]}
{"type":"result","test":"scaling","gpus":["0000:17:00.0","0000:2a:00.0"],"status":"pass","one_gpu_step_ms":10.2,"all_gpu_step_ms":10.9,"per_gpu_compute_ms":[10.2,null],"gradient_bytes":268435456,"speedup":1.87,"efficiency":0.935}
{"type":"result","test":"ecc-scrub","gpu":"0000:17:00.0","status":"skip","message":"newer test"}
{"type":"error","test":"gemm","gpu":"0000:17:00.0","message":"cublasGemmEx: CUBLAS_STATUS_EXECUTION_FAILED"}
{"type":"done"}
)",
      &run);
  EXPECT_TRUE(done);
  ASSERT_EQ(run.tests.size(), 3u) << all_errors(run);
  EXPECT_EQ(run.tests[0].test, "context");
  EXPECT_EQ(run.tests[0].status, DiagStatus::kPass);
  EXPECT_DOUBLE_EQ(run.tests[0].duration_ms, 210.5);
  EXPECT_EQ(run.tests[1].status, DiagStatus::kError);
  EXPECT_EQ(run.tests[1].message, "cudaLaunchKernel: too many resources");
  EXPECT_EQ(run.tests[2].test, "ecc-scrub");  // an unknown test keeps its common fields
  EXPECT_EQ(run.tests[2].status, DiagStatus::kSkip);

  ASSERT_EQ(run.copies.size(), 1u);
  EXPECT_EQ(run.copies[0].direction, "h2d");
  EXPECT_EQ(run.copies[0].bytes, 268435456u);
  EXPECT_DOUBLE_EQ(run.copies[0].bytes_per_s, 5.4e10);
  EXPECT_TRUE(run.copies[0].verified);

  ASSERT_EQ(run.memtests.size(), 1u);
  const DiagMemtestResult& m = run.memtests[0];
  EXPECT_EQ(m.status, DiagStatus::kFail);
  EXPECT_EQ(m.passes, 2);
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.patterns.size(), 4u);
  EXPECT_EQ(m.errors, 1);
  ASSERT_EQ(m.failures.size(), 1u);
  EXPECT_EQ(m.failures[0].offset, 4096u);
  EXPECT_EQ(m.failures[0].address, 140737488355328u);
  EXPECT_EQ(m.failures[0].expected, 18446744073709551615u);  // the full uint64 range
  EXPECT_EQ(m.failures[0].actual, 3u);
  EXPECT_EQ(m.failures[0].pattern, "random");

  ASSERT_EQ(run.gemms.size(), 1u);
  EXPECT_EQ(run.gemms[0].dtype, "bf16");
  EXPECT_EQ(run.gemms[0].m, 8192);
  EXPECT_EQ(run.gemms[0].iterations, 400);
  EXPECT_DOUBLE_EQ(run.gemms[0].flops_per_s, 7.1e14);
  EXPECT_EQ(run.gemms[0].checked, 200);
  EXPECT_DOUBLE_EQ(run.gemms[0].max_rel_error, 0.0009);

  ASSERT_EQ(run.p2p.size(), 1u);
  EXPECT_EQ(run.p2p[0].dst, "0000:2a:00.0");
  EXPECT_TRUE(run.p2p[0].access);
  EXPECT_DOUBLE_EQ(run.p2p[0].latency_us, 2.1);

  ASSERT_TRUE(run.nccl.has_value());
  EXPECT_EQ(run.nccl->bus_ids.size(), 2u);
  EXPECT_EQ(run.nccl->nccl_version, 22809);
  ASSERT_EQ(run.nccl->points.size(), 1u);
  EXPECT_EQ(run.nccl->points[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(run.nccl->points[0].busbw_bytes_per_s, 6.1e10);

  ASSERT_TRUE(run.scaling.has_value());
  EXPECT_DOUBLE_EQ(run.scaling->efficiency, 0.935);
  EXPECT_EQ(run.scaling->per_gpu_compute_ms, (std::vector<double>{10.2, 0}));  // null: unmeasured
  EXPECT_EQ(run.scaling->gradient_bytes, 268435456u);

  ASSERT_EQ(run.errors.size(), 1u) << all_errors(run);
  EXPECT_EQ(run.errors[0].test, "gemm");
  EXPECT_EQ(run.errors[0].bus_id, "0000:17:00.0");
  EXPECT_EQ(run.errors[0].message, "cublasGemmEx: CUBLAS_STATUS_EXECUTION_FAILED");
  EXPECT_EQ(run.last_started, "");
}

// One bad line costs that line; the parser goes on with the next.
struct BadLine {
  const char* line;
  const char* error;  // a part of the message
};

class DiagProtocolBadLine : public ::testing::TestWithParam<BadLine> {};

TEST_P(DiagProtocolBadLine, IsAnErrorLineAndTheRestStands) {
  DiagRun run;
  std::string text =
      std::string(R"({"type":"result","test":"context","gpu":"0000:17:00.0","status":"pass"})") +
      "\n" + GetParam().line + "\n" +
      R"({"type":"result","test":"kernel","gpu":"0000:17:00.0","status":"pass"})" +
      "\n{\"type\":\"done\"}\n";
  EXPECT_TRUE(parse_helper_output(text, &run));
  EXPECT_EQ(run.tests.size(), 2u) << all_errors(run);
  EXPECT_TRUE(run.copies.empty() && run.gemms.empty() && run.memtests.empty() && run.p2p.empty());
  EXPECT_TRUE(run.devices.empty());
  ASSERT_EQ(run.errors.size(), 1u) << all_errors(run);
  EXPECT_EQ(run.errors[0].message.rfind("helper line 2: ", 0), 0u) << run.errors[0].message;
  EXPECT_NE(run.errors[0].message.find(GetParam().error), std::string::npos)
      << run.errors[0].message;
  expect_printable(run);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, DiagProtocolBadLine,
    ::testing::Values(
        BadLine{"not json at all", "not a JSON object"}, BadLine{"[1,2,3]", "not a JSON object"},
        BadLine{R"({"type":"result","test":"gemm")", "not JSON"},
        BadLine{R"({"test":"gemm"})", "\"type\" is missing"},
        BadLine{R"({"type":7})", "\"type\" is an integer, expected a string"},
        BadLine{R"({"type":"bogus"})", "unknown type \"bogus\""},
        BadLine{
            R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"h2d","status":"pass","bytes":"lots"})",
            "\"bytes\" is a string, expected an unsigned integer"},
        BadLine{
            R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"h2d","status":"pass","bytes":-1})",
            "\"bytes\" is -1, expected an integer from 0 to 18446744073709551615"},
        BadLine{
            R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"h2d","status":"pass","bytes":1.5})",
            "\"bytes\" is 1.5, expected an integer from 0 to"},
        BadLine{
            R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"h2d","status":"pass","verified":1})",
            "\"verified\" is an integer, expected true or false"},
        BadLine{R"({"type":"result","test":"copy","gpu":"0000:17:00.0","status":"pass"})",
                "\"direction\" is missing"},
        BadLine{
            R"({"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"pass","m":4294967296})",
            "\"m\" is 4294967296, expected an integer from -2147483648 to 2147483647"},
        BadLine{
            R"({"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"pass","flops_per_s":"7e14"})",
            "\"flops_per_s\" is a string, expected a number"},
        BadLine{
            R"({"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"maybe"})",
            "unknown status \"maybe\""},
        BadLine{R"({"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16"})",
                "\"status\" is missing"},
        BadLine{
            R"({"type":"result","test":"gemm","gpu":"GPU-1234","dtype":"bf16","status":"pass"})",
            "\"gpu\" is \"GPU-1234\", not a PCI bus id"},
        BadLine{R"({"type":"result","test":"gemm","dtype":"bf16","status":"pass"})",
                "\"gpu\" is missing"},
        BadLine{R"({"type":"result","test":"copy","gpu":"","direction":"h2d","status":"pass"})",
                "\"gpu\" is empty"},
        BadLine{
            R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"","status":"pass"})",
            "\"direction\" is empty"},
        BadLine{
            R"({"type":"result","test":"memtest","gpu":"0000:17:00.0","status":"fail","failures":[{"offset":"x"}]})",
            "\"failures[0].offset\" is a string"},
        BadLine{
            R"({"type":"result","test":"memtest","gpu":"0000:17:00.0","status":"fail","patterns":["a",1]})",
            "\"patterns[1]\" is an integer, expected a string"},
        BadLine{R"({"type":"result","test":"nccl","gpus":["0000:17:00.0","x"],"status":"pass"})",
                "\"gpus\" has \"x\", not a PCI bus id"},
        BadLine{R"({"type":"result","test":"nccl","gpus":[],"status":"pass","points":{"bytes":1}})",
                "\"points\" is an object, expected an array"},
        BadLine{R"({"type":"result","test":"p2p","src":"0000:17:00.0","status":"pass"})",
                "\"dst\" is missing"},
        BadLine{R"({"type":"device","gpu":"0000:17:00.0","name":["H200"]})",
                "\"name\" is an array, expected a string"},
        BadLine{R"({"type":"error","test":"gemm","gpu":"0000:17:00.0"})", "\"message\" is missing"},
        BadLine{R"({"type":"hello","schema":"gpudoctor.diag-helper/v9"})",
                "schema \"gpudoctor.diag-helper/v9\""},
        BadLine{
            R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"h2d","status":"pass","bytes_per_s":1e400})",
            "number overflow"},
        BadLine{"{\"a\":[[[[[[[[[[1]]]]]]]]]]}", "nested deeper"}));

// With fewer than two GPUs the helper skips P2P with one line that names
// no pair (gpu/p2p.cu): it is a result, not a malformed line.
TEST(DiagProtocol, AP2pSkipNeedsNoPair) {
  DiagRun run;
  parse_helper_output(
      R"({"type":"result","test":"p2p","src":"0000:17:00.0","status":"skip","message":"one GPU"}
{"type":"result","test":"p2p","status":"skip","message":"one GPU"}
)",
      &run);
  EXPECT_TRUE(run.errors.empty()) << all_errors(run);
  ASSERT_EQ(run.p2p.size(), 2u);
  EXPECT_EQ(run.p2p[0].status, DiagStatus::kSkip);
  EXPECT_EQ(run.p2p[0].src, "0000:17:00.0");
  EXPECT_EQ(run.p2p[1].message, "one GPU");
}

TEST(DiagProtocol, BracketsInsideStringsAreNoNesting) {
  DiagRun run;
  parse_helper_output(
      R"({"type":"error","test":"gemm","message":"[[[[[[[[[[{{{{{{{{{{ \"[[[[[[[[[[["})"
      "\n",
      &run);
  ASSERT_EQ(run.errors.size(), 1u) << all_errors(run);
  EXPECT_EQ(run.errors[0].message, "[[[[[[[[[[{{{{{{{{{{ \"[[[[[[[[[[[");
}

TEST(DiagProtocol, ControlCharactersAreEscapedInErrorsAndStrings) {
  DiagRun run;
  std::string text = "\x07\x1b[31mred\x1b[0m\xff\n";
  text += "{\"type\":\"bo\\u0000gus\\n\"}\n";
  text +=
      "{\"type\":\"error\",\"test\":\"gemm\\u001b\",\"message\":\"line one\\nline "
      "two\\r\\t\\u00e9\"}\n";
  text += "{\"type\":\"device\",\"gpu\":\"0000:17:00.0\",\"name\":\"H200\\u0007\"}\n";
  parse_helper_output(text, &run);
  ASSERT_EQ(run.errors.size(), 3u) << all_errors(run);
  expect_printable(run);
  EXPECT_NE(run.errors[0].message.find("\\x07\\x1b[31mred"), std::string::npos)
      << run.errors[0].message;
  EXPECT_NE(run.errors[1].message.find("unknown type \"bo\\x00gus\\x0a\""), std::string::npos)
      << run.errors[1].message;
  EXPECT_EQ(run.errors[2].test, "gemm\\x1b");
  EXPECT_EQ(run.errors[2].message, "line one\\x0aline two\\x0d \\xc3\\xa9");
  ASSERT_EQ(run.devices.size(), 1u);
  EXPECT_EQ(run.devices[0].name, "H200\\x07");
}

TEST(DiagProtocol, ACutOffLastLineIsAnErrorSayingSo) {
  DiagRun run;
  bool done = parse_helper_output(
      "{\"type\":\"result\",\"test\":\"context\",\"gpu\":\"0000:17:00.0\",\"status\":\"pass\"}\n"
      "{\"type\":\"result\",\"test\":\"gemm\",\"gpu\":\"0000:17:00.0\",\"dt",
      &run);
  EXPECT_FALSE(done);
  EXPECT_EQ(run.tests.size(), 1u);
  ASSERT_EQ(run.errors.size(), 1u);
  EXPECT_NE(run.errors[0].message.find("helper line 2: cut off"), std::string::npos)
      << run.errors[0].message;
}

TEST(DiagProtocol, ACompleteLastLineWithoutNewlineCounts) {
  DiagRun run;
  EXPECT_TRUE(parse_helper_output("{\"type\":\"done\"}", &run));
  EXPECT_TRUE(run.errors.empty());
  // CRLF and blank lines are harmless.
  DiagRun crlf;
  EXPECT_TRUE(parse_helper_output("\r\n\n  {\"type\":\"done\"}\r\n\n", &crlf));
  EXPECT_TRUE(crlf.errors.empty()) << all_errors(crlf);
}

TEST(DiagProtocol, LastStartedIsTheStartWithoutItsResult) {
  DiagRun run;
  parse_helper_output(R"({"type":"start","test":"context","gpu":"0000:17:00.0"}
{"type":"result","test":"context","gpu":"0000:17:00.0","status":"pass"}
{"type":"start","test":"memtest","gpu":"00000000:17:00.0"}
)",
                      &run);
  EXPECT_EQ(run.last_started, "memtest 0000:17:00.0");

  DiagRun ended;
  parse_helper_output(R"({"type":"start","test":"memtest","gpu":"0000:17:00.0"}
{"type":"result","test":"memtest","gpu":"0000:17:00.0","status":"pass"}
)",
                      &ended);
  EXPECT_EQ(ended.last_started, "");

  // A result for another GPU does not end the test that is running.
  DiagRun other;
  parse_helper_output(R"({"type":"start","test":"gemm","gpu":"0000:2a:00.0","dtype":"fp16"}
{"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"fp16","status":"pass"}
{"type":"result","test":"gemm","gpu":"0000:2a:00.0","dtype":"bf16","status":"pass"}
)",
                      &other);
  EXPECT_EQ(other.last_started, "gemm fp16 0000:2a:00.0");

  // An error line ends the test it names.
  DiagRun errored;
  parse_helper_output(R"({"type":"start","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16"}
{"type":"error","test":"gemm","gpu":"0000:17:00.0","message":"cublasCreate: not initialized"}
)",
                      &errored);
  EXPECT_EQ(errored.last_started, "");

  DiagRun p2p;
  parse_helper_output(R"({"type":"start","test":"p2p","src":"0000:17:00.0","dst":"0000:2a:00.0"}
)",
                      &p2p);
  EXPECT_EQ(p2p.last_started, "p2p 0000:17:00.0->0000:2a:00.0");

  DiagRun pair_done;  // the helper's start line for a pair, then its result
  parse_helper_output(R"({"type":"start","test":"p2p","src":"0000:17:00.0","dst":"0000:2a:00.0"}
{"type":"result","test":"p2p","src":"0000:17:00.0","dst":"0000:2a:00.0","status":"pass"}
)",
                      &pair_done);
  EXPECT_EQ(pair_done.last_started, "");

  DiagRun nccl;
  parse_helper_output("{\"type\":\"start\",\"test\":\"nccl\",\"gpu\":\"\"}\n", &nccl);
  EXPECT_EQ(nccl.last_started, "nccl");
}

TEST(DiagProtocol, MemtestFailuresAreCappedButErrorsCountAll) {
  std::string failures;
  for (int i = 0; i < 40; ++i) {
    if (i > 0) failures += ",";
    failures += "{\"offset\":" + std::to_string(i * 8) +
                ",\"address\":1,\"expected\":2,\"actual\":3,\"pattern\":\"address\"}";
  }
  DiagRun run;
  parse_helper_output(
      "{\"type\":\"result\",\"test\":\"memtest\",\"gpu\":\"0000:17:00.0\",\"status\":\"fail\","
      "\"errors\":123456789,\"failures\":[" +
          failures + "]}\n",
      &run);
  ASSERT_EQ(run.memtests.size(), 1u) << all_errors(run);
  EXPECT_EQ(run.memtests[0].failures.size(), kDiagMaxFailures);
  EXPECT_EQ(run.memtests[0].failures.back().offset, (kDiagMaxFailures - 1) * 8);
  EXPECT_EQ(run.memtests[0].errors, 123456789);
}

TEST(DiagProtocol, DevicesAreCappedAndARepeatReplaces) {
  std::string text;
  for (int i = 0; i < 100; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", i);
    text += std::string("{\"type\":\"device\",\"gpu\":\"") + bus +
            "\",\"cuda_index\":" + std::to_string(i) + "}\n";
  }
  text += "{\"type\":\"device\",\"gpu\":\"0000:00:00.0\",\"name\":\"again\"}\n";
  DiagRun run;
  parse_helper_output(text, &run);
  EXPECT_EQ(run.devices.size(), kDiagMaxDevices);
  EXPECT_EQ(run.devices[0].name, "again");
  EXPECT_EQ(run.errors.size(), 100 - kDiagMaxDevices);
  expect_printable(run);
}

TEST(DiagProtocol, ResultsAndErrorsAreCapped) {
  std::string text;
  const std::string line =
      "{\"type\":\"result\",\"test\":\"kernel\",\"gpu\":\"0000:17:00.0\",\"status\":\"pass\"}\n";
  text.reserve((kDiagMaxResults + 10) * line.size());
  for (size_t i = 0; i < kDiagMaxResults + 10; ++i) text += line;
  DiagRun run;
  parse_helper_output(text, &run);
  EXPECT_EQ(run.tests.size(), kDiagMaxResults);
  ASSERT_EQ(run.errors.size(), 1u);  // said once, not ten times
  EXPECT_NE(run.errors[0].message.find("more than 100000 results"), std::string::npos);

  std::string garbage;
  for (size_t i = 0; i < kDiagMaxErrors + 500; ++i) garbage += "x\n";
  DiagRun bad;
  parse_helper_output(garbage, &bad);
  ASSERT_EQ(bad.errors.size(), kDiagMaxErrors + 1);
  EXPECT_EQ(bad.errors.back().message, "500 more helper errors not kept");
}

TEST(DiagProtocol, AnOverlongLineIsRejectedUnparsed) {
  std::string huge = "{\"type\":\"error\",\"message\":\"" + std::string(kDiagMaxLineBytes, 'a') +
                     "\"}\n{\"type\":\"done\"}\n";
  DiagRun run;
  EXPECT_TRUE(parse_helper_output(huge, &run));
  ASSERT_EQ(run.errors.size(), 1u);
  EXPECT_EQ(run.errors[0].message, "helper line 1: longer than 1048576 bytes, ignored");

  // Long strings that fit are kept, capped.
  std::string longmsg = "{\"type\":\"error\",\"message\":\"" + std::string(100000, 'b') + "\"}\n";
  DiagRun capped;
  parse_helper_output(longmsg, &capped);
  ASSERT_EQ(capped.errors.size(), 1u);
  EXPECT_LE(capped.errors[0].message.size(), kDiagMaxMessage + 4);
}

TEST(DiagProtocol, NumbersInOtherShapes) {
  DiagRun run;
  // 1e9 is an integral float: a fine byte count; null is "not measured".
  parse_helper_output(
      R"({"type":"result","test":"copy","gpu":"0000:17:00.0","direction":"d2d","status":"pass","bytes":1e9,"bytes_per_s":null,"mismatches":-0}
)",
      &run);
  ASSERT_EQ(run.copies.size(), 1u) << all_errors(run);
  EXPECT_EQ(run.copies[0].bytes, 1000000000u);
  EXPECT_EQ(run.copies[0].bytes_per_s, 0);
}

}  // namespace
}  // namespace gd
