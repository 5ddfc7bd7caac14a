// memory.address-space-limit: CUDA reserves one large virtual range for
// unified addressing at cuInit. Under `ulimit -v` (RLIMIT_AS) or `ulimit -d`
// (RLIMIT_DATA) that reservation fails and cuInit / cudaGetDeviceCount report
// "out of memory" (2) while nvidia-smi looks fine (nvidia-facts §3, code 2,
// and §10 "CUDA 2 at init"). The reservation is measured by the CUDA probe
// child (address_space_model.cc); a framework needs more on top, by its
// measured allowance (catalog/address_space.cc).
//   fail: cuInit or its first context cannot fit (CUDA failed with 2 under
//         the limit; proven when a run with the limit raised succeeded)
//   warn: cuInit fits, a framework (PyTorch) would not
//   ok:   both fit, or no limit
#include "catalog/address_space.h"

#include <fmt/format.h>

#include "checks/address_space_model.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/util.h"
#include "facts/runtime.h"
#include "util/bytes.h"

namespace gd {
namespace {

constexpr const char* kId = "memory.address-space-limit";
constexpr int kOutOfMemory = 2;

bool out_of_memory(const CudaRun* r) {
  if (r == nullptr || !r->child_error.empty()) return false;
  if (r->init_rc == kOutOfMemory || r->cudart_rc == kOutOfMemory) return true;
  for (const auto& d : r->devices) {
    if (d.ctx_rc == kOutOfMemory) return true;
  }
  return false;
}

std::string limit_line(const char* name, const char* ulimit_flag, uint64_t bytes,
                       const std::optional<uint64_t>& hard) {
  return fmt::format("{} (ulimit {}) = {}; `ulimit {}` shows {}; hard limit {}", name, ulimit_flag,
                     bytes_exact(bytes), ulimit_flag, bytes / 1024,
                     hard ? bytes_exact(*hard) : std::string("unlimited"));
}

bool in_slurm(const Snapshot& s) {
  for (const auto& [k, v] : s.env.vars) {
    if (k.rfind("SLURM_", 0) == 0) return true;
  }
  return false;
}

// The first line: a `ulimit -v` that works. Measured here, it covers CUDA and
// every measured framework; not measured (CUDA never started), the
// reference machine's figure is only a floor.
std::string working_limit_line(const AddressSpaceNeed& need) {
  if (!need.estimated) {
    uint64_t w = working_address_space_limit(need);
    return fmt::format(
        "ulimit -v {}   # {}: enough for CUDA and the measured frameworks (PyTorch, JAX, CuPy) "
        "here; or `ulimit -v unlimited`",
        w / 1024, format_bytes(w));
  }
  AddressSpaceNeed ref;
  ref.cuda_bytes = reference_cuda_reservation().after_context_bytes;
  uint64_t w = working_address_space_limit(ref);
  return fmt::format(
      "ulimit -v unlimited   # CUDA never started here, so its need was not measured; {} "
      "({}) was enough on {}, more GPUs take more; `gpudoctor check` measures it once CUDA starts",
      w / 1024, format_bytes(w), reference_cuda_reservation().machine);
}

std::vector<std::string> as_remedy(const Snapshot& s, const AddressSpaceNeed& need) {
  std::vector<std::string> r = {
      working_limit_line(need),
      "ulimit -H -v   # the hard limit: without root the soft limit can only be raised up to it",
      "grep -rn 'ulimit -v' ~/.bashrc ~/.profile /etc/profile /etc/profile.d/ <your job script>   "
      "# find where it is set",
      "/etc/security/limits.conf, /etc/security/limits.d/*.conf: remove or raise an 'as' line "
      "such as '*  hard  as  33554432' (applies at the next login)",
  };
  std::string slurm =
      "Slurm: jobs inherit the submitting shell's limits (PropagateResourceLimits), so raise "
      "`ulimit -v` before sbatch/srun or submit with `sbatch --propagate=NONE`; "
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
  if (const CudaRun* r = raised_limit_cuda_run(s)) {
    ev.push_back(fmt::format(
        "CUDA with the soft limit raised to the hard one ({}): {}",
        r->rlimit_as_bytes ? bytes_exact(*r->rlimit_as_bytes) : std::string("unlimited"),
        describe_run(*r)));
  }
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

// The verdict on RLIMIT_AS, with the comparisons it rests on.
Finding judge_as_limit(const Snapshot& s, uint64_t lim, const AddressSpaceNeed& need) {
  const CudaRun* u = user_cuda_run(s);
  const CudaRun* raised = raised_limit_cuda_run(s);
  std::string cuda_what = need.measured
                              ? "RLIMIT_AS (ulimit -v) vs the address space CUDA took (measured)"
                              : "RLIMIT_AS (ulimit -v) vs CUDA's reservation (ESTIMATE)";
  Finding f;
  if (out_of_memory(u)) {
    bool proven = raised != nullptr && run_succeeded(*raised);
    std::string why =
        proven ? fmt::format("with the limit raised, CUDA started and took {}",
                             format_bytes(need.cuda_bytes))
        : need.measured
            ? fmt::format("cuInit took {} before its first context failed",
                          format_bytes(need.cuda_bytes))
            : fmt::format("CUDA reserves more than that at start (estimated at most {})",
                          format_bytes(need.cuda_bytes));
    f = make_finding(kId, Severity::kFail,
                     fmt::format("CUDA fails with \"out of memory\" because this process may use "
                                 "only {} of address space (ulimit -v): {}",
                                 format_bytes(lim), why));
    add_comparison(&f, compare_numbers("CUDA's result under this limit (2 = out of memory)",
                                       kOutOfMemory, "==", 0));
    add_comparison(&f, compare_bytes(cuda_what, lim, ">=", need.cuda_bytes));
    return f;
  }
  bool started = u != nullptr && run_succeeded(*u);
  if (started) {
    bool fits = lim >= need.framework_bytes;
    f = make_finding(
        kId, fits ? Severity::kOk : Severity::kWarn,
        fits ? fmt::format("the address-space limit ({}, ulimit -v) holds CUDA ({}) and {} "
                           "(about {})",
                           format_bytes(lim), format_bytes(need.cuda_bytes), need.framework,
                           format_bytes(need.framework_bytes))
             : fmt::format("CUDA starts under the address-space limit ({}, ulimit -v; CUDA took "
                           "{}), but {} needs about {} and would fail with \"out of memory\"",
                           format_bytes(lim), format_bytes(need.cuda_bytes), need.framework,
                           format_bytes(need.framework_bytes)));
    add_comparison(&f, compare_bytes(cuda_what, lim, ">=", need.cuda_bytes));
    add_comparison(&f, compare_bytes("RLIMIT_AS (ulimit -v) vs what " + need.framework +
                                         " needs here (CUDA + its measured allowance)",
                                     lim, ">=", need.framework_bytes));
    return f;
  }
  // CUDA not tried, or failed for another reason: only the numbers speak.
  bool fits = lim >= need.cuda_bytes;
  f = make_finding(kId, fits ? Severity::kOk : Severity::kWarn,
                   fits ? fmt::format("the address-space limit ({}, ulimit -v) is above what CUDA "
                                      "reserves ({} {})",
                                      format_bytes(lim), need.measured ? "measured" : "at most",
                                      format_bytes(need.cuda_bytes))
                        : fmt::format("this process may use only {} of address space (ulimit -v), "
                                      "less than the {} CUDA reserves{}: CUDA will likely fail "
                                      "with \"out of memory\"",
                                      format_bytes(lim), format_bytes(need.cuda_bytes),
                                      need.measured ? "" : " (estimated)"));
  add_comparison(&f, compare_bytes(cuda_what, lim, ">=", need.cuda_bytes));
  return f;
}

void add_limit_lines(const Snapshot& s, std::vector<std::string>* ev) {
  const LimitsInfo& l = s.limits;
  if (l.rlimit_as_bytes) {
    ev->push_back(limit_line("RLIMIT_AS", "-v", *l.rlimit_as_bytes, l.rlimit_as_hard_bytes));
  } else {
    ev->push_back("RLIMIT_AS (ulimit -v) = unlimited");
  }
  if (l.rlimit_data_bytes) {
    ev->push_back(limit_line("RLIMIT_DATA", "-d", *l.rlimit_data_bytes, l.rlimit_data_hard_bytes));
  }
  if (l.overcommit_memory >= 0) {
    ev->push_back(fmt::format("vm.overcommit_memory = {}{}", l.overcommit_memory,
                              l.commit_limit_bytes
                                  ? "; CommitLimit = " + bytes_exact(*l.commit_limit_bytes)
                                  : std::string()));
  }
  if (l.cgroup_memory_limit_bytes) {
    ev->push_back(
        fmt::format("cgroup memory limit {} ({}): it limits memory actually used, not "
                    "address space",
                    bytes_exact(*l.cgroup_memory_limit_bytes),
                    l.cgroup_path.empty() ? "cgroup" : l.cgroup_path));
  }
}

}  // namespace

std::vector<Finding> check_address_space(const Snapshot& s, const Config& c) {
  if (const FieldGap* g = field_gap(s, "limits.rlimit_as_bytes")) {
    return not_applicable(
        kId, "the process limits could not be read (limits.rlimit_as_bytes: " + g->reason + ")");
  }
  const LimitsInfo& l = s.limits;
  const CudaRun* u = user_cuda_run(s);
  bool oom = out_of_memory(u);
  bool works = u != nullptr && run_succeeded(*u);
  AddressSpaceNeed need = address_space_need(s, c);
  // Strict overcommit only matters while CUDA has not started under it.
  bool strict = l.overcommit_memory == 2 && l.commit_limit_bytes &&
                *l.commit_limit_bytes < need.cuda_bytes && !works;

  std::vector<std::string> ev;
  add_limit_lines(s, &ev);
  Finding f;
  if (l.rlimit_as_bytes) {
    f = judge_as_limit(s, *l.rlimit_as_bytes, need);
    if (f.severity != Severity::kOk) f.remedy = as_remedy(s, need);
  } else if (l.rlimit_data_bytes && oom) {
    f = make_finding(kId, Severity::kFail,
                     fmt::format("CUDA fails with \"out of memory\" and this process has a data "
                                 "size limit of {} (ulimit -d), which can refuse CUDA's memory "
                                 "reservations",
                                 format_bytes(*l.rlimit_data_bytes)));
    add_comparison(&f, compare_numbers("CUDA's result under this limit (2 = out of memory)",
                                       kOutOfMemory, "==", 0));
    f.remedy = {"ulimit -d unlimited   # in the shell or job script, before starting the program"};
  } else if (strict) {
    f = make_finding(kId, oom ? Severity::kFail : Severity::kWarn,
                     fmt::format("vm.overcommit_memory=2 (strict) with CommitLimit {} below the {} "
                                 "CUDA reserves: CUDA's reservations can be refused{}",
                                 format_bytes(*l.commit_limit_bytes), format_bytes(need.cuda_bytes),
                                 oom ? ", and CUDA did fail with out of memory" : ""));
    add_comparison(&f, compare_bytes("CommitLimit vs CUDA's reservation", *l.commit_limit_bytes,
                                     ">=", need.cuda_bytes));
    f.remedy = kOvercommitRemedy;
  } else {
    f = make_finding(kId, Severity::kOk, "no address-space limit (ulimit -v is unlimited)");
    if (oom) {
      ev.push_back("CUDA did fail with out of memory, but not because of an address-space limit");
    }
  }
  // A data-size limit below what CUDA measurably took is stated either way.
  if (l.rlimit_data_bytes && need.measured && need.cuda_data_bytes > 0 && !oom) {
    add_comparison(&f, compare_bytes("RLIMIT_DATA (ulimit -d) vs the data segment CUDA took "
                                     "(VmData, measured)",
                                     *l.rlimit_data_bytes, ">=", need.cuda_data_bytes));
  }
  if (strict && f.remedy != kOvercommitRemedy) {
    if (f.severity == Severity::kOk) {
      f.severity = Severity::kWarn;
      f.summary = fmt::format(
          "vm.overcommit_memory=2 (strict) with CommitLimit {} below the {} "
          "CUDA reserves: CUDA's reservations can be refused",
          format_bytes(*l.commit_limit_bytes), format_bytes(need.cuda_bytes));
      add_comparison(&f, compare_bytes("CommitLimit vs CUDA's reservation", *l.commit_limit_bytes,
                                       ">=", need.cuda_bytes));
    }
    f.remedy.insert(f.remedy.end(), kOvercommitRemedy.begin(), kOvercommitRemedy.end());
  }
  // The comparison lines came first (add_comparison); the limits, how the
  // need was measured and what CUDA did follow.
  std::vector<std::string> cuda = cuda_evidence(s);
  // How much CUDA needs matters only where something bounds it.
  if (l.rlimit_as_bytes || l.rlimit_data_bytes || strict) {
    ev.insert(ev.end(), need.evidence.begin(), need.evidence.end());
  }
  ev.insert(ev.end(), cuda.begin(), cuda.end());
  f.evidence.insert(f.evidence.end(), ev.begin(), ev.end());
  return {f};
}

}  // namespace gd
