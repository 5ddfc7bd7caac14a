// advice.*: what the usual environment fixes really do on THIS machine, said
// plainly so that a folk remedy never hides the real cause
// (nvidia-facts §6.1 CUDA_DEVICE_ORDER / CUDA_VISIBLE_DEVICES, §6.2
// PYTORCH_NVML_BASED_CUDA_CHECK). Always severity info.
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/util.h"
#include "facts/cuda_visible.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kOrder = "advice.device-order";
constexpr const char* kNvml = "advice.nvml-based-check";
constexpr const char* kVisible = "advice.visible-devices";
constexpr const char* kCleanRun =
    "CUDA's clean run (CUDA_VISIBLE_DEVICES unset, CUDA_DEVICE_ORDER=PCI_BUS_ID)";

// CUDA was tried with the user's environment and did not work (including a
// libcuda that could not even be loaded).
bool cuda_broken(const Snapshot& s) {
  const CudaRun* u = user_cuda_run(s);
  return u != nullptr && !run_succeeded(*u);
}

// "with CUDA_ERROR_X (n)" for an error code, "(libcuda.so.1 could not be
// loaded ...)" for a run that never got that far.
std::string failure(const CudaRun& r) {
  return run_error_code(r) > 0 ? "with " + run_error_text(r) : "(" + run_error_text(r) + ")";
}

std::string user_error(const Snapshot& s) {
  const CudaRun* u = user_cuda_run(s);
  return u == nullptr ? std::string("an error") : run_error_text(*u);
}

Finding device_order(const Snapshot& s, const GpuInventory& inv) {
  DeviceOrderSetting setting = parse_device_order(env_var(s, "CUDA_DEVICE_ORDER"));
  DefaultOrder d = default_cuda_order(s, inv);
  std::vector<std::string> ev;
  ev.push_back(setting.set ? env_assignment("CUDA_DEVICE_ORDER", setting.value)
                           : "CUDA_DEVICE_ORDER is not set (CUDA's default: FASTEST_FIRST)");
  std::string effect;
  if (inv.gpus.size() <= 1) {
    effect = fmt::format("CUDA_DEVICE_ORDER=PCI_BUS_ID changes nothing here: {}",
                         inv.gpus.empty() ? "no GPU is visible" : "there is one GPU");
  } else if (!d.known) {
    effect =
        "CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA number GPUs like nvidia-smi; whether that "
        "differs from the default here is unknown (" +
        d.why_unknown + ")";
  } else {
    std::vector<size_t> smi = pci_bus_order(inv.gpus);
    ev.push_back(std::string(d.observed ? "observed" : "predicted") +
                 " default (FASTEST_FIRST) numbering:");
    for (size_t k = 0; k < d.order.size(); ++k) {
      ev.push_back(order_line(k, inv.gpus[d.order[k]], mixed_cc(inv.gpus)));
    }
    if (d.order == smi) {
      effect =
          "CUDA_DEVICE_ORDER=PCI_BUS_ID changes nothing here: CUDA's default order already "
          "matches nvidia-smi's";
    } else {
      const GpuIdentity& g = inv.gpus[d.order[0]];
      effect = fmt::format(
          "CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA number the GPUs like "
          "nvidia-smi here (by default CUDA 0 is nvidia-smi's GPU {}, {})",
          g.smi_index, g.bdf);
    }
  }
  std::string fix;
  if (cuda_broken(s)) {
    const CudaRun* u = user_cuda_run(s);
    const CudaRun* cl = clean_cuda_run(s);
    if (cl != nullptr && u != nullptr && run_succeeded(*cl)) {
      fix =
          "; CUDA's clean run worked, but that run also dropped CUDA_VISIBLE_DEVICES, and the "
          "order alone never breaks CUDA";
      ev.push_back(std::string(kCleanRun) + ": " + describe_run(*cl));
    } else if (cl != nullptr) {
      fix = fmt::format(
          "; it does not fix the failing CUDA start ({}): the clean run, which sets "
          "it, failed too",
          user_error(s));
      ev.push_back(std::string(kCleanRun) + ": " + describe_run(*cl));
    } else {
      fix = fmt::format("; it only renumbers GPUs and cannot fix the failing CUDA start ({})",
                        user_error(s));
    }
  }
  Finding f = make_finding(kOrder, Severity::kInfo, effect + fix);
  f.evidence = ev;
  return f;
}

