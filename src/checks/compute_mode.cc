// compute-mode.exclusive: a GPU in EXCLUSIVE_PROCESS mode that another process
// already holds, or in PROHIBITED mode, refuses new contexts with
// CUDA_ERROR_DEVICE_UNAVAILABLE (46) (nvidia-facts §3, code 46).
//
// Many sites run exclusive mode on purpose: a GPU a job holds that way is
// the site's policy working. On a job node (Config::fleet) it is ok; asked by
// a person it is a note that a new context would fail there, with the GPUs
// that are free. Only a context CUDA actually refused fails. The answer is
// inferred from NVML: gpudoctor opens no context on such a GPU.
#include <fmt/format.h>

#include <algorithm>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/gpu_users.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "compute-mode.exclusive";
constexpr int kDeviceUnavailable = 46;

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
    if (!d->ctx_skipped.empty()) return "gpudoctor opened no context on it: " + d->ctx_skipped;
  }
  if (run_failed_with(*u, kDeviceUnavailable)) {
    *refused = true;
    return "CUDA with this environment: " + describe_run(*u);
  }
  return "";
}

Finding busy(const Snapshot& s, const Config& c, const NvmlGpu& g, int mode) {
  const std::string& bdf = g.pci_bus_id.value;
  std::vector<GpuUser> on_gpu = gpu_users(s, g);
  std::vector<std::string> users = describe_processes(on_gpu);
  bool refused = false;
  std::string cuda = cuda_on_gpu(s, bdf, &refused);
  Finding f;
  if (mode == 2) {
    f = make_finding(kId, Severity::kFail,
                     fmt::format("GPU {} ({}) is in compute-prohibited mode: no process may use "
                                 "it with CUDA",
                                 g.index, bdf));
  } else {
    Severity severity = refused ? Severity::kFail : c.fleet ? Severity::kOk : Severity::kInfo;
    std::string used_by = fmt::format("used by {}", join(users, ", "));
    f = make_finding(
        kId, severity,
        refused ? fmt::format("GPU {} ({}) is in exclusive-process mode, {}, and CUDA was refused "
                              "a context on it",
                              g.index, bdf, used_by)
        : severity == Severity::kOk
            ? fmt::format("GPU {} ({}) is in exclusive-process mode, {}: the mode at work", g.index,
                          bdf, used_by)
            : fmt::format("A new CUDA context on GPU {} ({}) would fail: it is in "
                          "exclusive-process mode, {}; {}",
                          g.index, bdf, used_by, free_gpus_text(s, c.memory_held_fraction)));
  }
  f.gpus = {bdf};
  f.evidence.push_back("compute mode = " + nvml_compute_mode_name(mode));
  for (const GpuUser& u : on_gpu) {
    f.evidence.push_back(describe_process(u.process) + ": " + u.why);
  }
  if (!cuda.empty()) f.evidence.push_back(cuda);
  if (f.severity == Severity::kOk) return f;
  if (mode != 2) {
    if (std::string free = free_gpus_remedy(s, c.memory_held_fraction); !free.empty()) {
      f.remedy.push_back(free);
    }
    f.remedy.push_back("or wait for the process on it to finish");
  }
  // Exclusive or prohibited mode is often a site's policy: changing it is
  // the administrator's call, so it comes last and says so.
  f.remedy.push_back(
      fmt::format("sudo nvidia-smi -i {} -c DEFAULT   # only if the mode is not your site's "
                  "policy (ask its administrator first)",
                  g.index));
  return f;
}

}  // namespace

std::vector<Finding> check_compute_mode(const Snapshot& s, const Config& c) {
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
      out.push_back(busy(s, c, g, mode));
    } else {
      fine.push_back(fmt::format("{}: compute mode {}{}", g.pci_bus_id.value,
                                 nvml_compute_mode_name(mode),
                                 exclusive ? ", no process on it yet" : ""));
    }
  }
  bool all_ok = std::all_of(out.begin(), out.end(),
                            [](const Finding& f) { return f.severity == Severity::kOk; });
  if (!all_ok || fine.empty()) {
    if (out.empty()) return not_applicable(kId, "NVML reported no GPU's compute mode");
    return out;
  }
  Finding f =
      make_finding(kId, Severity::kOk,
                   out.empty() ? "no GPU refuses new CUDA processes by its compute mode"
                               : "no other GPU refuses new CUDA processes by its compute mode");
  f.evidence = fine;
  out.push_back(std::move(f));
  return out;
}

}  // namespace gd
