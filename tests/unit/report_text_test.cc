// The human report (report/text.cc) over fixture machines through the real
// checks: a healthy machine reads OK in a few lines, notes never lift the
// verdict, the usual remedies come with a problem or -v, -q is the verdict
// alone, and a symptom on top is not called a cause.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "checks/runner.h"
#include "config/config.h"
#include "report/render.h"
#include "snapshot/snapshot_json.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using fixtures::hgx_8xh100;
using fixtures::ws_4x4090;

using testing_util::checked;

size_t lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReportText, HealthyMachinesReadOkInAtMostSixLines) {
  for (const Snapshot& s : {hgx_8xh100(), ws_4x4090()}) {
    Report r = checked(s);
    EXPECT_EQ(r.verdict, Severity::kOk);
    EXPECT_EQ(exit_code_for(r.verdict), 0);
    std::string text = render_text(r);
    EXPECT_LE(lines(text), 6u) << text;
    EXPECT_TRUE(has(text, "\nVerdict: OK — 0 problems")) << text;
    EXPECT_FALSE(has(text, "What the usual remedies do")) << text;
    EXPECT_FALSE(has(text, "\n\n")) << text;  // no section headings
  }
}

// The real H200 record (tests/device/recorded/): the healthy machine that
// once got a false FAIL.
TEST(ReportText, TheRecordedH200ReadsOkInAtMostSixLines) {
  auto s = snapshot_from_file(std::string(GD_SOURCE_DIR) +
                              "/tests/device/recorded/h200-vm-580.159.04/faults/derived/"
                              "base.snapshot.json");
  ASSERT_TRUE(s.ok()) << s.error();
  Report r = checked(*s);
  r.snapshot = &*s;
  EXPECT_EQ(r.verdict, Severity::kOk);
  std::string text = render_text(r);
  EXPECT_LE(lines(text), 6u) << text;
  EXPECT_TRUE(has(text, "\nVerdict: OK — 0 problems")) << text;
}

TEST(ReportText, TheOrderDifferenceIsAOneLineNote) {
  std::string text = render_text(checked(ws_4x4090()));
  EXPECT_TRUE(has(text, "1 note")) << text;
  EXPECT_TRUE(has(text, "\n  INFO  device-order.mismatch: CUDA numbers these GPUs differently"))
      << text;
  EXPECT_FALSE(has(text, "evidence:")) << text;
}

TEST(ReportText, VerboseAddsTheRemediesAndTheDetails) {
  std::string text = render_text(checked(ws_4x4090()), {.verbose = true});
  EXPECT_TRUE(has(text, "What the usual remedies do on this machine")) << text;
  EXPECT_TRUE(has(text, "evidence:")) << text;
  EXPECT_TRUE(has(text, "Passed or not applicable")) << text;
}

TEST(ReportText, QuietIsTheVerdictLineAlone) {
  std::string text = render_text(checked(ws_4x4090()), {.quiet = true});
  EXPECT_EQ(lines(text), 1u) << text;
  EXPECT_TRUE(text.starts_with("Verdict: OK — ")) << text;
}

TEST(ReportText, AProblemComesWithItsRemediesAndTheVerdictOnTop) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "2,3";  // by index, while the orders differ
  Report r = checked(s);
  ASSERT_EQ(r.verdict, Severity::kWarn);
  std::string text = render_text(r);
  EXPECT_TRUE(has(text, "\nVerdict: WARN — 1 problem")) << text;
  EXPECT_LT(text.find("Verdict:"), text.find("Most likely root cause")) << text;
  EXPECT_TRUE(has(text, "What the usual remedies do on this machine")) << text;
}

TEST(ReportText, ASymptomAloneOnTopIsNotCalledTheCause) {
  Report r;
  Finding f;
  f.id = "cuda.init-failed";
  f.severity = Severity::kFail;
  f.summary = "CUDA does not start.";
  r.findings = {f};
  r.verdict = verdict_of(r.findings);
  std::string text = render_text(r);
  EXPECT_TRUE(has(text, "No cause found; the symptom\n  FAIL  cuda.init-failed")) << text;
  EXPECT_FALSE(has(text, "Most likely root cause")) << text;
}

TEST(ReportText, NotesNeverLiftTheVerdict) {
  Finding note;
  note.id = "persistence-mode.off";
  note.severity = Severity::kInfo;
  EXPECT_EQ(verdict_of({note}), Severity::kOk);
  Finding warn = note;
  warn.severity = Severity::kWarn;
  EXPECT_EQ(verdict_of({note, warn}), Severity::kWarn);
}

TEST(ReportText, ColourPaintsOnlyTheSeverityWords) {
  const std::string text =
      "header\nVerdict: FAIL — 1 problem\n\n  FAIL  gpu.missing\n        FAIL in a summary\n"
      "  INFO  persistence-mode.off: note\n  FAILED is no word of ours\n";
  const std::string painted = colorize_report(text);
  EXPECT_TRUE(has(painted, "Verdict: \033[1;31mFAIL\033[0m — 1 problem\n")) << painted;
  EXPECT_TRUE(has(painted, "  \033[1;31mFAIL\033[0m  gpu.missing\n")) << painted;
  EXPECT_TRUE(has(painted, "  \033[36mINFO\033[0m  persistence-mode.off")) << painted;
  // Indented text, a word that only starts like one, the header: as they were.
  EXPECT_TRUE(has(painted, "        FAIL in a summary\n")) << painted;
  EXPECT_TRUE(has(painted, "  FAILED is no word of ours\n")) << painted;
  EXPECT_TRUE(painted.starts_with("header\n")) << painted;
  EXPECT_EQ(colorize_report(""), "");
}

}  // namespace
}  // namespace gd
