// diag/evaluate.h: DiagRuns built in code against the hand-built test
// machines (snapshot_builders.h): a healthy HGX H100 node gives only ok
// findings; each fault planted in it gives its finding, naming the GPU, with
// the datasheet figure and the peers' median in the evidence.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/findings.h"
#include "diag/evaluate.h"
#include "diag/outliers.h"
#include "diag/tests.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using fixtures::evidence_has;
using fixtures::only;

std::vector<std::string> gpu_buses(const Snapshot& s, size_t n) {
  std::vector<std::string> out;
  for (const auto& g : s.nvml.gpus) {
    if (out.size() < n) out.push_back(g.pci_bus_id.value);
  }
  return out;
}

DiagCopyResult copy(const std::string& bus, const char* dir, double bps, double ms) {
  DiagCopyResult c;
  c.bus_id = bus;
  c.direction = dir;
  c.bytes = 256ULL << 20;
  c.bytes_per_s = bps;
  c.verified = true;
  c.duration_ms = ms;
  return c;
}

DiagGemmResult gemm(const std::string& bus, const char* dtype, double flops) {
  DiagGemmResult g;
  g.bus_id = bus;
  g.dtype = dtype;
  g.m = g.n = g.k = 8192;
  g.iterations = 400;
  g.flops_per_s = flops;
  g.checked = 200;
  g.max_rel_error = 0.0009;
  g.duration_ms = 20000;
  return g;
}

// A healthy level-3 run of an H100 SXM node, on its first n GPUs: figures
// as a healthy H100 SXM measures them.
DiagRun healthy_run(const Snapshot& s, size_t n = 8) {
  DiagRun r;
  r.level = 3;
  r.duration_s = 20;
  r.seed = 1;
  std::vector<std::string> buses = gpu_buses(s, n);
  for (size_t i = 0; i < buses.size(); ++i) {
    const std::string& b = buses[i];
    DiagDevice d;
    d.bus_id = b;
    d.cuda_index = static_cast<int>(i);
    d.name = s.nvml.gpus[i].name.value;
    d.clock_khz = 1980000;
    r.devices.push_back(d);
    r.tests.push_back({"context", b, DiagStatus::kPass, "", 210});
    r.tests.push_back({"kernel", b, DiagStatus::kPass, "", 1.2});
    // Level 1's short copies, then level 2's sustained ones.
    r.copies.push_back(copy(b, "h2d", 30e9, 2));
    r.copies.push_back(copy(b, "d2h", 30e9, 2));
    r.copies.push_back(copy(b, "d2d", 1.5e12, 0.3));
    r.copies.push_back(copy(b, "h2d", 53e9, 20000));
    r.copies.push_back(copy(b, "d2h", 52e9, 20000));
    r.copies.push_back(copy(b, "d2d", 2.9e12, 20000));
    DiagMemtestResult m;
    m.bus_id = b;
    m.bytes = 76ULL << 30;
    m.passes = 2;
    m.patterns = {"address", "walking-ones", "walking-zeros", "random"};
    m.seed = 1;
    r.memtests.push_back(m);
    r.gemms.push_back(gemm(b, "fp32", 50e12));
    r.gemms.push_back(gemm(b, "tf32", 400e12));
    r.gemms.push_back(gemm(b, "fp16", 750e12));
    r.gemms.push_back(gemm(b, "bf16", 750e12));
    for (int k = 0; k < 10; ++k) {
      DiagSample x;
      x.t_ms = 1000.0 * k;
      x.bus_id = b;
      x.temperature_c = 70 + k % 3;
      x.power_mw = 690000;
      x.sm_clock_mhz = 1755;
      x.clock_event_reasons = 0x4;  // SW power cap: normal under a full GEMM
      x.utilization_pct = 100;
      r.samples.push_back(x);
    }
  }
  for (const auto& a : buses) {
    for (const auto& b : buses) {
      if (a == b) continue;
      DiagP2pResult p;
      p.src = a;
      p.dst = b;
      p.access = true;
      p.bytes_per_s = 380e9;
      p.latency_us = 2.1;
      p.verified = true;
      r.p2p.push_back(p);
    }
  }
  DiagNcclResult nc;
  nc.bus_ids = buses;
  nc.nccl_version = 22809;
  nc.points = {{1ULL << 20, 30.1, 35e9, 61e9}, {1ULL << 30, 4800, 223e9, 390e9}};
  r.nccl = nc;
  DiagScalingResult sc;
  sc.bus_ids = buses;
  sc.one_gpu_step_ms = 10.2;
  sc.all_gpu_step_ms = 10.9;
  sc.per_gpu_compute_ms.assign(buses.size(), 10.2);
  sc.gradient_bytes = 256ULL << 20;
  sc.speedup = static_cast<double>(buses.size()) * 10.2 / 10.9;
  sc.efficiency = sc.speedup / static_cast<double>(buses.size());
  r.scaling = sc;
  return r;
}

