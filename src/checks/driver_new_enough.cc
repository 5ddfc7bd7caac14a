// driver.too-old-for-cuda: the CUDA runtime the user's framework loads
// (libcudart) is newer than the driver supports, outside minor-version
// compatibility, so cudaGetDeviceCount returns cudaErrorInsufficientDriver.
#include "catalog/cuda_errors.h"
#include "catalog/driver_compat.h"
#include "catalog/gpu_models.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"

namespace gd {
namespace {

constexpr int kInsufficientDriver = 35;

// The CUDA version the driver supports: cuDriverGetVersion, NVML's, or the
// toolkit table applied to the module version.
int driver_cuda_version(const Snapshot& s, const CudaRun& r, std::string* source) {
  if (r.driver_version_rc == 0 && r.driver_version > 0) {
    *source = "cuDriverGetVersion";
    return r.driver_version;
  }
  if (s.nvml.cuda_driver_version.ok() && s.nvml.cuda_driver_version.value > 0) {
    *source = "nvmlSystemGetCudaDriverVersion";
    return s.nvml.cuda_driver_version.value;
  }
  if (auto v = kernel_driver_version(s)) {
    *source = "CUDA release notes table for driver " + s.driver.version;
    return max_cuda_for_driver(*v);
  }
  return 0;
}

bool all_gpus_datacenter(const Snapshot& s) {
  auto gpus = pci_gpus(s);
  if (gpus.empty()) return false;
  for (const PciDevice* d : gpus) {
    const GpuModel* m = find_gpu_model(d->device_id);
    if (m == nullptr || m->forward_compat != Support::kYes) return false;
  }
  return true;
}

// The comparisons that decide the fit, stated in `f`: the driver's CUDA
// version against the runtime's, then (same major) the kernel module against
// the family's minor-version-compatibility minimum. Only the requirements the
// verdict rests on are stated, so an ok finding has all of them met.
void state_fit(Finding* f, const Snapshot& s, int have, int need, RuntimeFit fit,
               const std::string& source) {
  auto driver = kernel_driver_version(s);
  Comparison native =
      compare_versions("CUDA version the driver supports (" + source + ") vs the runtime's",
                       cuda_version_text(have), ">=", cuda_version_text(need));
  const MinorCompatFamily* fam = minor_compat_family(need / 1000);
  if (fit == RuntimeFit::kNative) {
    add_comparison(f, native);
    return;
  }
  if (fit == RuntimeFit::kMinorCompat) {
    const int have_major = have / 1000;
    const int need_major = need / 1000;
    add_comparison(f, compare_numbers("CUDA major version the driver supports vs the runtime's",
                                      have_major, "==", need_major));
    if (fam != nullptr && driver) {
      add_comparison(f, compare_versions("kernel module version vs the CUDA " +
                                             std::to_string(fam->cuda_major) +
                                             ".x minor-version-compatibility minimum",
                                         s.driver.version, ">=", fam->min_driver));
    }
    return;
  }
  // Too old: every requirement that failed.
  add_comparison(f, native);
  if (!driver) return;
  if (const ToolkitDriver* row = toolkit_min_driver(need)) {
    add_comparison(f,
                   compare_versions("kernel module version vs CUDA " + std::string(row->release) +
                                        "'s minimum driver (CUDA release notes, Table 3)",
                                    s.driver.version, ">=", row->min_driver));
  }
  if (fam != nullptr && have / 1000 == need / 1000) {
    add_comparison(
        f, compare_versions("kernel module version vs the CUDA " + std::to_string(fam->cuda_major) +
                                ".x minor-version-compatibility minimum",
                            s.driver.version, ">=", fam->min_driver));
  }
}

}  // namespace

std::vector<Finding> check_too_old_for_cuda(const Snapshot& s, const Config&) {
  constexpr const char* kId = "driver.too-old-for-cuda";
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr || r->cudart_loaded.empty()) {
    return not_applicable(kId,
                          "No CUDA runtime (libcudart) was found, so the CUDA version in use "
                          "is unknown.");
  }
  if (!nvidia_driver_loaded(s)) {
    return not_applicable(kId, "The NVIDIA driver is not loaded (see driver.not-loaded).");
  }
  std::string source;
  int have = driver_cuda_version(s, *r, &source);
  int need = r->cudart_runtime_version;
  RuntimeFit fit = runtime_fit(need, have, kernel_driver_version(s));
  bool rc35 = r->cudart_rc == kInsufficientDriver;

