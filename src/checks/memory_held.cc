// memory.held-by-other-process: a GPU whose memory other processes already
// fill. A new process then fails to create its context with out of memory (2),
// which looks like a broken CUDA install when it is a busy GPU.
#include <fmt/format.h>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/bytes.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "memory.held-by-other-process";
constexpr int kOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY / cudaErrorMemoryAllocation

std::string process_name(const Snapshot& s, uint32_t pid) {
  for (const auto& p : s.processes) {
    if (p.pid == static_cast<int>(pid)) return " (" + p.comm + ")";
  }
  return "";
}

// A GPU's free share, for suggesting another GPU to use.
bool gpu_mostly_free(const NvmlGpu& g, double fraction) {
  if (!g.memory_total_bytes.ok() || !g.memory_used_bytes.ok() || g.memory_total_bytes.value == 0) {
    return false;
  }
  return static_cast<double>(g.memory_used_bytes.value) /
             static_cast<double>(g.memory_total_bytes.value) <=
         fraction;
}

// The requirement, in exact bytes: used at most the configured share of the
// total (memory_held_fraction).
Comparison held_comparison(const Config& c, const NvmlGpu& g) {
  auto limit = static_cast<uint64_t>(static_cast<double>(g.memory_total_bytes.value) *
                                     c.memory_held_fraction);
  return compare_bytes(
      fmt::format("{} GPU memory used vs {:.0f}% of its total {}", g.pci_bus_id.value,
                  c.memory_held_fraction * 100, bytes_exact(g.memory_total_bytes.value)),
      g.memory_used_bytes.value, "<=", limit);
}

Finding full_gpu(const Snapshot& s, const Config& c, const NvmlGpu& g, double share,
                 Comparison held) {
  const std::string& bdf = g.pci_bus_id.value;
  std::vector<NvmlProcess> procs;
  if (g.processes.ok()) procs = g.processes.value;
  const CudaRun* u = user_cuda_run(s);
  const CudaDevice* dev = u != nullptr ? run_device(*u, bdf) : nullptr;
  bool ctx_oom = dev != nullptr && dev->ctx_rc == kOutOfMemory;
  // cuInit's out of memory is usually the address-space limit; only without
  // one does a full GPU explain it.
  bool init_oom = u != nullptr && run_failed_with(*u, kOutOfMemory) &&
                  !s.limits.rlimit_as_bytes.has_value() && !s.limits.rlimit_data_bytes.has_value();
  bool failed = ctx_oom || init_oom;

  std::string who = procs.empty()
                        ? std::string(
                              "but NVML lists no process using it (processes in another "
                              "container or PID namespace are not shown)")
                        : fmt::format("{} other process{} hold{} it", procs.size(),
                                      procs.size() == 1 ? "" : "es", procs.size() == 1 ? "s" : "");
  std::string summary =
      fmt::format("GPU {} ({}) is {:.0f}% full: {}", g.index, bdf, share * 100, who);
  if (failed) summary += ", and CUDA ran out of memory on it";
  Finding f = make_finding(kId, failed ? Severity::kFail : Severity::kWarn, summary);
  f.gpus = {bdf};
  f.evidence.push_back(fmt::format(
      "memory used {} of {} ({:.1f}%; threshold {:.0f}%)", bytes_exact(g.memory_used_bytes.value),
      bytes_exact(g.memory_total_bytes.value), share * 100, c.memory_held_fraction * 100));
  add_comparison(&f, std::move(held));
  std::vector<std::string> pids;
  for (const auto& p : procs) {
    pids.push_back(std::to_string(p.pid));
    f.evidence.push_back(p.used_memory_bytes
                             ? fmt::format("pid {}{} uses {}", p.pid, process_name(s, p.pid),
                                           bytes_exact(*p.used_memory_bytes))
                             : fmt::format("pid {}{} (memory use not reported by NVML)", p.pid,
                                           process_name(s, p.pid)));
  }
  if (!g.processes.ok() && g.processes.rc >= 0) {
    f.evidence.push_back("NVML process list: " + nvml_error(g.processes.rc));
  }
  if (ctx_oom) {
    f.evidence.push_back("creating a CUDA context on this GPU returned " +
                         cuda_driver_error(kOutOfMemory));
  } else if (init_oom) {
    f.evidence.push_back("CUDA with this environment: " + describe_run(*u));
  }
  f.remedy.push_back(
      "nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # who holds "
      "which GPU");
  if (!pids.empty()) {
    f.remedy.push_back(
        fmt::format("kill {}   # only if these are yours and no longer needed", join(pids, " ")));
  }
  for (const auto& other : s.nvml.gpus) {
    if (&other == &g || !other.uuid.ok() || !gpu_mostly_free(other, c.memory_held_fraction)) {
      continue;
    }
    f.remedy.push_back(fmt::format("or use a free GPU: export CUDA_VISIBLE_DEVICES={}   # {}",
                                   other.uuid.value, other.pci_bus_id.value));
    break;
  }
  return f;
}

}  // namespace

std::vector<Finding> check_memory_held(const Snapshot& s, const Config& c) {
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so GPU memory use is unknown");
  }
  std::vector<Finding> out;
  std::vector<std::string> fine;
  std::vector<Comparison> fine_cmps;
  for (const auto& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok() || !g.memory_total_bytes.ok() || !g.memory_used_bytes.ok() ||
        g.memory_total_bytes.value == 0) {
      continue;
    }
    double share = static_cast<double>(g.memory_used_bytes.value) /
                   static_cast<double>(g.memory_total_bytes.value);
    Comparison held = held_comparison(c, g);
    if (!held.met) {
      out.push_back(full_gpu(s, c, g, share, std::move(held)));
    } else {
      fine_cmps.push_back(std::move(held));
      fine.push_back(fmt::format("{}: {} of {} used", g.pci_bus_id.value,
                                 format_bytes(g.memory_used_bytes.value),
                                 format_bytes(g.memory_total_bytes.value)));
    }
  }
  if (!out.empty()) return out;
  if (fine.empty()) return not_applicable(kId, "NVML reported no GPU's memory use");
  Finding f =
      make_finding(kId, Severity::kOk,
                   fmt::format("no GPU is more than {:.0f}% full", c.memory_held_fraction * 100));
  f.evidence = fine;
  for (auto& x : fine_cmps) add_comparison(&f, std::move(x));
  return {f};
}

}  // namespace gd
