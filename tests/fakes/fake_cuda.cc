// Fake libcuda.so.1: the CUDA driver API's real symbol names and signatures
// (docs/nvidia-facts.md §3; CUresult and CUdevice are int,
// CUuuid is 16 bytes), answering from the scenario file with the semantics
// that decide whether CUDA starts:
//  - cuInit reserves va_reserve_bytes of address space (PROT_NONE, as the
//    driver does) and fails with CUDA_ERROR_OUT_OF_MEMORY when RLIMIT_AS
//    refuses it; a device's first primary context reserves context_va_bytes;
//  - CUDA_DEVICE_ORDER (default FASTEST_FIRST: higher compute capability,
//    then higher clock, then PCI bus id) and CUDA_VISIBLE_DEVICES (indices,
//    unique GPU- UUID prefixes, MIG- ids; parsing stops at the first invalid
//    entry; nvidia-facts §6.1) pick and order the devices;
//  - MIG-enabled GPUs are not CUDA devices; one MIG instance at most is;
//  - a primary context fails with CUDA_ERROR_DEVICE_UNAVAILABLE on an
//    exclusive-process GPU another process uses, and with out of memory when
//    the GPU's free memory is below a context's needs;
//  - after cuInit failed every later cuInit returns the same error;
//  - with $GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG naming a file, every
//    cuDevicePrimaryCtxRetain appends "<pid> <bus_id> <rc>" to it, failed
//    ones too (bus id "-" for an invalid device), so tests count the
//    contexts gpudoctor asked for on each GPU (scenario.h).
// Built twice: as libcuda.so.1, and with GD_FAKE_CUDA_LEGACY as
// libcuda-legacy.so.1, a libcuda without the _v2 memory symbols, whose
// callers must fall back to the unversioned ones and their 32-bit counts.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "../../src/probe/nvidia_abi.h"
#include "scenario.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
struct CUctx_st {
  int ordinal = 0;
  int retained = 0;
  bool reserved = false;  // its address space, once per device as a real context's
};
typedef CUctx_st* CUcontext;
typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;
GD_ABI_CU_UUID(CUuuid);

namespace {

enum : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialized = 3,
  kDeviceUnavailable = 46,
  kNoDevice = 100,
  kInvalidDevice = 101,
  kInvalidContext = 201,
  kUnknown = 999,
};

struct CudaDev {
  const fake::Gpu* gpu = nullptr;
  const fake::MigInstance* mig = nullptr;
  uint64_t memory_total_bytes() const {
    return mig ? mig->memory_total_bytes : gpu->memory_total_bytes;
  }
};

int g_init_rc = -1;  // -1: cuInit not called yet
std::vector<CudaDev> g_devs;
std::vector<CUctx_st> g_ctx;
thread_local CUctx_st* t_current = nullptr;

const fake::Scenario& sc() { return fake::scenario(); }

