// process.orphan: a process that still holds a GPU after its Slurm job or
// pod ended. It keeps the GPU's memory (and an exclusive-process GPU)
// from every later job, and no scheduler knows: the classic leak of a
// crashed launcher, a worker that ignored SIGTERM, or one stuck in the
// kernel. A process of a job that still runs is never this finding.
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/gpu_users.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "process.orphan";

// "70.0 GiB on GPU 3 (0000:41:00.0)" for each GPU it holds.
std::vector<std::string> held(const Snapshot& s, const GpuProcess& p,
                              std::vector<std::string>* buses) {
  std::vector<std::string> out;
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok()) continue;
    const std::string& bus = g.pci_bus_id.value;
    bool on = false;
    for (const GpuProcessUse& use : p.gpus) on = on || use.bus_id == bus;
    if (!on) continue;
    buses->push_back(bus);
    std::string mem = memory_on(p, bus);
    out.push_back(fmt::format("{} on GPU {} ({})", mem.empty() ? "memory" : mem, g.index, bus));
  }
  return out;
}

Finding orphan(const Snapshot& s, const Config& c, const GpuUser& u) {
  const GpuProcess& p = u.process;
  std::vector<std::string> buses;
  std::vector<std::string> holds = held(s, p, &buses);
  std::string job = job_text(p);
  Finding f = make_finding(kId, c.fleet ? Severity::kFail : Severity::kWarn,
                           fmt::format("Orphan {} of {}, which has ended, still holds {}",
                                       describe_process(p), job, join(holds, " and ")));
  f.gpus = buses;
  // What a scheduler's reason field can hold (Slurm: 256 bytes).
  std::string first_bus = buses.empty() ? "" : " on GPU " + buses.front();
  std::string mem = buses.empty() ? "" : memory_on(p, buses.front());
  f.brief = fmt::format("orphan pid {} ({} ended) holds {}{}", p.pid, job,
                        mem.empty() ? "memory" : mem, first_bus);
  f.evidence.push_back(describe_process(p));
  f.evidence.push_back(u.why);
  if (!p.cgroup.empty()) f.evidence.push_back("cgroup " + p.cgroup);
  if (p.job_source == "environ") {
    f.evidence.push_back("its environment names SLURM_JOB_ID=" + p.job_id);
  }
  for (const std::string& h : holds) f.evidence.push_back("holds " + h);
  if (p.state == "D") {
    f.evidence.push_back(
        "state D: it waits in the kernel and no signal ends it until that wait returns");
  }
  f.remedy.push_back(fmt::format(
      "ps -o pid,user,lstart,stat,cmd -p {}   # confirm it is the job's leftover", p.pid));
  if (p.job_kind == "slurm") {
    f.remedy.push_back(
        fmt::format("sacct -j {} -o JobID,State,End   # when the job ended", p.job_id));
  }
  f.remedy.push_back(fmt::format(
      "kill {0}; sleep 10; kill -9 {0}   # end it; its GPU memory is freed with it", p.pid));
  if (p.state == "D") {
    f.remedy.push_back(
        "if it stays in state D, reboot the node (a GPU reset needs every process on the GPU "
        "gone)");
  }
  return f;
}

}  // namespace

std::vector<Finding> check_orphans(const Snapshot& s, const Config& c) {
  if (!nvml_answered(s)) {
    return not_applicable(kId, nvml_unavailable_reason(s) + ", so the GPUs' processes are unknown");
  }
  if (!s.workload.attempted) {
    return not_applicable(kId, "who runs the GPUs' processes was not probed");
  }
  std::vector<GpuUser> users = all_gpu_users(s);
  std::vector<Finding> out;
  std::vector<std::string> fine;
  for (const GpuUser& u : users) {
    if (u.kind == UserKind::kOrphan) {
      out.push_back(orphan(s, c, u));
    } else {
      fine.push_back(describe_process(u.process) + ": " + u.why);
    }
  }
  if (!out.empty()) return out;
  // A GPU whose process list NVML did not give may hold an orphan unseen.
  std::vector<std::string> unlisted;
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (g.pci_bus_id.ok() && !g.processes.ok()) unlisted.push_back(g.pci_bus_id.value);
  }
  if (!unlisted.empty()) {
    Finding f = make_finding(kId, Severity::kNotApplicable,
                             "NVML gave no process list for GPU " + join(unlisted, ", "));
    f.evidence = std::move(fine);
    return {f};
  }
  Finding f = make_finding(kId, Severity::kOk,
                           users.empty() ? "No process uses a GPU."
                                         : "Every process on a GPU belongs to a running job or "
                                           "to no job gpudoctor can tell has ended.");
  f.evidence = std::move(fine);
  return {f};
}

}  // namespace gd