Finding nvml_check(const Snapshot& s, const GpuInventory& inv) {
  const std::string* var = env_var(s, "PYTORCH_NVML_BASED_CUDA_CHECK");
  std::vector<std::string> ev;
  ev.push_back(var == nullptr
                   ? std::string("PYTORCH_NVML_BASED_CUDA_CHECK is not set")
                   : env_assignment("PYTORCH_NVML_BASED_CUDA_CHECK", *var) +
                         (*var == "1" ? " (enabled)" : " (only \"1\" enables it: no effect)"));
  bool nvml = nvml_answered(s) && s.nvml.device_count.ok();
  size_t nvml_count = 0;
  if (nvml) {
    nvml_count = s.nvml.device_count.value;
    // torch's NVML count honours CUDA_VISIBLE_DEVICES the same way CUDA does.
    const std::string* cvd = env_var(s, "CUDA_VISIBLE_DEVICES");
    if (cvd != nullptr && inv.source == GpuSource::kNvml) {
      DeviceOrderSetting o = parse_device_order(env_var(s, "CUDA_DEVICE_ORDER"));
      nvml_count = parse_cuda_visible_devices(cvd, inv.gpus, o.order).visible_count();
    }
    ev.push_back(fmt::format("NVML sees {} GPU{}{}", nvml_count, nvml_count == 1 ? "" : "s",
                             cvd != nullptr ? " after CUDA_VISIBLE_DEVICES" : ""));
  } else {
    ev.push_back(nvml_unavailable_reason(s));
  }
  const CudaRun* u = user_cuda_run(s);
  if (u != nullptr) ev.push_back("CUDA with this environment: " + describe_run(*u));
  std::string base =
      "PYTORCH_NVML_BASED_CUDA_CHECK=1 only makes torch.cuda.is_available() "
      "answer from NVML without initializing CUDA (safe before fork)";
  std::string summary;
  if (u == nullptr) {
    summary = base + "; it never changes whether CUDA itself starts";
  } else if (cuda_broken(s)) {
    if (nvml && nvml_count > 0) {
      summary = fmt::format(
          "PYTORCH_NVML_BASED_CUDA_CHECK=1 would make torch.cuda.is_available() say True here "
          "(NVML sees {} GPU{}), but the first real CUDA call would still fail {}: it hides the "
          "cause and fixes nothing",
          nvml_count, nvml_count == 1 ? "" : "s", failure(*u));
    } else {
      summary = fmt::format(
          "PYTORCH_NVML_BASED_CUDA_CHECK=1 would not help: NVML sees no GPU here either, so "
          "torch.cuda.is_available() stays False, and CUDA fails {}",
          failure(*u));
    }
  } else {
    summary = fmt::format("{}; here CUDA works and sees {} device{}, so it changes no answer", base,
                          u->device_count, u->device_count == 1 ? "" : "s");
  }
  Finding f = make_finding(kNvml, Severity::kInfo, summary);
  f.evidence = ev;
  return f;
}

Finding visible_devices(const Snapshot& s, const GpuInventory& inv) {
  const std::string* cvd = env_var(s, "CUDA_VISIBLE_DEVICES");
  DeviceOrderSetting o = parse_device_order(env_var(s, "CUDA_DEVICE_ORDER"));
  CvdResult r = parse_cuda_visible_devices(cvd, inv.gpus, o.order);
  std::vector<std::string> ev;
  std::vector<std::string> picked;
  for (size_t k = 0; k < r.visible.size(); ++k) {
    const GpuIdentity& g = inv.gpus[r.visible[k]];
    picked.push_back(g.bdf);
    ev.push_back(fmt::format("CUDA {} = {}", k, gpu_ref(g)));
  }
  std::string summary;
  if (cvd == nullptr) {
    summary = fmt::format("CUDA_VISIBLE_DEVICES is not set: CUDA sees every GPU{}",
                          inv.gpus.empty() ? "" : fmt::format(" ({})", inv.gpus.size()));
  } else if (r.visible_count() == 0) {
    summary = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" selects no GPU here", *cvd);
  } else if (picked.empty()) {
    summary = fmt::format(
        "CUDA_VISIBLE_DEVICES=\"{}\" selects {} device{} that cannot be "
        "checked here",
        *cvd, r.visible_count(), r.visible_count() == 1 ? "" : "s");
  } else {
    summary = fmt::format(
        "CUDA_VISIBLE_DEVICES=\"{}\" selects {} here, in this order (CUDA 0 "
        "first)",
        *cvd, join(picked, ", "));
  }
  const CudaRun* u = user_cuda_run(s);
  const CudaRun* cl = clean_cuda_run(s);
  if (cuda_broken(s)) {
    if (cvd == nullptr) {
      summary +=
          fmt::format("; it is not the cause of the failing CUDA start ({})", run_error_text(*u));
    } else if (cl != nullptr && run_succeeded(*cl)) {
      summary += "; CUDA's clean run without it worked, so this variable is the problem";
    } else if (cl != nullptr && same_failure(*u, *cl)) {
      summary += fmt::format(
          "; it is not the cause: CUDA's clean run without it failed the "
          "same way ({})",
          run_error_text(*cl));
    } else if (cl != nullptr) {
      summary += "; CUDA's clean run without it failed differently";
    }
  }
  if (u != nullptr) ev.push_back("CUDA with this environment: " + describe_run(*u));
  if (cl != nullptr) ev.push_back(std::string(kCleanRun) + ": " + describe_run(*cl));
  if (!inv.gpus.empty() && !inv.gpus[0].uuid.empty()) {
    ev.push_back(
        fmt::format("UUIDs pick GPUs whatever the order, e.g. "
                    "CUDA_VISIBLE_DEVICES={} for {}",
                    inv.gpus[0].uuid, gpu_ref(inv.gpus[0])));
  }
  Finding f = make_finding(kVisible, Severity::kInfo, summary);
  f.gpus = picked;
  f.evidence = ev;
  return f;
}

}  // namespace

std::vector<Finding> check_folk_remedies(const Snapshot& s, const Config&) {
  GpuInventory inv = gpu_inventory(s);
  if (inv.gpus.empty() && s.cuda.runs.empty() && !nvml_answered(s)) {
    const char* why =
        "no GPU is known and neither NVML nor CUDA answered: there is nothing for "
        "these settings to act on";
    return {make_finding(kOrder, Severity::kNotApplicable, why),
            make_finding(kNvml, Severity::kNotApplicable, why),
            make_finding(kVisible, Severity::kNotApplicable, why)};
  }
  return {device_order(s, inv), nvml_check(s, inv), visible_devices(s, inv)};
}

}  // namespace gd
