#include "facts/runtime.h"

#include <fmt/format.h>

#include "catalog/cuda_errors.h"
#include "facts/query.h"
#include "util/bytes.h"

namespace gd {

bool nvml_answered(const Snapshot& s) {
  return s.nvml.attempted && s.nvml.child_error.empty() && s.nvml.init_rc == 0;
}

std::string nvml_unavailable_reason(const Snapshot& s) {
  if (!s.nvml.attempted) return "NVML was not tried";
  if (!s.nvml.child_error.empty()) return "the NVML probe ended with: " + s.nvml.child_error;
  if (s.nvml.library_loaded.empty() && !s.nvml.dlopen_error.empty()) {
    return "libnvidia-ml.so.1 could not be loaded (" + s.nvml.dlopen_error + ")";
  }
  if (s.nvml.init_rc != 0) return "NVML did not start: " + nvml_error(s.nvml.init_rc);
  return "NVML answered";
}

const NvmlGpu* nvml_gpu_by_bdf(const Snapshot& s, const std::string& bdf) {
  // NVML's bus ids are normalized when probed (nvml.cc): the common case is
  // an exact match, found without building a string per GPU.
  for (const auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.ok() && g.pci_bus_id.value == bdf) return &g;
  }
  std::string want = normalize_bdf(bdf);
  for (const auto& g : s.nvml.gpus) {
    if (g.pci_bus_id.ok() && normalize_bdf(g.pci_bus_id.value) == want) return &g;
  }
  return nullptr;
}

bool run_succeeded(const CudaRun& r) {
  return r.child_error.empty() && r.init_rc == 0 && r.device_count_rc == 0 &&
         (r.cudart_loaded.empty() || r.cudart_rc == 0);
}

bool run_failed_with(const CudaRun& r, int code) {
  if (r.init_rc == code || r.device_count_rc == code) return true;
  return !r.cudart_loaded.empty() && r.cudart_rc == code;
}

int run_error_code(const CudaRun& r) {
  if (!r.child_error.empty()) return -1;
  if (!r.cudart_loaded.empty() && r.cudart_rc > 0) return r.cudart_rc;
  if (r.init_rc > 0) return r.init_rc;
  if (r.device_count_rc > 0) return r.device_count_rc;
  return 0;
}

bool same_failure(const CudaRun& a, const CudaRun& b) {
  int ca = run_error_code(a);
  int cb = run_error_code(b);
  if (ca == 0 || cb == 0) return false;
  if (ca == -1 || cb == -1) return ca == cb && a.child_error == b.child_error;
  return ca == cb;
}

std::string describe_run(const CudaRun& r) {
  if (!r.child_error.empty()) return "the CUDA probe ended with: " + r.child_error;
  std::string out;
  if (r.library_loaded.empty() && !r.dlopen_error.empty()) {
    out = fmt::format("{} could not be loaded ({})",
                      r.library_requested.empty() ? "libcuda.so.1" : r.library_requested,
                      r.dlopen_error);
  } else if (r.init_rc < 0) {
    out = "cuInit was not called";
  } else if (r.init_rc != 0) {
    out = "cuInit returned " + cuda_driver_error(r.init_rc);
  } else if (r.device_count_rc != 0) {
    out = "cuInit succeeded; cuDeviceGetCount returned " + cuda_driver_error(r.device_count_rc);
  } else {
    out = fmt::format("cuInit succeeded; cuDeviceGetCount = {}", r.device_count);
  }
  if (!r.cudart_loaded.empty()) {
    if (r.cudart_rc == 0) {
      out += fmt::format("; cudaGetDeviceCount = {}", r.cudart_device_count);
    } else if (r.cudart_rc > 0) {
      out += "; cudaGetDeviceCount returned " + cuda_runtime_error(r.cudart_rc);
    }
  }
  return out;
}

std::string run_error_text(const CudaRun& r) {
  int code = run_error_code(r);
  if (code == -1) return r.child_error;
  if (code == 0) return run_succeeded(r) ? "no error" : describe_run(r);
  if (!r.cudart_loaded.empty() && r.cudart_rc == code) return cuda_runtime_error(code);
  return cuda_driver_error(code);
}

const CudaDevice* run_device(const CudaRun& r, const std::string& bdf) {
  for (const auto& d : r.devices) {
    if (normalize_bdf(d.pci_bus_id) == normalize_bdf(bdf)) return &d;
  }
  return nullptr;
}

std::string env_assignment(const std::string& name, const std::string& value) {
  return fmt::format("{}=\"{}\"", name, value);
}

std::string bytes_exact(uint64_t bytes) {
  return fmt::format("{} bytes ({})", bytes, format_bytes(bytes));
}

std::string gpu_ref(const GpuIdentity& g) {
  return fmt::format("{} (nvidia-smi {})", g.bdf, g.smi_index);
}

std::string order_line(size_t cuda_ordinal, const GpuIdentity& g, bool with_cc) {
  std::string detail;
  if (g.max_sm_clock_mhz > 0) detail = fmt::format("{} MHz", g.max_sm_clock_mhz);
  if (with_cc && g.cc_major > 0) {
    detail += fmt::format("{}cc {}.{}", detail.empty() ? "" : ", ", g.cc_major, g.cc_minor);
  }
  return fmt::format("CUDA {} = nvidia-smi {} = {}{}", cuda_ordinal, g.smi_index, g.bdf,
                     detail.empty() ? "" : " (" + detail + ")");
}

bool mixed_cc(const std::vector<GpuIdentity>& gpus) {
  for (const auto& g : gpus) {
    if (g.cc_major != gpus[0].cc_major || g.cc_minor != gpus[0].cc_minor) return true;
  }
  return false;
}

}  // namespace gd
