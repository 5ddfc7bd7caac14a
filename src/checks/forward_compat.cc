// cuda.compat-unsupported / cuda.compat-mismatch: a CUDA forward-
// compatibility libcuda (cuda-compat-<major>-<minor>, installed under
// .../cuda-X.Y/compat/) is loaded on GPUs that do not support forward
// compatibility (804), or it does not fit the kernel module (803).
#include "catalog/cuda_errors.h"
#include "catalog/driver_compat.h"
#include "catalog/gpu_models.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kUnsupported = "cuda.compat-unsupported";
constexpr const char* kMismatch = "cuda.compat-mismatch";
constexpr int kSystemDriverMismatch = 803;
constexpr int kCompatNotSupported = 804;

// The remedy line that takes the compat directory off the library path.
std::string drop_compat_line(const Snapshot& s, const std::string& compat_dir) {
  const std::string* ld = env_var(s, "LD_LIBRARY_PATH");
  if (ld != nullptr) {
    bool listed = false;
    for (const auto& e : split_strings(*ld, ':'))
      listed = listed || (!e.empty() && is_compat_dir(e));
    if (listed) {
      return ld_library_path_command(
                 filter_path_list(*ld, [](const std::string& e) { return is_compat_dir(e); })) +
             "   # LD_LIBRARY_PATH without the compat directory";
    }
  }
  return "Take " + compat_dir +
         " off the library path: grep -rn compat /etc/ld.so.conf.d/ "
         "(delete that line, then sudo ldconfig), or remove the package (sudo apt remove "
         "cuda-compat-*).";
}

Finding unsupported_finding(const Snapshot& s, const CudaRun& r, const std::string& dir) {
  std::vector<const PciDevice*> bad;
  for (const PciDevice* d : pci_gpus(s)) {
    const GpuModel* m = find_gpu_model(d->device_id);
    if (m != nullptr && m->forward_compat == Support::kNo) bad.push_back(d);
  }
  bool rc804 = run_has_rc(&r, kCompatNotSupported);
  if (!rc804 && bad.empty()) {
    return make_finding(kUnsupported, Severity::kOk,
                        "The forward-compatibility libcuda in use is supported on these GPUs.");
  }
  Finding f = make_finding(
      kUnsupported, Severity::kFail,
      "A CUDA forward-compatibility libcuda (cuda-compat) is in use, but forward compatibility "
      "works only on data-center GPUs" +
          std::string(bad.empty() ? "" : ", not on " + gpu_name(s, *bad.front())) + ".");
  f.evidence.push_back("libcuda loaded from " + r.library_loaded);
  for (auto& line : cuda_error_lines(r)) f.evidence.push_back(line);
  for (const PciDevice* d : bad) {
    f.gpus.push_back(d->bdf);
    f.evidence.push_back("GPU " + gpu_label(s, *d) + ": no forward-compatibility support");
  }
  f.remedy.push_back(drop_compat_line(s, dir));
  f.remedy.push_back("Then CUDA uses the system driver (" +
                     (s.driver.version.empty() ? std::string("its version") : s.driver.version) +
                     "): run software built for its CUDA version or older, or upgrade the "
                     "driver.");
  f.remedy.push_back(
      "In an NGC/CUDA container: use an image whose CUDA version is at most the "
      "host driver's (nvidia-smi shows it as 'CUDA Version').");
  if (pci_gpus(s).size() > bad.size() && !bad.empty()) {
    f.remedy.push_back(
        "Or make only the supported GPUs visible (CUDA_VISIBLE_DEVICES=<their "
        "UUIDs>).");
  }
  return f;
}

Finding mismatch_finding(const Snapshot& s, const CudaRun& r, const std::string& dir) {
  bool rc803 = run_has_rc(&r, kSystemDriverMismatch);
  auto compat_text = library_file_version(r.library_loaded);
  auto compat = compat_text ? parse_driver_version(*compat_text) : std::nullopt;
  auto kernel = kernel_driver_version(s);
  // A compat libcuda exists to be newer than the kernel module; an older
  // one does not belong on the library path.
  bool older = compat && kernel && compare(*compat, *kernel) < 0;
  if (!rc803 && !older) {
    std::string summary = "The forward-compatibility libcuda";
    if (compat_text) summary += " " + *compat_text;
    summary += " works with the kernel module";
    if (kernel) summary += " " + s.driver.version;
    return make_finding(kMismatch, Severity::kOk, summary + ".");
  }
  Finding f = make_finding(
      kMismatch, rc803 ? Severity::kFail : Severity::kWarn,
      rc803 ? "The CUDA forward-compatibility libcuda does not work with the loaded kernel "
              "driver."
            : "The CUDA forward-compatibility libcuda is older than the kernel driver; it is "
              "not needed and can break CUDA.");
  f.evidence.push_back("libcuda loaded from " + r.library_loaded +
                       (compat_text ? " (version " + *compat_text + ")" : std::string()));
  f.evidence.push_back("kernel module: " + (s.driver.version.empty()
                                                ? std::string("version unknown")
                                                : s.driver.version));
  for (auto& line : cuda_error_lines(r)) f.evidence.push_back(line);
  f.remedy.push_back(drop_compat_line(s, dir));
  f.remedy.push_back(
      "Forward compatibility needs a supported data-center driver branch "
      "(LTS/production) under a newer compat package; otherwise upgrade the "
      "driver itself and drop the compat package.");
  return f;
}

}  // namespace

std::vector<Finding> check_compat(const Snapshot& s, const Config&) {
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr || r->library_loaded.empty()) {
    std::string why = "libcuda was not loaded, so no forward-compatibility package is in use.";
    return {make_finding(kUnsupported, Severity::kNotApplicable, why),
            make_finding(kMismatch, Severity::kNotApplicable, why)};
  }
  if (!contains(r->library_loaded, "/compat/")) {
    std::string why =
        "No forward-compatibility (cuda-compat) libcuda is in use (" + r->library_loaded + ").";
    return {make_finding(kUnsupported, Severity::kNotApplicable, why),
            make_finding(kMismatch, Severity::kNotApplicable, why)};
  }
  std::string dir = dir_name(r->library_loaded);
  return {unsupported_finding(s, *r, dir), mismatch_finding(s, *r, dir)};
}

}  // namespace gd
