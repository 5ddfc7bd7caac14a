// container.cdi-stale: a CDI spec for NVIDIA devices (/etc/cdi,
// /var/run/cdi) no longer matches this machine. A spec lists host paths as
// they were when `nvidia-ctk cdi generate` wrote it: the driver's versioned
// libraries, the GPUs' device nodes. After a driver upgrade or a change of
// GPUs it names paths that are gone, and a container asking for the device
// fails to start ("crun: error stat'ing file
// /lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07: No such file or
// directory", Igalia/webkit-container-sdk#23, fixed by generating the spec
// again; podman#26233), or it lacks GPUs that are here. NVIDIA's CDI guide:
// "If you change the device or CUDA driver configuration, you must generate
// a new CDI specification" (quoted in podman#23935).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "facts/identity.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr size_t kShownPaths = 3;

// The driver version the spec was generated for, from the first of its
// mounts whose file name carries one (libcuda.so.550.54.14); "" when none.
std::string spec_driver(const CdiSpec& spec) {
  for (const std::string& p : spec.host_paths) {
    if (auto v = library_file_version(p)) return *v;
  }
  return "";
}

// What is wrong with one spec, as evidence lines; empty when it fits.
std::vector<std::string> stale_lines(const CdiSpec& spec, const Snapshot& s,
                                     const std::string& driver) {
  std::vector<std::string> out;
  std::string name = fmt::format("{} ({}, {} device{})", spec.path, spec.kind, spec.devices.size(),
                                 spec.devices.size() == 1 ? "" : "s");
  if (!spec.missing.empty()) {
    std::vector<std::string> shown(
        spec.missing.begin(),
        spec.missing.begin() + static_cast<long>(std::min(kShownPaths, spec.missing.size())));
    out.push_back(fmt::format("{}: {} of the paths it names do not exist: {}{}", name,
                              spec.missing.size(), join(shown, ", "),
                              spec.missing.size() > kShownPaths ? ", ..." : ""));
  }
  std::string made_for = spec_driver(spec);
  if (!made_for.empty() && !driver.empty() && made_for != driver) {
    out.push_back(fmt::format("{}: generated for driver {}; the running driver is {}", name,
                              made_for, driver));
  }
  std::set<std::string> in_spec;
  for (const std::string& n : spec.device_nodes) {
    if (is_gpu_node(n)) in_spec.insert(n);
  }
  std::vector<std::string> left_out;
  for (const DevNode& n : s.devnodes) {
    if (n.exists && is_gpu_node(n.path) && !in_spec.contains(n.path)) left_out.push_back(n.path);
  }
  if (!in_spec.empty() && !left_out.empty()) {
    out.push_back(fmt::format("{}: gives containers {} GPU node{}; this machine also has {}", name,
                              in_spec.size(), in_spec.size() == 1 ? "" : "s",
                              join(left_out, ", ")));
  }
  return out;
}

}  // namespace

std::vector<Finding> check_cdi_specs(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.cdi-stale";
  std::vector<const CdiSpec*> nvidia;
  for (const CdiSpec& spec : s.container.cdi_specs) {
    if (spec.error.empty() && spec.kind.starts_with("nvidia.com/")) nvidia.push_back(&spec);
  }
  if (nvidia.empty()) return not_applicable(kId, "No CDI spec for NVIDIA devices is here.");
  const std::string driver = node_identity(s).driver_version;
  Finding f = make_finding(kId, Severity::kWarn, "");
  std::vector<std::string> stale;
  for (const CdiSpec* spec : nvidia) {
    auto lines = stale_lines(*spec, s, driver);
    if (lines.empty()) continue;
    stale.push_back(spec->path);
    f.evidence.insert(f.evidence.end(), lines.begin(), lines.end());
  }
  if (stale.empty()) {
    return all_ok(kId, fmt::format("The {} NVIDIA CDI spec{} match{} this machine's driver and "
                                   "GPUs.",
                                   nvidia.size(), nvidia.size() == 1 ? "" : "s",
                                   nvidia.size() == 1 ? "es" : ""));
  }
  f.summary = fmt::format(
      "{} no longer match{} this machine (a driver upgrade or a GPU change since it was "
      "generated): containers that ask for its devices (--device nvidia.com/gpu=all) fail to "
      "start or miss GPUs.",
      stale.size() == 1 ? "A CDI spec" : fmt::format("{} CDI specs", stale.size()),
      stale.size() == 1 ? "es" : "");
  for (const std::string& path : stale) {
    f.remedy.push_back("sudo nvidia-ctk cdi generate --output=" + path);
  }
  f.remedy.push_back(
      "then start the containers again (podman run --device nvidia.com/gpu=all ...)");
  return {f};
}

}  // namespace gd
