// diag_figures(): every measured figure of a run with its floor (datasheet
// x healthy share, catalog/gpu_perf.h) and the median of its peers.
//
// Peers are the other GPUs of the same model (same name) in this run; for
// peer-to-peer copies, the other pairs with the same path (NVSwitch, the
// same number of direct NVLinks, a PCIe switch, the CPU) between the same
// models, since a pair through the CPU is not slow for being slower than
// one under a switch.
#include <fmt/format.h>

#include <map>

#include "diag/evaluate.h"
#include "diag/outliers.h"

namespace gd {

namespace {

// Below this size an all-reduce measures latency, not bandwidth: the floor
// applies to the largest size only when it is at least this large.
constexpr uint64_t kNcclMinBytes = 64ULL << 20;

double tensor_peak(const GpuPerf& p, const std::string& dtype) {
  if (dtype == "fp32") return p.fp32_tflops;
  if (dtype == "tf32") return p.tf32_tflops;
  if (dtype == "fp16") return p.fp16_tflops;
  if (dtype == "bf16") return p.bf16_tflops;
  return 0;
}

std::string no_row(const NodeGpu& g) {
  if (g.device_id == 0) return "the device id of " + g.bus_id + " is unknown: no datasheet figure";
  return fmt::format("no datasheet row for {} (device 0x{:04x})", g.name, g.device_id);
}

// A figure and the group it is compared within.
struct Entry {
  DiagFigure f;
  std::string group;
};

void expect_gemm(const NodeGpu& g, const std::string& dtype, DiagFigure* f) {
  if (g.perf == nullptr) {
    f->basis = no_row(g);
    return;
  }
  double peak = tensor_peak(*g.perf, dtype);
  if (peak <= 0) {
    f->basis = fmt::format("the {} table row has no {} figure", g.name, dtype);
    return;
  }
  const HealthyShare& sh = healthy_share();
  double share = dtype == "fp32" ? sh.gemm_fp32 : sh.gemm_tensor;
  f->expected = peak * 1e12 * share;
  f->basis = fmt::format("{} datasheet {:.1f} TFLOP/s x {:.2f}", g.name, peak, share);
}

// The sustained copy of each GPU and direction: the longest one (level 2
// repeats level 1's short copies first).
std::vector<const DiagCopyResult*> sustained_copies(const DiagRun& run) {
  std::map<std::pair<std::string, std::string>, const DiagCopyResult*> best;
  for (const auto& c : run.copies) {
    if (c.bytes_per_s <= 0 || c.status == DiagStatus::kError || c.status == DiagStatus::kSkip) {
      continue;
    }
    auto& b = best[{c.bus_id, c.direction}];
    if (b == nullptr || c.duration_ms >= b->duration_ms) b = &c;
  }
  std::vector<const DiagCopyResult*> out;
  for (const auto& c : run.copies) {
    auto it = best.find({c.bus_id, c.direction});
    if (it != best.end() && it->second == &c) out.push_back(&c);
  }
  return out;
}

void expect_copy(const DiagRun& run, const Snapshot& s, const NodeGpu& g, const DiagCopyResult& c,
                 DiagFigure* f) {
  const HealthyShare& sh = healthy_share();
  if (run.level < 2) {
    f->basis = "level 1 copies are too short to judge bandwidth";
    return;
  }
  if (c.direction == "d2d") {
    if (g.perf == nullptr || g.perf->memory_gbs <= 0) {
      f->basis = g.perf == nullptr ? no_row(g)
                                   : fmt::format("the {} table row has no memory figure", g.name);
      return;
    }
    f->expected = g.perf->memory_gbs * 1e9 * sh.memory;
    f->basis =
        fmt::format("{} datasheet {:.1f} GB/s x {:.2f}", g.name, g.perf->memory_gbs, sh.memory);
    return;
  }
  PcieRate r = pcie_rate(s, g.bus_id);
  if (r.bytes_per_s <= 0) {
    f->basis = "the PCIe link's width or speed is unknown";
    return;
  }
  f->expected = r.bytes_per_s * sh.pcie;
  f->basis = fmt::format("PCIe {}: {:.1f} GB/s x {:.2f}", r.text, r.bytes_per_s / 1e9, sh.pcie);
}

void add_peer_medians(std::vector<Entry>* entries, double outlier_fraction) {
  for (auto& e : *entries) {
    std::vector<double> others;
    for (const auto& o : *entries) {
      if (&o == &e || o.group != e.group) continue;
      // Another GPU (another pair for p2p) with the same metric.
      if (o.f.bus_id == e.f.bus_id && o.f.metric == e.f.metric) continue;
      if (e.f.metric.rfind("p2p.", 0) != 0 && o.f.bus_id == e.f.bus_id) continue;
      others.push_back(o.f.value);
    }
    e.f.peer_median = median(others);
    e.f.judgement = judge(e.f.value, e.f.expected, e.f.peer_median, outlier_fraction);
  }
}

}  // namespace

std::vector<DiagFigure> diag_figures(const DiagRun& run, const Snapshot& s,
                                     const DiagThresholds& t) {
  std::vector<Entry> entries;
  for (const auto& gm : run.gemms) {
    if (gm.flops_per_s <= 0 || gm.status == DiagStatus::kError) continue;
    NodeGpu g = node_gpu(run, s, gm.bus_id);
    Entry e;
    e.f.bus_id = gm.bus_id;
    e.f.metric = "gemm." + gm.dtype;
    e.f.value = gm.flops_per_s;
    e.f.unit = "FLOP/s";
    expect_gemm(g, gm.dtype, &e.f);
    e.group = e.f.metric + "/" + g.name;
    entries.push_back(std::move(e));
  }
  for (const DiagCopyResult* c : sustained_copies(run)) {
    NodeGpu g = node_gpu(run, s, c->bus_id);
    Entry e;
    e.f.bus_id = c->bus_id;
    e.f.metric = c->direction == "d2d" ? "memory.bandwidth" : "pcie." + c->direction;
    e.f.value = c->bytes_per_s;
    e.f.unit = "bytes/s";
    expect_copy(run, s, g, *c, &e.f);
    // Short level-1 copies are not compared with peers either.
    e.group = run.level < 2 ? e.f.bus_id + "/" + e.f.metric : e.f.metric + "/" + g.name;
    entries.push_back(std::move(e));
  }
  const HealthyShare& sh = healthy_share();
  for (const auto& p : run.p2p) {
    if (p.bytes_per_s <= 0 || p.status == DiagStatus::kError || p.status == DiagStatus::kSkip) {
      continue;
    }
    GpuPath path = gpu_path(run, s, p.src, p.dst);
    Entry e;
    e.f.bus_id = p.src;
    e.f.metric = "p2p." + p.dst;
    e.f.value = p.bytes_per_s;
    e.f.unit = "bytes/s";
    e.group = "p2p/" + path.group;
    if (!p.access) {
      e.f.basis = "peer access not possible: the copy went through host memory";
      e.group = "p2p-host/" + p.src + "/" + p.dst;  // not a peer of the direct copies
    } else if (path.bytes_per_s > 0) {
      bool nvl = path.kind == PathKind::kNvSwitch || path.kind == PathKind::kNvLink;
      double share = nvl ? sh.nvlink : sh.pcie;
      e.f.expected = path.bytes_per_s * share;
      e.f.basis = fmt::format("{} x {:.2f}", path.text, share);
    } else {
      e.f.basis = path.text + ": no expected rate";
    }
    entries.push_back(std::move(e));
  }
  add_peer_medians(&entries, t.outlier_fraction);

  std::vector<DiagFigure> out;
  for (auto& e : entries) out.push_back(std::move(e.f));

  if (run.nccl && !run.nccl->points.empty() && run.nccl->status != DiagStatus::kError) {
    const DiagNcclResult& n = *run.nccl;
    const DiagNcclPoint& last = n.points.back();
    DiagFigure f;
    f.metric = "nccl.busbw";
    f.value = last.busbw_bytes_per_s;
    f.unit = "bytes/s";
    // The ring's slowest link bounds the bus bandwidth.
    double slowest = 0;
    std::string slowest_text;
    bool all_known = n.bus_ids.size() >= 2;
    for (size_t i = 0; i < n.bus_ids.size() && all_known; ++i) {
      for (size_t j = i + 1; j < n.bus_ids.size(); ++j) {
        GpuPath path = gpu_path(run, s, n.bus_ids[i], n.bus_ids[j]);
        if (path.bytes_per_s <= 0) {
          all_known = false;
          slowest_text = fmt::format("{} - {}: {}", n.bus_ids[i], n.bus_ids[j], path.text);
          break;
        }
        if (slowest == 0 || path.bytes_per_s < slowest) {
          slowest = path.bytes_per_s;
          slowest_text = path.text;
        }
      }
    }
    if (last.bytes < kNcclMinBytes) {
      f.basis =
          fmt::format("the largest size, {} bytes, is too small to judge bandwidth", last.bytes);
    } else if (!all_known) {
      f.basis = "no expected rate for every pair (" + slowest_text + ")";
    } else {
      f.expected = slowest * sh.nccl_busbw;
      f.basis = fmt::format("slowest path {} x {:.2f}", slowest_text, sh.nccl_busbw);
    }
    f.judgement = judge(f.value, f.expected, 0, t.outlier_fraction);
    out.push_back(std::move(f));
  }
  if (run.scaling && run.scaling->status != DiagStatus::kError &&
      run.scaling->status != DiagStatus::kSkip) {
    const DiagScalingResult& sc = *run.scaling;
    DiagFigure f;
    f.metric = "scaling.efficiency";
    f.value = sc.efficiency;
    if (f.value <= 0 && !sc.bus_ids.empty()) {
      f.value = sc.speedup / static_cast<double>(sc.bus_ids.size());
    }
    f.unit = "ratio";
    f.expected = t.scaling_efficiency_min;
    f.basis = fmt::format("scaling_efficiency_min {:.2f}", t.scaling_efficiency_min);
    f.judgement = judge(f.value, f.expected, 0, t.outlier_fraction);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gd