bool lower_equal_prefix(const std::string& prefix, const std::string& s) {
  if (prefix.size() > s.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(prefix[i])) !=
        std::tolower(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// GPUs CUDA can use, in CUDA_DEVICE_ORDER order.
std::vector<const fake::Gpu*> ordered_gpus() {
  std::vector<const fake::Gpu*> out;
  for (const auto& g : sc().gpus) {
    if (!g.lost && g.mig_current == 0) out.push_back(&g);
  }
  const char* order = std::getenv("CUDA_DEVICE_ORDER");
  if (order != nullptr && std::strcmp(order, "PCI_BUS_ID") == 0) return out;  // bus order
  std::stable_sort(out.begin(), out.end(), [](const fake::Gpu* a, const fake::Gpu* b) {
    int cca = a->cc_major * 10 + a->cc_minor, ccb = b->cc_major * 10 + b->cc_minor;
    return std::tie(ccb, b->max_sm_clock_mhz) < std::tie(cca, a->max_sm_clock_mhz);
  });
  return out;
}

const fake::MigInstance* first_mig_instance(const fake::Gpu** parent) {
  for (const auto& g : sc().gpus) {
    if (g.lost || g.mig_current != 1 || g.mig_instances.empty()) continue;
    *parent = &g;
    return &g.mig_instances.front();
  }
  return nullptr;
}

// One CUDA_VISIBLE_DEVICES entry; false when CUDA would reject it.
bool resolve_entry(const std::string& entry, const std::vector<const fake::Gpu*>& gpus,
                   std::vector<CudaDev>* out) {
  auto already = [&](const fake::Gpu* g, const fake::MigInstance* m) {
    return std::any_of(out->begin(), out->end(),
                       [&](const CudaDev& d) { return d.gpu == g && d.mig == m; });
  };
  if (lower_equal_prefix("MIG-", entry)) {
    for (const auto& d : *out) {
      if (d.mig != nullptr) return false;  // one MIG instance per process
    }
    for (const auto& g : sc().gpus) {
      if (g.lost || g.mig_current != 1) continue;
      for (const auto& m : g.mig_instances) {
        std::string legacy =
            "MIG-" + g.uuid + "/" + std::to_string(m.gi) + "/" + std::to_string(m.ci);
        if (entry == m.uuid || entry == legacy) {
          out->push_back({&g, &m});
          return true;
        }
      }
    }
    return false;
  }
  if (lower_equal_prefix("GPU-", entry)) {
    const fake::Gpu* match = nullptr;
    for (const fake::Gpu* g : gpus) {
      if (!lower_equal_prefix(entry, g->uuid)) continue;
      if (match != nullptr) return false;  // ambiguous prefix
      match = g;
    }
    if (match == nullptr || already(match, nullptr)) return false;
    out->push_back({match, nullptr});
    return true;
  }
  if (entry.empty() || entry.size() > 9 ||
      !std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  size_t index = std::stoul(entry);
  if (index >= gpus.size() || already(gpus[index], nullptr)) return false;
  out->push_back({gpus[index], nullptr});
  return true;
}

std::vector<CudaDev> enumerate() {
  std::vector<const fake::Gpu*> gpus = ordered_gpus();
  std::vector<CudaDev> out;
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  if (cvd == nullptr) {
    for (const fake::Gpu* g : gpus) out.push_back({g, nullptr});
    const fake::Gpu* parent = nullptr;
    if (const fake::MigInstance* m = first_mig_instance(&parent)) out.push_back({parent, m});
    return out;
  }
  std::string list = cvd;
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(',', start);
    std::string entry = trim(list.substr(start, comma - start));
    if (!resolve_entry(entry, gpus, &out)) break;  // the rest is dropped
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool mig_gpus_without_instances() {
  return std::any_of(sc().gpus.begin(), sc().gpus.end(),
                     [](const fake::Gpu& g) { return !g.lost && g.mig_current == 1; });
}

bool reserve_address_space(uint64_t bytes) {
  if (bytes == 0) return true;
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p != MAP_FAILED;
}

int do_init() {
  if (!sc().valid) return kUnknown;
  if (int rc = fake::inject("cuInit")) return rc;
  // As the real driver does: one PROT_NONE reservation, kept for the
  // process's life. It shows in VmSize (what the probe measures), and an
  // RLIMIT_AS below it fails the mmap, hence cuInit, with out of memory.
  if (!reserve_address_space(sc().va_reserve_bytes)) return kOutOfMemory;
  g_devs = enumerate();
  if (g_devs.empty()) {
    // MIG mode without instances leaves CUDA running with zero devices.
    bool mig_only = std::getenv("CUDA_VISIBLE_DEVICES") == nullptr && mig_gpus_without_instances();
    return mig_only ? kSuccess : kNoDevice;
  }
  g_ctx.resize(g_devs.size());
  for (size_t i = 0; i < g_ctx.size(); ++i) g_ctx[i].ordinal = static_cast<int>(i);
  return kSuccess;
}

// Preamble of calls that need a successful cuInit and a valid device.
int device_call(const char* fn, CUdevice dev, const void* out) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (dev < 0 || static_cast<size_t>(dev) >= g_devs.size()) return kInvalidDevice;
  if (out == nullptr) return kInvalidValue;
  return fake::inject(fn, g_devs[static_cast<size_t>(dev)].gpu);
}

const CudaDev& dev_of(CUdevice d) { return g_devs[static_cast<size_t>(d)]; }

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};
// Names and strings from the CUDA Driver API CUresult documentation.
const ErrorText kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED",
     "MPS client failed to connect to the MPS control daemon or the MPS server"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(int code) {
  for (const auto& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  if (g_init_rc == -1) g_init_rc = do_init();
  return g_init_rc;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (int rc = fake::inject("cuDriverGetVersion")) return rc;
  if (version == nullptr) return kInvalidValue;
  *version = sc().libcuda_driver_version;
  return kSuccess;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (int rc = fake::inject("cuDeviceGetCount")) return rc;
  if (count == nullptr) return kInvalidValue;
  *count = static_cast<int>(g_devs.size());
  return kSuccess;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (int rc = fake::inject("cuDeviceGet")) return rc;
  if (device == nullptr) return kInvalidValue;
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= g_devs.size()) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

FAKE_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (int rc = device_call("cuDeviceGetName", dev, name)) return rc;
  if (len <= 0) return kInvalidValue;
  const CudaDev& d = dev_of(dev);
  std::string value = d.gpu->name;
  if (d.mig != nullptr) value += " MIG";
  std::snprintf(name, static_cast<size_t>(len), "%s", value.c_str());  // truncates like CUDA
  return kSuccess;
}

FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char* bus_id, int len, CUdevice dev) {
  if (int rc = device_call("cuDeviceGetPCIBusId", dev, bus_id)) return rc;
  const fake::Gpu& g = *dev_of(dev).gpu;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04X:%02X:%02X.0", g.domain, g.bus, g.device);
  if (len < 13) return kInvalidValue;
  std::snprintf(bus_id, static_cast<size_t>(len), "%s", buf);
  return kSuccess;
}

static CUresult device_uuid(const char* fn, CUuuid* uuid, CUdevice dev, bool mig_aware) {
  if (int rc = device_call(fn, dev, uuid)) return rc;
  const CudaDev& d = dev_of(dev);
  const std::string& text = (mig_aware && d.mig != nullptr) ? d.mig->uuid : d.gpu->uuid;
  fake::uuid_bytes(text, reinterpret_cast<unsigned char*>(uuid->bytes));
  return kSuccess;
}
FAKE_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return device_uuid("cuDeviceGetUuid_v2", uuid, dev, true);
}
FAKE_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return device_uuid("cuDeviceGetUuid", uuid, dev, false);
}

