// wsl.no-gpu-support, wsl.libs-missing, wsl.libs-shadowed: CUDA under the
// Windows Subsystem for Linux (docs/nvidia-facts.md §13, NVIDIA's CUDA on
// WSL User Guide). The guest has no NVIDIA kernel module: WSL 2 passes the
// GPU through /dev/dxg, and the Windows driver's libcuda and NVML appear in
// /usr/lib/wsl/lib, which WSL puts on the loader's path. WSL 1 has no GPU
// at all, and a Linux driver installed inside WSL hides the Windows one.
#include <fmt/format.h>

#include <algorithm>

#include "checks/checks.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kNoGpu = "wsl.no-gpu-support";
constexpr const char* kMissing = "wsl.libs-missing";
constexpr const char* kShadowed = "wsl.libs-shadowed";
constexpr const char* kLibDir = "/usr/lib/wsl/lib";

std::string release_evidence(const Snapshot& s) {
  return "kernel " + (s.driver.kernel_release.empty() ? std::string("release unknown")
                                                      : s.driver.kernel_release);
}

Finding no_gpu(const Snapshot& s) {
  const WslInfo& w = s.driver.wsl;
  if (w.wsl1) {
    Finding f = make_finding(kNoGpu, Severity::kFail,
                             "This is WSL 1, which has no GPU support: CUDA runs in WSL 2 only");
    f.evidence = {release_evidence(s) + " (WSL 1's)"};
    f.remedy = {
        "in Windows PowerShell: wsl --set-version <distribution> 2   # wsl -l -v lists them",
        "install no Linux NVIDIA driver inside WSL: the Windows driver serves the GPU"};
    return f;
  }
  if (!w.dxg) {
    Finding f = make_finding(
        kNoGpu, Severity::kFail,
        "WSL 2 without /dev/dxg: Windows shares no GPU with this WSL (GPU paravirtualization)");
    f.evidence = {release_evidence(s), "/dev/dxg: absent"};
    f.remedy = {
        "update Windows (Windows 11, or Windows 10 21H2 and later) and install the NVIDIA "
        "Windows driver, which carries WSL support; then run wsl --shutdown and start WSL again",
        "install no Linux NVIDIA driver inside WSL: the Windows driver serves the GPU"};
    return f;
  }
  Finding f =
      make_finding(kNoGpu, Severity::kOk, "WSL 2 with /dev/dxg: Windows shares its GPU with WSL");
  f.evidence = {release_evidence(s)};
  return f;
}

bool has_lib(const WslInfo& w, std::string_view name) {
  return std::find(w.libs.begin(), w.libs.end(), name) != w.libs.end();
}

Finding libs_missing(const Snapshot& s) {
  const WslInfo& w = s.driver.wsl;
  if (!has_lib(w, "libcuda.so.1")) {
    Finding f = make_finding(kMissing, Severity::kFail,
                             fmt::format("{} has no libcuda.so.1: the Windows NVIDIA driver's "
                                         "libraries are not mapped into WSL",
                                         kLibDir));
    f.evidence = {w.libs.empty() ? fmt::format("{}: empty or absent", kLibDir)
                                 : fmt::format("{}: {}", kLibDir, join(w.libs, ", "))};
    f.remedy = {
        "install or update the NVIDIA driver on Windows (not inside WSL), then run wsl --shutdown "
        "and start WSL again"};
    return f;
  }
  const CudaRun* run = user_cuda_run(s);
  bool not_found = run != nullptr && run->library_loaded.empty() && !run->dlopen_error.empty();
  if (not_found && w.lib_dir_configured == 0) {
    Finding f = make_finding(
        kMissing, Severity::kFail,
        fmt::format("{} holds libcuda.so.1, but the loader does not search it", kLibDir));
    f.evidence = {fmt::format("/etc/ld.so.conf.d: no file names {}", kLibDir),
                  "CUDA: " + run->dlopen_error};
    f.remedy = {
        fmt::format("echo {} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig", kLibDir),
        fmt::format("or: export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH", kLibDir)};
    return f;
  }
  return make_finding(kMissing, Severity::kOk,
                      fmt::format("{} holds the Windows driver's libcuda.so.1", kLibDir));
}

Finding libs_shadowed(const Snapshot& s) {
  const CudaRun* run = user_cuda_run(s);
  // Only the loader's own choice says anything: a library named on the
  // command line (--cuda-lib) was chosen by the user.
  if (run == nullptr || run->library_loaded.empty() ||
      run->library_requested.find('/') != std::string::npos) {
    return make_finding(kShadowed, Severity::kNotApplicable,
                        "CUDA's library was not looked up by the loader here");
  }
  if (run->library_loaded.starts_with(std::string(kLibDir) + "/")) {
    return make_finding(kShadowed, Severity::kOk,
                        "libcuda.so.1 comes from the Windows driver (" + run->library_loaded + ")");
  }
  bool failed = run->init_rc != 0;
  Finding f = make_finding(
      kShadowed, failed ? Severity::kFail : Severity::kWarn,
      fmt::format("CUDA loaded libcuda.so.1 from {}, not the Windows driver's {}: a Linux NVIDIA "
                  "driver installed inside WSL hides it",
                  run->library_loaded, kLibDir));
  f.evidence = {"libcuda.so.1 loaded from " + run->library_loaded};
  if (failed) f.evidence.push_back(fmt::format("cuInit returned {}", run->init_rc));
  f.remedy = {
      "remove the Linux driver packages inside WSL (e.g. sudo apt-get remove --purge "
      "'libnvidia-compute-*' 'nvidia-driver-*'), then sudo ldconfig",
      "keep the CUDA toolkit: install the WSL-Ubuntu toolkit package, which carries no driver"};
  return f;
}

}  // namespace

std::vector<Finding> check_wsl(const Snapshot& s, const Config&) {
  const WslInfo& w = s.driver.wsl;
  if (!w.detected) {
    std::vector<Finding> out;
    for (const char* id : {kNoGpu, kMissing, kShadowed}) {
      out.push_back(make_finding(id, Severity::kNotApplicable, "not WSL"));
    }
    return out;
  }
  Finding gpu = no_gpu(s);
  if (gpu.severity == Severity::kFail) {
    return {gpu, make_finding(kMissing, Severity::kNotApplicable, "WSL has no GPU here"),
            make_finding(kShadowed, Severity::kNotApplicable, "WSL has no GPU here")};
  }
  return {gpu, libs_missing(s), libs_shadowed(s)};
}

}  // namespace gd
