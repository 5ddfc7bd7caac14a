// DiagRun and DiagFigure lists as JSON: a full run survives the round trip
// (in memory and through text) field for field; the reader refuses wrong
// types with one printable line and tolerates missing and unknown fields.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "diag/json.h"

namespace gd {
namespace {

using nlohmann::json;

// A run with every field away from its default.
DiagRun full_run() {
  DiagRun r;
  r.level = 3;
  r.duration_s = 12.5;
  r.seed = 18446744073709551615u;
  r.helper = "/usr/libexec/gpudoctor-diag";
  r.started_at = "2026-12-03T10:00:00Z";
  r.wall_ms = 81234.567;
  r.cuda_runtime_version = 13000;
  r.cuda_driver_version = 12080;
  r.cublas_version = 130100;
  r.nccl_version = 22809;
  r.devices.push_back({"0000:17:00.0", 0, "NVIDIA H200", 9, 0, 132, 150754820096u, 150000000000u,
                       1980000, 3201000, 6144});
  r.tests.push_back({"context", "0000:17:00.0", DiagStatus::kPass, "", 210.5});
  r.tests.push_back({"kernel", "0000:17:00.0", DiagStatus::kError, "too many resources", 1.25});
  r.copies.push_back({"0000:17:00.0", "h2d", DiagStatus::kFail, "2 bytes differ", 268435456u,
                      5.4e10, true, 2, 4.97});
  DiagMemtestResult m;
  m.bus_id = "0000:17:00.0";
  m.status = DiagStatus::kFail;
  m.message = "1 word read back wrong";
  m.bytes = 140000000000u;
  m.passes = 2;
  m.patterns = {"address", "random"};
  m.seed = 7;
  m.errors = 1;
  m.failures.push_back({4096, 140737488355328u, 18446744073709551615u, 3, "random"});
  m.duration_ms = 20001.5;
  r.memtests.push_back(m);
  DiagGemmResult g;
  g.bus_id = "0000:17:00.0";
  g.dtype = "bf16";
  g.status = DiagStatus::kSkip;
  g.message = "no bf16 before compute capability 8.0";
  g.m = g.n = g.k = 8192;
  g.iterations = 400;
  g.flops_per_s = 7.123456789012345e14;
  g.checked = 200;
  g.mismatches = 0;
  g.max_rel_error = 0.1 + 0.2;  // not exactly representable in short decimal
  g.duration_ms = 20000;
  r.gemms.push_back(g);
  r.p2p.push_back(
      {"0000:17:00.0", "0000:2a:00.0", DiagStatus::kPass, "", true, 3.7e11, 2.1, true, 0});
  DiagNcclResult n;
  n.bus_ids = {"0000:17:00.0", "0000:2a:00.0"};
  n.points = {{1048576, 30.1, 3.5e10, 6.1e10}, {1073741824, 3100, 3.4e11, 3.4e11}};
  n.nccl_version = 22809;
  n.status = DiagStatus::kFail;
  n.mismatches = 5;
  r.nccl = n;
  DiagScalingResult s;
  s.bus_ids = n.bus_ids;
  s.one_gpu_step_ms = 10.2;
  s.all_gpu_step_ms = 10.9;
  s.per_gpu_compute_ms = {10.2, 10.3};
  s.gradient_bytes = 268435456;
  s.speedup = 1.87;
  s.efficiency = 0.935;
  r.scaling = s;
  DiagSample a;
  a.t_ms = 1000.5;
  a.bus_id = "0000:17:00.0";
  a.temperature_c = -5;
  a.power_mw = 700000;
  a.sm_clock_mhz = 1980;
  a.clock_event_reasons = 0x8000000000000001ULL;
  a.utilization_pct = 100;
  r.samples.push_back(a);
  DiagSample b;  // every optional unknown
  b.t_ms = 2000;
  b.bus_id = "0000:2a:00.0";
  r.samples.push_back(b);
  r.errors.push_back({"gemm", "0000:17:00.0", "cublasGemmEx: CUBLAS_STATUS_EXECUTION_FAILED"});
  r.incomplete = "timeout after 95.0 s in memtest on 0000:17:00.0";
  r.last_started = "memtest 0000:17:00.0";
  r.stderr_tail = "line one\nline two";
  return r;
}

// Equality through the JSON form: the writer is checked for completeness by
// EveryFieldIsWritten, the reader by the spot checks after each round trip.
void expect_same(const DiagRun& a, const DiagRun& b) {
  EXPECT_EQ(diag_run_to_json(a).dump(2), diag_run_to_json(b).dump(2));
}

TEST(DiagJson, FullRunRoundTripsInMemoryAndThroughText) {
  DiagRun r = full_run();
  json j = diag_run_to_json(r);
  EXPECT_EQ(j["schema"], "gpudoctor.diag/v1");
  Result<DiagRun> back = diag_run_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error();
  expect_same(r, *back);

  Result<DiagRun> text = diag_run_from_json(json::parse(j.dump()));
  ASSERT_TRUE(text.ok()) << text.error();
  expect_same(r, *text);
  // Spot checks that the comparison itself sees the values.
  EXPECT_EQ(text->seed, 18446744073709551615u);
  EXPECT_EQ(text->gemms[0].max_rel_error, 0.1 + 0.2);
  EXPECT_EQ(text->gemms[0].status, DiagStatus::kSkip);
  EXPECT_EQ(text->memtests[0].failures[0].expected, 18446744073709551615u);
  EXPECT_EQ(text->samples[0].temperature_c, -5);
  EXPECT_EQ(text->samples[0].clock_event_reasons, 0x8000000000000001ULL);
  EXPECT_FALSE(text->samples[1].power_mw.has_value());
  EXPECT_FALSE(text->samples[1].temperature_c.has_value());
  ASSERT_TRUE(text->nccl.has_value());
  EXPECT_EQ(text->nccl->points[1].bytes, 1073741824u);
  EXPECT_EQ(text->nccl->mismatches, 5);
  ASSERT_TRUE(text->scaling.has_value());
  EXPECT_EQ(text->scaling->per_gpu_compute_ms[1], 10.3);
  EXPECT_EQ(text->stderr_tail, "line one\nline two");
  EXPECT_EQ(text->devices[0].mem_bus_width_bits, 6144);
  EXPECT_EQ(text->copies[0].mismatches, 2);
  EXPECT_EQ(text->p2p[0].latency_us, 2.1);
}

// One key per struct field (diag/result.h): a field added there and not
// here fails this test before it silently drops out of the history.
TEST(DiagJson, EveryFieldIsWritten) {
  json j = diag_run_to_json(full_run());
  EXPECT_EQ(j.size(), 24u);
  EXPECT_EQ(j["devices"][0].size(), 11u);
  EXPECT_EQ(j["tests"][0].size(), 5u);
  EXPECT_EQ(j["copies"][0].size(), 9u);
  EXPECT_EQ(j["memtests"][0].size(), 10u);
  EXPECT_EQ(j["memtests"][0]["failures"][0].size(), 5u);
  EXPECT_EQ(j["gemms"][0].size(), 13u);
  EXPECT_EQ(j["p2p"][0].size(), 9u);
  EXPECT_EQ(j["nccl"].size(), 6u);
  EXPECT_EQ(j["nccl"]["points"][0].size(), 4u);
  EXPECT_EQ(j["scaling"].size(), 9u);
  EXPECT_EQ(j["samples"][0].size(), 7u);
  EXPECT_EQ(j["errors"][0].size(), 3u);
  EXPECT_EQ(diag_figures_to_json({DiagFigure{}})[0].size(), 8u);
}

TEST(DiagJson, TheDefaultRunRoundTripsWithNullOptionals) {
  DiagRun r;
  json j = diag_run_to_json(r);
  EXPECT_TRUE(j["nccl"].is_null());
  EXPECT_TRUE(j["scaling"].is_null());
  Result<DiagRun> back = diag_run_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_FALSE(back->nccl.has_value());
  EXPECT_FALSE(back->scaling.has_value());
  expect_same(r, *back);
}

TEST(DiagJson, MissingAndUnknownFieldsAreFine) {
  // An older row: only some fields; a newer one: fields this version lacks.
  json j = {{"schema", "gpudoctor.diag/v1"},
            {"level", 2},
            {"gemms", {{{"bus_id", "0000:17:00.0"}, {"dtype", "fp16"}, {"future", {1, 2}}}}},
            {"future_section", {{"x", 1}}}};
  Result<DiagRun> r = diag_run_from_json(j);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->level, 2);
  ASSERT_EQ(r->gemms.size(), 1u);
  EXPECT_EQ(r->gemms[0].dtype, "fp16");
  EXPECT_EQ(r->gemms[0].status, DiagStatus::kPass);
  EXPECT_TRUE(r->devices.empty());
  EXPECT_EQ(r->duration_s, 0);
}

struct BadRun {
  json j;
  const char* error;
};

class DiagJsonBad : public ::testing::TestWithParam<BadRun> {};

TEST_P(DiagJsonBad, IsOnePrintableLine) {
  Result<DiagRun> r = diag_run_from_json(GetParam().j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find(GetParam().error), std::string::npos) << r.error();
  for (char c : r.error()) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << r.error();
}

json with(const char* key, json value) {
  json j = diag_run_to_json(full_run());
  j[key] = std::move(value);
  return j;
}

json with_in(const char* list, const char* key, json value) {
  json j = diag_run_to_json(full_run());
  j[list][0][key] = std::move(value);
  return j;
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, DiagJsonBad,
    ::testing::Values(
        BadRun{json::array(), "diag run: an array, expected an object"},
        BadRun{json{{"level", 1}}, "diag run: \"schema\" is missing"},
        BadRun{json{{"schema", "gpudoctor.diag/v2"}},
               "diag run: schema \"gpudoctor.diag/v2\", expected gpudoctor.diag/v1"},
        BadRun{json{{"schema", "gpudoctor.diag/v1\n\x07"}},
               "schema \"gpudoctor.diag/v1\\x0a\\x07\""},
        BadRun{with("level", "2"), "\"level\" is a string, expected an integer"},
        BadRun{with("seed", -1), "\"seed\" is -1, expected an integer from 0 to"},
        BadRun{with("wall_ms", true), "\"wall_ms\" is a boolean, expected a number"},
        BadRun{with("devices", json::object()), "\"devices\" is an object, expected an array"},
        BadRun{with("devices", json::array({1})),
               "\"devices[0]\" is an integer, expected an object"},
        BadRun{with_in("gemms", "status", "great"), "unknown status \"great\""},
        BadRun{with_in("gemms", "flops_per_s", "fast"),
               "\"gemms[0].flops_per_s\" is a string, expected a number"},
        BadRun{with_in("samples", "power_mw", -3), "\"samples[0].power_mw\" is -3"},
        BadRun{with_in("copies", "verified", "yes"),
               "\"copies[0].verified\" is a string, expected true or false"},
        BadRun{with("nccl", json::array()), "\"nccl\" is an array, expected an object"},
        BadRun{with("stderr_tail", 3), "\"stderr_tail\" is an integer, expected a string"}));

TEST(DiagJson, NestedListErrorsNameTheirPath) {
  json j = diag_run_to_json(full_run());
  j["memtests"][0]["failures"][0]["actual"] = "0xdead";
  Result<DiagRun> r = diag_run_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("\"memtests[0].failures[0].actual\" is a string"), std::string::npos)
      << r.error();
  j = diag_run_to_json(full_run());
  j["nccl"]["points"][1]["bytes"] = 1.5;
  r = diag_run_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("\"nccl.points[1].bytes\" is 1.5"), std::string::npos) << r.error();
}

