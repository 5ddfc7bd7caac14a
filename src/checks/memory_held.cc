// memory.held-by-other-process: a GPU whose memory other processes already
// fill. A new process then fails to create its context with out of memory (2),
// which looks like a broken CUDA install when it is a busy GPU.
//
// A busy GPU is no fault in itself (docs/check.md "Who uses each GPU"): on a
// node that runs jobs (Config::fleet) a running job's memory is ok, and
// asked by a person it is a note that says whose it is and which GPUs are
// free. It warns or fails only where CUDA itself ran out of memory. An
// orphan's memory is process.orphan's finding.
#include <fmt/format.h>

#include <algorithm>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/gpu_users.h"
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

// Who holds GPU `bus`, one evidence line each.
std::vector<std::string> holders(const Snapshot& s, const std::string& bus,
                                 const std::vector<GpuUser>& users) {
  std::vector<std::string> out;
  for (const GpuUser& u : users) {
    std::optional<uint64_t> bytes = memory_bytes_on(u.process, bus);
    std::string mem = bytes ? bytes_exact(*bytes) : "";
    std::string name = s.workload.attempted
                           ? describe_process(u.process)
                           : fmt::format("pid {}{}", u.process.pid, process_name(s, u.process.pid));
    out.push_back(fmt::format("{} uses {}: {}", name,
                              mem.empty() ? "memory NVML does not report" : mem, u.why));
  }
  return out;
}

Finding full_gpu(const Snapshot& s, const Config& c, const NvmlGpu& g, double share,
                 Comparison held) {
  const std::string& bdf = g.pci_bus_id.value;
  std::vector<GpuUser> users = gpu_users(s, g);
  const CudaRun* u = user_cuda_run(s);
  const CudaDevice* dev = u != nullptr ? run_device(*u, bdf) : nullptr;
  bool ctx_oom = dev != nullptr && dev->ctx_rc == kOutOfMemory;
  // cuInit's out of memory is usually the address-space limit; only without
  // one does a full GPU explain it.
  bool init_oom = u != nullptr && run_failed_with(*u, kOutOfMemory) &&
                  !s.limits.rlimit_as_bytes.has_value() && !s.limits.rlimit_data_bytes.has_value();
  bool failed = ctx_oom || init_oom;
  size_t jobs = 0, orphans = 0;
  std::vector<std::string> jobs_named;
  for (const GpuUser& x : users) {
    if (x.kind == UserKind::kJob) {
      ++jobs;
      jobs_named.push_back(job_text(x.process));
    }
    if (x.kind == UserKind::kOrphan) ++orphans;
  }
  std::sort(jobs_named.begin(), jobs_named.end());
  jobs_named.erase(std::unique(jobs_named.begin(), jobs_named.end()), jobs_named.end());
  std::string who;
  if (users.empty()) {
    who =
        "but NVML lists no process using it (processes in another container or PID namespace "
        "are not shown)";
  } else if (!jobs_named.empty() && jobs == users.size()) {
    who = "held by " + join(jobs_named, ", ");
  } else if (users.size() <= 2) {
    who = "held by " + join(describe_processes(users), " and ");
  } else {
    who = fmt::format("{} processes hold it", users.size());
  }
  std::string summary =
      fmt::format("GPU {} ({}) is {:.0f}% full: {}", g.index, bdf, share * 100, who);
  // Severity: a failed CUDA start is the user's problem whoever holds it; a
  // periodic check on a job node expects full GPUs; a person asking is told.
  Severity severity = failed ? Severity::kFail : c.fleet ? Severity::kOk : Severity::kInfo;
  if (failed) summary += ", and CUDA ran out of memory on it";
  if (severity == Severity::kInfo) summary += "; " + free_gpus_text(s, c.memory_held_fraction);
  if (severity == Severity::kOk) {
    summary += orphans > 0 ? " (the orphan's part is process.orphan's finding)"
                           : ": a running job's memory, as expected on a job node";
  }
  Finding f = make_finding(kId, severity, summary);
  f.gpus = {bdf};
  f.evidence.push_back(fmt::format(
      "memory used {} of {} ({:.1f}%; threshold {:.0f}%)", bytes_exact(g.memory_used_bytes.value),
      bytes_exact(g.memory_total_bytes.value), share * 100, c.memory_held_fraction * 100));
  // An ok finding states only requirements it meets (tests/invariants).
  if (severity != Severity::kOk) add_comparison(&f, std::move(held));
  for (std::string& line : holders(s, bdf, users)) f.evidence.push_back(std::move(line));
  if (!g.processes.ok() && g.processes.rc >= 0) {
    f.evidence.push_back("NVML process list: " + nvml_error(g.processes.rc));
  }
  if (ctx_oom) {
    f.evidence.push_back("creating a CUDA context on this GPU returned " +
                         cuda_driver_error(kOutOfMemory));
  } else if (init_oom) {
    f.evidence.push_back("CUDA with this environment: " + describe_run(*u));
  }
  if (severity == Severity::kOk) return f;
  if (std::string free = free_gpus_remedy(s, c.memory_held_fraction); !free.empty()) {
    f.remedy.push_back(free);
  }
  f.remedy.push_back(
      "nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # who holds "
      "which GPU");
  std::vector<std::string> own;
  for (const GpuUser& x : users) {
    if (x.process.uid && *x.process.uid == s.limits.uid) {
      own.push_back(std::to_string(x.process.pid));
    }
  }
  if (!own.empty()) {
    f.remedy.push_back(
        fmt::format("kill {}   # yours: only if they are no longer needed", join(own, " ")));
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
  bool all_ok = std::all_of(out.begin(), out.end(),
                            [](const Finding& f) { return f.severity == Severity::kOk; });
  if (!all_ok || fine.empty()) {
    if (out.empty()) return not_applicable(kId, "NVML reported no GPU's memory use");
    return out;
  }
  Finding f = make_finding(kId, Severity::kOk,
                           fmt::format("no {}GPU is more than {:.0f}% full",
                                       out.empty() ? "" : "other ", c.memory_held_fraction * 100));
  f.evidence = fine;
  for (auto& x : fine_cmps) add_comparison(&f, std::move(x));
  out.push_back(std::move(f));
  return out;
}

}  // namespace gd
