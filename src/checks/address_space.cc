// memory.address-space-limit: CUDA reserves one virtual address range for
// unified addressing at init, roughly every GPU's memory plus host memory.
// Under `ulimit -v` (RLIMIT_AS) that reservation fails and cuInit /
// cudaGetDeviceCount report "out of memory" (2) while nvidia-smi looks fine
// (nvidia-facts §3, code 2, and §10 "CUDA 2 at init").
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/cuda_visible.h"
#include "checks/runtime_facts.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr const char* kId = "memory.address-space-limit";
constexpr int kOutOfMemory = 2;

struct Estimate {
  uint64_t total_bytes = 0;
  std::string line;
};

Estimate estimate(const Snapshot& s, const Config& c) {
  GpuInventory inv = gpu_inventory(s);
  uint64_t gpu_bytes = 0;
  size_t unknown = 0;
  for (const auto& g : inv.gpus) {
    gpu_bytes += g.memory_total_bytes;
    if (g.memory_total_bytes == 0) ++unknown;
  }
  uint64_t host = s.limits.mem_total_bytes.value_or(0);
  Estimate e;
  e.total_bytes = gpu_bytes + host + c.address_space_headroom_bytes;
  std::string gpus = inv.gpus.empty()
                         ? std::string("GPU memory unknown")
                         : fmt::format("{} GPU{} with {}", inv.gpus.size(),
                                       inv.gpus.size() == 1 ? "" : "s", format_bytes(gpu_bytes));
  if (unknown > 0) gpus += fmt::format(" ({} of unknown size)", unknown);
  e.line = fmt::format(
      "CUDA reserves about {} of address space at init: {} + {} host memory + {} headroom = {}",
      format_bytes(e.total_bytes), gpus,
      s.limits.mem_total_bytes ? format_bytes(host) : std::string("unknown"),
      format_bytes(c.address_space_headroom_bytes), bytes_exact(e.total_bytes));
  return e;
}

std::string limit_line(const char* name, const char* ulimit_flag, uint64_t bytes) {
  return fmt::format("{} (ulimit {}) = {}; `ulimit {}` shows {}", name, ulimit_flag,
                     bytes_exact(bytes), ulimit_flag, bytes / 1024);
}

bool probe_failed(const Snapshot& s) {
  for (const auto& p : s.probes) {
    if (p.name == "limits") return p.status != ProbeStatus::kOk;
  }
  return false;
}

