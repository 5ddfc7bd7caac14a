// `nvidia-smi -q` output. Real lines this file reads (580.159.04 on an H200,
// tests/device/recorded/h200-vm-580.159.04/device-check/smi-q.txt; the layout
// is the same from R450 on, keys padded with spaces to column 55):
//
//   Driver Version                                         : 580.159.04   (parse_nvml.cc)
//   CUDA Version                                           : 13.0         (parse_nvml.cc)
//   Attached GPUs                                          : 1
//   GPU 00000000:00:06.0
//       Product Name                                       : NVIDIA H200
//       Persistence Mode                                   : Enabled
//       MIG Mode
//           Current                                        : Disabled
//       GPU UUID                                           :
//       GPU-45e11636-eca6-4b14-c5ee-af9440ab3d3d Minor Number : 0 FB Memory Usage
//           Total                                          : 143771 MiB
//           Used                                           : 0 MiB
//           Free                                           : 143156 MiB
//       Compute Mode                                       : Default
//       Processes                                          : None
//       Processes
//           Process ID                                     : 632
//           Used GPU Memory                                : 138876 MiB
//
// The fabric section (R580; older drivers print fewer rows, so rows are
// read by their labels; a GB200 in kubernetes-sigs/dra-driver-nvidia-gpu#626,
// an H100 in Azure/azhpc-images#506, which pasted the block on its own):
//
//       Fabric
//           State                                      : Completed
//           Status                                     : Insufficient Resources
//           CliqueId                                   : 0
//           ClusterUUID                                : 00000000-0000-0000-0000-000000000000
//           Health
//               Summary                                : Unhealthy
//               Bandwidth                              : Full
//               Route Recovery in progress             : N/A
//               Route Unhealthy                        : N/A
//
// A GPU block starts at "GPU <bus id>" in column 0; a heading is a line with
// no " : " (the values under it are indented deeper); a value line is
// "key : value". The plain table and -L are parse_nvml.cc's.
#include <algorithm>
#include <utility>

#include "catalog/cuda_errors.h"
#include "explain/parse.h"

