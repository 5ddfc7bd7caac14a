// Running the GPU helper (gpudoctor-diag) as a child with a deadline, like
// every other GPU probe (probe/child.h), while a second child samples NVML
// (probe/sampler.h) so the run records temperature, power, clocks and
// throttle reasons under the load.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diag/result.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct DiagOptions {
  int level = 1;                     // 1, 2 or 3
  std::vector<std::string> bus_ids;  // the GPUs to test, normalized, in order
  // Each GPU's NUMA-local CPUs ("0-15,32-47"), passed as --gpu BUS@CPUS.
  std::map<std::string, std::string> gpu_cpus;
  double duration_s = 20;  // --duration: each sustained test
  uint64_t seed = 1;
  std::string plant_fault;  // "", "gemm", "memory" (tests, bench/diag_gpu.sh)
  std::string helper;       // the gpudoctor-diag binary
  // The helper's environment: the caller's, with CUDA_VISIBLE_DEVICES
  // removed and CUDA_DEVICE_ORDER=PCI_BUS_ID (diag_environment()).
  std::vector<std::string> env;
  double deadline_s = 0;  // 0: diag_deadline_s(level, duration_s, bus_ids.size())
  // NVML sampling during the run; sampler_exe "" = none.
  std::string sampler_exe;  // the gpudoctor binary (`__probe-nvml-sampler`)
  std::string nvml_lib = "libnvidia-ml.so.1";
  double sample_interval_s = 1;
  // Each line of the helper's output as it arrives (diag/progress.h).
  std::function<void(std::string_view line)> on_helper_line;
};

// How long a run may take before it counts as hung: the tests' own length
// for the level and GPU count, plus a margin for context creation (slow on
// a machine without persistence mode) and cuBLAS/NCCL start-up.
double diag_deadline_s(int level, double duration_s, size_t gpus);
// The run's deadline: opt.deadline_s when set, else the formula above.
double diag_deadline_s(const DiagOptions& opt);

// `env` with CUDA_VISIBLE_DEVICES removed and CUDA_DEVICE_ORDER=PCI_BUS_ID.
std::vector<std::string> diag_environment(const std::vector<std::string>& env);

// The helper's argv[1..] for these options (gpu/README.md).
std::vector<std::string> diag_helper_args(const DiagOptions& opt);

// gpudoctor-diag beside this binary; "" when absent.
std::string find_diag_helper();

// --gpus LIST against a snapshot: each item an nvidia-smi index, a PCI bus
// id (any case, with or without the domain) or a GPU UUID; "" = every GPU
// NVML lists, else every NVIDIA display controller on the PCI bus. Error: an
// item that names no GPU, a duplicate, or no GPU at all (one line).
Result<std::vector<std::string>> resolve_diag_gpus(const Snapshot& s, const std::string& list);

// Each GPU's NUMA-local CPU list from the snapshot ("" when unknown).
std::map<std::string, std::string> diag_gpu_cpus(const Snapshot& s,
                                                 const std::vector<std::string>& bus_ids);

// Runs the helper; never fails: a helper that could not start, hung,
// crashed or exited early is recorded in run.incomplete (with
// run.last_started and run.stderr_tail), and the results it gave before
// that stand.
DiagRun run_diag_helper(const DiagOptions& opt);

}  // namespace gd
