// nvidia-smi output and NVML errors. Real lines this file reads (nvidia-smi
// 470-570; the table is the same from R450 on, the MIG row from R450):
//
//   NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure
//     that the latest NVIDIA driver is installed and running.
//   Failed to initialize NVML: Driver/library version mismatch
//   NVML library version: 550.90
//   Failed to initialize NVML: Unknown Error
//   Unable to determine the device handle for GPU0000:41:00.0: Unknown Error
//   Unable to determine the device handle for GPU0000:41:00.0: GPU is lost.  Reboot the system
//     to recover this GPU
//   No devices were found
//   nvmlInit_v2 failed: NVML_ERROR_LIB_RM_VERSION_MISMATCH
//   pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded
//   pynvml.nvml.NVMLError: RM has detected an NVML/RM version mismatch.
//   GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1b9a0c7e-5d4f-4a8e-9c31-2f6b8d0e7a11)   (-L)
// The table:
//   | NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |
//   |   0  NVIDIA GeForce RTX 4090        Off |   00000000:01:00.0 Off |                  Off |
//   |  0%   38C    P8             22W /  450W |       2MiB /  24564MiB |      0%      Default |
//   |                                         |                        |                  N/A |
//   | Processes:                                                                              |
//   |    0   N/A  N/A      4242      C   python                                      23000MiB |
//   |  No running processes found                                                             |
#include <cctype>
#include <cstdlib>
#include <string>

#include "catalog/cuda_errors.h"
#include "explain/error_codes.h"
#include "explain/parse.h"
#include "util/ascii.h"

namespace gd {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  line = trim(line);
  if (line.empty() || line.front() != '|') return cells;
  line.remove_prefix(1);
  while (!line.empty()) {
    size_t bar = line.find('|');
    cells.push_back(line.substr(0, bar));
    if (bar == std::string_view::npos) break;
    line.remove_prefix(bar + 1);
  }
  if (!cells.empty() && trim(cells.back()).empty()) cells.pop_back();
  return cells;
}

}  // namespace

// "00000000:41:00.0" / "0000:41:00.0" / "41:00.0" inside `s` -> "0000:41:00.0"; "" if none.
std::string find_bus_id(std::string_view s) {
  for (size_t i = 0; i + 7 <= s.size(); ++i) {
    // bus:dev.fn = hh:hh.h at i
    if (is_hex(s[i]) && is_hex(s[i + 1]) && s[i + 2] == ':' && is_hex(s[i + 3]) &&
        is_hex(s[i + 4]) && s[i + 5] == '.' && is_hex(s[i + 6])) {
      if (i + 7 < s.size() && is_hex(s[i + 7])) continue;
      std::string domain = "0000";
      if (i >= 5 && s[i - 1] == ':') {
        size_t d = i - 1;
        while (d > 0 && is_hex(s[d - 1]) && i - 1 - d < 8) --d;
        if (i - 1 - d >= 4) domain = std::string(s.substr(i - 5, 4));
      }
      std::string out = domain + ":" + std::string(s.substr(i, 7));
      return ascii_lower(out);
    }
  }
  return "";
}

int leading_number(std::string_view s) {
  int v = 0;
  bool any = false;
  for (char c : s) {
    if (!is_digit(c)) break;
    any = true;
    if (v < 100000000) v = v * 10 + (c - '0');
  }
  return any ? v : -1;
}

// "23000MiB" -> bytes; nullopt if not that shape.
std::optional<uint64_t> mib_bytes(std::string_view t) {
  if (t.size() < 4 || t.substr(t.size() - 3) != "MiB") return std::nullopt;
  int v = leading_number(t);
  if (v < 0) return std::nullopt;
  return static_cast<uint64_t>(v) << 20;
}

NvmlGpu* gpu_by_index(NvmlInfo& n, uint32_t index) {
  for (auto& g : n.gpus) {
    if (g.index == index) return &g;
  }
  return nullptr;
}

void set_device_count(NvmlInfo& n) {
  n.device_count.value = static_cast<uint32_t>(n.gpus.size());
  n.device_count.rc = 0;
}