const char* const kIds[] = {"diag.incomplete",
                            "memory.test-failed",
                            "compute.mismatch",
                            "perf.compute-slow",
                            "perf.memory-bandwidth-slow",
                            "perf.pcie-slow",
                            "p2p.slow",
                            "nccl.slow",
                            "clocks.throttled"};

const DiagFigure* figure(const std::vector<DiagFigure>& fs, const std::string& bus,
                         const std::string& metric) {
  for (const auto& f : fs) {
    if (f.bus_id == bus && f.metric == metric) return &f;
  }
  return nullptr;
}

TEST(DiagEvaluate, HealthyH100NodeGivesOnlyOkFindings) {
  Snapshot s = fixtures::hgx_8xh100();
  std::vector<Finding> fs = evaluate_diag(healthy_run(s), s);
  ASSERT_EQ(fs.size(), std::size(kIds)) << fixtures::describe(fs);
  for (const char* id : kIds) {
    Finding f = only(fs, id);
    EXPECT_EQ(f.severity, Severity::kOk) << fixtures::describe(f);
    EXPECT_EQ(f.check, "diag");
  }
  EXPECT_TRUE(
      evidence_has(only(fs, "p2p.slow"),
                   "56 pairs over NVLink via NVSwitch, 450.0 GB/s per direction: 380.0 GB/s "
                   "min, 380.0 GB/s median, 380.0 GB/s max (floor 270.0 GB/s)"))
      << fixtures::describe(only(fs, "p2p.slow"));
  std::vector<DiagFigure> figs = diag_figures(healthy_run(s), s);
  // 8 x (4 GEMMs + d2d + h2d + d2h) + 56 pairs + nccl + scaling.
  EXPECT_EQ(figs.size(), 8u * 7 + 56 + 2);
  for (const auto& f : figs) {
    EXPECT_EQ(f.judgement, "ok") << f.metric << " " << f.bus_id;
    EXPECT_GT(f.expected, 0) << f.metric << " " << f.basis;
  }
  const DiagFigure* bf16 = figure(figs, "0000:18:00.0", "gemm.bf16");
  ASSERT_NE(bf16, nullptr);
  EXPECT_NEAR(bf16->expected, 989.4e12 * healthy_share().gemm_tensor, 1e9);
  EXPECT_DOUBLE_EQ(bf16->peer_median, 750e12);
  EXPECT_EQ(bf16->unit, "FLOP/s");
  const DiagFigure* h2d = figure(figs, "0000:18:00.0", "pcie.h2d");
  ASSERT_NE(h2d, nullptr);
  EXPECT_DOUBLE_EQ(h2d->value, 53e9);  // the sustained copy, not level 1's
  EXPECT_NEAR(h2d->expected, 63.0e9 * healthy_share().pcie, 0.1e9);
  const DiagFigure* p2p = figure(figs, "0000:18:00.0", "p2p.0000:2a:00.0");
  ASSERT_NE(p2p, nullptr);
  EXPECT_NEAR(p2p->expected, 450e9 * healthy_share().nvlink, 1e6);  // NVSwitch
}

