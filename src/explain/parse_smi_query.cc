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
// A GPU block starts at "GPU <bus id>" in column 0; a heading is a line with
// no " : " (the values under it are indented deeper); a value line is
// "key : value". The plain table and -L are parse_nvml.cc's.
#include <algorithm>

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

void gpu_value(std::string_view section, std::string_view key, std::string_view value, NvmlGpu& g,
               TextParse* p) {
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
    return true;
  }
  if (p->smi_q_gpu < 0) return false;
  size_t indent = line.find_first_not_of(' ');
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
