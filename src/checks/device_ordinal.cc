// visible-devices.ordinal-out-of-range: a job whose launcher starts more
// processes than it sees GPUs. torchrun, deepspeed and accelerate start one
// process per GPU and each takes the GPU of its local rank: the first rank
// past the visible GPUs fails with CUDA error 101, "invalid device ordinal"
// (docs/nvidia-facts.md §3), often long after the others started and
// waited for it. The request comes from `run`'s command or a command line
// in pasted text (probe/job_request.h).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/util.h"
#include "facts/cuda_visible.h"

namespace gd {
namespace {

constexpr const char* kId = "visible-devices.ordinal-out-of-range";

struct Seen {
  size_t count = 0;
  std::string how;       // the evidence line that says so
  bool at_most = false;  // count is an upper bound: the GPUs here are unknown
};

// How many GPUs the job sees: CUDA's own count in the job's environment,
// else the GPUs here less what CUDA_VISIBLE_DEVICES leaves out.
std::optional<Seen> gpus_seen(const Snapshot& s) {
  const CudaRun* run = user_cuda_run(s);
  if (run != nullptr && run->init_rc == 0 && run->device_count_rc == 0) {
    return Seen{static_cast<size_t>(run->device_count),
                fmt::format("CUDA counts {} device{} in the job's environment (cuDeviceGetCount)",
                            run->device_count, run->device_count == 1 ? "" : "s")};
  }
  GpuInventory inv = gpu_inventory(s);
  const std::string* cvd = env_var(s, "CUDA_VISIBLE_DEVICES");
  if (inv.gpus.empty()) {
    if (cvd == nullptr) return std::nullopt;
    // However many GPUs the machine has, CUDA shows no more than the
    // entries it accepts.
    size_t n = parse_cuda_visible_devices(cvd, {}, DeviceOrder::kFastestFirst).visible_count();
    return Seen{
        n,
        fmt::format("CUDA_VISIBLE_DEVICES={} names {} GPU{} at most", *cvd, n, n == 1 ? "" : "s"),
        true};
  }
  std::string here = fmt::format("{} GPU{} here (from {})", inv.gpus.size(),
                                 inv.gpus.size() == 1 ? "" : "s", gpu_source_name(inv.source));
  if (cvd == nullptr) return Seen{inv.gpus.size(), here};
  CvdResult r = parse_cuda_visible_devices(
      cvd, inv.gpus, parse_device_order(env_var(s, "CUDA_DEVICE_ORDER")).order);
  // A MIG instance or an entry not checkable here: the count is a guess.
  if (r.unverified_visible > 0) return std::nullopt;
  return Seen{r.visible_count(), fmt::format("CUDA_VISIBLE_DEVICES={} leaves {} of the {}", *cvd,
                                             r.visible_count(), here)};
}

}  // namespace

std::vector<Finding> check_device_ordinal(const Snapshot& s, const Config&) {
  const EnvInfo& env = s.env;
  if (env.job_gpus <= 0) {
    return not_applicable(kId, "no launcher asking for a number of GPUs (gpudoctor run reads it)");
  }
  auto seen = gpus_seen(s);
  if (!seen) return not_applicable(kId, "how many GPUs the job sees is not known");
  size_t asked = static_cast<size_t>(env.job_gpus);
  if (asked <= seen->count && seen->at_most) {
    return not_applicable(kId, "how many GPUs the job sees is not known (" + seen->how + ")");
  }
  if (asked <= seen->count) {
    Finding f = make_finding(kId, Severity::kOk,
                             fmt::format("{} asks for {} GPU{}; the job sees {}", env.job_request,
                                         asked, asked == 1 ? "" : "s", seen->count));
    f.evidence.push_back(seen->how);
    return {f};
  }
  std::string ranks = seen->count + 1 == asked
                          ? fmt::format("local rank {} fails", seen->count)
                          : fmt::format("local ranks {}-{} fail", seen->count, asked - 1);
  Finding f = make_finding(
      kId, Severity::kFail,
      fmt::format("{} starts {} processes, one per GPU, but the job sees {}: {} with CUDA error "
                  "101 (invalid device ordinal)",
                  env.job_request, asked, seen->count, ranks));
  f.evidence.push_back("the launcher: " + env.job_request);
  f.evidence.push_back(seen->how);
  for (const auto& r : s.reported) {
    if (r.code == 101 && f.evidence.size() < 5) {
      f.evidence.push_back(line_ref(r));
    }
  }
  f.remedy = {
      fmt::format("start at most {} process{} per node (torchrun --nproc_per_node={}, deepspeed "
                  "--num_gpus={}, accelerate launch --num_processes={})",
                  seen->count, seen->count == 1 ? "" : "es", seen->count, seen->count, seen->count),
      "or make more GPUs visible: CUDA_VISIBLE_DEVICES, the container's --gpus, the scheduler's "
      "GPU request"};
  return {f};
}

}  // namespace gd
