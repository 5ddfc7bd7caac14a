// container.gpu-interposer, container.gpu-interposer-missing: a GPU-sharing
// layer (catalog/gpu_interposers.h: HAMi-core's libvgpu.so) is preloaded
// into every process. It answers CUDA's and NVML's memory queries with its
// own cap, so a job sees less memory than the GPU has and fails with out of
// memory past the cap while the GPU has memory free: worth knowing before
// chasing an OOM (info). When the preload names a file that cannot be
// loaded, ld.so prints "ERROR: ld.so: object '/usr/local/vgpu/libvgpu.so'
// from /etc/ld.so.preload cannot be preloaded (cannot read file data):
// ignored." and the limits the scheduler promised are not enforced
// (Project-HAMi/HAMi#777, #1346): warn.
#include "catalog/gpu_interposers.h"
#include "checks/checks.h"
#include "checks/util.h"

namespace gd {

std::vector<Finding> check_gpu_interposer(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.gpu-interposer";
  constexpr const char* kMissing = "container.gpu-interposer-missing";
  std::vector<Finding> out;
  for (const Preload& p : s.container.preloads) {
    const GpuInterposer* g = find_gpu_interposer(p.path);
    if (g == nullptr) continue;
    std::vector<std::string> limits;
    for (const auto& [name, value] : s.env.vars) {
      for (std::string_view prefix : g->limit_vars) {
        if (name.starts_with(prefix)) limits.push_back(name + "=" + value);
      }
    }
    std::string where = p.path + " (" + p.from + ")";
    if (!p.loadable) {
      Finding f = make_finding(
          kMissing, Severity::kWarn,
          std::string(g->project) + "'s " + std::string(g->library) +
              " is to be preloaded but cannot be loaded: the loader ignores it, so the GPU "
              "memory and compute limits it should enforce are not applied in this container.");
      f.evidence.push_back(where + ": missing, empty or unreadable");
      for (const std::string& l : limits) f.evidence.push_back(l);
      f.remedy = {"check that the device plugin mounted " + p.path +
                      " into the container (kubectl describe pod: the vgpu hostPath volume)",
                  "restart the pod once the library is there; " + std::string(g->source)};
      out.push_back(f);
      continue;
    }
    Finding f = make_finding(
        kId, Severity::kInfo,
        std::string(g->project) + "'s " + std::string(g->library) +
            " is preloaded: CUDA and NVML here see its limits, not the whole GPU, and an "
            "allocation past its memory cap fails as out of memory while the GPU has memory "
            "free.");
    f.evidence.push_back(where);
    if (limits.empty()) {
      f.evidence.push_back("no limit variable is set here (" + std::string(g->limit_vars.front()) +
                           "...): the scheduler's share applies");
    }
    for (const std::string& l : limits) f.evidence.push_back(l);
    f.remedy = {
        "an out-of-memory error below the GPU's size is this cap: ask for a larger share "
        "(nvidia.com/gpumem) or fit the job to it; " +
        std::string(g->source)};
    out.push_back(f);
  }
  if (out.empty()) {
    if (s.container.preloads.empty()) {
      out = not_applicable(kId, "Nothing is preloaded (no LD_PRELOAD, no /etc/ld.so.preload).");
    } else {
      out = all_ok(kId, "No known GPU-sharing layer is among the preloaded libraries.");
    }
  }
  return out;
}

}  // namespace gd