TEST(DiagEvaluate, OneGpuAtSixtyPercentGemmIsComputeSlowWithDatasheetAndPeers) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s);
  for (auto& g : r.gemms) {
    if (g.bus_id == "0000:5d:00.0" && g.dtype == "bf16") g.flops_per_s = 0.6 * 750e12;
  }
  std::vector<Finding> fs = evaluate_diag(r, s);
  Finding f = only(fs, "perf.compute-slow");
  EXPECT_EQ(f.severity, Severity::kWarn) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:5d:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:5d:00.0 NVIDIA H100 80GB HBM3: bf16 GEMM 450.0 TFLOP/s; a "
                           "healthy NVIDIA H100 80GB HBM3 reaches at least 494.7 TFLOP/s (NVIDIA "
                           "H100 80GB HBM3 datasheet 989.4 TFLOP/s x 0.50)"))
      << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f, "other NVIDIA H100 80GB HBM3s of this node: median 750.0 TFLOP/s"))
      << fixtures::describe(f);
  EXPECT_TRUE(fixtures::remedy_has(f, "nvidia-smi -q -d PERFORMANCE,CLOCK,POWER"));
  EXPECT_EQ(figure(diag_figures(r, s), "0000:5d:00.0", "gemm.bf16")->judgement,
            "below-expected,outlier");
  // The others stay ok, and the other ids too.
  EXPECT_EQ(only(fs, "perf.memory-bandwidth-slow").severity, Severity::kOk);
}

TEST(DiagEvaluate, SlowGpuWithoutTableRowIsStillAnOutlier) {
  Snapshot s = fixtures::hgx_8xh100();
  for (auto& d : s.pci) {
    if (d.kind == PciKind::kGpu) d.device_id = 0x9999;
  }
  for (auto& g : s.nvml.gpus) {
    g.pci_device_id = fixtures::nv_ok<uint32_t>(0x999910de);
    g.name = fixtures::nv_ok(std::string("NVIDIA Future GPU"));
  }
  DiagRun r = healthy_run(s);
  for (auto& g : r.gemms) {
    if (g.bus_id == "0000:ab:00.0" && g.dtype == "fp16") g.flops_per_s = 0.6 * 750e12;
  }
  Finding f = only(evaluate_diag(r, s), "perf.compute-slow");
  EXPECT_EQ(f.severity, Severity::kWarn) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:ab:00.0"});
  EXPECT_TRUE(evidence_has(f, "no datasheet row for NVIDIA Future GPU (device 0x9999)"))
      << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f, "median 750.0 TFLOP/s (60 % of it)")) << fixtures::describe(f);
  const std::vector<DiagFigure> figs = diag_figures(r, s);
  const DiagFigure* fig = figure(figs, "0000:ab:00.0", "gemm.fp16");
  ASSERT_NE(fig, nullptr);
  EXPECT_EQ(fig->judgement, "outlier");
  EXPECT_EQ(fig->expected, 0);
}

TEST(DiagEvaluate, PcieGen5CopyAt25GBpsIsSlowAt53Not) {
  Snapshot s = fixtures::hgx_8xh100();
  // One GPU alone: only the datasheet floor judges it, no peer.
  DiagRun r = healthy_run(s, 1);
  EXPECT_EQ(only(evaluate_diag(r, s), "perf.pcie-slow").severity, Severity::kOk);
  for (auto& c : r.copies) {
    if (c.direction == "h2d" && c.duration_ms > 1000) c.bytes_per_s = 25e9;
  }
  Finding f = only(evaluate_diag(r, s), "perf.pcie-slow");
  EXPECT_EQ(f.severity, Severity::kWarn) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:18:00.0"});
  EXPECT_TRUE(evidence_has(f, "host-to-device copy 25.0 GB/s"));
  EXPECT_TRUE(evidence_has(f, "PCIe x16 at 32.0 GT/s: 63.0 GB/s x 0.65")) << fixtures::describe(f);
  EXPECT_TRUE(fixtures::remedy_has(f, "lspci -vv -s 0000:18:00.0"));
}