TEST(DiagJson, FiguresRoundTripAndRefuseWrongTypes) {
  std::vector<DiagFigure> f = {
      {"0000:17:00.0", "gemm.bf16", 7.1e14, "FLOP/s", 5.9e14, "H200 datasheet 989 TFLOP/s x 0.60",
       7.2e14, "ok"},
      {"", "scaling.efficiency", 0.81, "ratio", 0.85, "threshold", 0, "below-expected"}};
  json j = diag_figures_to_json(f);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["metric"], "gemm.bf16");
  Result<std::vector<DiagFigure>> back = diag_figures_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error();
  ASSERT_EQ(back->size(), 2u);
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_EQ((*back)[i].bus_id, f[i].bus_id);
    EXPECT_EQ((*back)[i].metric, f[i].metric);
    EXPECT_EQ((*back)[i].value, f[i].value);
    EXPECT_EQ((*back)[i].unit, f[i].unit);
    EXPECT_EQ((*back)[i].expected, f[i].expected);
    EXPECT_EQ((*back)[i].basis, f[i].basis);
    EXPECT_EQ((*back)[i].peer_median, f[i].peer_median);
    EXPECT_EQ((*back)[i].judgement, f[i].judgement);
  }
  EXPECT_TRUE(diag_figures_from_json(json::array())->empty());

  Result<std::vector<DiagFigure>> obj = diag_figures_from_json(json::object());
  ASSERT_FALSE(obj.ok());
  EXPECT_EQ(obj.error(), "diag figures: an object, expected an array");
  j[1]["value"] = "0.81";
  Result<std::vector<DiagFigure>> bad = diag_figures_from_json(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("\"figures[1].value\" is a string, expected a number"),
            std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace gd
