// The CUDA probe, child side (`gpudoctor __probe-cuda --lib PATH --cudart
// PATH --label user|clean --contexts none|gate`): loads libcuda with dlopen,
// runs cuInit and enumerates the devices in this environment's order (no
// context yet), then, with a gate, reads from stdin which GPUs are idle
// (context_policy.h) and creates the primary context of those only, then
// asks a CUDA runtime (libcudart) for cudaGetDeviceCount — the very call
// (and error) a framework makes; neither it nor cuInit creates a context.
// Prints one CudaRun as JSON.
//
// No SDK header: the driver API's types and symbols are in cuda_api.h.
// Versioned symbols newest first.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <vector>

#include "probe/context_policy.h"
#include "probe/cuda_api.h"
#include "probe/file_probes.h"
#include "probe/hw_common.h"
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"

namespace gd {
namespace {

using cuda::Api;
using cuda::CUcontext;
using cuda::CUdevice;
using cuda::CUresult;
using cuda::CUuuid;
using cuda::kAttrCcMajor;
using cuda::kAttrCcMinor;
using cuda::kAttrClockRate;
using cuda::kAttrMultiprocessorCount;
using cuda::kSuccess;

constexpr int kMaxDevices = 64;  // bounds a garbled count

Api resolve_api(void* lib) {
  Api a;
  a.driver_version = resolve<CUresult(int*)>(lib, {"cuDriverGetVersion"});
  a.init = resolve<CUresult(unsigned)>(lib, {"cuInit"});
  a.count = resolve<CUresult(int*)>(lib, {"cuDeviceGetCount"});
  a.get = resolve<CUresult(CUdevice*, int)>(lib, {"cuDeviceGet"});
  a.name = resolve<CUresult(char*, int, CUdevice)>(lib, {"cuDeviceGetName"});
  a.pci_bus_id = resolve<CUresult(char*, int, CUdevice)>(lib, {"cuDeviceGetPCIBusId"});
  a.uuid = resolve<CUresult(CUuuid*, CUdevice)>(lib, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"});
  // The unversioned cuDeviceTotalMem and cuMemGetInfo count in unsigned int
  // (cuda.h keeps them for old binaries); only a libcuda without the _v2
  // symbols is asked through them.
  a.total_mem = resolve<CUresult(size_t*, CUdevice)>(lib, {"cuDeviceTotalMem_v2"});
  if (a.total_mem.fn == nullptr) {
    a.total_mem_v1 = resolve<CUresult(unsigned int*, CUdevice)>(lib, {"cuDeviceTotalMem"});
  }
  a.attribute = resolve<CUresult(int*, int, CUdevice)>(lib, {"cuDeviceGetAttribute"});
  a.ctx_retain = resolve<CUresult(CUcontext*, CUdevice)>(lib, {"cuDevicePrimaryCtxRetain"});
  a.ctx_release = resolve<CUresult(CUdevice)>(
      lib, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  a.ctx_set_current = resolve<CUresult(CUcontext)>(lib, {"cuCtxSetCurrent"});
  a.mem_info = resolve<CUresult(size_t*, size_t*)>(lib, {"cuMemGetInfo_v2"});
  if (a.mem_info.fn == nullptr) {
    a.mem_info_v1 = resolve<CUresult(unsigned int*, unsigned int*)>(lib, {"cuMemGetInfo"});
  }
  return a;
}

// cuDeviceTotalMem_v2, else the unversioned call's 32-bit count.
int total_mem(const Api& a, ChildOutput& out, CUdevice dev, const std::string& at, size_t* bytes) {
  if (a.total_mem.fn != nullptr) {
    return ask(out, a.total_mem, at, [&](auto f) { return f(bytes, dev); });
  }
  unsigned int narrow = 0;
  int rc = ask(out, a.total_mem_v1, at, [&](auto f) { return f(&narrow, dev); });
  if (rc == kSuccess) *bytes = narrow;
  return rc;
}

// cuMemGetInfo_v2, else the unversioned call's 32-bit counts.
int mem_info(const Api& a, ChildOutput& out, const std::string& at, size_t* free_bytes,
             size_t* total_bytes) {
  if (a.mem_info.fn != nullptr) {
    return ask(out, a.mem_info, at, [&](auto f) { return f(free_bytes, total_bytes); });
  }
  unsigned int free_narrow = 0, total_narrow = 0;
  int rc = ask(out, a.mem_info_v1, at, [&](auto f) { return f(&free_narrow, &total_narrow); });
  if (rc == kSuccess) {
    *free_bytes = free_narrow;
    *total_bytes = total_narrow;
  }
  return rc;
}

void raise_soft_limits() {
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl;
    if (::getrlimit(resource, &rl) != 0 || rl.rlim_cur == rl.rlim_max) continue;
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(resource, &rl);  // an unprivileged raise up to the hard limit cannot fail
  }
}

int attribute(const Api& a, ChildOutput& out, CUdevice dev, int attr, const std::string& at) {
  int v = 0;
  std::string where = at + " attribute " + std::to_string(attr);
  return ask(out, a.attribute, where, [&](auto f) { return f(&v, attr, dev); }) == kSuccess ? v : 0;
}

// Primary context, made current, and a memory query through it: the first
// thing a framework does on a device. The first failing step's code. `vm`,
// when given, gets this process's address space while the context is current.
int try_context(const Api& a, ChildOutput& out, CUdevice dev, const std::string& at, VmUsage* vm) {
  CUcontext ctx = nullptr;
  int rc = ask(out, a.ctx_retain, at, [&](auto f) { return f(&ctx, dev); });
  if (rc != kSuccess) return rc;
  rc = ask(out, a.ctx_set_current, at, [&](auto f) { return f(ctx); });
  if (rc == kSuccess) {
    if (vm != nullptr) *vm = process_vm_usage();
    size_t free_bytes = 0, total_bytes = 0;
    rc = mem_info(a, out, at, &free_bytes, &total_bytes);
    ask(out, a.ctx_set_current, at, [](auto f) { return f(nullptr); });
  }
  ask(out, a.ctx_release, at, [&](auto f) { return f(dev); });
  return rc;
}

// What a device tells without a context: name, bus id, UUID, memory,
// attributes. `*dev` gets its handle.
CudaDevice read_device(const Api& a, ChildOutput& out, int ordinal, CUdevice* dev) {
  CudaDevice d;
  d.ordinal = ordinal;
  std::string at = " (device " + std::to_string(ordinal) + ")";
  d.get_rc = ask(out, a.get, at, [&](auto f) { return f(dev, ordinal); });
  if (d.get_rc != kSuccess) return d;
  char buf[256] = {};
  if (ask(out, a.name, at, [&](auto f) { return f(buf, static_cast<int>(sizeof buf), *dev); }) ==
      kSuccess) {
    d.name = buffer_string(buf, sizeof buf);
  }
  char bus[64] = {};
  if (ask(out, a.pci_bus_id, at,
          [&](auto f) { return f(bus, static_cast<int>(sizeof bus), *dev); }) == kSuccess) {
    d.pci_bus_id = normalize_bus_id(buffer_string(bus, sizeof bus));
  }
  CUuuid uuid{};
  if (ask(out, a.uuid, at, [&](auto f) { return f(&uuid, *dev); }) == kSuccess) {
    d.uuid = format_uuid(uuid.bytes);
  }
  size_t total = 0;
  if (total_mem(a, out, *dev, at, &total) == kSuccess) {
    d.total_memory_bytes = total;
  }
  d.cc_major = attribute(a, out, *dev, kAttrCcMajor, at);
  d.cc_minor = attribute(a, out, *dev, kAttrCcMinor, at);
  d.multiprocessors = attribute(a, out, *dev, kAttrMultiprocessorCount, at);
  d.clock_khz = attribute(a, out, *dev, kAttrClockRate, at);
  return d;
}

// The gate line on stdin, parsed: the parent sends it once NVML said which
// GPUs are idle, and closes the stream. Error: no line came (EOF first, a
// read error, over kMaxContextGateBytes) or it does not parse.
Result<ContextGate> read_gate() {
  std::string line;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{std::string("reading stdin: ") + std::strerror(errno)};
    if (n == 0) break;
    line.append(buf, static_cast<size_t>(n));
    if (size_t nl = line.find('\n'); nl != std::string::npos) {
      line.resize(nl);
      break;
    }
    if (line.size() > kMaxContextGateBytes) return Error{"a line over 64 KiB on stdin"};
  }
  if (line.empty()) return Error{"stdin closed before a line came"};
  if (line.size() > kMaxContextGateBytes) return Error{"a line over 64 KiB on stdin"};
  return parse_context_gate(line);
}

// Opens the primary context of each device the gate allows; the others get
// ctx_skipped. The address space is measured at the first context made.
void open_contexts(const Api& a, ChildOutput& out, CudaContexts contexts,
                   const std::vector<CUdevice>& handles, CudaRun* run) {
  if (run->devices.empty()) return;  // nothing to wait for
  if (contexts == CudaContexts::kNone) {
    for (CudaDevice& d : run->devices) {
      if (d.get_rc == kSuccess) d.ctx_skipped = kNoContextAsked;
    }
    return;
  }
  out.call("(reading the context gate on stdin)");
  Result<ContextGate> gate = read_gate();
  for (size_t i = 0; i < run->devices.size(); ++i) {
    CudaDevice& d = run->devices[i];
    if (d.get_rc != kSuccess) continue;
    std::string why = gate.ok() ? context_denied(*gate, d.pci_bus_id)
                                : "no answer came about which GPUs are idle (" + gate.error() +
                                      "): no context opened";
    if (!why.empty()) {
      d.ctx_skipped = why;
      continue;
    }
    // The first context is what every framework makes; later ones add
    // little, and measuring once keeps the figure comparable across machines.
    VmUsage* vm = run->vm_context.size_bytes == 0 ? &run->vm_context : nullptr;
    std::string at = " (device " + std::to_string(d.ordinal) + ")";
    d.ctx_rc = try_context(a, out, handles[i], at, vm);
    out.checkpoint(cuda_run_to_json(*run));
  }
}

void run_driver(ChildOutput& out, CudaContexts contexts, CudaRun* run) {
  LoadedLibrary lib = load_library(run->library_requested);
  if (lib.handle == nullptr) {
    run->dlopen_error = lib.error;
    return;
  }
  run->library_loaded = lib.path;
  Api a = resolve_api(lib.handle);
  if (a.init.fn == nullptr) {
    run->dlopen_error = lib.path + " does not export cuInit";
    return;
  }
  run->driver_version_rc =
      ask(out, a.driver_version, "", [&](auto f) { return f(&run->driver_version); });
  out.checkpoint(cuda_run_to_json(*run));
  run->init_rc = ask(out, a.init, "", [](auto f) { return f(0); });
  if (run->init_rc != kSuccess) return;
  run->vm_init = process_vm_usage();
  run->device_count_rc = ask(out, a.count, "", [&](auto f) { return f(&run->device_count); });
  if (run->device_count_rc != kSuccess) return;
  out.checkpoint(cuda_run_to_json(*run));
  std::vector<CUdevice> handles;
  for (int i = 0; i < run->device_count && i < kMaxDevices; ++i) {
    handles.push_back(0);
    run->devices.push_back(read_device(a, out, i, &handles.back()));
    out.checkpoint(cuda_run_to_json(*run));
  }
  open_contexts(a, out, contexts, handles, run);
}

// Where no path is given, the names a framework's runtime would have,
// newest first; the unversioned name is the toolkit's development link.
constexpr const char* kCudartNames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                        "libcudart.so"};

Result<LoadedLibrary> load_cudart(const std::string& path) {
  if (!path.empty()) {
    LoadedLibrary lib = load_library(path);
    if (lib.handle == nullptr) return Error{lib.error};
    return lib;
  }
  std::string tried;
  for (const char* name : kCudartNames) {
    LoadedLibrary lib = load_library(name);
    if (lib.handle != nullptr) return lib;
    tried += (tried.empty() ? "" : ", ") + std::string(name);
  }
  return Error{"no CUDA runtime found (tried " + tried + ")"};
}

void run_runtime(ChildOutput& out, const std::string& path, CudaRun* run) {
  auto loaded = load_cudart(path);
  if (!loaded.ok()) {
    run->cudart_error = loaded.error();
    return;
  }
  LoadedLibrary& lib = *loaded;
  cuda::RuntimeApi rt;
  rt.runtime_version = resolve<cuda::cudaError_t(int*)>(lib.handle, {"cudaRuntimeGetVersion"});
  rt.device_count = resolve<cuda::cudaError_t(int*)>(lib.handle, {"cudaGetDeviceCount"});
  if (rt.device_count.fn == nullptr) {
    run->cudart_error = lib.path + " does not export cudaGetDeviceCount";
    return;
  }
  run->cudart_loaded = lib.path;
  ask(out, rt.runtime_version, "", [&](auto f) { return f(&run->cudart_runtime_version); });
  int n = 0;
  run->cudart_rc = ask(out, rt.device_count, "", [&](auto f) { return f(&n); });
  if (run->cudart_rc == kSuccess) run->cudart_device_count = n;
}

}  // namespace

int cuda_child_main(const std::string& cuda_lib, const std::string& cudart_lib,
                    const std::string& label, CudaContexts contexts) {
  disable_core_dumps();
  auto start = std::chrono::steady_clock::now();
  ChildOutput out;
  CudaRun run;
  run.label = label.empty() ? "user" : label;
  run.library_requested = cuda_lib.empty() ? "libcuda.so.1" : cuda_lib;
  // The proof run for an address-space limit: the same environment with the
  // soft limits lifted to the hard ones, as `ulimit -S -v $(ulimit -H -v)` would.
  if (run.label == kRaisedLimitLabel) raise_soft_limits();
  run.rlimit_as_bytes = process_rlimits().as_bytes;
  run.vm_start = process_vm_usage();
  run_driver(out, contexts, &run);
  out.checkpoint(cuda_run_to_json(run));
  run_runtime(out, cudart_lib, &run);
  run.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.result(cuda_run_to_json(run));
  return 0;
}

}  // namespace gd