TEST(DiagEvaluate, IdleLinkSpeedInTheSnapshotDoesNotLowerTheExpectation) {
  Snapshot s = fixtures::hgx_8xh100();
  fixtures::pci_at(s, "0000:18:00.0")->current_link_speed_gts = 2.5;
  PcieRate rate = pcie_rate(s, "0000:18:00.0");
  EXPECT_NEAR(rate.bytes_per_s, 63.0e9, 0.1e9);
  EXPECT_NE(rate.text.find("2.5 GT/s"), std::string::npos) << rate.text;
  // A link trained at x8 is judged at x8 (pcie.link-degraded says it is narrow).
  fixtures::pci_at(s, "0000:18:00.0")->current_link_width = 8;
  EXPECT_NEAR(pcie_rate(s, "0000:18:00.0").bytes_per_s, 31.5e9, 0.1e9);
}

TEST(DiagEvaluate, MemtestErrorsAreMemoryTestFailedWithHexAddresses) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s);
  DiagMemtestResult& m = r.memtests[2];
  m.status = DiagStatus::kFail;
  m.errors = 3;
  m.failures = {{0x1000, 0x7fff00001000, 0x1, 0x3, "random"},
                {0x2008, 0x7fff00002008, 0xffffffffffffffff, 0xfffffffffffffffe, "walking-ones"}};
  Finding f = only(evaluate_diag(r, s), "memory.test-failed");
  EXPECT_EQ(f.severity, Severity::kFail) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{m.bus_id});
  EXPECT_TRUE(evidence_has(f, "3 failing 64-bit words")) << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "offset 0x1000 (address 0x7fff00001000), pattern random: expected "
                           "0x0000000000000001, read 0x0000000000000003 (bits 0x2 differ)"))
      << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f, "expected 0xffffffffffffffff, read 0xfffffffffffffffe"));
  EXPECT_TRUE(evidence_has(f, "the first 2 of 3 shown"));
  EXPECT_TRUE(fixtures::remedy_has(f, "nvidia-smi -q -d ROW_REMAPPER,ECC -i " + m.bus_id));
  EXPECT_TRUE(fixtures::remedy_has(f, "sudo nvidia-smi -r -i " + m.bus_id));
  EXPECT_TRUE(fixtures::remedy_has(f, "RMA"));
}

TEST(DiagEvaluate, MismatchesAreComputeMismatch) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s);
  EXPECT_EQ(only(evaluate_diag(r, s), "compute.mismatch").severity, Severity::kOk);
  for (auto& g : r.gemms) {
    if (g.bus_id == "0000:9a:00.0" && g.dtype == "bf16") {
      g.status = DiagStatus::kFail;
      g.mismatches = 1;
    }
  }
  r.copies[1].status = DiagStatus::kFail;  // 0000:18:00.0's level-1 d2h
  r.copies[1].mismatches = 4;
  Finding f = only(evaluate_diag(r, s), "compute.mismatch");
  EXPECT_EQ(f.severity, Severity::kFail) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, (std::vector<std::string>{"0000:18:00.0", "0000:9a:00.0"}));
  EXPECT_TRUE(evidence_has(f, "bf16 GEMM 8192x8192x8192: 1 element differed over 200 compared"))
      << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f, "d2h copy of 256 MiB: 4 elements differ"));

  DiagRun n = healthy_run(s, 2);
  n.nccl->mismatches = 7;
  n.nccl->status = DiagStatus::kFail;
  Finding g = only(evaluate_diag(n, s), "compute.mismatch");
  EXPECT_EQ(g.severity, Severity::kFail);
  EXPECT_TRUE(evidence_has(g, "NCCL all-reduce over 2 GPUs: 7 result elements"));
}

