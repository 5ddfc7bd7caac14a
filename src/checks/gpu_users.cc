#include "checks/gpu_users.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "checks/driver_helpers.h"  // format_seconds
#include "util/bytes.h"
#include "util/text.h"

namespace gd {
namespace {

// The NVML list a GPU gives for one kind, when it answered.
void add_uses(const NvmlGpu& g, const NvmlValue<std::vector<NvmlProcess>>& list, const char* kind,
              std::map<uint32_t, GpuProcess>* out) {
  if (!list.ok()) return;
  for (const NvmlProcess& p : list.value) {
    GpuProcess& gp = (*out)[p.pid];
    gp.pid = p.pid;
    gp.gpus.push_back({g.pci_bus_id.value, kind, p.used_memory_bytes});
  }
}

GpuUser judge(const Snapshot& s, GpuProcess p) {
  GpuUser u;
  if (!s.workload.attempted) {
    u.why = "who runs it was not recorded (a snapshot without the workload probe)";
  } else if (!p.visible) {
    u.kind = UserKind::kUnseen;
    u.why = "not in this PID namespace: another container's process, or one that just ended";
  } else if (p.job_state == "running") {
    u.kind = UserKind::kJob;
    u.why = p.job_evidence;
  } else if (p.job_state == "ended") {
    u.kind = UserKind::kOrphan;
    u.why = p.job_evidence;
  } else if (!p.job_kind.empty()) {
    u.why = "whether its " + job_text(p) + " still runs is unknown" +
            (p.job_evidence.empty() ? "" : ": " + p.job_evidence);
  } else {
    u.why = "it belongs to no Slurm job, pod or container";
  }
  u.process = std::move(p);
  return u;
}

}  // namespace

std::vector<GpuUser> gpu_users(const Snapshot& s, const NvmlGpu& g) {
  std::map<uint32_t, GpuProcess> procs;
  add_uses(g, g.processes, "compute", &procs);
  add_uses(g, g.graphics_processes, "graphics", &procs);
  std::vector<GpuUser> out;
  for (auto& [pid, nvml_view] : procs) {
    const GpuProcess* seen = find_gpu_process(s.workload, pid);
    // The workload probe's reading where it has one, NVML's view alone else.
    out.push_back(judge(s, seen != nullptr ? GpuProcess(*seen) : std::move(nvml_view)));
  }
  return out;
}

std::vector<GpuUser> all_gpu_users(const Snapshot& s) {
  std::map<uint32_t, GpuUser> by_pid;
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok()) continue;
    for (GpuUser& u : gpu_users(s, g)) {
      auto [it, fresh] = by_pid.try_emplace(u.process.pid, u);
      // Without the workload probe each GPU gave a partial view: merge.
      if (!fresh && !s.workload.attempted) {
        for (auto& use : u.process.gpus) it->second.process.gpus.push_back(use);
      }
    }
  }
  std::vector<GpuUser> out;
  for (auto& [pid, u] : by_pid) out.push_back(std::move(u));
  return out;
}

std::string describe_process(const GpuProcess& p) {
  std::vector<std::string> parts;
  if (!p.comm.empty()) parts.push_back(p.comm);
  if (!p.user.empty()) {
    parts.push_back(p.user);
  } else if (p.uid) {
    parts.push_back(fmt::format("uid {}", *p.uid));
  }
  if (std::string job = job_text(p); !job.empty()) parts.push_back(job);
  if (p.age_s) parts.push_back("running " + format_seconds(*p.age_s));
  if (p.state == "D") parts.push_back("stuck in the kernel (state D)");
  return fmt::format("pid {}", p.pid) + (parts.empty() ? "" : " (" + join(parts, ", ") + ")");
}

std::vector<std::string> describe_processes(const std::vector<GpuUser>& users) {
  std::vector<std::string> out;
  for (const GpuUser& u : users) out.push_back(describe_process(u.process));
  return out;
}

// A process listed both as a compute and a graphics process of one GPU
// reports its one total in each list: the largest figure, not their sum.
std::optional<uint64_t> memory_bytes_on(const GpuProcess& p, const std::string& bus) {
  std::optional<uint64_t> bytes;
  for (const GpuProcessUse& use : p.gpus) {
    if (use.bus_id != bus || !use.used_memory_bytes) continue;
    bytes = std::max(bytes.value_or(0), *use.used_memory_bytes);
  }
  return bytes;
}

std::string memory_on(const GpuProcess& p, const std::string& bus) {
  std::optional<uint64_t> bytes = memory_bytes_on(p, bus);
  return bytes ? format_bytes(*bytes) : "";
}

std::vector<const NvmlGpu*> free_gpus(const Snapshot& s, double held_fraction) {
  std::vector<const NvmlGpu*> out;
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (g.handle_rc != 0 || !g.processes.ok() || !g.processes.value.empty()) continue;
    if (g.graphics_processes.ok() && !g.graphics_processes.value.empty()) continue;
    if (g.compute_mode.ok() && g.compute_mode.value == 2) continue;
    if (!g.memory_total_bytes.ok() || !g.memory_used_bytes.ok() ||
        g.memory_total_bytes.value == 0 ||
        static_cast<double>(g.memory_used_bytes.value) >
            static_cast<double>(g.memory_total_bytes.value) * held_fraction) {
      continue;
    }
    out.push_back(&g);
  }
  return out;
}

std::string free_gpus_text(const Snapshot& s, double held_fraction) {
  std::vector<std::string> index, buses;
  for (const NvmlGpu* g : free_gpus(s, held_fraction)) {
    index.push_back(std::to_string(g->index));
    buses.push_back(g->pci_bus_id.value);
  }
  if (index.empty()) return "no GPU is free";
  return fmt::format("GPU{} {} ({}) {} free", index.size() == 1 ? "" : "s", join(index, ", "),
                     join(buses, ", "), index.size() == 1 ? "is" : "are");
}

std::string free_gpus_remedy(const Snapshot& s, double held_fraction) {
  std::vector<std::string> uuids, buses;
  for (const NvmlGpu* g : free_gpus(s, held_fraction)) {
    if (!g->uuid.ok()) continue;
    uuids.push_back(g->uuid.value);
    buses.push_back(g->pci_bus_id.value);
  }
  if (uuids.empty()) return "";
  return fmt::format("export CUDA_VISIBLE_DEVICES={}   # the GPU{} free now: {}", join(uuids, ","),
                     uuids.size() == 1 ? "" : "s", join(buses, ", "));
}

}  // namespace gd
