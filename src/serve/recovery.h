// serve's recovery gate (docs/serve.md "Recovery"): which GPUs the exporter
// calls healthy. A GPU turns unhealthy the moment a sample finds it lost or
// a check fails on it, and turns healthy again only when both hold:
//  - its cause has cleared: a later check no longer fails on it and its
//    fresh NVML child answers for it (the driver's recovery action is None
//    after Xid 154, the GPU was reset or re-bound: the checks say which);
//  - a re-probe in isolated children passed (diag/reprobe.h).
// A GPU that keeps coming back and going again is "flapping": its
// FlapOptions::returns-th return within the window is not admitted; it is
// held unhealthy for a hold that doubles at each further flapping episode,
// restarts whenever the GPU is lost or fails again, and ends only with a
// re-probe that passes after a whole hold without a loss.
// Pure: the daemon feeds it samples, checks and re-probe results (with the
// times), and runs the re-probes it asks for.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "diag/reprobe.h"
#include "snapshot/snapshot.h"

namespace gd {

// The hysteresis against a flapping GPU (docs/serve.md "Flapping").
struct FlapOptions {
  int returns = 3;                     // this many returns within window_ms ...
  int64_t window_ms = 10 * 60 * 1000;  // ... make the GPU flapping
  int64_t hold_ms = 5 * 60 * 1000;     // the first hold; doubled at each further episode
  int64_t max_hold_ms = 3600 * 1000;   // the longest hold; healthy this long resets the doubling
};

struct GpuHealth {
  std::string bus_id;
  std::string uuid;  // as last seen; "" when never known
  int index = -1;    // NVML index as last seen
  bool healthy = true;
  std::string cause;  // while unhealthy: "gpu.fallen-off-bus", "NVML: the GPU does not answer"
  int64_t unhealthy_since_ms = 0;
  bool cleared = false;  // unhealthy, its cause gone: a re-probe is due
  uint64_t recovered = 0;
  double last_recovery_s = -1;  // unhealthy until proven healthy, the last time; <0: never
  uint64_t reprobe_passes = 0;
  uint64_t reprobe_failures = 0;
  std::string last_reprobe;  // reprobe_line() of the last re-probe
  // Held unhealthy for coming and going (cause "flapping: ..."): no
  // re-probe is asked before held_until_ms, which restarts at every loss.
  bool flapping = false;
  int64_t held_until_ms = 0;  // unix ms; while flapping
  int64_t hold_ms = 0;        // the current hold's length; while flapping
  uint64_t flaps = 0;         // flapping episodes so far
};

class RecoveryGate {
 public:
  RecoveryGate() = default;
  explicit RecoveryGate(FlapOptions flap) : flap_(flap) {}

  // A sample of the long-lived sampler: a GPU down in it (nvml_gpu_down)
  // turns unhealthy. A GPU proven healthy again ignores samples of the
  // sampler child that was running before (sampler_generation: children
  // started so far), whose NVML session may still hold the lost handle.
  void on_sample(const NvmlInfo& sample, uint64_t sampler_generation, int64_t now_ms);
  // A full check: a finding of severity fail that names a GPU turns it
  // unhealthy (cause: the finding's id). An unhealthy GPU that no failing
  // finding names and the check's NVML answers for has its cause cleared.
  // Returns the bus ids due a re-probe (cleared, in bus order).
  std::vector<std::string> on_check(const Report& report, const Snapshot& snapshot, int64_t now_ms);
  // A re-probe's result: passed and cleared, the GPU is healthy again;
  // true when that happened (the caller restarts its sampler child, whose
  // generation it passes here). Not when this return makes it flapping
  // (FlapOptions): then it is held instead, and the sampler child must be
  // restarted all the same (flapping() says so).
  bool on_reprobe(const ReprobeResult& r, uint64_t sampler_generation, int64_t now_ms);

  // Every GPU seen, by bus id.
  std::vector<GpuHealth> gpus() const;

 private:
  GpuHealth& entry(const std::string& bus);
  void turn_unhealthy(GpuHealth& g, const std::string& cause, int64_t now_ms);
  // A passed re-probe of a cleared GPU: true to admit it, false when this
  // return makes it flapping (held from now).
  bool admit(GpuHealth& g, int64_t now_ms);

  FlapOptions flap_;
  std::map<std::string, GpuHealth> gpus_;
  // Per GPU: the times it was admitted again within the flap window, and
  // since when it has been healthy (for resetting the doubling).
  struct Returns {
    std::vector<int64_t> at_ms;
    int64_t healthy_since_ms = 0;
    int episodes = 0;  // flapping episodes since the doubling was last reset
  };
  std::map<std::string, Returns> returns_;
  // For each GPU proven healthy again: the sampler generation from which
  // its samples count again.
  std::map<std::string, uint64_t> trust_from_generation_;
};

}  // namespace gd