TEST(DiagEvaluate, GeforcePairWithoutPeerAccessIsInfoH100PairIsWarn) {
  Snapshot ws = fixtures::ws_4x4090();
  DiagRun r = healthy_run(ws, 2);
  for (auto& p : r.p2p) {
    p.access = false;
    p.bytes_per_s = 20e9;
  }
  Finding f = only(evaluate_diag(r, ws), "p2p.slow");
  EXPECT_EQ(f.severity, Severity::kInfo) << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f, "by design on GeForce")) << fixtures::describe(f);

  Snapshot hgx = fixtures::hgx_8xh100();
  DiagRun h = healthy_run(hgx, 2);
  h.p2p[0].access = false;
  h.p2p[0].bytes_per_s = 20e9;
  Finding g = only(evaluate_diag(h, hgx), "p2p.slow");
  EXPECT_EQ(g.severity, Severity::kWarn) << fixtures::describe(g);
  EXPECT_EQ(g.gpus, (std::vector<std::string>{"0000:18:00.0", "0000:2a:00.0"}));
  EXPECT_TRUE(evidence_has(g, "peer access not possible")) << fixtures::describe(g);
  EXPECT_TRUE(fixtures::remedy_has(g, "nvidia-smi topo -m"));
  EXPECT_TRUE(fixtures::remedy_has(g, "p2p.blocked"));
  EXPECT_TRUE(fixtures::remedy_has(g, "NCCL_P2P_LEVEL"));
}

TEST(DiagEvaluate, SlowPeerPairsAreP2pSlowAndNcclNamesTheGpu) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s);
  // Every copy from or to 0000:ba:00.0 at 150 GB/s: below 270 and an outlier.
  for (auto& p : r.p2p) {
    if (p.src == "0000:ba:00.0" || p.dst == "0000:ba:00.0") p.bytes_per_s = 150e9;
  }
  r.nccl->points.back().busbw_bytes_per_s = 140e9;
  r.scaling.reset();
  std::vector<Finding> fs = evaluate_diag(r, s);
  Finding p = only(fs, "p2p.slow");
  EXPECT_EQ(p.severity, Severity::kWarn) << fixtures::describe(p);
  EXPECT_NE(p.summary.find("14 of 56 pairs"), std::string::npos) << p.summary;
  EXPECT_TRUE(evidence_has(p,
                           "a healthy pair reaches at least 270.0 GB/s (NVLink via NVSwitch, "
                           "450.0 GB/s per direction x 0.60)"))
      << fixtures::describe(p);
  EXPECT_TRUE(evidence_has(p, "42 pairs over NVLink via NVSwitch"));
  Finding n = only(fs, "nccl.slow");
  EXPECT_EQ(n.severity, Severity::kWarn) << fixtures::describe(n);
  EXPECT_EQ(n.gpus, std::vector<std::string>{"0000:ba:00.0"});
  EXPECT_TRUE(evidence_has(n,
                           "bus bandwidth 140.0 GB/s at 1 GiB; a healthy node reaches at "
                           "least 225.0 GB/s"))
      << fixtures::describe(n);
  EXPECT_TRUE(evidence_has(n, "one GPU drags the rest"));
}

TEST(DiagEvaluate, ScalingOf2Point9OnFourGpusIsNcclSlowNamingTheSlowGpu) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s, 4);
  r.scaling->speedup = 3.9;
  r.scaling->efficiency = 0.975;
  EXPECT_EQ(only(evaluate_diag(r, s), "nccl.slow").severity, Severity::kOk);
  r.scaling->speedup = 2.9;
  r.scaling->efficiency = 0.725;
  r.scaling->per_gpu_compute_ms = {10.2, 10.3, 14.1, 10.2};
  Finding f = only(evaluate_diag(r, s), "nccl.slow");
  EXPECT_EQ(f.severity, Severity::kWarn) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:3a:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "4 GPUs run 2.90x the work of one GPU in the same time (efficiency "
                           "0.725); a healthy node reaches at least 0.85 (3.40x)"))
      << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f,
                           "GPU 0000:3a:00.0 NVIDIA H100 80GB HBM3 computes the step in 14.10 "
                           "ms, the other GPUs in 10.20 ms (median): one GPU drags the rest"))
      << fixtures::describe(f);
  EXPECT_TRUE(f.summary.find("0000:3a:00.0 drags the rest") != std::string::npos) << f.summary;
}

