// The recovery re-probe (diag/reprobe.h) through the real children: NVML
// and CUDA children over the fake libraries, tests/fakes/fake_diag_helper.py
// as gpudoctor-diag, and the context log of the fake libcuda and helper
// ($GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG). A GPU a job uses is not touched: no
// CUDA context, no diag, and it does not pass.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "diag/reprobe.h"
#include "fake_probe.h"
#include "probe/child.h"

namespace gd {
namespace {

using ::testing::Contains;
using ::testing::StartsWith;
using testing_fakes::fake_options;

std::string temp_file(const std::string& text) {
  char tmpl[] = "/tmp/gd-reprobe-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd >= 0) close(fd);
  std::ofstream(tmpl) << text;
  return tmpl;
}

// "<bus> <what>" per line of the context log ("0000:21:00.0 0",
// "0000:21:00.0 diag").
std::vector<std::string> log_entries(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string pid, bus, what;
  while (in >> pid >> bus >> what) out.push_back(bus + " " + what);
  return out;
}

struct Reprobe {
  std::string log = temp_file("");
  std::string diag = temp_file(R"({"lines": [], "then": "done"})");
  ~Reprobe() {
    unlink(log.c_str());
    unlink(diag.c_str());
  }
  std::vector<ReprobeResult> run(const std::string& scenario,
                                 const std::vector<std::string>& buses) {
    ReprobeOptions o;
    o.probe = fake_options();
    o.env = {
        "PATH=/usr/bin:/bin",
        "GPUDOCTOR_FAKE_SCENARIO=" GD_SOURCE_DIR "/tests/fakes/scenarios/" + scenario + ".json",
        "GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG=" + log, "GPUDOCTOR_FAKE_DIAG=" + diag};
    o.diag_helper = GD_SOURCE_DIR "/tests/fakes/fake_diag_helper.py";
    o.diag_deadline_s = 20;
    return reprobe_gpus(o, buses);
  }
};

TEST(Reprobe, AGpuAJobHoldsWaitsAndGetsNeitherContextNorDiag) {
  Reprobe rp;
  std::vector<ReprobeResult> r = rp.run("exclusive", {"0000:01:00.0", "0000:21:00.0"});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_THAT(r[0].failure,
              StartsWith("CUDA: waiting for the GPU to be idle: busy: 1 process (pid 4242"));
  EXPECT_THAT(r[0].steps.front(), StartsWith("NVML: answers"));
  // The idle GPU is proven as before: one context, then the helper.
  EXPECT_THAT(r[1].steps, Contains("CUDA: a context opened and its memory answered"));
  std::vector<std::string> log = log_entries(rp.log);
  EXPECT_EQ(log, (std::vector<std::string>{"0000:21:00.0 0", "0000:21:00.0 diag"}));
}

TEST(Reprobe, AnIdleGpuIsProvenWithOneContext) {
  Reprobe rp;
  std::vector<ReprobeResult> r = rp.run("ws-4x4090", {"0000:41:00.0"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(r[0].steps, Contains("CUDA: a context opened and its memory answered"));
  EXPECT_EQ(log_entries(rp.log), (std::vector<std::string>{"0000:41:00.0 0", "0000:41:00.0 diag"}));
}

TEST(Reprobe, NvmlNotAnsweringFailsBeforeAnyContext) {
  Reprobe rp;
  std::vector<ReprobeResult> r = rp.run("nvml-crash", {"0000:01:00.0"});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_THAT(r[0].failure, StartsWith("NVML: "));
  EXPECT_TRUE(log_entries(rp.log).empty());
}

}  // namespace
}  // namespace gd
