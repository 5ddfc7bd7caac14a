// p2p.slow and nccl.slow: the links between the GPUs (level 3).
//
// Peer access that is not possible is a fault on data-center GPUs and on
// NVLink systems (ACS redirect with a translating IOMMU, a virtual machine
// without P2P, a fabric that is down), but by design on GeForce boards,
// whose driver offers no PCIe peer access: there it is said at info, with
// what it costs. A slow all-reduce or a poor scaling names the GPU that
// drags the rest: the one whose compute step is an outlier, else the one
// whose peer copies are.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "checks/util.h"
#include "diag/format.h"
#include "diag/outliers.h"
#include "facts/health.h"
#include "util/bytes.h"
#include "util/text.h"

namespace gd {

namespace {

const DiagFigure* figure_for(const std::vector<DiagFigure>& figures, const std::string& bus_id,
                             const std::string& metric) {
  for (const auto& f : figures) {
    if (f.bus_id == bus_id && f.metric == metric) return &f;
  }
  return nullptr;
}

// Peer access is expected where both GPUs are data-center parts or the
// pair has NVLink; an unknown model counts as not expected.
bool access_expected(const NodeGpu& a, const NodeGpu& b, bool nvl) {
  if (nvl) return true;
  return a.model != nullptr && b.model != nullptr && a.model->datacenter && b.model->datacenter;
}

std::vector<std::string> p2p_remedy(const std::vector<std::string>& gpus) {
  return {
      "nvidia-smi topo -m (the path of each pair: NV# is NVLink, PIX/PXB a PCIe switch, "
      "PHB/NODE/SYS the CPU) and nvidia-smi topo -p2p r (which pairs may read each other)",
      "gpudoctor check --only p2p,fabric-manager (p2p.blocked: PCIe ACS redirect with a "
      "translating IOMMU; a fabric manager that is down on NVSwitch systems)",
      per_gpu_command(gpus, "nvidia-smi nvlink -s -i {}") +
          " (NVLink state and speed per link, where the GPUs have NVLink)",
      "In a virtual machine: the hypervisor must pass the GPUs with peer-to-peer enabled.",
      "Until fixed, NCCL_P2P_LEVEL=PXB keeps NCCL's peer-to-peer to GPUs behind one PCIe "
      "switch, and NCCL_P2P_DISABLE=1 turns it off (slower, but no hang).",
  };
}

}  // namespace

Finding p2p_finding(const DiagRun& run, const Snapshot& s, const std::vector<DiagFigure>& figures) {
  constexpr const char* kId = "p2p.slow";
  std::vector<const DiagP2pResult*> ran;
  std::string skipped;
  for (const auto& p : run.p2p) {
    if (p.status == DiagStatus::kSkip) {
      skipped = p.message;
    } else if (p.status != DiagStatus::kError) {
      ran.push_back(&p);
    }
  }
  if (ran.empty()) {
    std::string why = run.level < 3 ? fmt::format(
                                          "Level {} runs no peer-to-peer test (gpudoctor diag "
                                          "--level 3).",
                                          run.level)
                      : !skipped.empty() ? "Peer-to-peer was skipped: " + skipped + "."
                                         : "No peer-to-peer result (see diag.incomplete).";
    return diag_finding(kId, Severity::kNotApplicable, why);
  }
  Finding f = diag_finding(kId, Severity::kOk, "");
  std::vector<std::string> ok_lines;
  struct OkPath {
    std::vector<double> values;  // bytes/s
    double floor = 0;
  };
  std::map<std::string, OkPath> ok_paths;  // by path text
  int no_access_warn = 0, no_access_info = 0, slow = 0;
  for (const DiagP2pResult* p : ran) {
    NodeGpu a = node_gpu(run, s, p->src), b = node_gpu(run, s, p->dst);
    GpuPath path = gpu_path(run, s, p->src, p->dst);
    bool nvl = path.kind == PathKind::kNvSwitch || path.kind == PathKind::kNvLink;
    std::string pair =
        fmt::format("{} -> {} ({} -> {}, {})", p->src, p->dst, a.name, b.name, path.text);
    if (!p->access) {
      add_finding_gpu(&f, p->src);
      add_finding_gpu(&f, p->dst);
      if (access_expected(a, b, nvl)) {
        ++no_access_warn;
        f.evidence.push_back(
            pair +
            ": peer access not possible (cudaDeviceCanAccessPeer 0) "
            "where it should be; copies go through host memory" +
            (p->bytes_per_s > 0
                 ? fmt::format(" at {}", format_diag_value(p->bytes_per_s, "bytes/s"))
                 : ""));
      } else {
        ++no_access_info;
        f.evidence.push_back(pair + ": no peer access, by design on " +
                             (a.model != nullptr && !a.model->datacenter
                                  ? "GeForce and workstation boards"
                                  : "a GPU of unknown model") +
                             ": copies and NCCL go through host memory");
      }
      continue;
    }
    const DiagFigure* fig = figure_for(figures, p->src, "p2p." + p->dst);
    std::string line = pair + fmt::format(": {}", format_diag_value(p->bytes_per_s, "bytes/s"));
    if (p->latency_us > 0) line += fmt::format(", latency {:.1f} µs", p->latency_us);
    if (fig == nullptr || fig->judgement == "ok") {
      OkPath& o = ok_paths[path.text];
      o.values.push_back(p->bytes_per_s);
      if (fig != nullptr) o.floor = fig->expected;
      continue;
    }
    ++slow;
    add_finding_gpu(&f, p->src);
    add_finding_gpu(&f, p->dst);
    if (fig->expected > 0) {
      line += fmt::format("; a healthy pair reaches at least {} ({})",
                          format_diag_value(fig->expected, fig->unit), fig->basis);
    }
    f.evidence.push_back(line);
    if (fig->peer_median > 0) {
      f.evidence.push_back(fmt::format("  other pairs on the same path: median {} ({:.0f} % of it)",
                                       format_diag_value(fig->peer_median, fig->unit),
                                       100 * fig->value / fig->peer_median));
    }
  }
  // Pairs that passed, one line per path: 56 rows of "380.0 GB/s" say less.
  for (const auto& [text, o] : ok_paths) {
    std::vector<double> v = o.values;
    std::sort(v.begin(), v.end());
    std::string line = fmt::format(
        "{} pair{} over {}: {} min, {} median, {} max", v.size(), v.size() == 1 ? "" : "s", text,
        format_diag_value(v.front(), "bytes/s"), format_diag_value(median(v), "bytes/s"),
        format_diag_value(v.back(), "bytes/s"));
    if (o.floor > 0) line += " (floor " + format_diag_value(o.floor, "bytes/s") + ")";
    ok_lines.push_back(line);
  }
  size_t n = ran.size();
  if (no_access_warn + slow > 0) {
    f.severity = Severity::kWarn;
    std::vector<std::string> parts;
    if (no_access_warn > 0) {
      parts.push_back(fmt::format("{} pair{} without the peer access {} should have",
                                  no_access_warn, no_access_warn == 1 ? "" : "s",
                                  no_access_warn == 1 ? "it" : "they"));
    }
    if (slow > 0) {
      parts.push_back(fmt::format("{} of {} pair{} slower than a healthy path or the other pairs",
                                  slow, n, n == 1 ? "" : "s"));
    }
    f.summary = "Peer-to-peer: " + join(parts, "; ") +
                ". NCCL falls back to host memory or "
                "crawls on these pairs.";
    f.evidence.insert(f.evidence.end(), ok_lines.begin(), ok_lines.end());
    f.remedy = p2p_remedy(f.gpus);
    return f;
  }
  if (no_access_info > 0) {
    f.severity = Severity::kInfo;
    f.summary = fmt::format(
        "{} pair{} without peer access, as designed on GeForce boards: copies and NCCL go "
        "through host memory, at PCIe speed.",
        no_access_info, no_access_info == 1 ? "" : "s");
    f.remedy = {
        "Nothing is broken. Multi-GPU jobs on these boards are limited by host-memory "
        "copies; NVLink or data-center GPUs avoid that."};
    f.evidence.insert(f.evidence.end(), ok_lines.begin(), ok_lines.end());
    return f;
  }
  f.summary = fmt::format("Peer-to-peer copies between {} pair{} as fast as their path carries.", n,
                          n == 1 ? "" : "s");
  f.evidence = ok_lines;
  return f;
}

namespace {

// The GPU whose compute step is an outlier against the others' median:
// index into bus_ids, or -1.
int slow_compute_gpu(const DiagScalingResult& sc, double outlier_fraction, double* others_ms) {
  const auto& ms = sc.per_gpu_compute_ms;
  int worst = -1;
  for (size_t i = 0; i < ms.size() && i < sc.bus_ids.size(); ++i) {
    std::vector<double> others;
    for (size_t j = 0; j < ms.size(); ++j) {
      if (j != i && ms[j] > 0) others.push_back(ms[j]);
    }
    double med = median(others);
    // Slower by the outlier fraction: it reaches less than outlier_fraction
    // of the others' speed (1 / ms).
    if (med > 0 && ms[i] * outlier_fraction > med && (worst < 0 || ms[i] > ms[worst])) {
      worst = static_cast<int>(i);
      *others_ms = med;
    }
  }
  return worst;
}

// The GPU in the most outlying peer-copy rows (as source or destination).
std::string slow_p2p_gpu(const std::vector<DiagFigure>& figures, int* rows) {
  std::map<std::string, int> count;
  for (const auto& f : figures) {
    if (f.metric.rfind("p2p.", 0) != 0 || !is_outlier(f.judgement)) continue;
    ++count[f.bus_id];
    ++count[f.metric.substr(4)];
  }
  std::string best;
  *rows = 0;
  for (const auto& [bus, c] : count) {
    if (c > *rows) {
      *rows = c;
      best = bus;
    }
  }
  return best;
}

}  // namespace

Finding nccl_finding(const DiagRun& run, const Snapshot& s, const std::vector<DiagFigure>& figures,
                     const DiagThresholds& t) {
  constexpr const char* kId = "nccl.slow";
  const DiagFigure* busbw = figure_for(figures, "", "nccl.busbw");
  const DiagFigure* eff = figure_for(figures, "", "scaling.efficiency");
  if (busbw == nullptr && eff == nullptr) {
    std::string why;
    if (run.level < 3) {
      why = fmt::format("Level {} runs no NCCL test (gpudoctor diag --level 3).", run.level);
    } else if (run.nccl && run.nccl->status == DiagStatus::kSkip) {
      why = "NCCL was skipped: " + run.nccl->message + ".";
    } else {
      why = "No NCCL or scaling result (see diag.incomplete).";
    }
    return diag_finding(kId, Severity::kNotApplicable, why);
  }
  Finding f = diag_finding(kId, Severity::kOk, "");
  std::vector<std::string> lines;
  bool bad = false;
  size_t n_gpus = run.nccl ? run.nccl->bus_ids.size() : 0;
  if (busbw != nullptr) {
    const DiagNcclPoint& last = run.nccl->points.back();
    std::string line = fmt::format("NCCL all-reduce over {} GPUs: bus bandwidth {} at {}", n_gpus,
                                   format_diag_value(busbw->value, "bytes/s"),
                                   format_bytes_whole_if_round(static_cast<double>(last.bytes)));
    if (busbw->expected > 0) {
      line += fmt::format("; a healthy node reaches at least {} ({})",
                          format_diag_value(busbw->expected, "bytes/s"), busbw->basis);
    } else {
      line += " (" + busbw->basis + ")";
    }
    lines.push_back(line);
    bad = bad || busbw->judgement != "ok";
  }
  std::vector<std::string> drag;
  if (eff != nullptr) {
    const DiagScalingResult& sc = *run.scaling;
    size_t n = sc.bus_ids.size();
    lines.push_back(fmt::format(
        "scaling: {} GPUs run {:.2f}x the work of one GPU in the same time (efficiency {:.3f}); "
        "a healthy node reaches at least {:.2f} ({:.2f}x); one step {:.2f} ms on one GPU, "
        "{:.2f} ms on all",
        n, sc.speedup, eff->value, t.scaling_efficiency_min, t.scaling_efficiency_min * n,
        sc.one_gpu_step_ms, sc.all_gpu_step_ms));
    if (eff->judgement != "ok") bad = true;
    double others_ms = 0;
    int slow = slow_compute_gpu(sc, t.outlier_fraction, &others_ms);
    if (slow >= 0) {
      NodeGpu g = node_gpu(run, s, sc.bus_ids[slow]);
      drag.push_back(g.bus_id);
      lines.push_back(fmt::format(
          "{} computes the step in {:.2f} ms, the other GPUs in {:.2f} ms (median): one GPU "
          "drags the rest",
          g.label(), sc.per_gpu_compute_ms[slow], others_ms));
    }
  }
  if (!bad) {
    f.summary = fmt::format("NCCL all-reduce and scaling over {} GPUs as a healthy node.",
                            std::max(n_gpus, run.scaling ? run.scaling->bus_ids.size() : 0));
    f.evidence = lines;
    return f;
  }
  f.severity = Severity::kWarn;
  if (drag.empty()) {
    int rows = 0;
    std::string bus = slow_p2p_gpu(figures, &rows);
    if (!bus.empty()) {
      NodeGpu g = node_gpu(run, s, bus);
      drag.push_back(bus);
      lines.push_back(fmt::format(
          "{} is in {} of the slowest peer-copy rows (see p2p.slow): one GPU drags the rest",
          g.label(), rows));
    } else {
      lines.push_back("no single GPU stands out: the links between them are the bottleneck");
    }
  }
  f.evidence = lines;
  if (!drag.empty()) {
    f.gpus = drag;
    f.summary = fmt::format("Multi-GPU work is slow: {} drags the rest.", join(drag, ", "));
    f.remedy = {
        per_gpu_command(drag, "nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE -i {}") +
            ": its clocks, power limit and clock-event reasons against the other GPUs'",
        "Test it alone: gpudoctor diag --level 2 --gpus " + join(drag, ","),
        "nvidia-smi topo -m: its links against the other GPUs'",
        "Until fixed, leave it out of multi-GPU jobs (CUDA_VISIBLE_DEVICES without it, or "
        "drain it in the scheduler).",
    };
  } else {
    if (run.nccl) f.gpus = run.nccl->bus_ids;
    f.summary =
        "Multi-GPU work is slow: NCCL's bus bandwidth or the scaling is below a "
        "healthy node's, with no single slow GPU.";
    f.remedy = {
        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH with any NCCL job: each channel's "
        "transport (P2P/IPC, P2P/CUMEM, SHM, NET); SHM where P2P is expected means peer "
        "access is off",
        "nvidia-smi topo -m and gpudoctor check --only p2p,fabric-manager",
        "Rerun: gpudoctor diag --level 3",
    };
  }
  return f;
}

}  // namespace gd
