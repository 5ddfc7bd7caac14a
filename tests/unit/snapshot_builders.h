// Hand-built snapshots for check tests: the healthy test machines of
// tests/roots/README.md (ws-4x4090 and hgx-8xh100) and a machine with no
// NVIDIA hardware at all, plus small mutators that break one thing at a time.
//
// Shared by several check test files: keep the API additive (add functions,
// never change what an existing one builds).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "snapshot/snapshot.h"

namespace gd::fixtures {

template <class T>
NvmlValue<T> nv_ok(T v) {
  NvmlValue<T> out;
  out.value = std::move(v);
  out.rc = 0;
  return out;
}

template <class T>
NvmlValue<T> nv_rc(int rc) {
  NvmlValue<T> out;
  out.rc = rc;
  return out;
}

inline DevNode char_node(std::string path, int major, int minor, uint32_t mode = 0666) {
  DevNode n;
  n.path = std::move(path);
  n.exists = true;
  n.is_char_device = true;
  n.major = major;
  n.minor = minor;
  n.mode = mode;
  n.can_open = true;
  return n;
}

inline ModuleInfo live_module(std::string name, int refcount, std::string taint) {
  ModuleInfo m;
  m.name = std::move(name);
  m.state = "Live";
  m.refcount = refcount;
  m.taint = std::move(taint);
  return m;
}

// One GPU as the test machines describe it; the per-machine builders fill
// the model-specific fields.
struct GpuSpec {
  std::string bdf;
  int minor = 0;
  std::string uuid;
  uint32_t max_sm_clock_mhz = 0;
  int numa = -1;
  std::string cpulist;
};

inline void add_probe_records(Snapshot* s) {
  for (const char* name :
       {"env", "limits", "driver", "pci", "devnodes", "container", "services", "nvml", "cuda"}) {
    s->probes.push_back({name, ProbeStatus::kOk, "", 1.0, {}, 0});
  }
}

struct ModelSpec {
  uint16_t device_id = 0;
  uint32_t class_code = 0;
  std::string name;
  uint64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sms = 0;
  int nvml_arch = 0;
  double link_gts = 0;
};

inline void add_gpu(Snapshot* s, const ModelSpec& m, const GpuSpec& g) {
  PciDevice d;
  d.bdf = g.bdf;
  d.vendor_id = 0x10de;
  d.device_id = m.device_id;
  d.subsystem_vendor_id = 0x10de;
  d.subsystem_device_id = m.device_id == 0x2330 ? 0x16c1 : 0x167c;
  d.class_code = m.class_code;
  d.kind = PciKind::kGpu;
  d.driver = "nvidia";
  d.numa_node = g.numa;
  d.local_cpulist = g.cpulist;
  d.current_link_speed_gts = d.max_link_speed_gts = m.link_gts;
  d.current_link_width = d.max_link_width = 16;
  d.proc_model = m.name;
  d.proc_uuid = g.uuid;
  d.proc_minor = g.minor;
  s->pci.push_back(d);

  s->devnodes.push_back(char_node("/dev/nvidia" + std::to_string(g.minor), 195, g.minor));

  NvmlGpu n;
  n.index = static_cast<uint32_t>(s->nvml.gpus.size());
  n.name = nv_ok(m.name);
  n.uuid = nv_ok(g.uuid);
  n.pci_bus_id = nv_ok(g.bdf);
  n.pci_device_id = nv_ok((static_cast<uint32_t>(m.device_id) << 16) | 0x10deu);
  n.minor_number = nv_ok(static_cast<uint32_t>(g.minor));
  n.memory_total_bytes = nv_ok(m.memory_bytes);
  n.memory_used_bytes = nv_ok<uint64_t>(512ULL << 20);
  n.memory_free_bytes = nv_ok<uint64_t>(m.memory_bytes - (512ULL << 20));
  n.persistence_mode = nv_ok(1);
  n.compute_mode = nv_ok(0);
  n.cc_major = nv_ok(m.cc_major);
  n.cc_minor = nv_ok(m.cc_minor);
  n.architecture = nv_ok(m.nvml_arch);
  n.max_sm_clock_mhz = nv_ok(g.max_sm_clock_mhz);
  n.processes = nv_ok(std::vector<NvmlProcess>{});
  s->nvml.gpus.push_back(n);
}

inline CudaDevice cuda_device(const ModelSpec& m, const GpuSpec& g, int ordinal) {
  CudaDevice c;
  c.ordinal = ordinal;
  c.get_rc = 0;
  c.name = m.name;
  c.pci_bus_id = g.bdf;
  c.uuid = g.uuid;
  c.total_memory_bytes = m.memory_bytes;
  c.cc_major = m.cc_major;
  c.cc_minor = m.cc_minor;
  c.multiprocessors = m.sms;
  c.clock_khz = static_cast<int>(g.max_sm_clock_mhz) * 1000;
  c.ctx_rc = 0;
  return c;
}

inline void set_common_nvml(Snapshot* s, const std::string& driver_version) {
  s->nvml.attempted = true;
  s->nvml.library_requested = "libnvidia-ml.so.1";
  s->nvml.library_loaded = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so." + driver_version;
  s->nvml.init_rc = 0;
  s->nvml.init_symbol = "nvmlInit_v2";
  s->nvml.driver_version = nv_ok(driver_version);
  s->nvml.nvml_version = nv_ok("12." + driver_version);
  s->nvml.cuda_driver_version = nv_ok(12040);
  s->nvml.duration_ms = 40;
}

inline CudaRun base_cuda_run(const std::string& driver_version) {
  CudaRun r;
  r.label = "user";
  r.library_requested = "libcuda.so.1";
  r.library_loaded = "/usr/lib/x86_64-linux-gnu/libcuda.so." + driver_version;
  r.driver_version_rc = 0;
  r.driver_version = 12040;
  r.init_rc = 0;
  r.device_count_rc = 0;
  r.cudart_loaded =
      "/opt/conda/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12";
  r.cudart_runtime_version = 12040;
  r.cudart_rc = 0;
  r.duration_ms = 120;
  return r;
}

// ws-4x4090: workstation, 4 x RTX 4090, proprietary driver 550.54.14, CUDA
// working. CUDA's order (FASTEST_FIRST) is 41, 61, 01, 21.
inline Snapshot ws_4x4090() {
  Snapshot s;
  s.tool_version = "0.1.0";
  s.hostname = "ws-4x4090";
  s.taken_at = "2026-12-01T10:00:00Z";
  s.root = "/";
  s.env.vars["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.4/lib64";
  s.limits.overcommit_memory = 0;
  s.limits.mem_total_bytes = 128ULL << 30;
  s.limits.uid = s.limits.euid = 1000;
  s.limits.groups = {1000, 44};
  s.limits.cgroup_path = "/user.slice/user-1000.slice/session-2.scope";

  s.driver.proc_driver_nvidia = true;
  s.driver.version = "550.54.14";
  s.driver.version_line =
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024";
  s.driver.open_kernel_module = false;
  s.driver.params = {{"ModifyDeviceFiles", "1"},
                     {"DeviceFileUID", "0"},
                     {"DeviceFileGID", "0"},
                     {"DeviceFileMode", "438"}};
  s.driver.modules = {live_module("nvidia", 74, "POE"), live_module("nvidia_uvm", 0, "POE"),
                      live_module("nvidia_modeset", 2, "POE"), live_module("nvidia_drm", 4, "POE")};
  s.driver.uvm_disable_hmm = "N";
  s.driver.char_majors = {{"nvidia-frontend", 195}, {"nvidia-uvm", 510}};

  s.devnodes.push_back(char_node("/dev/nvidiactl", 195, 255));
  s.devnodes.push_back(char_node("/dev/nvidia-modeset", 195, 254));
  s.devnodes.push_back(char_node("/dev/nvidia-uvm", 510, 0));
  s.devnodes.push_back(char_node("/dev/nvidia-uvm-tools", 510, 1));

  ModelSpec m{0x2684, 0x030000, "NVIDIA GeForce RTX 4090", 25757220864ULL, 8, 9, 128, 8, 16.0};
  std::vector<GpuSpec> gpus = {
      {"0000:01:00.0", 0, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000001", 2520, 0, "0-15,32-47"},
      {"0000:21:00.0", 1, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000021", 2520, 0, "0-15,32-47"},
      {"0000:41:00.0", 2, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041", 2640, 1, "16-31,48-63"},
      {"0000:61:00.0", 3, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000061", 2580, 1, "16-31,48-63"},
  };
  set_common_nvml(&s, "550.54.14");
  for (const auto& g : gpus) {
    add_gpu(&s, m, g);
    PciDevice audio;
    audio.bdf = g.bdf.substr(0, g.bdf.size() - 1) + "1";
    audio.vendor_id = 0x10de;
    audio.device_id = 0x22ba;
    audio.class_code = 0x040300;
    audio.kind = PciKind::kAudio;
    audio.driver = "snd_hda_intel";
    audio.numa_node = g.numa;
    audio.local_cpulist = g.cpulist;
    s.pci.push_back(audio);
  }
  for (auto& g : s.nvml.gpus) {
    g.fabric_state = nv_rc<int>(3);  // NVML_ERROR_NOT_SUPPORTED on GeForce
    g.mig_mode_current = nv_rc<int>(3);
    g.mig_mode_pending = nv_rc<int>(3);
  }
  s.nvml.device_count = nv_ok<uint32_t>(4);

  s.cuda.attempted = true;
  CudaRun r = base_cuda_run("550.54.14");
  int ordinal = 0;
  for (int i : {2, 3, 0, 1}) r.devices.push_back(cuda_device(m, gpus[i], ordinal++));
  r.device_count = r.cudart_device_count = 4;
  s.cuda.runs.push_back(r);

  s.services.push_back({"nvidia-persistenced", true, {1201}, ""});
  s.processes.push_back({1201, "nvidia-persiste"});
  add_probe_records(&s);
  return s;
}

// hgx-8xh100: HGX H100 8-GPU with 4 NVSwitches, open kernel module
// 550.54.15, fabric manager running, CUDA working.
inline Snapshot hgx_8xh100() {
  Snapshot s;
  s.tool_version = "0.1.0";
  s.hostname = "hgx-8xh100";
  s.taken_at = "2026-12-01T10:00:00Z";
  s.root = "/";
  s.limits.overcommit_memory = 0;
  s.limits.mem_total_bytes = 2ULL << 40;
  s.limits.uid = s.limits.euid = 1000;
  s.limits.groups = {1000};
  s.limits.cgroup_path = "/system.slice/slurmstepd.scope/job_4711/step_0";

  s.driver.proc_driver_nvidia = true;
  s.driver.version = "550.54.15";
  s.driver.version_line =
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 19:33:09 UTC 2024";
  s.driver.open_kernel_module = true;
  s.driver.params = {{"ModifyDeviceFiles", "1"},
                     {"DeviceFileUID", "0"},
                     {"DeviceFileGID", "0"},
                     {"DeviceFileMode", "438"}};
  s.driver.modules = {live_module("nvidia", 120, "OE"), live_module("nvidia_uvm", 0, "OE"),
                      live_module("nvidia_modeset", 0, "OE"),
                      live_module("nvidia_peermem", 0, "OE")};
  s.driver.uvm_disable_hmm = "N";
  s.driver.char_majors = {{"nvidia-frontend", 195}, {"nvidia-uvm", 510}, {"nvidia-nvswitch", 508}};

  s.devnodes.push_back(char_node("/dev/nvidiactl", 195, 255));
  s.devnodes.push_back(char_node("/dev/nvidia-modeset", 195, 254));
  s.devnodes.push_back(char_node("/dev/nvidia-uvm", 510, 0));
  s.devnodes.push_back(char_node("/dev/nvidia-uvm-tools", 510, 1));
  s.devnodes.push_back(char_node("/dev/nvidia-nvswitchctl", 508, 255));

  for (int i = 0; i < 4; ++i) {
    PciDevice sw;
    sw.bdf = "0000:0" + std::to_string(5 + i) + ":00.0";
    sw.vendor_id = 0x10de;
    sw.device_id = 0x22a3;
    sw.class_code = 0x068000;
    sw.kind = PciKind::kNvSwitch;
    sw.driver = "nvidia";
    sw.numa_node = 0;
    sw.local_cpulist = "0-55,112-167";
    s.pci.push_back(sw);
    s.devnodes.push_back(char_node("/dev/nvidia-nvswitch" + std::to_string(i), 508, i));
  }

  ModelSpec m{0x2330, 0x030200, "NVIDIA H100 80GB HBM3", 85520809984ULL, 9, 0, 132, 9, 32.0};
  const char* buses[] = {"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};
  std::vector<GpuSpec> gpus;
  for (int i = 0; i < 8; ++i) {
    bool numa1 = i >= 4;
    gpus.push_back({std::string("0000:") + buses[i] + ":00.0", i,
                    std::string("GPU-5f2e81a4-7b6c-4d8e-8f10-0000000000") + buses[i], 1980,
                    numa1 ? 1 : 0, numa1 ? "56-111,168-223" : "0-55,112-167"});
  }
  set_common_nvml(&s, "550.54.15");
  for (const auto& g : gpus) add_gpu(&s, m, g);
  for (auto& g : s.nvml.gpus) {
    g.fabric_state = nv_ok(3);  // COMPLETED
    g.fabric_status = nv_ok(0);
    g.mig_mode_current = nv_ok(0);
    g.mig_mode_pending = nv_ok(0);
  }
  s.nvml.device_count = nv_ok<uint32_t>(8);

  s.cuda.attempted = true;
  CudaRun r = base_cuda_run("550.54.15");
  for (int i = 0; i < 8; ++i) r.devices.push_back(cuda_device(m, gpus[i], i));
  r.device_count = r.cudart_device_count = 8;
  s.cuda.runs.push_back(r);

  s.services.push_back({"nv-fabricmanager", true, {2301}, "550.54.15"});
  s.services.push_back({"nvidia-persistenced", true, {2201}, ""});
  s.processes.push_back({2201, "nvidia-persiste"});
  s.processes.push_back({2301, "nv-fabricmanage"});
  add_probe_records(&s);
  return s;
}

// A machine with no NVIDIA GPU and no driver (like the dev machine): both
// libraries fail to load.
inline Snapshot no_nvidia_machine() {
  Snapshot s;
  s.tool_version = "0.1.0";
  s.hostname = "dev";
  s.taken_at = "2026-12-01T10:00:00Z";
  s.root = "/";
  s.limits.overcommit_memory = 0;
  s.limits.mem_total_bytes = 16ULL << 30;
  s.limits.uid = s.limits.euid = 1000;
  s.nvml.attempted = true;
  s.nvml.library_requested = "libnvidia-ml.so.1";
  s.nvml.dlopen_error =
      "libnvidia-ml.so.1: cannot open shared object file: No such file or directory";
  s.cuda.attempted = true;
  CudaRun r;
  r.label = "user";
  r.library_requested = "libcuda.so.1";
  r.dlopen_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
  s.cuda.runs.push_back(r);
  add_probe_records(&s);
  return s;
}

// --- mutators ------------------------------------------------------------------

inline PciDevice* pci_at(Snapshot& s, std::string_view bdf) {
  for (auto& d : s.pci) {
    if (d.bdf == bdf) return &d;
  }
  return nullptr;
}

inline DevNode* devnode_at(Snapshot& s, std::string_view path) {
  for (auto& n : s.devnodes) {
    if (n.path == path) return &n;
  }
  return nullptr;
}

inline ModuleInfo* module_at(Snapshot& s, std::string_view name) {
  for (auto& m : s.driver.modules) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

inline void remove_module(Snapshot& s, std::string_view name) {
  std::erase_if(s.driver.modules, [&](const ModuleInfo& m) { return m.name == name; });
}

inline void remove_devnode(Snapshot& s, std::string_view path) {
  std::erase_if(s.devnodes, [&](const DevNode& n) { return n.path == path; });
}

inline ServiceInfo* service_at(Snapshot& s, std::string_view name) {
  for (auto& v : s.services) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

inline CudaRun& user_run(Snapshot& s) { return s.cuda.runs.front(); }

// Makes CUDA fail the way it does when cuInit returns init_rc (cudart then
// reports cudart_rc; pass -1 to reuse init_rc). Adds the clean run, which
// fails the same way.
inline void fail_cuda(Snapshot& s, int init_rc, int cudart_rc = -1) {
  CudaRun& r = user_run(s);
  r.init_rc = init_rc;
  r.device_count_rc = -1;
  r.device_count = 0;
  r.devices.clear();
  r.cudart_rc = cudart_rc < 0 ? init_rc : cudart_rc;
  r.cudart_device_count = 0;
  s.cuda.runs.resize(1);
  CudaRun clean = r;
  clean.label = "clean";
  clean.env_changes = {{"CUDA_VISIBLE_DEVICES", ""}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  s.cuda.runs.push_back(clean);
}

// The driver is installed but not loaded: GPUs stay on the bus, unbound.
inline void unload_driver(Snapshot& s) {
  s.driver = DriverInfo{};
  for (auto& d : s.pci) {
    if (d.kind == PciKind::kGpu || d.kind == PciKind::kNvSwitch) {
      d.driver = "";
      d.proc_model.clear();
      d.proc_uuid.clear();
      d.proc_minor.reset();
    }
  }
  s.devnodes.clear();
  s.services.clear();
  s.processes.clear();
  s.nvml = NvmlInfo{};
  s.nvml.attempted = true;
  s.nvml.library_requested = "libnvidia-ml.so.1";
  s.nvml.library_loaded = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14";
  s.nvml.init_symbol = "nvmlInit_v2";
  s.nvml.init_rc = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  CudaRun& r = user_run(s);
  r.driver_version_rc = 0;
  r.driver_version = 12040;
  fail_cuda(s, 100, 35);
}

// --- finding helpers -----------------------------------------------------------

inline const Finding* find_id(const std::vector<Finding>& fs, std::string_view id) {
  for (const auto& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

inline int count_id(const std::vector<Finding>& fs, std::string_view id) {
  return static_cast<int>(
      std::count_if(fs.begin(), fs.end(), [&](const Finding& f) { return f.id == id; }));
}

inline bool any_line_has(const std::vector<std::string>& lines, std::string_view needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

inline bool evidence_has(const Finding& f, std::string_view needle) {
  return any_line_has(f.evidence, needle);
}

inline bool remedy_has(const Finding& f, std::string_view needle) {
  return any_line_has(f.remedy, needle);
}

// Every line of a finding (summary, evidence, remedy) joined, for messages.
inline std::string describe(const Finding& f) {
  std::string out = f.id + " [" + severity_name(f.severity) + "] " + f.summary;
  for (const auto& e : f.evidence) out += "\n  evidence: " + e;
  for (const auto& r : f.remedy) out += "\n  remedy: " + r;
  return out;
}

inline std::string describe(const std::vector<Finding>& fs) {
  std::string out;
  for (const auto& f : fs) out += describe(f) + "\n";
  return out;
}

// The registry entries of the named checks, in the given order: tests run
// the checks through the registry's own table of functions and ids.
inline std::vector<const CheckEntry*> registry_entries(
    std::initializer_list<std::string_view> names) {
  std::vector<const CheckEntry*> out;
  for (std::string_view name : names) {
    auto it = std::find_if(all_checks().begin(), all_checks().end(),
                           [&](const CheckEntry& c) { return name == c.name; });
    if (it == all_checks().end()) {
      ADD_FAILURE() << "no check named " << name << " in the registry";
      continue;
    }
    out.push_back(&*it);
  }
  return out;
}

// The one finding with this id (a test failure if absent or repeated). By
// value: callers pass the temporary vector a check returns.
inline Finding only(const std::vector<Finding>& fs, std::string_view id) {
  const Finding* f = find_id(fs, id);
  if (f == nullptr) {
    ADD_FAILURE() << "no finding " << id << "\n" << describe(fs);
    return Finding{};
  }
  EXPECT_EQ(count_id(fs, id), 1) << describe(fs);
  return *f;
}

}  // namespace gd::fixtures
