// Which GPUs are fit for a job, and which environment settings this machine
// needs: a pure function of the snapshot and the checks' report. `gpudoctor
// env` prints it, `gpudoctor run` applies it (docs/env.md, docs/run.md).
//
// Health rule (docs/env.md "Which GPUs are healthy"):
//  - a GPU is unfit when a finding of severity fail names it (Finding.gpus);
//  - a fail finding that names no GPU concerns the whole machine (CUDA does
//    not start, NVML does not answer, ...): it makes every GPU unfit;
//  - findings about the job's own environment do not count against a GPU:
//    those about the GPU selection and numbering (visible-devices.*,
//    device-order.mismatch: answered by the CUDA_VISIBLE_DEVICES and
//    CUDA_DEVICE_ORDER every plan sets), and those an env fix of the table
//    below cures on this machine, with the findings that follow from them
//    (cuda.init-failed after cuda.stub-library);
//  - a GPU on the PCI bus that the driver owns but neither NVML nor CUDA
//    lists (it fell off the bus) is unfit even when no finding names it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "facts/cuda_visible.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct GpuFitness {
  std::string bus_id;  // "0000:41:00.0"
  std::string uuid;    // "GPU-..."; "" unknown
  std::string name;    // "NVIDIA GeForce RTX 4090"; "" unknown
  int smi_index = -1;  // nvidia-smi (NVML) index; -1 unknown
  // CUDA ordinal under CUDA_DEVICE_ORDER=PCI_BUS_ID with every GPU visible;
  // -1 when CUDA cannot enumerate it.
  int cuda_pci_index = -1;
  int numa_node = -1;         // sysfs numa_node; -1 unknown or no NUMA
  std::string local_cpulist;  // sysfs local_cpulist, "0-15,32-47"; "" unknown
  // Listed by NVML or CUDA (or, when neither answered, bound to the nvidia
  // driver on the bus). False: on the bus only, e.g. fallen off it.
  bool enumerable = true;
  bool healthy = true;
  // The fail findings that make it unfit, rank order (machine-wide ones
  // included); empty for an unfit GPU only when !enumerable.
  std::vector<std::string> unhealthy_ids;
};

// One environment variable a job should get.
struct EnvSetting {
  std::string name;
  std::string value;             // "" = set empty (the loader reads it as unset)
  std::string why;               // one line, for a comment above it
  std::vector<std::string> ids;  // the findings it answers
  bool container_only = false;   // read when a container is created (docker, k8s)
};

// What each env fix reads: the findings whose remedy is an environment
// setting on this machine. Documented in docs/env.md "Fixes".
struct EnvFixRule {
  const char* id;        // finding id
  const char* variable;  // the variable it sets
  const char* what;      // the new value, in words (comments, docs)
  // The new value from the current one; nullptr for CUDA_DEVICE_ORDER and
  // CUDA_VISIBLE_DEVICES, which the plan sets from the GPU list.
  std::string (*apply)(const std::string& current);
  // Applying it cures the finding for a job started with it (false: it only
  // matters when the next container is created).
  bool cures_job;
  bool container_only;
};
const std::vector<EnvFixRule>& env_fix_rules();

struct Fitness {
  GpuInventory inventory;        // gpus[0..inventory.gpus.size()) are these, same order
  std::vector<GpuFitness> gpus;  // nvidia-smi order, then GPUs only the bus shows
  // Fail findings that name no GPU and that no env fix cures: each makes
  // every GPU unfit. Rank order.
  std::vector<std::string> machine_ids;
  // Fail or warn findings the plan's settings answer (not counted against
  // any GPU).
  std::vector<std::string> answered_ids;
  // Settings from the fix table that change something here (not
  // CUDA_DEVICE_ORDER / CUDA_VISIBLE_DEVICES, which the plan sets).
  std::vector<EnvSetting> fixes;

  size_t healthy_count() const;
  const GpuFitness* find(const std::string& bus_id) const;
};

Fitness assess_fitness(const Snapshot& s, const Report& r);

// --- the job's environment ----------------------------------------------------

struct JobEnvOptions {
  // Leave unfit GPUs out of CUDA_VISIBLE_DEVICES.
  bool exclude_unhealthy = true;
  // Set CUDA_VISIBLE_DEVICES even when the user's environment has none
  // (env: always; run: only with --exclude-unhealthy). A user's own value is
  // always rewritten by UUID, because CUDA_DEVICE_ORDER=PCI_BUS_ID would
  // change what its indices mean.
  bool always_set_visible = true;
};

// What a job started with `settings` sees.
//
// The user's CUDA_VISIBLE_DEVICES is respected, never widened: the job gets
// the GPUs it names (each once, in its order, read as CUDA reads it under the
// user's CUDA_DEVICE_ORDER, without entries CUDA rejects), less the unfit
// ones when excluding. When it cannot be translated into whole GPUs (MIG
// instances, an index under an order that cannot be predicted) it is left as
// is, and so is CUDA_DEVICE_ORDER when its indices depend on it.
struct JobEnv {
  std::vector<EnvSetting> settings;  // CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES, fixes
  bool user_selection = false;       // the user's environment set CUDA_VISIBLE_DEVICES
  bool kept_user_value = false;      // ... and it was left untouched (see notes)
  // Positions in Fitness::gpus: the user's selection (all enumerable GPUs
  // when none), then what the job sees in CUDA ordinal order.
  std::vector<size_t> selected;
  std::vector<size_t> visible;
  bool visible_known = true;           // false: a kept user value (selected, visible empty)
  std::vector<size_t> excluded;        // unfit GPUs left out
  std::vector<size_t> unhealthy_kept;  // unfit GPUs the job still sees
  std::vector<std::string> notes;      // one line each, for stderr

  size_t visible_healthy(const Fitness& f) const;
  const EnvSetting* find(const std::string& name) const;
};

JobEnv plan_job_env(const Snapshot& s, const Fitness& f, const JobEnvOptions& opt);

// The unfit GPUs among `positions` (all of Fitness::gpus when empty), said
// once: "0000:61:00.0 (gpu.fallen-off-bus, gpu.missing)" per GPU for its own
// findings, and one "every GPU (memory.address-space-limit)" for the
// machine-wide ones. "" when all are fit.
std::string describe_unfit(const Fitness& f, const std::vector<size_t>& positions = {});

// --- CPU binding ------------------------------------------------------------------

// The job's local rank, from LOCAL_RANK (torchrun), SLURM_LOCALID (srun),
// OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), first one set wins.
struct LocalRank {
  bool found = false;
  int rank = 0;          // 0 when none is set
  std::string variable;  // which one
  std::string error;     // set but not a non-negative integer
};
LocalRank local_rank(const std::map<std::string, std::string>& env);

// sysfs cpulist "0-15,32-47" -> {0..15, 32..47}, ascending, unique.
// Error: the first part that is not N or N-M.
Result<std::vector<int>> parse_cpu_list(const std::string& text);
// The inverse: "0-15,32-47".
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace gd
