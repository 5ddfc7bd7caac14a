// Each row comes from a public thread in which NVIDIA, or the maintainer of
// the project that hit it, confirmed the driver as the cause and named the
// build that fixes it (or the one to go back to). A reporter's own A/B test
// alone is not enough for a row.
#include "catalog/driver_regressions.h"

#include <algorithm>
#include <string>

#include "util/substring_index.h"

namespace gd {

const std::vector<DriverRegression>& driver_regressions() {
  // clang-format off
  static const std::vector<DriverRegression> kRows = {
    {{"535.54.03"}, "", "", "535.104.05",
     "NVML's per-process list (nvmlDeviceGetComputeRunningProcesses) comes back garbled: an "
     "inadvertent ABI break in the process-info struct",
     RegressionScope::kAny, {"getcomputerunningprocesses", "usedgpumemory", "process list",
                            "processes information"},
     "https://github.com/gpuopenanalytics/pynvml/pull/48 (NVIDIA: \"an inadvertent ABI break in "
     "the 535 driver, which will [be] fixed in the next patch release\"); "
     "https://github.com/NVIDIA/go-nvml/issues/75 (535.154.05 fixed it)",
     "d-reg-535-54-nvml-abi-break-pynvml"},
    {{"535.98"}, "", "", "535.104.05",
     "NVML's process-info v3 calls were removed, so tools that list GPU processes show none or "
     "fail with Function Not Found",
     RegressionScope::kAny, {"getcomputerunningprocesses", "usedgpumemory", "process list",
                            "processes information", "function not found"},
     "https://github.com/XuehaiPan/nvitop/issues/88 (maintainer, from nvml.h's history: "
     "535.104.05 re-adds the v3 APIs removed in the previous release)",
     "d-reg-535-98-nvml-procinfo-v3-removed"},
    {{}, "525.0", "", "525.105.17",
     "GSP firmware RPC timeouts (Xid 119) from a GSP-RM bug introduced in the first 525 release",
     RegressionScope::kAny, {"timeout waiting for rpc from gsp", "xid 119", ": 119,"},
     "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446 (NVIDIA's 525.105.17 release "
     "notes: \"introduced in the first 525 driver release\")",
     "c-ogkm-446-xid119-gsp-525-bug"},
    {{}, "560.0", "560.999.999", "a 570 driver",
     "NCCL may hang with peer-to-peer enabled (NCCL_P2P_DISABLE=1 avoids it)",
     RegressionScope::kMultiGpu, {" hang", "hangs", "nccl_p2p_disable"},
     "https://github.com/dmlc/xgboost/issues/11242 (maintainer: \"Update the GPU driver to the "
     "latest. I have run tests with 570, and the issue is fixed there\")",
     "d-reg-560-nccl-p2p-hang"},
    {{"570.124.06", "570.133.20", "570.148.08", "570.158.01"}, "", "", "570.172.08",
     "on nodes with a mix of MIG slices and full GPUs, Kubernetes GPU pods stay Pending (the "
     "device plugin's calls hang)",
     RegressionScope::kMig, {"pending", " mig ", "mig slice", "mig mode"},
     "https://github.com/NVIDIA/gpu-operator/issues/1361 (NVIDIA: 570.172.08 is the first R570 "
     "driver with the fix; the GPU Operator's known issues list the four builds)",
     "d-reg-570-mig-pods-pending"},
    {{"331.38"}, "", "", "331.20 (downgrade)",
     "a convolution's backward pass stalls, then the process crashes",
     RegressionScope::kAny, {"segfault", "segmentation fault"},
     "https://github.com/BVLC/caffe/issues/64 (maintainer: \"a CUDA incompatibility with NVIDIA "
     "driver 331.38. To fix, downgrade to 331.20\")",
     "d-reg-331-38-caffe-conv-segfault"},
    {{}, "331.0", "331.999.999", "340.24",
     "CUDA runs far slower on Kepler Tesla and Titan GPUs",
     RegressionScope::kAny, {"slow", "performance"},
     "https://github.com/BVLC/caffe/issues/687 (maintainer, passing on NVIDIA's fix: 340.24)",
     "d-reg-331-series-perf-340-24"},
  };
  // clang-format on
  return kRows;
}

namespace {

bool affected(const DriverRegression& r, const DriverVersion& v) {
  if (!r.builds.empty()) {
    return std::any_of(r.builds.begin(), r.builds.end(), [&](const char* b) {
      auto build = parse_driver_version(b);
      return build && compare(*build, v) == 0 && build->patch == v.patch;
    });
  }
  auto from = parse_driver_version(r.from);
  if (!from || compare(v, *from) < 0) return false;
  if (*r.to != '\0') {
    auto to = parse_driver_version(r.to);
    return to && compare(v, *to) <= 0;
  }
  auto fixed = parse_driver_version(r.fixed);
  return fixed && compare(v, *fixed) < 0;
}

}  // namespace

std::vector<const DriverRegression*> regressions_for(const DriverVersion& v) {
  std::vector<const DriverRegression*> out;
  for (const auto& r : driver_regressions()) {
    if (affected(r, v)) out.push_back(&r);
  }
  return out;
}

bool shows_regression(const DriverRegression& r, std::string_view lowered) {
  return std::any_of(r.symptoms.begin(), r.symptoms.end(),
                     [&](const char* w) { return lowered.find(w) != std::string_view::npos; });
}

bool shows_any_regression(std::string_view lowered) {
  static const SubstringIndex kWords = [] {
    std::vector<std::string> words;
    for (const auto& r : driver_regressions()) {
      for (const char* w : r.symptoms) words.emplace_back(w);
    }
    return SubstringIndex(std::move(words));
  }();
  return kWords.first_in(lowered) >= 0;
}

}  // namespace gd
