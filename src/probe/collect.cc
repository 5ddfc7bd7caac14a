// Runs every probe in a fixed order and times each one.
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "probe/pci_topology.h"  // probe_iommu
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"
#include "util/exe.h"
#include "util/time.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

Snapshot collect_snapshot(const ProbeOptions& opt) {
  Snapshot s;
  s.tool_version = GD_VERSION;
  s.hostname = host_name();
  s.taken_at = iso_utc_now();
  s.root = opt.root;
  s.deadline_s = opt.deadline_s;

  // env comes first: the container probe reads the `container` variable.
  using FileProbe = ProbeRecord (*)(const ProbeOptions&, Snapshot*);
  const FileProbe kFileProbes[] = {probe_env,       probe_limits,   probe_driver,
                                   probe_pci,       probe_iommu,    probe_devnodes,
                                   probe_container, probe_services, probe_kernel_log};
  for (FileProbe probe : kFileProbes) {
    auto start = Clock::now();
    ProbeRecord rec = probe(opt, &s);
    rec.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    s.probes.push_back(std::move(rec));
  }
  if (opt.hardware) probe_hardware(opt, &s);
  return s;
}

Result<Snapshot> load_or_probe(const std::string& from, const ProbeOptions& probe) {
  if (!from.empty()) return snapshot_from_file(from);
  ProbeOptions opt = probe;
  opt.self_exe = self_exe_path();
  return collect_snapshot(opt);
}

}  // namespace gd
