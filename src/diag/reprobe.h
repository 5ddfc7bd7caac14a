// The proof a GPU works again before anything calls it healthy (serve's
// recovery gate, `check --slurm` before it resumes a node; docs/serve.md
// "Recovery"): a fresh NVML child must answer for it, a fresh CUDA child
// must open a context on it, and, when the helper gpudoctor-diag is
// installed, a level-1 diag (context, kernel, copies) must pass on it.
// Every step runs in children under deadlines (probe/child.h): a GPU that
// is still broken hangs or crashes a child, never the caller.
#pragma once

#include <string>
#include <vector>

#include "probe/probe.h"

namespace gd {

struct ReprobeOptions {
  ProbeOptions probe;            // libraries, self_exe, deadline per step
  std::vector<std::string> env;  // the children's environment (the caller's)
  std::string diag_helper;       // gpudoctor-diag; "" = no diag step
  double diag_duration_s = 2;    // the diag's --duration: short, this is a probe
  double diag_deadline_s = 0;    // 0: run_helper.h's formula for level 1 and the GPU count
};

struct ReprobeResult {
  std::string bus_id;
  bool ok = false;
  // One line per step, in order: "NVML: answers (NVIDIA H100 80GB HBM3)",
  // "CUDA: context opened on GPU-...", "diag level 1: passed".
  std::vector<std::string> steps;
  std::string failure;  // the first step that failed, one line; "" when ok
  double duration_ms = 0;
};

// Re-probes the GPUs at these PCI bus ids (normalized, "0000:41:00.0"): one
// NVML child for all, one CUDA child that sees only them
// (CUDA_VISIBLE_DEVICES by UUID) and opens a context only on those NVML
// shows idle in DEFAULT compute mode (probe/context_policy.h), one diag run
// on all. A GPU a job uses fails the CUDA step with "CUDA: waiting for the
// GPU to be idle: <why>": its health is not ours to prove while the job
// runs. A GPU fails at its first failed step; later steps run only for
// those still passing. One result per bus id, in order.
std::vector<ReprobeResult> reprobe_gpus(const ReprobeOptions& opt,
                                        const std::vector<std::string>& bus_ids);

// "re-probe passed on 0000:41:00.0 (NVML, CUDA context, diag level 1)" /
// "re-probe failed on 0000:41:00.0: CUDA: cuDevicePrimaryCtxRetain ...".
std::string reprobe_line(const ReprobeResult& r);

}  // namespace gd
