// diag's progress lines from the helper's output (diag/progress.h).
#include <gtest/gtest.h>

#include "diag/progress.h"

namespace gd {
namespace {

TEST(DiagProgress, AFinishedTestIsOneLine) {
  EXPECT_EQ(diag_progress_line(R"({"type":"result","test":"memtest","gpu":"0000:17:00.0",)"
                               R"("status":"fail","duration_ms":12100})"),
            "  fail  memtest 0000:17:00.0 (12 s)");
  EXPECT_EQ(diag_progress_line(R"({"type":"result","test":"copy","gpu":"0000:17:00.0",)"
                               R"("direction":"h2d","status":"pass","duration_ms":5.5})"),
            "  pass  copy h2d 0000:17:00.0 (0.01 s)");
  EXPECT_EQ(diag_progress_line(R"({"type":"result","test":"p2p","src":"0000:17:00.0",)"
                               R"("dst":"0000:2a:00.0","status":"pass"})"),
            "  pass  p2p 0000:17:00.0 -> 0000:2a:00.0");
  EXPECT_EQ(
      diag_progress_line(R"({"type":"result","test":"nccl","gpus":["a","b"],"status":"skip"})"),
      "  skip  nccl on 2 GPUs");
}

TEST(DiagProgress, OtherLinesAndGarbageGiveNothing) {
  EXPECT_EQ(diag_progress_line(R"({"type":"hello","schema":"gpudoctor.diag-helper/v1"})"), "");
  EXPECT_EQ(diag_progress_line(R"({"type":"done"})"), "");
  EXPECT_EQ(diag_progress_line("not json at all"), "");
  EXPECT_EQ(diag_progress_line(R"(["type","result"])"), "");
  EXPECT_EQ(diag_progress_line(R"({"type":"result","test":7,"status":null})"), "  ?     ");
  EXPECT_EQ(
      diag_started_test(R"({"type":"start","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16"})"),
      "gemm bf16 0000:17:00.0");
  EXPECT_EQ(diag_started_test(R"({"type":"result","test":"gemm"})"), "");
  // A "type" that is not a string (found by fuzz_diag_helper in CI) is not a crash.
  EXPECT_EQ(diag_progress_line(R"({"type":20512.7})"), "");
  EXPECT_EQ(diag_started_test(R"({"type":["start"],"test":"gemm"})"), "");
}

TEST(DiagProgress, ControlCharactersFromTheHelperNeverReachTheTerminal) {
  std::string line = diag_progress_line(
      R"({"type":"result","test":"mem\u001b[2Jtest","gpu":"0000:17:00.0","status":"pass"})");
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
}

}  // namespace
}  // namespace gd
