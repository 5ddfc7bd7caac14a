// `check --format npd`: node-problem-detector's custom-plugin protocol
// (src/report/npd.h): exit 0 OK / 1 NonOK / 2 Unknown and one line that NPD
// keeps whole within its default max_output_length of 80 bytes.
#include "report/npd.h"

#include <gtest/gtest.h>

#include "checks/runner.h"
#include "config/config.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using fixtures::hgx_8xh100;
using fixtures::unload_driver;
using fixtures::ws_4x4090;

using testing_util::checked;

Finding finding(std::string id, Severity sev, std::vector<std::string> gpus = {}) {
  Finding f;
  f.id = std::move(id);
  f.severity = sev;
  f.gpus = std::move(gpus);
  return f;
}

// What NPD makes of the line: trims it, cuts it at 80 bytes. A good line
// loses nothing to the cut and is one printable ASCII line.
void expect_npd_clean(const NpdResult& r) {
  ASSERT_FALSE(r.message.empty());
  EXPECT_EQ(r.message.back(), '\n');
  std::string body = r.message.substr(0, r.message.size() - 1);
  EXPECT_LE(body.size(), kNpdMaxMessage) << body;
  for (char c : body) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << "byte " << int(c) << " in " << body;
  EXPECT_EQ(body.rfind("gpudoctor: ", 0), 0u) << body;
}

TEST(Npd, HealthyMachineIsOkWithGpuCount) {
  Snapshot s = hgx_8xh100();
  Report r = checked(s);
  ASSERT_NE(r.verdict, Severity::kFail);
  ASSERT_NE(r.verdict, Severity::kWarn);
  NpdResult n = render_npd(r);
  EXPECT_EQ(n.exit_code, 0);
  EXPECT_EQ(n.message, "gpudoctor: ok (8 GPUs)\n");
  expect_npd_clean(n);

  // The workstation's CUDA order differs from PCI order: a note, and the
  // node reads ok.
  Snapshot ws = ws_4x4090();
  NpdResult w = render_npd(checked(ws));
  EXPECT_EQ(w.exit_code, 0);
  EXPECT_EQ(w.message, "gpudoctor: ok (4 GPUs)\n");
}

TEST(Npd, FailingCheckIsNonOkAndNamesTheRootCause) {
  Snapshot s = hgx_8xh100();
  unload_driver(s);
  Report r = checked(s);
  ASSERT_EQ(r.verdict, Severity::kFail);
  NpdResult n = render_npd(r);
  EXPECT_EQ(n.exit_code, 1);
  // The finding ranked first (the root cause), as check's text report leads with it.
  EXPECT_EQ(n.message.rfind("gpudoctor: fail " + r.findings.front().id, 0), 0u) << n.message;
  expect_npd_clean(n);
}

TEST(Npd, FailLineNamesIdGpuAndTheRest) {
  Snapshot s = hgx_8xh100();
  Report r;
  r.snapshot = &s;
  r.verdict = Severity::kFail;
  r.findings = {finding("xid.79", Severity::kFail, {"0000:17:00.0"})};
  EXPECT_EQ(render_npd(r).message, "gpudoctor: fail xid.79 GPU 0000:17:00.0\n");
  EXPECT_EQ(render_npd(r).exit_code, 1);

  r.findings = {finding("xid.79", Severity::kFail, {"0000:17:00.0", "0000:2a:00.0"}),
                finding("gpu.missing", Severity::kFail),
                finding("thermal.high", Severity::kWarn, {"0000:3d:00.0"}),
                finding("persistence-mode.off", Severity::kInfo)};
  NpdResult n = render_npd(r);
  EXPECT_EQ(n.message, "gpudoctor: fail xid.79 GPU 0000:17:00.0 +1 GPU; +2 more\n");
  expect_npd_clean(n);
}

TEST(Npd, WarnIsOkUnlessAskedOtherwise) {
  Snapshot s = ws_4x4090();
  Report r;
  r.snapshot = &s;
  r.verdict = Severity::kWarn;
  r.findings = {finding("thermal.high", Severity::kWarn, {"0000:41:00.0"})};
  NpdResult n = render_npd(r);
  EXPECT_EQ(n.exit_code, 0);
  EXPECT_EQ(n.message, "gpudoctor: warn thermal.high GPU 0000:41:00.0\n");
  EXPECT_EQ(render_npd(r, NpdOptions{true}).exit_code, 1);
  // A fail stays NonOK either way.
  r.verdict = Severity::kFail;
  r.findings.front().severity = Severity::kFail;
  EXPECT_EQ(render_npd(r, NpdOptions{false}).exit_code, 1);
}

TEST(Npd, InfoVerdictIsOk) {
  Snapshot s = ws_4x4090();
  Report r;
  r.snapshot = &s;
  r.verdict = Severity::kInfo;
  r.findings = {finding("persistence-mode.off", Severity::kInfo)};
  EXPECT_EQ(render_npd(r).exit_code, 0);
  EXPECT_EQ(render_npd(r).message, "gpudoctor: ok (4 GPUs)\n");
}

TEST(Npd, NothingToJudgeIsUnknown) {
  Report r;
  NpdResult n = render_npd(r);
  EXPECT_EQ(n.exit_code, 2);
  expect_npd_clean(n);
}

TEST(Npd, LongAndHostileInputStaysWithinTheLimit) {
  Snapshot s = hgx_8xh100();
  Report r;
  r.snapshot = &s;
  r.verdict = Severity::kFail;
  std::vector<std::string> gpus;
  for (int i = 0; i < 64; ++i) gpus.push_back("0000:" + std::to_string(10 + i) + ":00.0");
  r.findings = {finding("container.driver-mismatch", Severity::kFail, gpus)};
  for (int i = 0; i < 120; ++i) r.findings.push_back(finding("xid.13", Severity::kWarn));
  NpdResult n = render_npd(r);
  EXPECT_EQ(n.exit_code, 1);
  expect_npd_clean(n);
  // The head is never dropped for the tail.
  EXPECT_EQ(n.message.rfind("gpudoctor: fail container.driver-mismatch GPU 0000:10:00.0", 0), 0u)
      << n.message;

  // A recorded snapshot is user input: a bus id with a newline, an id of
  // 200 bytes, UTF-8.
  r.findings = {finding(std::string(200, 'x'), Severity::kFail, {"0000:17:00.0\nInjected: yes"})};
  expect_npd_clean(render_npd(r));
  r.findings = {finding("xid.79", Severity::kFail, {"0000:17:00.0\r\n\xe2\x84\xa2"})};
  n = render_npd(r);
  expect_npd_clean(n);
  EXPECT_EQ(n.message.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace gd
