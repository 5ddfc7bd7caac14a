// cuda.fork-after-init: a process initialized CUDA, then forked workers that
// use it. CUDA's state does not survive fork(); PyTorch refuses in the child
// with "Cannot re-initialize CUDA in forked subprocess" (facts §6.2,
// `_lazy_init`). Only a program's own message shows it, so the check reads
// the lines `explain` recorded; a live snapshot has none and gets no finding.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_fork_after_init(const Snapshot& s, const Config&) {
  constexpr const char* kId = "cuda.fork-after-init";
  std::vector<std::string> lines;
  for (const auto& r : s.reported) {
    if (r.kind == "fork-after-init") {
      lines.push_back(line_ref(r));
    }
  }
  if (lines.empty()) {
    if (s.reported.empty()) return {};
    // A text that does not show the fork decides nothing: explain may still
    // suspect it from an error code.
    return not_applicable(kId, "The text reports no CUDA use in a forked process.");
  }
  Finding f = make_finding(
      kId, Severity::kFail,
      "The program initialized CUDA and then forked worker processes that use CUDA; CUDA cannot "
      "be used again in a forked child.");
  f.evidence = lines;
  f.remedy = {
      "Start workers with 'spawn' instead of fork: "
      "torch.multiprocessing.set_start_method('spawn', force=True) before creating them",
      "DataLoader(..., multiprocessing_context='spawn') when the workers touch CUDA",
      "Or move every CUDA call (torch.cuda.is_available(), .cuda(), .to('cuda')) after the fork",
      "PYTORCH_NVML_BASED_CUDA_CHECK=1 makes torch.cuda.is_available() ask NVML instead of "
      "initializing CUDA, so that check alone no longer poisons fork (facts §6.2)"};
  return {f};
}

}  // namespace gd
