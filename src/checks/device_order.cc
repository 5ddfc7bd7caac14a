// device-order.mismatch: CUDA numbers GPUs FASTEST_FIRST by default, nvidia-smi
// by PCI bus id. On a machine where the two differ, "GPU 0" means two
// different cards (nvidia-facts §6.1).
#include <fmt/format.h>

#include "checks/checks.h"
#include "checks/util.h"
#include "facts/cuda_visible.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "device-order.mismatch";

std::vector<std::string> table(const GpuInventory& inv, const std::vector<size_t>& order) {
  std::vector<std::string> out;
  bool with_cc = mixed_cc(inv.gpus);
  for (size_t k = 0; k < order.size(); ++k) {
    out.push_back(order_line(k, inv.gpus[order[k]], with_cc));
  }
  return out;
}

// What CUDA_VISIBLE_DEVICES with indices selects when the orders differ.
std::vector<std::string> visible_devices_effect(const Snapshot& s, const GpuInventory& inv,
                                                const DeviceOrderSetting& order) {
  std::vector<std::string> out;
  const std::string* v = env_var(s, "CUDA_VISIBLE_DEVICES");
  if (v == nullptr) return out;
  CvdResult r = parse_cuda_visible_devices(v, inv.gpus, order.order);
  for (const auto& e : r.entries) {
    if (e.state != CvdState::kVisible || !e.index || !e.gpu) continue;
    const GpuIdentity& g = inv.gpus[*e.gpu];
    if (static_cast<uint64_t>(g.smi_index) == *e.index) continue;
    out.push_back(fmt::format(
        "CUDA_VISIBLE_DEVICES entry \"{}\" therefore selects {}, which nvidia-smi calls GPU {}",
        e.text, g.bdf, g.smi_index));
  }
  return out;
}

}  // namespace

std::vector<Finding> check_device_order(const Snapshot& s, const Config&) {
  GpuInventory inv = gpu_inventory(s);
  if (inv.gpus.empty()) {
    return not_applicable(kId, "no GPU is known (NVML, CUDA and the PCI bus listed none)");
  }
  if (inv.gpus.size() == 1) return not_applicable(kId, "only one GPU: there is no order to differ");
  DeviceOrderSetting setting = parse_device_order(env_var(s, "CUDA_DEVICE_ORDER"));
  if (setting.order == DeviceOrder::kPciBusId) {
    Finding f = make_finding(kId, Severity::kOk,
                             "CUDA_DEVICE_ORDER=PCI_BUS_ID is set: CUDA numbers the GPUs like "
                             "nvidia-smi");
    f.evidence.push_back(env_assignment("CUDA_DEVICE_ORDER", setting.value));
    return {f};
  }
  DefaultOrder d = default_cuda_order(s, inv);
  if (!d.known) return not_applicable(kId, "cannot tell CUDA's default order: " + d.why_unknown);

  std::vector<size_t> smi = pci_bus_order(inv.gpus);
  std::vector<std::string> differ;
  for (size_t k = 0; k < d.order.size(); ++k) {
    if (d.order[k] != smi[k]) {
      differ.push_back(inv.gpus[d.order[k]].bdf);
    }
  }
  std::string how = d.observed ? "observed: CUDA's run with this environment enumerated the GPUs so"
                               : fmt::format(
                                     "predicted from {}: CUDA's default FASTEST_FIRST order puts "
                                     "higher compute capability first, then higher max SM clock, "
                                     "then lower PCI bus id",
                                     gpu_source_name(inv.source));
  if (differ.empty()) {
    Finding f = make_finding(kId, Severity::kOk,
                             "CUDA's default order is the same as nvidia-smi's on this machine");
    f.evidence.push_back(how);
    auto t = table(inv, d.order);
    f.evidence.insert(f.evidence.end(), t.begin(), t.end());
    return {f};
  }
  // Only a program that picks GPUs by index is hurt, and one setting shows
  // that it does: CUDA_VISIBLE_DEVICES by index selecting another GPU than
  // nvidia-smi's index. Otherwise the difference is a note: it is normal on
  // most multi-GPU workstations, and a warning there would never clear.
  auto effect = visible_devices_effect(s, inv, setting);
  const GpuIdentity& first = inv.gpus[d.order[0]];
  Finding f = make_finding(
      kId, effect.empty() ? Severity::kInfo : Severity::kWarn,
      fmt::format("CUDA numbers these GPUs differently from nvidia-smi: CUDA device 0 is "
                  "nvidia-smi's GPU {} ({})",
                  first.smi_index, first.bdf));
  f.gpus = differ;
  f.evidence.push_back(how);
  if (setting.set && !setting.recognized) {
    f.evidence.push_back(env_assignment("CUDA_DEVICE_ORDER", setting.value) +
                         " is not FASTEST_FIRST or PCI_BUS_ID, so the default order applies");
  }
  auto t = table(inv, d.order);
  f.evidence.insert(f.evidence.end(), t.begin(), t.end());
  std::vector<std::string> smi_names;
  for (size_t p : smi) smi_names.push_back(inv.gpus[p].bdf);
  f.evidence.push_back("nvidia-smi (and PCI bus) order: " + join(smi_names, ", "));
  f.evidence.insert(f.evidence.end(), effect.begin(), effect.end());
  f.remedy.push_back("export CUDA_DEVICE_ORDER=PCI_BUS_ID   # CUDA index = nvidia-smi index");
  if (!first.uuid.empty()) {
    f.remedy.push_back(fmt::format(
        "or pick GPUs by UUID, which no order changes: export CUDA_VISIBLE_DEVICES={}   # {}",
        first.uuid, first.bdf));
  }
  return {f};
}

}  // namespace gd
