// cuda.arch-not-in-build: the program's GPU code has no image for this GPU's
// architecture. CUDA says so with error 209, cudaErrorNoKernelImageForDevice
// ("no kernel image is available for execution on the device"; the runtime
// API reference: code generation options that do not include the device's
// configuration), and PyTorch warns at start that a GPU's "CUDA capability
// sm_XY is not compatible with the current PyTorch installation". The
// machine is fine: a warning, and the fix is a build for this GPU. Only the
// program's own words show it, so the check reads the lines `explain`
// recorded.
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_program_arch(const Snapshot& s, const Config&) {
  constexpr const char* kId = "cuda.arch-not-in-build";
  std::vector<std::string> lines;
  for (const auto& r : s.reported) {
    bool no_image =
        (r.kind == "cuda-runtime" || r.kind == "cuda-driver" || r.kind == "nccl") && r.code == 209;
    if (no_image || r.kind == "arch-not-in-build") lines.push_back(line_ref(r));
  }
  if (lines.empty()) {
    if (s.reported.empty()) return {};
    return not_applicable(kId, "The text shows no GPU code missing for the GPU's architecture.");
  }
  Finding f = make_finding(kId, Severity::kWarn,
                           "The program has no GPU code for this GPU's architecture (CUDA "
                           "error 209): the GPU and driver are fine, the build is not for them.");
  f.evidence = lines;
  f.remedy = {
      "nvidia-smi --query-gpu=name,compute_cap --format=csv   # the architecture the build "
      "needs (6.0 is sm_60)",
      "PyTorch: python -c 'import torch; print(torch.cuda.get_arch_list())' lists the "
      "architectures the installed wheel carries; install a wheel (or CUDA variant) that lists "
      "this GPU's",
      "your own CUDA code: build it with -gencode arch=compute_XY,code=sm_XY for this GPU"};
  return {f};
}

}  // namespace gd
