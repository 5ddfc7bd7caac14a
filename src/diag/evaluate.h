// Judging a DiagRun: every measured figure against the GPU model's
// datasheet figure times the share a healthy card reaches
// (catalog/gpu_perf.h), and against the same figure on the node's other
// GPUs of the same model (an outlier is a finding even without a table row).
// Pure: no I/O, unit-tested on the CPU.
#pragma once

#include <string>
#include <vector>

#include "checks/finding.h"
#include "diag/result.h"
#include "snapshot/snapshot.h"

namespace gd {

struct DiagThresholds {
  // An outlier: below this share of the median of the other GPUs of the
  // same model (with one other GPU, of that one).
  double outlier_fraction = 0.85;
  // nccl.slow: N GPUs reaching less than this share of N x one GPU.
  double scaling_efficiency_min = 0.85;
};

// One measured figure and what it was compared with.
struct DiagFigure {
  std::string bus_id;  // "" for node-wide figures (nccl, scaling)
  // "gemm.bf16", "gemm.tf32", "gemm.fp16", "gemm.fp32", "memory.bandwidth"
  // (d2d), "pcie.h2d", "pcie.d2h", "p2p.<dst bus id>", "nccl.busbw",
  // "scaling.efficiency"
  std::string metric;
  double value = 0;
  std::string unit;        // "FLOP/s", "bytes/s", "ratio"
  double expected = 0;     // the floor a healthy GPU reaches; 0 = no expectation
  std::string basis;       // how expected was derived: "H200 datasheet 989 TFLOP/s x 0.60"
  double peer_median = 0;  // median of the other GPUs of the same model; 0 = none
  std::string judgement;   // "ok", "below-expected", "outlier", "below-expected,outlier"
};

std::vector<DiagFigure> diag_figures(const DiagRun& run, const Snapshot& s,
                                     const DiagThresholds& t = {});

// The findings of a run (catalog ids perf.compute-slow,
// perf.memory-bandwidth-slow, perf.pcie-slow, memory.test-failed,
// compute.mismatch, p2p.slow, nccl.slow, clocks.throttled under load,
// diag.incomplete), each with GPUs, evidence and remedy, check = "diag".
// Ok findings are included for the tests that passed (so the report shows
// what was tested), n/a for those not run at this level.
std::vector<Finding> evaluate_diag(const DiagRun& run, const Snapshot& s,
                                   const DiagThresholds& t = {});
// The same with the run's figures already computed (diag_figures(run, s, t)),
// for a caller that shows them too.
std::vector<Finding> evaluate_diag(const DiagRun& run, const Snapshot& s,
                                   const std::vector<DiagFigure>& figures,
                                   const DiagThresholds& t = {});

}  // namespace gd