bool in_slurm(const Snapshot& s) {
  for (const auto& [k, v] : s.env.vars) {
    if (k.rfind("SLURM_", 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> as_remedy(const Snapshot& s) {
  std::vector<std::string> r = {
      "ulimit -v unlimited   # in the shell or job script, before starting the program",
      "ulimit -H -v   # the hard limit: without root the soft limit can only be raised up to it",
      "grep -rn 'ulimit -v' ~/.bashrc ~/.profile /etc/profile /etc/profile.d/ <your job script>   "
      "# find where it is set",
      "/etc/security/limits.conf, /etc/security/limits.d/*.conf: remove an 'as' line such as "
      "'*  hard  as  33554432' (applies at the next login)",
  };
  std::string slurm =
      "Slurm: jobs inherit the submitting shell's limits (PropagateResourceLimits), so run "
      "`ulimit -v unlimited` before sbatch/srun or submit with `sbatch --propagate=NONE`; "
      "VSizeFactor in slurm.conf turns --mem into an address-space limit (VSizeFactor=0, the "
      "default, disables it)";
  if (in_slurm(s)) {
    r.insert(r.begin() + 1, slurm);
  } else {
    r.push_back(slurm);
  }
  return r;
}

const std::vector<std::string> kOvercommitRemedy = {
    "sudo sysctl vm.overcommit_memory=0   # heuristic overcommit, the Linux default",
    "echo 'vm.overcommit_memory = 0' | sudo tee /etc/sysctl.d/90-overcommit.conf   # keep it "
    "after reboot",
};

std::vector<std::string> cuda_evidence(const Snapshot& s) {
  std::vector<std::string> ev;
  const CudaRun* u = user_cuda_run(s);
  if (u == nullptr) {
    ev.push_back("CUDA was not tried");
    return ev;
  }
  ev.push_back("CUDA with this environment: " + describe_run(*u));
  const CudaRun* cl = clean_cuda_run(s);
  if (cl != nullptr && same_failure(*u, *cl)) {
    ev.push_back(
        "CUDA's clean run (CUDA_VISIBLE_DEVICES unset, CUDA_DEVICE_ORDER=PCI_BUS_ID) "
        "failed the same way: environment variables do not change process limits");
  }
  if (nvml_answered(s) && s.nvml.device_count.ok() && !run_succeeded(*u)) {
    ev.push_back(fmt::format("NVML, which reserves no such address space, sees {} GPU{}",
                             s.nvml.device_count.value, s.nvml.device_count.value == 1 ? "" : "s"));
  }
  return ev;
}

}  // namespace

std::vector<Finding> check_address_space(const Snapshot& s, const Config& c) {
  if (probe_failed(s)) return not_applicable(kId, "the process limits could not be read");
  const LimitsInfo& l = s.limits;
  const CudaRun* u = user_cuda_run(s);
  bool oom = u != nullptr && run_failed_with(*u, kOutOfMemory);
  bool works = u != nullptr && u->child_error.empty() && u->init_rc == 0;
  Estimate est = estimate(s, c);
  // Strict overcommit only matters while CUDA has not started under it.
  bool strict = l.overcommit_memory == 2 && l.commit_limit_bytes &&
                *l.commit_limit_bytes < est.total_bytes && !works;

  std::vector<std::string> ev;
  if (l.rlimit_as_bytes) {
    ev.push_back(limit_line("RLIMIT_AS", "-v", *l.rlimit_as_bytes));
  } else {
    ev.push_back("RLIMIT_AS (ulimit -v) = unlimited");
  }
  if (l.rlimit_data_bytes) ev.push_back(limit_line("RLIMIT_DATA", "-d", *l.rlimit_data_bytes));
  ev.push_back(est.line);
  if (l.overcommit_memory >= 0) {
    ev.push_back(fmt::format("vm.overcommit_memory = {}{}", l.overcommit_memory,
                             l.commit_limit_bytes
                                 ? "; CommitLimit = " + bytes_exact(*l.commit_limit_bytes)
                                 : std::string()));
  }
  if (l.cgroup_memory_limit_bytes) {
    ev.push_back(
        fmt::format("cgroup memory limit {} ({}): it limits memory actually used, not "
                    "address space",
                    bytes_exact(*l.cgroup_memory_limit_bytes),
                    l.cgroup_path.empty() ? "cgroup" : l.cgroup_path));
  }
  std::vector<std::string> cuda = cuda_evidence(s);
  ev.insert(ev.end(), cuda.begin(), cuda.end());

  Finding f;
  if (l.rlimit_as_bytes) {
    uint64_t lim = *l.rlimit_as_bytes;
    if (oom) {
      f = make_finding(kId, Severity::kFail,
                       fmt::format("CUDA fails with \"out of memory\" because this process may use "
                                   "only {} of address space (ulimit -v), and CUDA reserves about "
                                   "{} just to start",
                                   format_bytes(lim), format_bytes(est.total_bytes)));
    } else if (works) {
      f = make_finding(kId, Severity::kOk,
                       fmt::format("an address-space limit of {} is set (ulimit -v), but CUDA "
                                   "started under it",
                                   format_bytes(lim)));
    } else if (lim < est.total_bytes) {
      f = make_finding(kId, Severity::kWarn,
                       fmt::format("this process may use only {} of address space (ulimit -v), "
                                   "less than the ~{} CUDA reserves at start: CUDA will likely "
                                   "fail with \"out of memory\"",
                                   format_bytes(lim), format_bytes(est.total_bytes)));
    } else {
      f = make_finding(kId, Severity::kOk,
                       fmt::format("the address-space limit ({}) is above what CUDA reserves "
                                   "(about {})",
                                   format_bytes(lim), format_bytes(est.total_bytes)));
    }
    if (f.severity != Severity::kOk) f.remedy = as_remedy(s);
  } else if (l.rlimit_data_bytes && oom) {
    f = make_finding(kId, Severity::kFail,
                     fmt::format("CUDA fails with \"out of memory\" and this process has a data "
                                 "size limit of {} (ulimit -d), which can refuse CUDA's memory "
                                 "reservations",
                                 format_bytes(*l.rlimit_data_bytes)));
    f.remedy = {"ulimit -d unlimited   # in the shell or job script, before starting the program"};
  } else if (strict) {
    f = make_finding(
        kId, oom ? Severity::kFail : Severity::kWarn,
        fmt::format("vm.overcommit_memory=2 (strict) with CommitLimit {} below the ~{} "
                    "CUDA reserves: CUDA's reservations can be refused{}",
                    format_bytes(*l.commit_limit_bytes), format_bytes(est.total_bytes),
                    oom ? ", and CUDA did fail with out of memory" : ""));
    f.remedy = kOvercommitRemedy;
  } else {
    f = make_finding(kId, Severity::kOk, "no address-space limit (ulimit -v is unlimited)");
    if (oom) {
      ev.push_back("CUDA did fail with out of memory, but not because of an address-space limit");
    }
  }
  if (strict && f.remedy != kOvercommitRemedy) {
    if (f.severity == Severity::kOk) {
      f.severity = Severity::kWarn;
      f.summary = fmt::format(
          "vm.overcommit_memory=2 (strict) with CommitLimit {} below the ~{} "
          "CUDA reserves: CUDA's reservations can be refused",
          format_bytes(*l.commit_limit_bytes), format_bytes(est.total_bytes));
    }
    f.remedy.insert(f.remedy.end(), kOvercommitRemedy.begin(), kOvercommitRemedy.end());
  }
  f.evidence = ev;
  return {f};
}

}  // namespace gd
