// gpudoctor_cuda_available: only the CUDA probe child, with the caller's
// environment (the "user" run of src/probe/hardware.cc), under a deadline.
// No file probes, no NVML: the question is the one a framework asks before
// it forks its workers, and it must be answered in tens of milliseconds.
// No context either (cuInit and the counts answer it): without NVML nothing
// says which GPUs a job uses.
//
// The child is started and read back as the snapshot's CUDA probe does it
// (probe/hw_common.h).
#include <chrono>

#include "catalog/cuda_errors.h"
#include "lib/lib_internal.h"
#include "probe/child.h"
#include "probe/hw_common.h"
#include "snapshot/snapshot_json.h"

namespace gd::lib {

CudaRun probe_cuda_only(const CudaOptions& opt, const std::string& exe) {
  using Clock = ChildRunner::Clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(opt.deadline_s));
  ProbeOptions probe;
  probe.cuda_lib = opt.cuda_lib;
  probe.cudart_lib = opt.cudart_lib;
  ChildRunner runner(deadline);
  return cuda_from_child(runner.wait(runner.start(cuda_spec(exe, probe, current_environment(),
                                                            "user", CudaContexts::kNone))),
                         probe, "user");
}

std::string cuda_unavailable_reason(const CudaRun& r) {
  if (!r.child_error.empty()) return "CUDA probe " + r.child_error;
  if (!r.dlopen_error.empty()) return r.dlopen_error;
  if (r.init_rc != 0) return "cuInit returned " + cuda_driver_error(r.init_rc);
  if (r.device_count_rc != 0) {
    return "cuDeviceGetCount returned " + cuda_driver_error(r.device_count_rc);
  }
  if (r.device_count == 0) return "cuDeviceGetCount found no devices";
  // The runtime is what frameworks call; it can fail where the driver API
  // works (a runtime newer than the driver).
  if (!r.cudart_loaded.empty()) {
    if (r.cudart_rc != 0) return "cudaGetDeviceCount returned " + cuda_runtime_error(r.cudart_rc);
    if (r.cudart_device_count == 0) return "cudaGetDeviceCount found no devices";
  }
  return "";
}

nlohmann::ordered_json cuda_status_json(const CudaRun& r) {
  std::string why = cuda_unavailable_reason(r);
  auto driver_error = [](int rc) { return rc == 0 || rc == -1 ? "" : cuda_driver_error(rc); };
  bool cudart_called = !r.cudart_loaded.empty();
  nlohmann::ordered_json j;
  j["available"] = why.empty();
  j["device_count"] = r.init_rc == 0 && r.device_count_rc == 0 ? r.device_count : 0;
  j["init_rc"] = r.init_rc;  // -1: not called (no library, or the child died first)
  j["init_error"] = driver_error(r.init_rc);
  j["device_count_rc"] = r.device_count_rc;
  j["driver_version"] = r.driver_version;  // 12040 = 12.4; 0 unknown
  j["library"] = r.library_loaded;
  j["cudart"] = r.cudart_loaded;
  j["cudart_rc"] = cudart_called ? r.cudart_rc : -1;
  j["cudart_error"] = cudart_called && r.cudart_rc != 0 ? cuda_runtime_error(r.cudart_rc) : "";
  j["cudart_device_count"] = r.cudart_device_count;
  j["error"] = why;
  j["duration_ms"] = r.duration_ms;
  return j;
}

}  // namespace gd::lib
