// compute-mode.exclusive: a GPU in EXCLUSIVE_PROCESS mode that another process
// already holds, or in PROHIBITED mode, refuses new contexts with
// CUDA_ERROR_DEVICE_UNAVAILABLE (46) (nvidia-facts §3, code 46).
#include <fmt/format.h>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "compute-mode.exclusive";
constexpr int kDeviceUnavailable = 46;

// nvmlComputeMode_t (nvml.h): 0 DEFAULT, 1 EXCLUSIVE_THREAD (deprecated),
// 2 PROHIBITED, 3 EXCLUSIVE_PROCESS.
std::string mode_name(int mode) {
  switch (mode) {
    case 0:
      return "DEFAULT (0)";
    case 1:
      return "EXCLUSIVE_THREAD (1)";
    case 2:
      return "PROHIBITED (2)";
    case 3:
      return "EXCLUSIVE_PROCESS (3)";
    default:
      return fmt::format("unknown ({})", mode);
  }
}

// What CUDA's run with the user's environment says about this GPU.
std::string cuda_on_gpu(const Snapshot& s, const std::string& bdf, bool* refused) {
  *refused = false;
  const CudaRun* u = user_cuda_run(s);
  if (u == nullptr) return "";
  if (const CudaDevice* d = run_device(*u, bdf)) {
    if (d->ctx_rc > 0) {
      *refused = true;
      return "creating a CUDA context on it returned " + cuda_driver_error(d->ctx_rc);
    }
    if (d->ctx_rc == 0) return "CUDA created a context on it";
  }
  if (run_failed_with(*u, kDeviceUnavailable)) {
    *refused = true;
    return "CUDA with this environment: " + describe_run(*u);
  }
  return "";
}

Finding busy(const Snapshot& s, const NvmlGpu& g, int mode) {
  const std::string& bdf = g.pci_bus_id.value;
  std::vector<std::string> pids;
  if (g.processes.ok()) {
    for (const auto& p : g.processes.value) pids.push_back(std::to_string(p.pid));
  }
  bool refused = false;
  std::string cuda = cuda_on_gpu(s, bdf, &refused);
  Finding f;
  if (mode == 2) {
    f = make_finding(kId, Severity::kFail,
                     fmt::format("GPU {} ({}) is in compute-prohibited mode: no process may use "
                                 "it with CUDA",
                                 g.index, bdf));
  } else {
    f = make_finding(
        kId, refused ? Severity::kFail : Severity::kWarn,
        fmt::format("GPU {} ({}) is in exclusive-process mode and process{} {} already use{} it: "
                    "no other process can start CUDA there",
                    g.index, bdf, pids.size() == 1 ? "" : "es", join(pids, ", "),
                    pids.size() == 1 ? "s" : ""));
  }
  f.gpus = {bdf};
  f.evidence.push_back("compute mode = " + mode_name(mode));
  if (!pids.empty()) f.evidence.push_back("compute processes on it: " + join(pids, ", "));
  if (!cuda.empty()) f.evidence.push_back(cuda);
  f.remedy.push_back(
      fmt::format("sudo nvidia-smi -i {} -c DEFAULT   # let several processes share "
                  "it",
                  g.index));
  if (mode != 2) {
    f.remedy.push_back(
        "or wait for those processes to finish, or use another GPU "
        "(CUDA_VISIBLE_DEVICES)");
  }
  return f;
}

}  // namespace

std::vector<Finding> check_compute_mode(const Snapshot& s, const Config&) {
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so compute modes are unknown");
  }
  std::vector<Finding> out;
  std::vector<std::string> fine;
  for (const auto& g : s.nvml.gpus) {
    if (!g.compute_mode.ok() || !g.pci_bus_id.ok()) continue;
    int mode = g.compute_mode.value;
    bool exclusive = mode == 1 || mode == 3;
    bool taken = g.processes.ok() && !g.processes.value.empty();
    if (mode == 2 || (exclusive && taken)) {
      out.push_back(busy(s, g, mode));
    } else {
      fine.push_back(fmt::format("{}: compute mode {}{}", g.pci_bus_id.value, mode_name(mode),
                                 exclusive ? ", no process on it yet" : ""));
    }
  }
  if (!out.empty()) return out;
  if (fine.empty()) return not_applicable(kId, "NVML reported no GPU's compute mode");
  Finding f =
      make_finding(kId, Severity::kOk, "no GPU refuses new CUDA processes by its compute mode");
  f.evidence = fine;
  return {f};
}

}  // namespace gd
