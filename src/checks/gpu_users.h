// Who uses each GPU, judged for the checks (docs/check.md "Who uses each
// GPU"): a process of a running job is normal and an orphan is the fault,
// whatever the GPU's memory or compute mode says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/gpu_process.h"  // job_text
#include "snapshot/snapshot.h"

namespace gd {

enum class UserKind {
  kJob,           // a process of a Slurm job or pod that still runs
  kOrphan,        // its Slurm job or pod has ended, and it still holds the GPU
  kUnattributed,  // no job found, or whether it still runs is unknown: never blamed
  kUnseen,        // not in this PID namespace (another container's), or gone since
};

struct GpuUser {
  GpuProcess process;  // as the workload probe read it; pid and NVML's view only without one
  UserKind kind = UserKind::kUnattributed;
  std::string why;  // what decided kind ("slurmstepd [4711.batch] pid 812 runs")
};

// The processes NVML lists on this GPU (compute and graphics), judged. A
// snapshot without the workload probe (an older one) gives each pid with
// NVML's memory figure only, unattributed.
std::vector<GpuUser> gpu_users(const Snapshot& s, const NvmlGpu& g);
// Every process on any GPU, once, judged.
std::vector<GpuUser> all_gpu_users(const Snapshot& s);

// "pid 4711 (python, alice, slurm job 4711, running 2 h 3 min)": what an
// operator needs to find the process and its owner.
std::string describe_process(const GpuProcess& p);
// describe_process of each, in order.
std::vector<std::string> describe_processes(const std::vector<GpuUser>& users);
// Its GPU memory on `bus` as NVML said it; nullopt when NVML did not.
std::optional<uint64_t> memory_bytes_on(const GpuProcess& p, const std::string& bus);
// The same as text ("70.0 GiB"), "" when NVML did not say.
std::string memory_on(const GpuProcess& p, const std::string& bus);

// GPUs a new process can use now: NVML answered, no process on them, not
// PROHIBITED, and at most `held_fraction` of the memory used. By NVML index.
std::vector<const NvmlGpu*> free_gpus(const Snapshot& s, double held_fraction);
// "GPUs 1, 3 (0000:21:00.0, 0000:61:00.0) are free", "no GPU is free", for a
// one-line note.
std::string free_gpus_text(const Snapshot& s, double held_fraction);
// "export CUDA_VISIBLE_DEVICES=GPU-...,GPU-...   # the GPUs free now"; ""
// when no free GPU has a UUID.
std::string free_gpus_remedy(const Snapshot& s, double held_fraction);

}  // namespace gd