TEST(DiagEvaluate, ThermalSlowdownUnderLoadIsClocksThrottledPowerCapIsNot) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s, 2);
  Finding ok = only(evaluate_diag(r, s), "clocks.throttled");
  EXPECT_EQ(ok.severity, Severity::kOk) << fixtures::describe(ok);
  EXPECT_NE(ok.summary.find("SW power cap (0x4), which is normal"), std::string::npos);
  for (auto& x : r.samples) {
    if (x.bus_id == "0000:2a:00.0" && x.t_ms >= 5000) {
      x.clock_event_reasons = 0x44;  // SW power cap + HW thermal slowdown
      x.temperature_c = 92;
      x.sm_clock_mhz = 1110;
    }
  }
  Finding f = only(evaluate_diag(r, s), "clocks.throttled");
  EXPECT_EQ(f.severity, Severity::kWarn) << fixtures::describe(f);
  EXPECT_EQ(f.gpus, std::vector<std::string>{"0000:2a:00.0"});
  EXPECT_TRUE(evidence_has(f,
                           "max temperature 92 °C; SM clock min 1110 MHz under load (max 1980 "
                           "MHz); 0x40 (HW thermal slowdown) in 5 of 10 samples"))
      << fixtures::describe(f);
}

TEST(DiagEvaluate, IncompleteRunIsDiagIncomplete) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s, 2);
  r.incomplete = "timeout after 95.0 s in memtest on 0000:2a:00.0";
  r.last_started = "memtest 0000:2a:00.0";
  r.stderr_tail = "warming up\nXid 79 suspected\n";
  Finding f = only(evaluate_diag(r, s), "diag.incomplete");
  EXPECT_EQ(f.severity, Severity::kFail) << fixtures::describe(f);
  EXPECT_TRUE(evidence_has(f, "timeout after 95.0 s in memtest on 0000:2a:00.0"));
  EXPECT_TRUE(evidence_has(f, "test running when it ended: memtest 0000:2a:00.0"));
  EXPECT_TRUE(evidence_has(f, "stderr: Xid 79 suspected"));
  EXPECT_TRUE(fixtures::remedy_has(f, "gpudoctor check"));

  DiagRun e = healthy_run(s, 2);
  e.gemms[0].status = DiagStatus::kError;
  e.gemms[0].message = "cublasGemmEx: CUBLAS_STATUS_EXECUTION_FAILED";
  e.errors.push_back({"", "0000:2a:00.0", "cudaSetDevice: all CUDA-capable devices are busy"});
  Finding g = only(evaluate_diag(e, s), "diag.incomplete");
  EXPECT_EQ(g.severity, Severity::kFail);
  EXPECT_EQ(g.gpus, (std::vector<std::string>{"0000:2a:00.0", "0000:18:00.0"}));
  EXPECT_TRUE(evidence_has(g, "fp32 GEMM on 0000:18:00.0 could not run: cublasGemmEx"));
  EXPECT_TRUE(evidence_has(g, "helper error on 0000:2a:00.0: cudaSetDevice"));
}

// A level-1 run of the node: the devices, tests and short copies of a
// healthy level-2 run.
DiagRun level_one_run(const Snapshot& s) {
  DiagRun full = healthy_run(s, 2);
  DiagRun r;
  r.level = 1;
  r.devices = full.devices;
  r.tests = full.tests;
  for (const auto& c : full.copies) {
    if (c.duration_ms < 1000) r.copies.push_back(c);
  }
  return r;
}

TEST(DiagEvaluate, LevelOneJudgesVerificationOnlyAndSaysWhatDidNotRun) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = level_one_run(s);
  r.copies[0].bytes_per_s = 1e9;  // short copies are not judged for speed
  std::vector<Finding> fs = evaluate_diag(r, s);
  EXPECT_EQ(only(fs, "compute.mismatch").severity, Severity::kOk);
  EXPECT_EQ(only(fs, "diag.incomplete").severity, Severity::kOk);
  for (const char* id : {"memory.test-failed", "perf.compute-slow", "perf.memory-bandwidth-slow",
                         "perf.pcie-slow", "p2p.slow", "nccl.slow", "clocks.throttled"}) {
    EXPECT_EQ(only(fs, id).severity, Severity::kNotApplicable) << id;
  }
  EXPECT_NE(only(fs, "p2p.slow").summary.find("--level 3"), std::string::npos);
}