  std::string runtime_text = need > 0 ? "CUDA " + cuda_version_text(need) : "the CUDA runtime";
  std::string driver_text =
      s.driver.version.empty() ? std::string("the driver") : "driver " + s.driver.version;
  std::string rc35_line;
  if (rc35) {
    rc35_line = "cudaGetDeviceCount: " + framework_error_text(r->cudart_rc) +
                runtime_name_suffix(r->cudart_rc);
  }
  auto not_compared = [&](Finding* f) {
    add_not_compared(f, "the CUDA version the driver supports vs the runtime's",
                     need <= 0 ? "the runtime's CUDA version (cudaRuntimeGetVersion)"
                               : "the driver's CUDA version");
  };
  if (!rc35 && fit != RuntimeFit::kTooOld) {
    if (fit == RuntimeFit::kUnknown) {
      Finding f = make_finding(kId, Severity::kOk,
                               "cudaGetDeviceCount did not report an insufficient driver (a "
                               "version needed to compare is unknown).");
      not_compared(&f);
      return {f};
    }
    std::string summary = "The " + driver_text + " (CUDA " + cuda_version_text(have) +
                          ") is new enough for " + runtime_text + " (" + r->cudart_loaded + ")";
    if (fit == RuntimeFit::kMinorCompat) {
      summary +=
          " through minor-version compatibility; PTX from this newer toolkit cannot be "
          "JIT-compiled by the driver";
    }
    Finding f = make_finding(kId, Severity::kOk, summary + ".");
    state_fit(&f, s, have, need, fit, source);
    return {f};
  }
  if (rc35 && (fit == RuntimeFit::kNative || fit == RuntimeFit::kMinorCompat)) {
    // The runtime said "insufficient driver", yet the versions show the
    // driver new enough: this is not the cause, and saying "too old" would
    // contradict the numbers beside it. The error comes from the libcuda the
    // runtime loaded (an older copy, a compat package), which other checks
    // (driver.library-mismatch, cuda.compat-*) judge.
    Finding f = make_finding(
        kId, Severity::kInfo,
        "The " + driver_text + " (CUDA " + cuda_version_text(have) + ") is new enough for " +
            runtime_text +
            ", although cudaGetDeviceCount reported an insufficient driver: the "
            "libcuda it loaded is likely not this driver's (an older copy or a compat package).");
    state_fit(&f, s, have, need, fit, source);
    f.evidence.push_back(rc35_line);
    if (!r->library_loaded.empty()) f.evidence.push_back("libcuda loaded: " + r->library_loaded);
    f.remedy.push_back(
        "Find the libcuda.so.1 your program loads (ldconfig -p | grep libcuda; echo "
        "$LD_LIBRARY_PATH) and remove the copy that is not the installed driver's.");
    return {f};
  }

  Finding f = make_finding(
      kId, Severity::kFail,
      "The " + driver_text + " is too old for " + runtime_text + ", which your program loads.");
  f.evidence.push_back("CUDA runtime: " + r->cudart_loaded + " (cudaRuntimeGetVersion " +
                       std::to_string(need) + " = " + cuda_version_text(need) + ")");
  f.evidence.push_back("driver supports up to CUDA " + cuda_version_text(have) + " (" + source +
                       (have > 0 ? " " + std::to_string(have) : std::string()) + ")");
  if (rc35) f.evidence.push_back(rc35_line);
  if (fit == RuntimeFit::kTooOld) {
    state_fit(&f, s, have, need, fit, source);
  } else {
    not_compared(&f);
  }
  std::string min_text;
  if (const ToolkitDriver* row = toolkit_min_driver(need)) {
    min_text = row->min_driver;
    if (!kernel_driver_version(s)) {
      f.evidence.push_back("CUDA " + std::string(row->release) + " needs driver >= " +
                           row->min_driver + " (CUDA release notes, Table 3)");
    }
  }
  if (const MinorCompatFamily* fam = minor_compat_family(need / 1000)) {
    if (have / 1000 != need / 1000 || !kernel_driver_version(s)) {
      f.evidence.push_back("any CUDA " + std::to_string(fam->cuda_major) +
                           ".x runtime runs on driver >= " + fam->min_driver +
                           " (minor-version compatibility)");
    }
    if (min_text.empty()) min_text = fam->min_driver;
  }
  if (!min_text.empty()) {
    auto v = parse_driver_version(min_text);
    std::string branch = v ? std::to_string(v->major) : "";
    f.remedy.push_back("Install driver " + min_text +
                       " or newer (e.g. sudo apt install "
                       "nvidia-driver-" +
                       branch + "), then reboot.");
  } else {
    f.remedy.push_back("Install a newer NVIDIA driver, then reboot.");
  }
  if (have > 0) {
    f.remedy.push_back("Or use a build of your framework made for CUDA " + cuda_version_text(have) +
                       " or older (PyTorch: choose such a wheel at "
                       "https://pytorch.org/get-started/previous-versions/).");
  }
  if (all_gpus_datacenter(s) && need > 0) {
    f.remedy.push_back(
        "On these data-center GPUs the forward-compatibility package also works: "
        "sudo apt install cuda-compat-" +
        std::to_string(need / 1000) + "-" + std::to_string((need % 1000) / 10) +
        " and add its compat/ directory "
        "to LD_LIBRARY_PATH.");
  }
  return {f};
}

}  // namespace gd