namespace {

// "Driver Version: 550.54.14" (table) or "Driver Version   : 550.54.14" (-q).
std::string value_after(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return "";
  std::string_view rest = line.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
  std::vector<std::string_view> t = split_ws(rest);
  return t.empty() ? "" : std::string(t.front());
}

void read_versions(std::string_view line, TextParse* p) {
  std::string driver = value_after(line, "Driver Version");
  std::string cuda = value_after(line, "CUDA Version");
  if (driver.empty() && cuda.empty()) return;
  NvmlInfo& n = text_nvml(p);
  n.init_rc = n.init_rc == -1 ? 0 : n.init_rc;
  if (!driver.empty() && is_digit(driver[0])) n.driver_version = {driver, 0};
  if (!cuda.empty() && is_digit(cuda[0])) {
    int major = leading_number(cuda);
    size_t dot = cuda.find('.');
    int minor =
        dot == std::string::npos ? 0 : leading_number(std::string_view(cuda).substr(dot + 1));
    // A CUDA version is "12.4": anything else is not one (and would overflow).
    if (major > 0 && major < 100 && minor < 100) {
      n.cuda_driver_version = {major * 1000 + (minor > 0 ? minor : 0) * 10, 0};
    }
  }
}

int compute_mode(std::string_view cell) {
  if (cell.find("E. Process") != std::string_view::npos) return 3;
  if (cell.find("Prohibited") != std::string_view::npos) return 2;
  if (cell.find("E. Thread") != std::string_view::npos) return 1;
  if (cell.find("Default") != std::string_view::npos) return 0;
  return -1;
}

bool gpu_row(const std::vector<std::string_view>& cells, int line_no, TextParse* p) {
  if (cells.size() < 3) return false;
  std::vector<std::string_view> t0 = split_ws(cells[0]);
  if (t0.size() < 2 || leading_number(t0[0]) < 0 || t0[0].size() > 3) return false;
  std::string bus = find_bus_id(cells[1]);
  if (bus.empty()) return false;
  NvmlInfo& n = text_nvml(p);
  if (n.init_rc == -1) n.init_rc = 0;
  NvmlGpu g;
  g.index = static_cast<uint32_t>(leading_number(t0[0]));
  g.handle_rc = 0;
  size_t last = t0.size();
  std::string_view pm = t0.back();
  if (pm == "On" || pm == "Off") {
    g.persistence_mode = {pm == "On" ? 1 : 0, 0};
    --last;
  }
  std::string name;
  for (size_t i = 1; i < last; ++i) name += (name.empty() ? "" : " ") + std::string(t0[i]);
  if (!name.empty()) g.name = {name, 0};
  g.pci_bus_id = {bus, 0};
  if (NvmlGpu* old = gpu_by_index(n, g.index)) {
    *old = g;
  } else {
    n.gpus.push_back(g);
  }
  set_device_count(n);
  p->smi_row = static_cast<int>(g.index);
  p->smi_row_line = 1;
  (void)line_no;
  return true;
}

void gpu_row_continued(const std::vector<std::string_view>& cells, TextParse* p) {
  NvmlGpu* g = gpu_by_index(p->s->nvml, static_cast<uint32_t>(p->smi_row));
  if (g == nullptr || cells.size() < 3) return;
  if (p->smi_row_line == 1) {
    std::vector<std::string_view> t = split_ws(cells[1]);
    for (size_t i = 0; i + 2 < t.size(); ++i) {
      if (t[i + 1] == "/") {
        auto used = mib_bytes(t[i]);
        auto total = mib_bytes(t[i + 2]);
        if (used && total) {
          g->memory_used_bytes = {*used, 0};
          g->memory_total_bytes = {*total, 0};
          g->memory_free_bytes = {*total > *used ? *total - *used : 0, 0};
        }
      }
    }
    if (int cm = compute_mode(cells[2]); cm >= 0) g->compute_mode = {cm, 0};
    p->smi_row_line = 2;
  } else if (p->smi_row_line == 2) {
    std::string_view mig = trim(cells[2]);
    if (mig == "Enabled" || mig == "Disabled") g->mig_mode_current = {mig == "Enabled" ? 1 : 0, 0};
    p->smi_row = -1;
  }
}

// "|    0   N/A  N/A      4242      C   python     23000MiB |" (R470+: GI and CI
// columns) or "|    0      4242      C   python     23000MiB |".
void process_row(std::string_view cell, TextParse* p) {
  std::vector<std::string_view> t = split_ws(cell);
  if (t.size() < 4 || leading_number(t[0]) < 0) return;
  size_t type = 0;
  for (size_t i = 2; i < t.size(); ++i) {
    if (t[i] == "C" || t[i] == "G" || t[i] == "C+G" || t[i] == "M" || t[i] == "M+C") {
      type = i;
      break;
    }
  }
  if (type == 0 || leading_number(t[type - 1]) < 0) return;
  NvmlGpu* g = gpu_by_index(p->s->nvml, static_cast<uint32_t>(leading_number(t[0])));
  if (g == nullptr) return;
  NvmlProcess proc;
  proc.pid = static_cast<uint32_t>(leading_number(t[type - 1]));
  proc.used_memory_bytes = mib_bytes(t.back());
  g->processes.rc = 0;
  g->processes.value.push_back(proc);
}

// An NVML code the text names (by name or by text): the first one is the
// init's answer, each is a reported line.
void report_nvml_code(TextParse* p, int rc, std::string text, std::string_view line, int line_no) {
  NvmlInfo& n = text_nvml(p);
  if (n.init_rc <= 0) n.init_rc = rc;
  add_reported(p, "nvml", rc, std::move(text), line, line_no);
}

}  // namespace

