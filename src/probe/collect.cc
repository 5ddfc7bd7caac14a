// Runs every probe in a fixed order and times each one.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "probe/child.h"
#include "probe/pci_topology.h"  // probe_iommu
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"
#include "util/exe.h"
#include "util/host.h"
#include "util/time.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// A child's snapshot: the largest recorded one is a few hundred KiB (the
// kernel log's events are folded and bounded).
constexpr size_t kMaxChildSnapshotBytes = 64u << 20;
// What the file probes and the kernel-log scan may take in the child beyond
// the NVML and CUDA deadline (256 MiB of kernel log scan in 0.2 s).
constexpr double kFileProbeAllowanceS = 30;

// The snapshot's own facts, before any probe.
Snapshot empty_snapshot(const ProbeOptions& opt) {
  Snapshot s;
  s.tool_version = GD_VERSION;
  s.hostname = host_name();
  s.taken_at = iso_utc_now();
  s.root = opt.root;
  s.deadline_s = opt.deadline_s;
  return s;
}

// Why a finished child gave no snapshot; "" when it did.
std::string child_failure(const ChildResult& r, double limit_s) {
  if (!r.started) return r.start_error;
  if (r.timed_out) return fmt::format("it did not finish within {:g} s", limit_s);
  if (!r.exited) return "it was killed by " + signal_name(r.signal);
  if (r.exit_code != 0) {
    std::string last = r.err_tail.substr(0, r.err_tail.find('\n'));
    return fmt::format("it exited {}{}", r.exit_code, last.empty() ? "" : ": " + last);
  }
  if (r.out_truncated)
    return fmt::format("its snapshot is over {} MiB", kMaxChildSnapshotBytes >> 20);
  return "";
}

}  // namespace

Snapshot collect_snapshot_in_child(const ProbeOptions& opt, const std::vector<std::string>& env) {
  if (!opt.hardware || !opt.cuda || opt.self_exe.empty()) return collect_snapshot(opt);
  ChildSpec spec;
  spec.exe = opt.self_exe;
  spec.args = {"snapshot",   "--root",     opt.root,
               "--nvml-lib", opt.nvml_lib, "--cuda-lib",
               opt.cuda_lib, "--deadline", fmt::format("{}", opt.deadline_s)};
  if (!opt.cudart_lib.empty()) spec.args.insert(spec.args.end(), {"--cudart-lib", opt.cudart_lib});
  spec.env = env;
  spec.max_stdout_bytes = kMaxChildSnapshotBytes;
  const double limit_s = opt.deadline_s + kFileProbeAllowanceS;
  ChildRunner runner(ChildRunner::Clock::now() +
                     std::chrono::duration_cast<ChildRunner::Clock::duration>(
                         std::chrono::duration<double>(limit_s)));
  const ChildResult& r = runner.wait(runner.start(spec));
  std::string why = child_failure(r, limit_s);
  if (why.empty()) {
    auto parsed = snapshot_from_string(r.out);
    if (parsed.ok()) return std::move(*parsed);
    why = "its snapshot does not parse: " + parsed.error();
  }
  Snapshot s = empty_snapshot(opt);
  ProbeRecord rec;
  rec.name = "snapshot";
  rec.status = r.timed_out ? ProbeStatus::kTimedOut : ProbeStatus::kFailed;
  rec.detail = "the probe child (" + opt.self_exe + " snapshot) failed: " + why;
  rec.duration_ms = r.duration_ms;
  s.probes.push_back(std::move(rec));
  return s;
}

Snapshot collect_snapshot(const ProbeOptions& opt) {
  Snapshot s = empty_snapshot(opt);

  // env comes first: the container probe reads the `container` variable.
  using FileProbe = ProbeRecord (*)(const ProbeOptions&, Snapshot*);
  const FileProbe kFileProbes[] = {probe_env,    probe_limits,    probe_driver,    probe_pci,
                                   probe_iommu,  probe_devnodes,  probe_container, probe_services,
                                   probe_fabric, probe_kernel_log};
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