static CUresult total_mem(const char* fn, size_t* bytes, CUdevice dev) {
  if (int rc = device_call(fn, dev, bytes)) return rc;
  *bytes = dev_of(dev).memory_total_bytes();
  return kSuccess;
}
#ifndef GD_FAKE_CUDA_LEGACY
FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return total_mem("cuDeviceTotalMem_v2", bytes, dev);
}
#endif

// cuda.h (CUDA 13.0) keeps the pre-_v2 signatures for old binaries:
// cuDeviceTotalMem(unsigned int*, CUdevice) and cuMemGetInfo(unsigned int*,
// unsigned int*). What a real driver answers for more than 4 GiB there is
// not documented; the fake clamps to UINT_MAX.
static unsigned int narrow(size_t bytes) {
  return bytes > UINT_MAX ? UINT_MAX : static_cast<unsigned int>(bytes);
}
FAKE_EXPORT CUresult cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  size_t wide = 0;
  CUresult rc = total_mem("cuDeviceTotalMem", bytes == nullptr ? nullptr : &wide, dev);
  if (rc == kSuccess) *bytes = narrow(wide);
  return rc;
}

// CUdevice_attribute values from cuda.h.
FAKE_EXPORT CUresult cuDeviceGetAttribute(int* pi, int attrib, CUdevice dev) {
  if (int rc = device_call("cuDeviceGetAttribute", dev, pi)) return rc;
  const CudaDev& d = dev_of(dev);
  const fake::Gpu& g = *d.gpu;
  switch (attrib) {
    case 13:
      *pi = static_cast<int>(g.max_sm_clock_mhz) * 1000;
      return kSuccess;  // CLOCK_RATE kHz
    case 16:            // MULTIPROCESSOR_COUNT
      *pi = d.mig ? d.mig->multiprocessors : g.multiprocessors;
      return kSuccess;
    case 33:
      *pi = static_cast<int>(g.bus);
      return kSuccess;  // PCI_BUS_ID
    case 34:
      *pi = static_cast<int>(g.device);
      return kSuccess;  // PCI_DEVICE_ID
    case 50:
      *pi = static_cast<int>(g.domain);
      return kSuccess;  // PCI_DOMAIN_ID
    case 75:
      *pi = g.cc_major;
      return kSuccess;  // COMPUTE_CAPABILITY_MAJOR
    case 76:
      *pi = g.cc_minor;
      return kSuccess;  // COMPUTE_CAPABILITY_MINOR
    default:
      return kInvalidValue;
  }
}