bool parse_smi_table_line(std::string_view line, int line_no, TextParse* p) {
  std::string_view t = trim(line);
  if (t.empty()) return false;
  if (t.find("Driver Version") != std::string_view::npos ||
      t.find("CUDA Version") != std::string_view::npos) {
    read_versions(t, p);
    return true;
  }
  if (t.front() == '+' || t.starts_with("|=") || t.starts_with("|-")) {
    p->smi_row = -1;
    return false;
  }
  if (t.front() != '|') return false;
  if (t.find("Processes:") != std::string_view::npos) {
    p->smi_processes = true;
    p->smi_row = -1;
    return true;
  }
  std::vector<std::string_view> cells = split_cells(t);
  if (cells.empty()) return false;
  if (p->smi_processes) {
    if (t.find("No running processes found") != std::string_view::npos) {
      for (auto& g : p->s->nvml.gpus) g.processes.rc = 0;
      return true;
    }
    process_row(cells[0], p);
    return true;
  }
  if (gpu_row(cells, line_no, p)) return true;
  if (p->smi_row >= 0) gpu_row_continued(cells, p);
  return false;
}

bool parse_nvml_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  if (icontains(lowered,
                "nvidia-smi has failed because it couldn't communicate with the nvidia "
                "driver")) {
    NvmlInfo& n = text_nvml(p);
    n.init_rc = 9;  // what nvidia-smi prints for NVML_ERROR_DRIVER_NOT_LOADED
    add_reported(p, "nvml", 9, "NVIDIA-SMI couldn't communicate with the NVIDIA driver", line,
                 line_no);
    return true;
  }
  if (size_t at = lowered.find("failed to initialize nvml: "); at != std::string_view::npos) {
    std::string_view what = trim(line.substr(at + 27));
    int rc = nvml_error_by_string(what);
    NvmlInfo& n = text_nvml(p);
    n.init_rc = rc >= 0 ? rc : 999;
    add_reported(p, "nvml", n.init_rc, std::string(what), line, line_no);
    return true;
  }
  if (size_t at = lowered.find("nvml library version:"); at != std::string_view::npos) {
    std::string v(trim(line.substr(at + 21)));
    text_nvml(p).nvml_version = {v, 0};
    return true;
  }
  if (size_t at = lowered.find("unable to determine the device handle for gpu");
      at != std::string_view::npos) {
    std::string_view rest = line.substr(at + 45);
    std::string bus = find_bus_id(rest);
    size_t colon = rest.find(": ");
    std::string_view what = colon == std::string_view::npos ? "" : trim(rest.substr(colon + 2));
    int rc = what.empty() ? -1 : nvml_error_by_string(what);
    if (rc < 0 && icontains(lowered, "gpu is lost")) rc = 15;
    if (rc < 0) rc = 999;
    NvmlInfo& n = text_nvml(p);
    if (n.init_rc == -1) n.init_rc = 0;
    NvmlGpu g;
    g.index = static_cast<uint32_t>(n.gpus.size());
    g.handle_rc = rc;
    if (!bus.empty()) g.pci_bus_id = {bus, 0};
    n.gpus.push_back(g);
    set_device_count(n);
    add_reported(p, "nvml", rc, std::string(what), line, line_no);
    return true;
  }
  if (trim(lowered) == "no devices were found") {
    NvmlInfo& n = text_nvml(p);
    n.init_rc = 0;
    n.device_count = {0, 0};
    add_reported(p, "nvml-no-devices", -1, "No devices were found", line, line_no);
    return true;
  }
  // NVML codes in any wrapper (explain/error_codes.h): NVML_ERROR_* names,
  // pynvml's exception classes and texts.
  if (const auto& m = code_on_line(line, lowered, line_no, p); m && m->space == CodeSpace::kNvml) {
    report_nvml_code(p, m->code, m->as_printed, line, line_no);
    return true;
  }
  // nvidia-smi -L
  if (lowered.starts_with("gpu ") && icontains(lowered, "(uuid: gpu-")) {
    int index = leading_number(line.substr(4));
    size_t colon = line.find(": ");
    size_t uuid = line.find("(UUID: ");
    if (index >= 0 && colon != std::string_view::npos && uuid != std::string_view::npos &&
        colon < uuid) {
      NvmlInfo& n = text_nvml(p);
      if (n.init_rc == -1) n.init_rc = 0;
      NvmlGpu* g = gpu_by_index(n, static_cast<uint32_t>(index));
      if (g == nullptr) {
        NvmlGpu fresh;
        fresh.index = static_cast<uint32_t>(index);
        n.gpus.push_back(fresh);
        g = &n.gpus.back();
      }
      g->handle_rc = 0;
      g->name = {std::string(trim(line.substr(colon + 2, uuid - colon - 2))), 0};
      std::string_view u = line.substr(uuid + 7);
      g->uuid = {std::string(u.substr(0, u.find(')'))), 0};
      set_device_count(n);
      return true;
    }
  }
  return false;
}

}  // namespace gd