namespace gd {
namespace {

// "GPU 00000000:00:06.0" (only that: "GPU 0: NVIDIA ..." is -L's line).
std::string gpu_header_bus(std::string_view line) {
  if (!line.starts_with("GPU ")) return "";
  std::string_view rest = trim(line.substr(4));
  if (rest.find(' ') != std::string_view::npos) return "";
  return find_bus_id(rest);
}

NvmlGpu& gpu_for_bus(TextParse* p, const std::string& bus) {
  NvmlInfo& n = text_nvml(p);
  if (n.init_rc == -1) n.init_rc = 0;
  // A GPU the table or -L already listed: the same GPU, more fields.
  auto it = std::find_if(n.gpus.begin(), n.gpus.end(), [&](const NvmlGpu& g) {
    return g.pci_bus_id.ok() && g.pci_bus_id.value == bus;
  });
  if (it != n.gpus.end()) return *it;
  // -q lists GPUs in nvidia-smi's index order: the k-th block is index k,
  // which -L may have named without a bus id.
  uint32_t index = 0;
  for (const auto& g : n.gpus) {
    if (g.pci_bus_id.ok()) ++index;
  }
  NvmlGpu* g = gpu_by_index(n, index);
  if (g == nullptr) {
    NvmlGpu fresh;
    fresh.index = index;
    n.gpus.push_back(fresh);
    g = &n.gpus.back();
  }
  g->handle_rc = 0;
  g->pci_bus_id = {bus, 0};
  set_device_count(n);
  return *g;
}

// "143771 MiB" -> bytes.
std::optional<uint64_t> spaced_mib(std::string_view v) {
  std::string joined;
  for (char c : v) {
    if (c != ' ') joined += c;
  }
  return mib_bytes(joined);
}

// NVML_GPU_FABRIC_HEALTH_MASK_* (catalog/fabric_health.h): a two-bit flag
// at `shift`, 1 TRUE (the problem is there), 2 FALSE.
void set_health_flag(NvmlGpu& g, int shift, bool problem) {
  g.fabric_health_mask.rc = 0;
  g.fabric_health_mask.value &= ~(0x3u << shift);
  g.fabric_health_mask.value |= (problem ? 1u : 2u) << shift;
}

void fabric_value(std::string_view key, std::string_view value, NvmlGpu& g) {
  if (value == "N/A") return;
  if (key == "State") {
    for (auto [text, state] : {std::pair{"Not Supported", 0},
                               {"Not Started", 1},
                               {"In Progress", 2},
                               {"Completed", 3}}) {
      if (value == text) g.fabric_state = {state, 0};
    }
  } else if (key == "Status") {
    int rc = value == "Success" ? 0 : nvml_error_by_string(value);
    if (rc >= 0) g.fabric_status = {rc, 0};
  } else if (key == "CliqueId" && leading_number(value) >= 0) {
    g.fabric_clique_id = {static_cast<uint32_t>(leading_number(value)), 0};
  } else if (key == "ClusterUUID") {
    bool zero = value.find_first_not_of("0-") == std::string_view::npos;
    g.fabric_cluster_uuid = {zero ? "" : std::string(value), 0};
  } else if (key == "Summary") {
    for (auto [text, summary] :
         {std::pair{"Healthy", 1}, {"Unhealthy", 2}, {"Limited Capacity", 3}}) {
      if (value == text) g.fabric_health_summary = {summary, 0};
    }
  } else if (key == "Bandwidth" && (value == "Full" || value == "Degraded")) {
    set_health_flag(g, 0, value == "Degraded");
  } else if (value == "True" || value == "False") {
    for (auto [label, shift] : {std::pair{"Route Recovery in progress", 2},
                                {"Route Unhealthy", 4},
                                {"Access Timeout Recovery", 6}}) {
      if (key == label) set_health_flag(g, shift, value == "True");
    }
  }
}

void gpu_value(std::string_view section, std::string_view key, std::string_view value, NvmlGpu& g,
               TextParse* p) {
  if (section == "Fabric") {
    fabric_value(key, value, g);
    return;
  }
  if (section.empty()) {
    if (key == "Product Name") g.name = {std::string(value), 0};
    if (key == "GPU UUID") g.uuid = {std::string(value), 0};
    if (key == "Persistence Mode" && (value == "Enabled" || value == "Disabled")) {
      g.persistence_mode = {value == "Enabled" ? 1 : 0, 0};
    }
    if (key == "Minor Number" && leading_number(value) >= 0) {
      g.minor_number = {static_cast<uint32_t>(leading_number(value)), 0};
    }
    if (key == "Compute Mode") {
      if (value == "Default") g.compute_mode = {0, 0};
      if (value == "Exclusive_Thread") g.compute_mode = {1, 0};
      if (value == "Prohibited") g.compute_mode = {2, 0};
      if (value == "Exclusive_Process") g.compute_mode = {3, 0};
    }
    if (key == "Processes" && value == "None") g.processes = {{}, 0};
    return;
  }
  if (section == "FB Memory Usage") {
    auto bytes = spaced_mib(value);
    if (!bytes) return;
    if (key == "Total") g.memory_total_bytes = {*bytes, 0};
    if (key == "Used") g.memory_used_bytes = {*bytes, 0};
    if (key == "Free") g.memory_free_bytes = {*bytes, 0};
    return;
  }
  if (section == "MIG Mode" && (value == "Enabled" || value == "Disabled")) {
    if (key == "Current") g.mig_mode_current = {value == "Enabled" ? 1 : 0, 0};
    if (key == "Pending") g.mig_mode_pending = {value == "Enabled" ? 1 : 0, 0};
    return;
  }
  if (section == "Processes") {
    if (key == "Process ID" && leading_number(value) >= 0) {
      g.processes.rc = 0;
      NvmlProcess proc;
      proc.pid = static_cast<uint32_t>(leading_number(value));
      g.processes.value.push_back(proc);
      p->smi_q_process = static_cast<int>(g.processes.value.size()) - 1;
    } else if (key == "Used GPU Memory" && p->smi_q_process >= 0) {
      g.processes.value[static_cast<size_t>(p->smi_q_process)].used_memory_bytes =
          spaced_mib(value);
    }
  }
}

}  // namespace

bool parse_smi_query_line(std::string_view line, TextParse* p) {
  if (std::string bus = gpu_header_bus(line); !bus.empty()) {
    NvmlGpu& g = gpu_for_bus(p, bus);
    p->smi_q_gpu = static_cast<int>(&g - p->s->nvml.gpus.data());
    p->smi_q_section.clear();
    p->smi_q_process = -1;
    p->smi_q_fabric_indent = -1;
    return true;
  }
  size_t indent = line.find_first_not_of(' ');
  if (p->smi_q_gpu < 0 && indent != std::string_view::npos && trim(line) == "Fabric") {
    // A fabric block without its GPU: one more GPU, known by its index.
    NvmlInfo& n = text_nvml(p);
    if (n.init_rc == -1) n.init_rc = 0;
    NvmlGpu g;
    g.index = static_cast<uint32_t>(n.gpus.size());
    n.gpus.push_back(g);
    set_device_count(n);
    p->smi_q_gpu = static_cast<int>(n.gpus.size()) - 1;
    p->smi_q_section = "Fabric";
    p->smi_q_fabric_indent = static_cast<int>(indent);
    return true;
  }
  if (p->smi_q_gpu < 0) return false;
  if (p->smi_q_fabric_indent >= 0) {
    if (indent == std::string_view::npos || static_cast<int>(indent) <= p->smi_q_fabric_indent) {
      p->smi_q_gpu = p->smi_q_fabric_indent = -1;
      return false;
    }
    size_t colon = line.find(" : ");
    if (colon == std::string_view::npos) return true;  // "Health"
    NvmlGpu& g = p->s->nvml.gpus[static_cast<size_t>(p->smi_q_gpu)];
    fabric_value(trim(line.substr(0, colon)), trim(line.substr(colon + 3)), g);
    return true;
  }
  if (indent == 0 || indent == std::string_view::npos) {
    p->smi_q_gpu = -1;  // back in column 0: the GPU block ended
    return false;
  }
  size_t colon = line.find(" : ");
  std::string_view key = trim(line.substr(0, colon));
  if (colon == std::string_view::npos) {
    // A heading. Only those directly under the GPU (4 spaces) name a
    // section; deeper ones ("GPU Link Info") stay within theirs.
    if (indent <= 4) {
      p->smi_q_section = std::string(key);
      p->smi_q_process = -1;
    }
    return false;
  }
  if (indent <= 4) p->smi_q_section.clear();
  std::string_view value = trim(line.substr(colon + 3));
  NvmlGpu& g = p->s->nvml.gpus[static_cast<size_t>(p->smi_q_gpu)];
  gpu_value(p->smi_q_section, key, value, g, p);
  return true;
}

}  // namespace gd
