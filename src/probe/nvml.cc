// The NVML probe, child side (`gpudoctor __probe-nvml --lib PATH`): loads
// libnvidia-ml with dlopen, reads what the checks need with the NVML status
// next to every value, and prints one NvmlInfo as JSON (hw_common.h).
//
// The types and symbols are in nvml_api.h; the health readings and the
// GPU-pair topology in nvml_health.cc.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <vector>

#include "probe/hw_common.h"
#include "probe/nvml_api.h"
#include "probe/nvml_sampler.h"
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"

namespace gd {
namespace nvml {
namespace {

Api resolve_api(void* lib) {
  Api a;
  a.init = resolve<nvmlReturn_t()>(lib, {"nvmlInit_v2", "nvmlInit"});
  a.shutdown = resolve<nvmlReturn_t()>(lib, {"nvmlShutdown"});
  a.driver_version = resolve<nvmlReturn_t(char*, unsigned)>(lib, {"nvmlSystemGetDriverVersion"});
  a.nvml_version = resolve<nvmlReturn_t(char*, unsigned)>(lib, {"nvmlSystemGetNVMLVersion"});
  a.cuda_driver_version = resolve<nvmlReturn_t(int*)>(
      lib, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  a.count = resolve<nvmlReturn_t(unsigned*)>(lib, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  a.handle = resolve<nvmlReturn_t(unsigned, nvmlDevice_t*)>(
      lib, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  a.name = resolve<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>(lib, {"nvmlDeviceGetName"});
  a.uuid = resolve<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>(lib, {"nvmlDeviceGetUUID"});
  a.vbios =
      resolve<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>(lib, {"nvmlDeviceGetVbiosVersion"});
  a.pci = resolve<nvmlReturn_t(nvmlDevice_t, PciInfo*)>(
      lib, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  a.minor = resolve<nvmlReturn_t(nvmlDevice_t, unsigned*)>(lib, {"nvmlDeviceGetMinorNumber"});
  a.memory = resolve<nvmlReturn_t(nvmlDevice_t, Memory*)>(lib, {"nvmlDeviceGetMemoryInfo"});
  a.persistence = resolve<nvmlReturn_t(nvmlDevice_t, int*)>(lib, {"nvmlDeviceGetPersistenceMode"});
  a.compute_mode = resolve<nvmlReturn_t(nvmlDevice_t, int*)>(lib, {"nvmlDeviceGetComputeMode"});
  a.mig_mode =
      resolve<nvmlReturn_t(nvmlDevice_t, unsigned*, unsigned*)>(lib, {"nvmlDeviceGetMigMode"});
  a.cc =
      resolve<nvmlReturn_t(nvmlDevice_t, int*, int*)>(lib, {"nvmlDeviceGetCudaComputeCapability"});
  a.arch = resolve<nvmlReturn_t(nvmlDevice_t, unsigned*)>(lib, {"nvmlDeviceGetArchitecture"});
  a.max_clock =
      resolve<nvmlReturn_t(nvmlDevice_t, int, unsigned*)>(lib, {"nvmlDeviceGetMaxClockInfo"});
  a.processes = resolve<nvmlReturn_t(nvmlDevice_t, unsigned*, ProcessInfo*)>(
      lib, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  a.graphics_processes = resolve<nvmlReturn_t(nvmlDevice_t, unsigned*, ProcessInfo*)>(
      lib,
      {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"});
  a.fabric =
      resolve<nvmlReturn_t(nvmlDevice_t, FabricInfoV3*)>(lib, {"nvmlDeviceGetGpuFabricInfoV"});
  a.max_mig =
      resolve<nvmlReturn_t(nvmlDevice_t, unsigned*)>(lib, {"nvmlDeviceGetMaxMigDeviceCount"});
  a.mig_handle = resolve<nvmlReturn_t(nvmlDevice_t, unsigned, nvmlDevice_t*)>(
      lib, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  resolve_health_api(lib, &a);
  return a;
}

void read_strings(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                  NvmlGpu* g) {
  char buf[kBufferSize] = {};
  g->name.rc = ask(out, a.name, at, [&](auto f) { return f(dev, buf, kBufferSize); });
  if (g->name.ok()) g->name.value = buffer_string(buf, sizeof buf);
  char ubuf[kBufferSize] = {};
  g->uuid.rc = ask(out, a.uuid, at, [&](auto f) { return f(dev, ubuf, kBufferSize); });
  if (g->uuid.ok()) g->uuid.value = buffer_string(ubuf, sizeof ubuf);
  char vbuf[kBufferSize] = {};
  g->vbios_version.rc = ask(out, a.vbios, at, [&](auto f) { return f(dev, vbuf, kBufferSize); });
  if (g->vbios_version.ok()) g->vbios_version.value = buffer_string(vbuf, sizeof vbuf);
  PciInfo pci{};
  int rc = ask(out, a.pci, at, [&](auto f) { return f(dev, &pci); });
  g->pci_bus_id.rc = g->pci_device_id.rc = rc;
  if (rc == kSuccess) {
    g->pci_bus_id.value = normalize_bus_id(buffer_string(pci.busId, sizeof pci.busId));
    g->pci_device_id.value = pci.pciDeviceId;
  }
}

void read_modes(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                NvmlGpu* g) {
  unsigned minor = 0;
  g->minor_number.rc = ask(out, a.minor, at, [&](auto f) { return f(dev, &minor); });
  if (g->minor_number.ok()) g->minor_number.value = minor;
  g->persistence_mode.rc =
      ask(out, a.persistence, at, [&](auto f) { return f(dev, &g->persistence_mode.value); });
  g->compute_mode.rc =
      ask(out, a.compute_mode, at, [&](auto f) { return f(dev, &g->compute_mode.value); });
  unsigned cur = 0, pend = 0;
  int rc = ask(out, a.mig_mode, at, [&](auto f) { return f(dev, &cur, &pend); });
  g->mig_mode_current.rc = g->mig_mode_pending.rc = rc;
  if (rc == kSuccess) {
    g->mig_mode_current.value = static_cast<int>(cur);
    g->mig_mode_pending.value = static_cast<int>(pend);
  }
  int major = 0, minor_cc = 0;
  rc = ask(out, a.cc, at, [&](auto f) { return f(dev, &major, &minor_cc); });
  g->cc_major.rc = g->cc_minor.rc = rc;
  if (rc == kSuccess) {
    g->cc_major.value = major;
    g->cc_minor.value = minor_cc;
  }
  unsigned arch = 0;
  g->architecture.rc = ask(out, a.arch, at, [&](auto f) { return f(dev, &arch); });
  if (g->architecture.ok()) g->architecture.value = static_cast<int>(arch);
  unsigned mhz = 0;
  g->max_sm_clock_mhz.rc =
      ask(out, a.max_clock, at, [&](auto f) { return f(dev, kClockSm, &mhz); });
  if (g->max_sm_clock_mhz.ok()) g->max_sm_clock_mhz.value = mhz;
}

// One of NVML's process lists (compute or graphics: the same signature and
// struct) into *list. Size query first (count 0 -> INSUFFICIENT_SIZE and the
// count), then the list; processes may start in between, hence the retries.
using ProcessListSym = Sym<nvmlReturn_t(nvmlDevice_t, unsigned*, ProcessInfo*)>;
void read_processes(const ProcessListSym& sym, ChildOutput& out, nvmlDevice_t dev,
                    const std::string& at, NvmlValue<std::vector<NvmlProcess>>* list) {
  unsigned n = 0;
  int rc = ask(out, sym, at, [&](auto f) { return f(dev, &n, nullptr); });
  std::vector<ProcessInfo> infos;
  for (int attempt = 0; rc == kInsufficientSize && attempt < 3; ++attempt) {
    infos.assign(n + 8, ProcessInfo{});
    unsigned cap = static_cast<unsigned>(infos.size());
    rc = ask(out, sym, at, [&](auto f) { return f(dev, &cap, infos.data()); });
    n = cap;
  }
  list->rc = rc;
  if (rc != kSuccess) return;
  for (unsigned i = 0; i < n && i < infos.size(); ++i) {
    NvmlProcess p;
    p.pid = infos[i].pid;
    if (infos[i].usedGpuMemory != kValueNotAvailable) p.used_memory_bytes = infos[i].usedGpuMemory;
    list->value.push_back(p);
  }
}

// The 16 bytes of a cluster UUID in the 8-4-4-4-12 form nvidia-smi prints;
// "" for all zeros (no cluster assigned).
std::string cluster_uuid_text(const unsigned char (&b)[16]) {
  if (std::all_of(std::begin(b), std::end(b), [](unsigned char c) { return c == 0; })) return "";
  std::string out;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

void read_fabric_and_mig(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                         NvmlGpu* g) {
  // v3 first; v2 (deprecated) only from a driver that does not know v3.
  FabricInfoV3 fi{};
  fi.version = kFabricInfoV3;
  int rc = ask(out, a.fabric, at, [&](auto f) { return f(dev, &fi); });
  if (rc == kArgumentVersionMismatch) {
    fi = FabricInfoV3{};
    fi.version = kFabricInfoV2;
    rc = ask(out, a.fabric, at + " v2", [&](auto f) { return f(dev, &fi); });
  }
  g->fabric_state.rc = g->fabric_status.rc = g->fabric_clique_id.rc = rc;
  g->fabric_cluster_uuid.rc = g->fabric_health_mask.rc = rc;
  if (rc == kSuccess) {
    g->fabric_state.value = fi.state;
    g->fabric_status.value = fi.status;
    g->fabric_clique_id.value = fi.cliqueId;
    g->fabric_cluster_uuid.value = cluster_uuid_text(fi.clusterUuid);
    g->fabric_health_mask.value = fi.healthMask;
    if (fi.version == kFabricInfoV3) g->fabric_health_summary = {fi.healthSummary, rc};
  }
  if (!g->mig_mode_current.ok() || g->mig_mode_current.value != 1) return;
  unsigned max = 0;
  rc = ask(out, a.max_mig, at, [&](auto f) { return f(dev, &max); });
  g->mig_instance_count.rc = rc;
  if (rc != kSuccess) return;
  uint32_t found = 0;
  for (unsigned i = 0; i < max && i < 64; ++i) {
    nvmlDevice_t mig = nullptr;
    std::string where = at + " MIG " + std::to_string(i);
    if (ask(out, a.mig_handle, where, [&](auto f) { return f(dev, i, &mig); }) == kSuccess) {
      ++found;
    }
  }
  g->mig_instance_count.value = found;
}

}  // namespace

bool open_nvml(ChildOutput& out, NvmlInfo* info, Api* a) {
  LoadedLibrary lib = load_library(info->library_requested);
  if (lib.handle == nullptr) {
    info->dlopen_error = lib.error;
    return false;
  }
  info->library_loaded = lib.path;
  *a = resolve_api(lib.handle);
  if (a->init.fn == nullptr) {
    info->dlopen_error = lib.path + " exports neither nvmlInit_v2 nor nvmlInit";
    return false;
  }
  info->init_symbol = a->init.name;
  info->init_rc = ask(out, a->init, "", [](auto f) { return f(); });
  return info->init_rc == kSuccess;
}

void read_memory(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                 NvmlGpu* g) {
  Memory m{};
  int rc = ask(out, a.memory, at, [&](auto f) { return f(dev, &m); });
  g->memory_total_bytes.rc = g->memory_used_bytes.rc = g->memory_free_bytes.rc = rc;
  if (rc == kSuccess) {
    g->memory_total_bytes.value = m.total;
    g->memory_used_bytes.value = m.used;
    g->memory_free_bytes.value = m.free;
  }
}

void read_system(const Api& a, ChildOutput& out, NvmlInfo* info) {
  char buf[kBufferSize] = {};
  info->driver_version.rc = ask(out, a.driver_version, "", [&](auto f) { return f(buf, 80); });
  if (info->driver_version.ok()) info->driver_version.value = buffer_string(buf, sizeof buf);
  char vbuf[kBufferSize] = {};
  info->nvml_version.rc = ask(out, a.nvml_version, "", [&](auto f) { return f(vbuf, 80); });
  if (info->nvml_version.ok()) info->nvml_version.value = buffer_string(vbuf, sizeof vbuf);
  info->cuda_driver_version.rc = ask(out, a.cuda_driver_version, "",
                                     [&](auto f) { return f(&info->cuda_driver_version.value); });
  out.checkpoint(nvml_info_to_json(*info));
  unsigned n = 0;
  info->device_count.rc = ask(out, a.count, "", [&](auto f) { return f(&n); });
  if (info->device_count.ok()) info->device_count.value = n;
}

// Identity, modes and processes of one GPU; its handle (nullptr if none).
nvmlDevice_t read_gpu(const Api& a, ChildOutput& out, unsigned index, NvmlGpu* g) {
  g->index = index;
  std::string at = " (GPU " + std::to_string(index) + ")";
  nvmlDevice_t dev = nullptr;
  g->handle_rc = ask(out, a.handle, at, [&](auto f) { return f(index, &dev); });
  if (g->handle_rc != kSuccess) return nullptr;
  read_strings(a, out, dev, at, g);
  read_memory(a, out, dev, at, g);
  read_modes(a, out, dev, at, g);
  read_processes(a.processes, out, dev, at, &g->processes);
  read_processes(a.graphics_processes, out, dev, at, &g->graphics_processes);
  read_fabric_and_mig(a, out, dev, at, g);
  return dev;
}

namespace {

// Each checkpoint repeats everything read so far, so their total grows
// with the square of the GPU count, while the parent keeps only the first
// 4 MiB of a child's output (ChildSpec::max_stdout_bytes), the final result
// included. Past a budget of half that (reached at about 25 GPUs) only the
// final result is written.
class GpuCheckpoints {
 public:
  explicit GpuCheckpoints(ChildOutput& out) : out_(out) {}
  void write(const NvmlInfo& info) {
    size_t estimate = kBaseBytes + kGpuBytes * info.gpus.size();
    if (spent_ + estimate > kBudgetBytes) return;
    spent_ += estimate;
    out_.checkpoint(nvml_info_to_json(info));
  }

 private:
  // Upper estimates of the JSON: a GPU with 36 NVLinks is about 5.5 KB.
  static constexpr size_t kBaseBytes = 1024;
  static constexpr size_t kGpuBytes = 6 * 1024;
  static constexpr size_t kBudgetBytes = 2u << 20;
  ChildOutput& out_;
  size_t spent_ = 0;
};

void run_nvml(ChildOutput& out, NvmlInfo* info) {
  Api a;
  if (!open_nvml(out, info, &a)) return;
  out.checkpoint(nvml_info_to_json(*info));
  read_system(a, out, info);
  out.checkpoint(nvml_info_to_json(*info));
  unsigned count = info->device_count.ok() ? info->device_count.value : 0;
  // A checkpoint after the identity of each GPU (with the health of the
  // GPUs before it): a health call that hangs still leaves the GPU's name
  // and bus id. One more after the last GPU's health and after the topology.
  GpuCheckpoints ckpt(out);
  std::vector<nvmlDevice_t> devs;
  for (unsigned i = 0; i < count && i < kMaxGpus; ++i) {
    NvmlGpu& g = info->gpus.emplace_back();
    nvmlDevice_t dev = read_gpu(a, out, i, &g);
    devs.push_back(dev);
    ckpt.write(*info);
    if (dev != nullptr) read_health(a, out, dev, " (GPU " + std::to_string(i) + ")", &g.health);
  }
  if (!info->gpus.empty()) ckpt.write(*info);
  if (devs.size() > 1) {
    info->topology = read_topology(a, out, devs);
    ckpt.write(*info);
  }
  ask(out, a.shutdown, "", [](auto f) { return f(); });
  // The library stays loaded: unloading a driver library buys nothing in a
  // process about to exit and has crashed real drivers.
}

}  // namespace
}  // namespace nvml

int nvml_child_main(const std::string& lib) {
  disable_core_dumps();
  auto start = std::chrono::steady_clock::now();
  ChildOutput out;
  NvmlInfo info;
  info.attempted = true;
  info.library_requested = lib.empty() ? "libnvidia-ml.so.1" : lib;
  nvml::run_nvml(out, &info);
  info.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.result(nvml_info_to_json(info));
  return 0;
}

}  // namespace gd