// `diag --list-tests` and docs/checks.md promise these ids per test and
// level: a run gives exactly them, in the table's order, and a level-1 run
// says n/a for every test of a higher level.
TEST(DiagEvaluate, FindingsAreTheListedTestsIdsAndLevels) {
  Snapshot s = fixtures::hgx_8xh100();
  std::vector<std::string> listed;
  for (const auto& t : diag_tests()) listed.insert(listed.end(), t.ids.begin(), t.ids.end());
  std::vector<std::string> given;
  for (const auto& f : evaluate_diag(healthy_run(s), s)) given.push_back(f.id);
  EXPECT_EQ(given, listed);

  std::vector<Finding> fs = evaluate_diag(level_one_run(s), s);
  for (const auto& t : diag_tests()) {
    for (const auto& id : t.ids) {
      EXPECT_EQ(only(fs, id).severity == Severity::kNotApplicable, t.level > 1) << id;
    }
  }
  for (const auto& t : diag_tests()) {
    for (const auto& id : t.ids) EXPECT_NE(find_catalog_entry(id), nullptr) << t.name << " " << id;
  }
}

TEST(DiagOutliers, MedianAndJudgement) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(judge(100, 90, 100, 0.85), "ok");
  EXPECT_EQ(judge(80, 90, 100, 0.85), "below-expected,outlier");
  EXPECT_EQ(judge(80, 0, 100, 0.85), "outlier");
  EXPECT_EQ(judge(86, 90, 100, 0.85), "below-expected");
  EXPECT_EQ(judge(1, 0, 0, 0.85), "ok");
}

TEST(DiagOutliers, PathsBetweenGpus) {
  Snapshot s = fixtures::hgx_8xh100();
  DiagRun r = healthy_run(s, 2);
  GpuPath p = gpu_path(r, s, "0000:18:00.0", "0000:2a:00.0");
  EXPECT_EQ(p.kind, PathKind::kNvSwitch);
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 450e9);
  // Two direct NVLinks of a GPU with 18 (NVML's view, no NVSwitch).
  Snapshot d = fixtures::hgx_8xh100();
  std::erase_if(d.pci, [](const PciDevice& x) { return x.kind == PciKind::kNvSwitch; });
  std::vector<NvmlNvLink> links(18);
  for (uint32_t i = 0; i < 18; ++i) {
    links[i].link = i;
    links[i].active = fixtures::nv_ok(i < 2 ? 1 : 0);
    if (i < 2) links[i].remote_bus_id = fixtures::nv_ok(std::string("0000:2a:00.0"));
  }
  d.nvml.gpus[0].health.nvlinks = fixtures::nv_ok(links);
  GpuPath q = gpu_path(r, d, "0000:18:00.0", "0000:2a:00.0");
  EXPECT_EQ(q.kind, PathKind::kNvLink);
  EXPECT_EQ(q.links, 2);
  EXPECT_DOUBLE_EQ(q.bytes_per_s, 50e9);
  // PCIe GPUs under one switch (NVML topology SINGLE): the slower link.
  Snapshot w = fixtures::ws_4x4090();
  w.nvml.topology.push_back({0, 1, fixtures::nv_ok(10)});
  w.nvml.topology.push_back({0, 2, fixtures::nv_ok(50)});
  GpuPath sw = gpu_path(r, w, "0000:01:00.0", "0000:21:00.0");
  EXPECT_EQ(sw.kind, PathKind::kPcieSwitch);
  EXPECT_NEAR(sw.bytes_per_s, 31.5e9, 0.1e9);
  GpuPath cpu = gpu_path(r, w, "0000:01:00.0", "0000:41:00.0");
  EXPECT_EQ(cpu.kind, PathKind::kPcieCpu);
  EXPECT_EQ(cpu.bytes_per_s, 0);  // no floor through the CPU
}

}  // namespace
}  // namespace gd
