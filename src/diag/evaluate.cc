// evaluate_diag(): the findings of a run. The measured figures
// (diag_figures) make perf.compute-slow, perf.memory-bandwidth-slow,
// perf.pcie-slow, p2p.slow and nccl.slow; evaluate_checks.cc makes the
// verification, memory-test, throttling and completeness findings.
// One finding per id, with every GPU concerned and an evidence line each.
#include "diag/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "checks/util.h"
#include "diag/format.h"
#include "diag/outliers.h"
#include "facts/health.h"
#include "util/text.h"

namespace gd {

namespace {

bool has_prefix(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// "bf16 GEMM", "memory bandwidth (device copy)", "host-to-device copy".
std::string metric_words(const std::string& metric) {
  if (has_prefix(metric, "gemm.")) return metric.substr(5) + " GEMM";
  if (metric == "memory.bandwidth") return "device memory copy";
  if (metric == "pcie.h2d") return "host-to-device copy";
  if (metric == "pcie.d2h") return "device-to-host copy";
  if (has_prefix(metric, "p2p.")) return "peer copy to " + metric.substr(4);
  return metric;
}

// The evidence of one judged figure: the value and what a healthy GPU
// reaches, then the peers.
std::vector<std::string> figure_lines(const DiagFigure& f, const NodeGpu& g) {
  std::vector<std::string> out;
  std::string line = fmt::format("{}: {} {}", g.label(), metric_words(f.metric),
                                 format_diag_value(f.value, f.unit));
  if (f.expected > 0) {
    line += fmt::format("; a healthy {} reaches at least {} ({})", g.name,
                        format_diag_value(f.expected, f.unit), f.basis);
  } else if (!f.basis.empty()) {
    line += " (" + f.basis + ")";
  }
  out.push_back(line);
  if (f.peer_median > 0) {
    out.push_back(fmt::format(
        "  {} of this node: median {} ({:.0f} % of it)",
        has_prefix(f.metric, "p2p.") ? "other pairs on the same path" : "other " + g.name + "s",
        format_diag_value(f.peer_median, f.unit), 100 * f.value / f.peer_median));
  }
  return out;
}

// One line for a figure that passed: "GPU ...: bf16 GEMM 731.0 TFLOP/s
// (floor 494.7 TFLOP/s; peers' median 735.2 TFLOP/s)".
std::string ok_line(const DiagFigure& f, const NodeGpu& g) {
  std::vector<std::string> against;
  if (f.expected > 0) against.push_back("floor " + format_diag_value(f.expected, f.unit));
  if (f.peer_median > 0)
    against.push_back("peers' median " + format_diag_value(f.peer_median, f.unit));
  if (against.empty()) against.push_back(f.basis);
  return fmt::format("{}: {} {} ({})", g.label(), metric_words(f.metric),
                     format_diag_value(f.value, f.unit), join(against, "; "));
}

struct PerfId {
  const char* id;
  const char* prefix;  // metrics judged
  const char* what;    // "GEMM throughput", for the summary
  const char* test;    // "GEMM", for n/a
  int level;           // the level that runs the test
};

std::string level_na(const DiagRun& run, int level, const char* test) {
  if (run.level < level) {
    return fmt::format("Level {} runs no {} (gpudoctor diag --level {}).", run.level, test, level);
  }
  return fmt::format("No {} result (see diag.incomplete).", test);
}

std::vector<std::string> perf_remedy(const char* id, const std::vector<std::string>& gpus) {
  std::string each = join(gpus, ",");
  if (std::string(id) == "perf.pcie-slow") {
    return {
        per_gpu_command(gpus, "sudo lspci -vv -s {} | grep -e LnkCap -e LnkSta"),
        "Check for link errors and replays: gpudoctor check --only pcie-errors,pcie-link",
        "An IOMMU that translates DMA slows host copies: check the kernel command line "
        "(cat /proc/cmdline) and use iommu=pt (intel_iommu=on iommu=pt) unless the host "
        "needs DMA isolation.",
        "Check the BIOS: the slot's PCIe speed set to Auto or its maximum; reseat the GPU and "
        "any riser or cable.",
        "Rerun: gpudoctor diag --level 2 --gpus " + each,
    };
  }
  std::vector<std::string> out = {
      per_gpu_command(gpus, "nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE -i {}") +
          ": look at the clock-event reasons, the SM and memory clocks under load against "
          "their maximum, and the power limit against its default",
      "Check throttling and power: gpudoctor check --only clocks,power,thermal",
      per_gpu_command(gpus, "sudo nvidia-smi -i {} -rgc") +
          " (undoes locked clocks); restore a lowered power limit with nvidia-smi -pl <default W>",
      "Rerun: gpudoctor diag --level 2 --gpus " + each,
      "Still slow with full clocks and power: power the node off, reseat the GPU and its power "
      "cables; if it stays slow, open an RMA with this report.",
  };
  if (std::string(id) == "perf.memory-bandwidth-slow") {
    out.insert(out.begin() + 1, per_gpu_command(gpus, "nvidia-smi -q -d ECC,ROW_REMAPPER -i {}") +
                                    ": row remapping or retired pages point at failing memory");
  }
  return out;
}

Finding perf_finding(const PerfId& p, const DiagRun& run, const Snapshot& s,
                     const std::vector<DiagFigure>& figures) {
  std::vector<const DiagFigure*> mine;
  for (const auto& f : figures) {
    if (has_prefix(f.metric, p.prefix) && !f.bus_id.empty()) mine.push_back(&f);
  }
  if (mine.empty()) {
    return diag_finding(p.id, Severity::kNotApplicable, level_na(run, p.level, p.test));
  }
  Finding f = diag_finding(p.id, Severity::kOk, "");
  std::vector<std::string> ok_lines;
  int judged = 0;
  std::set<std::string> gpus;
  for (const DiagFigure* fig : mine) {
    NodeGpu g = node_gpu(run, s, fig->bus_id);
    gpus.insert(fig->bus_id);
    if (fig->expected > 0 || fig->peer_median > 0) ++judged;
    if (fig->judgement == "ok") {
      ok_lines.push_back(ok_line(*fig, g));
      continue;
    }
    f.severity = Severity::kWarn;
    add_finding_gpu(&f, fig->bus_id);
    std::vector<std::string> l = figure_lines(*fig, g);
    f.evidence.insert(f.evidence.end(), l.begin(), l.end());
  }
  if (f.severity == Severity::kOk) {
    if (judged == 0) {
      f.severity = Severity::kNotApplicable;
      f.summary = fmt::format(
          "{} measured on {} GPU{}, with nothing to compare it with (no datasheet row, no "
          "peer of the same model, or level 1's short copies).",
          p.what, gpus.size(), gpus.size() == 1 ? "" : "s");
    } else {
      f.summary = fmt::format("{} on {} GPU{} as fast as a healthy GPU of its model and its peers.",
                              p.what, gpus.size(), gpus.size() == 1 ? "" : "s");
    }
    f.evidence = ok_lines;
    return f;
  }
  f.summary = fmt::format(
      "{} on {} of {} GPUs below what a healthy GPU reaches or below its "
      "peers: {}",
      p.what, f.gpus.size(), gpus.size(), join(f.gpus, ", "));
  f.remedy = perf_remedy(p.id, f.gpus);
  return f;
}

}  // namespace

std::vector<Finding> evaluate_diag(const DiagRun& run, const Snapshot& s, const DiagThresholds& t) {
  return evaluate_diag(run, s, diag_figures(run, s, t), t);
}

std::vector<Finding> evaluate_diag(const DiagRun& run, const Snapshot& s,
                                   const std::vector<DiagFigure>& figures,
                                   const DiagThresholds& t) {
  static const PerfId kPerf[] = {
      {"perf.compute-slow", "gemm.", "GEMM throughput", "GEMM", 2},
      {"perf.memory-bandwidth-slow", "memory.", "Device memory bandwidth", "sustained copy", 2},
      {"perf.pcie-slow", "pcie.", "Host<->GPU copy bandwidth", "sustained copy", 2},
  };
  std::vector<Finding> out;
  out.push_back(incomplete_finding(run));
  out.push_back(memtest_finding(run, s));
  out.push_back(mismatch_finding(run, s));
  for (const PerfId& p : kPerf) out.push_back(perf_finding(p, run, s, figures));
  out.push_back(p2p_finding(run, s, figures));
  out.push_back(nccl_finding(run, s, figures, t));
  out.push_back(clocks_finding(run, s));
  for (auto& f : out) f.check = "diag";
  return out;
}

}  // namespace gd
