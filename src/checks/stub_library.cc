// cuda.stub-library: the CUDA toolkit's stub libcuda (lib64/stubs/libcuda.so,
// for linking only) is what the program loads instead of the driver's.
#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr int kStubLibrary = 34;

}  // namespace

std::vector<Finding> check_stub_library(const Snapshot& s, const Config&) {
  constexpr const char* kId = "cuda.stub-library";
  const CudaRun* r = user_cuda_run(s);
  if (r == nullptr) return not_applicable(kId, "The CUDA probe did not run.");
  bool stub_path = contains(r->library_loaded, "/stubs/");
  bool stub_rc = run_has_rc(r, kStubLibrary);
  if (!stub_path && !stub_rc) {
    if (r->library_loaded.empty()) {
      return not_applicable(
          kId, "libcuda could not be loaded at all (" +
                   (r->dlopen_error.empty() ? std::string("no error recorded") : r->dlopen_error) +
                   ").");
    }
    return all_ok(kId, r->library_requested + " is the driver's library (" + r->library_loaded +
                           "), not the toolkit stub.");
  }

  Finding f = make_finding(
      kId, Severity::kFail,
      "Your program loads the CUDA toolkit's stub libcuda (meant only for linking) instead of "
      "the NVIDIA driver's libcuda, so CUDA cannot start.");
  if (!r->library_loaded.empty()) {
    f.evidence.push_back(r->library_requested + " loaded from " + r->library_loaded);
  }
  for (auto& line : cuda_error_lines(*r)) f.evidence.push_back(line);

  const std::string* ld = env_var(s, "LD_LIBRARY_PATH");
  std::string stub_dir = stub_path ? dir_name(r->library_loaded) : "";
  bool in_ld_path = false;
  if (ld != nullptr) {
    f.evidence.push_back("LD_LIBRARY_PATH=" + *ld);
    for (const auto& e : split_strings(*ld, ':')) {
      if (!e.empty() && is_stub_dir(e)) in_ld_path = true;
    }
  }
  if (const std::string* pre = env_var(s, "LD_PRELOAD");
      pre != nullptr && contains(*pre, "stubs")) {
    f.evidence.push_back("LD_PRELOAD=" + *pre);
    f.remedy.push_back("Remove the stub from LD_PRELOAD: unset LD_PRELOAD");
  }
  if (in_ld_path) {
    std::string fixed = filter_path_list(*ld, [](const std::string& e) { return is_stub_dir(e); });
    f.remedy.push_back(ld_library_path_command(fixed) +
                       "   # LD_LIBRARY_PATH without the stubs directory");
  } else {
    std::string where = stub_dir.empty() ? std::string("the stubs directory") : stub_dir;
    f.remedy.push_back(
        "The stub comes from the linker cache: grep -rn stubs /etc/ld.so.conf "
        "/etc/ld.so.conf.d/ and delete the line naming " +
        where);
  }
  f.remedy.push_back("sudo ldconfig");
  f.remedy.push_back(
      "ldconfig -p | grep libcuda   # libcuda.so.1 must point to the driver's "
      "copy, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1");
  f.remedy.push_back(
      "If no driver libcuda is listed, the NVIDIA driver's user-space part is "
      "missing: install it (e.g. libnvidia-compute-<branch> or the driver "
      "package).");
  return {f};
}

}  // namespace gd