// One line per context asked for, in one O_APPEND write so that the lines
// of concurrent probe children never interleave.
static void log_context(CUdevice dev, CUresult rc) {
  const char* path = std::getenv("GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG");
  if (path == nullptr || *path == '\0') return;
  std::string bus = "-";
  if (g_init_rc == kSuccess && dev >= 0 && static_cast<size_t>(dev) < g_devs.size()) {
    const fake::Gpu& g = *g_devs[static_cast<size_t>(dev)].gpu;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", g.domain, g.bus, g.device, g.function);
    bus = buf;
  }
  std::string line = std::to_string(getpid()) + " " + bus + " " + std::to_string(rc) + "\n";
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t n = write(fd, line.data(), line.size());
  (void)n;
  close(fd);
}

static CUresult primary_ctx_retain(CUcontext* ctx, CUdevice dev) {
  if (int rc = device_call("cuDevicePrimaryCtxRetain", dev, ctx)) return rc;
  const CudaDev& d = dev_of(dev);
  const fake::Gpu& g = *d.gpu;
  bool taken = !g.processes.empty();
  if (g.compute_mode == 2 || (g.compute_mode == 3 && taken)) return kDeviceUnavailable;
  uint64_t total = d.memory_total_bytes();
  uint64_t used = d.mig ? 0 : g.memory_used_bytes;
  if (used >= total || total - used < sc().context_reserve_bytes) return kOutOfMemory;
  CUctx_st& c = g_ctx[static_cast<size_t>(dev)];
  if (c.retained == 0 && !c.reserved) {
    if (!reserve_address_space(sc().context_va_bytes)) return kOutOfMemory;
    c.reserved = true;
  }
  ++c.retained;
  *ctx = &c;
  return kSuccess;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  CUresult rc = primary_ctx_retain(ctx, dev);
  log_context(dev, rc);
  return rc;
}

static CUresult release(const char* fn, CUdevice dev) {
  if (int rc = device_call(fn, dev, &dev)) return rc;
  CUctx_st& c = g_ctx[static_cast<size_t>(dev)];
  if (c.retained == 0) return kInvalidContext;
  if (--c.retained == 0 && t_current == &c) t_current = nullptr;
  return kSuccess;
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return release("cuDevicePrimaryCtxRelease_v2", dev);
}
FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return release("cuDevicePrimaryCtxRelease", dev);
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (int rc = fake::inject("cuCtxSetCurrent")) return rc;
  if (ctx == nullptr) {
    t_current = nullptr;
    return kSuccess;
  }
  bool ours = !g_ctx.empty() && ctx >= &g_ctx.front() && ctx <= &g_ctx.back();
  if (!ours || ctx->retained == 0) return kInvalidContext;
  t_current = ctx;
  return kSuccess;
}

static CUresult mem_info(const char* fn, size_t* free_bytes, size_t* total_bytes) {
  if (g_init_rc != kSuccess) return kNotInitialized;
  if (t_current == nullptr) return kInvalidContext;
  const CudaDev& d = dev_of(t_current->ordinal);
  if (int rc = fake::inject(fn, d.gpu)) return rc;
  if (free_bytes == nullptr || total_bytes == nullptr) return kInvalidValue;
  uint64_t total = d.memory_total_bytes();
  uint64_t used = (d.mig ? 0 : d.gpu->memory_used_bytes) + sc().context_reserve_bytes;
  *total_bytes = total;
  *free_bytes = used < total ? total - used : 0;
  return kSuccess;
}
#ifndef GD_FAKE_CUDA_LEGACY
FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  return mem_info("cuMemGetInfo_v2", free_bytes, total_bytes);
}
#endif
FAKE_EXPORT CUresult cuMemGetInfo(unsigned int* free_bytes, unsigned int* total_bytes) {
  size_t free_wide = 0, total_wide = 0;
  CUresult rc = mem_info("cuMemGetInfo", free_bytes == nullptr ? nullptr : &free_wide,
                         total_bytes == nullptr ? nullptr : &total_wide);
  if (rc != kSuccess) return rc;
  *free_bytes = narrow(free_wide);
  *total_bytes = narrow(total_wide);
  return kSuccess;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** str) {
  if (str == nullptr) return kInvalidValue;
  const ErrorText* e = find_error(error);
  *str = e ? e->name : nullptr;
  return e ? kSuccess : kInvalidValue;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** str) {
  if (str == nullptr) return kInvalidValue;
  const ErrorText* e = find_error(error);
  *str = e ? e->text : nullptr;
  return e ? kSuccess : kInvalidValue;
}
