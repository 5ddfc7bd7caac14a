// The human report of `gpudoctor diag`. Layout (docs/diag.md "Reading the
// report"):
//
//   gpudoctor diag · level 2 · 8 GPUs · 20 s per sustained test · seed 1
//   helper gpudoctor-diag · CUDA runtime 13.0 · driver 13.0 · cuBLAS 13.1.0 · ...
//
//   GPU 0 · 0000:18:00.0 · NVIDIA H100 80GB HBM3 · cc 9.0 · 132 SMs · 79.6 GiB
//     tests: context pass · kernel pass · copy.h2d pass · ... · gemm.fp32 pass
//     memtest: 70.0 GiB, 2 passes, ... : no errors
//     metric             measured         expected floor   peer median      judgement
//     gemm.bf16          712.4 TFLOP/s    593.4 TFLOP/s    710.0 TFLOP/s    ok
//   ...
//   Peer-to-peer ... (level 3), NCCL all-reduce, Scaling
//   <the findings, as `gpudoctor check` prints them>
#include "diag/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "facts/health.h"
#include "util/bytes.h"
#include "util/text.h"

namespace gd {
namespace {

// One tested GPU as the report names it.
struct GpuRef {
  std::string bus;
  std::string label;  // nvidia-smi index when the snapshot knows it, else its position
  std::string name;
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The GPUs in report order: those asked for, then any other the helper named.
std::vector<GpuRef> gpu_refs(const Snapshot* s, const DiagRun& run,
                             const std::vector<DiagFigure>& figures,
                             const std::vector<std::string>& gpus) {
  std::vector<std::string> order = gpus;
  auto add = [&order](const std::string& bus) {
    if (!bus.empty() && !contains(order, bus)) order.push_back(bus);
  };
  for (const auto& d : run.devices) add(d.bus_id);
  for (const auto& t : run.tests) add(t.bus_id);
  for (const auto& c : run.copies) add(c.bus_id);
  for (const auto& m : run.memtests) add(m.bus_id);
  for (const auto& g : run.gemms) add(g.bus_id);
  for (const auto& p : run.p2p) add(p.src), add(p.dst);
  for (const auto& f : figures) add(f.bus_id);

  std::vector<GpuRef> refs;
  for (size_t i = 0; i < order.size(); ++i) {
    GpuRef r{order[i], std::to_string(i), ""};
    if (s != nullptr) {
      for (const auto& g : s->nvml.gpus) {
        if (g.pci_bus_id.ok() && g.pci_bus_id.value == r.bus) {
          r.label = std::to_string(g.index);
          if (g.name.ok()) r.name = g.name.value;
        }
      }
    }
    for (const auto& d : run.devices) {
      if (d.bus_id == r.bus && !d.name.empty()) r.name = d.name;
    }
    refs.push_back(r);
  }
  return refs;
}

// 13000 -> "13.0" (CUDA: major x 1000 + minor x 10).
std::string cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
// 22809 -> "2.28.9", 130100 -> "13.1.0" (NCCL, cuBLAS: major x 10000 + minor x 100 + patch).
std::string triple_version(int v) {
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

std::string basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string format_seconds(double s) {
  return s < 100 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s);
}

std::string format_time_us(double us) {
  return us < 1000 ? fmt::format("{:.1f} µs", us) : fmt::format("{:.2f} ms", us / 1000);
}

std::string status_word(DiagStatus s) {
  switch (s) {
    case DiagStatus::kPass:
      return "pass";
    case DiagStatus::kFail:
      return "FAIL";
    case DiagStatus::kError:
      return "ERROR";
    case DiagStatus::kSkip:
      return "skip";
  }
  return "?";
}

// One test of a GPU as the "tests:" line lists it: "copy.h2d", "gemm.bf16".
struct TestMark {
  std::string name;
  DiagStatus status;
};

void add_test(const std::string& name, DiagStatus status, const std::string& message,
              std::vector<TestMark>* marks, std::vector<std::string>* problems) {
  marks->push_back({name, status});
  if (status != DiagStatus::kPass && !message.empty()) {
    problems->push_back(fmt::format("{} {}: {}", name, status_word(status), message));
  }
}

// "memtest FAIL · passed: context, kernel, copy h2d/d2h/d2d, gemm bf16/fp16":
// what did not pass by name, what passed grouped by test.
std::string tests_line(const std::vector<TestMark>& marks) {
  if (marks.empty()) return "none reported";
  std::vector<std::string> other;
  std::vector<std::pair<std::string, std::string>> passed;  // test, "h2d/d2h"
  for (const auto& m : marks) {
    if (m.status != DiagStatus::kPass) {
      other.push_back(m.name + " " + status_word(m.status));
      continue;
    }
    size_t dot = m.name.find('.');
    std::string test = m.name.substr(0, dot);
    std::string variant = dot == std::string::npos ? "" : m.name.substr(dot + 1);
    auto it = std::find_if(passed.begin(), passed.end(),
                           [&test](const auto& p) { return p.first == test; });
    if (it == passed.end()) {
      passed.emplace_back(test, variant);
    } else if (!variant.empty()) {
      it->second += (it->second.empty() ? "" : "/") + variant;
    }
  }
  std::vector<std::string> groups;
  for (const auto& [test, variants] : passed) {
    groups.push_back(variants.empty() ? test : test + " " + variants);
  }
  if (other.empty()) return "all pass: " + join_skip_leading_empty(groups, ", ");
  std::string out = join_skip_leading_empty(other, " · ");
  if (!groups.empty()) out += " · passed: " + join_skip_leading_empty(groups, ", ");
  return out;
}

void append_figure_table(std::string* out, const std::vector<const DiagFigure*>& rows,
                         const std::string& indent, bool verbose) {
  if (rows.empty()) return;
  *out += fmt::format("{}{:<20} {:<16} {:<16} {:<16} {}\n", indent, "metric", "measured",
                      "expected floor", "peer median", "judgement");
  for (const DiagFigure* f : rows) {
    std::string expected = f->expected > 0 ? format_diag_value(f->expected, f->unit) : "-";
    std::string peers = f->peer_median > 0 ? format_diag_value(f->peer_median, f->unit) : "-";
    *out += fmt::format("{}{:<20} {:<16} {:<16} {:<16} {}\n", indent, f->metric,
                        format_diag_value(f->value, f->unit), expected, peers,
                        f->judgement.empty() ? "-" : f->judgement);
    if (verbose && !f->basis.empty()) *out += fmt::format("{}  floor: {}\n", indent, f->basis);
  }
}

void append_memtest(std::string* out, const DiagMemtestResult& m) {
  std::string what =
      fmt::format("{}, {} pass{}", format_bytes_whole_if_round(static_cast<double>(m.bytes)),
                  m.passes, m.passes == 1 ? "" : "es");
  if (!m.patterns.empty()) what += ", patterns " + join_skip_leading_empty(m.patterns, ", ");
  what += fmt::format(" (seed {})", m.seed);
  if (m.status == DiagStatus::kError || m.status == DiagStatus::kSkip) {
    *out += fmt::format("  memtest: {}: {}\n", status_word(m.status), m.message);
    return;
  }
  if (m.errors == 0) {
    *out += fmt::format("  memtest: {}: no errors\n", what);
    return;
  }
  *out +=
      fmt::format("  memtest: {}: {} failing word{}\n", what, m.errors, m.errors == 1 ? "" : "s");
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < m.failures.size() && i < kShown; ++i) {
    const DiagMemFailure& f = m.failures[i];
    *out += fmt::format(
        "    at 0x{:x} (offset 0x{:x}, pattern {}): wrote 0x{:016x}, read 0x{:016x} (bits "
        "0x{:x} differ)\n",
        f.address, f.offset, f.pattern, f.expected, f.actual, f.expected ^ f.actual);
  }
  if (m.failures.size() > kShown) {
    *out += fmt::format("    ... {} more listed in --json\n", m.failures.size() - kShown);
  }
}

// Temperature, power and clocks the parent sampled during the load.
void append_samples(std::string* out, const std::vector<const DiagSample*>& samples) {
  if (samples.empty()) return;
  std::vector<std::string> parts;
  int t_min = 1000, t_max = -1000;
  uint32_t p_max = 0, c_min = UINT32_MAX, c_max = 0;
  uint64_t reasons = 0;
  bool any_t = false, any_p = false, any_c = false;
  for (const DiagSample* s : samples) {
    if (s->temperature_c) {
      any_t = true;
      t_min = std::min(t_min, *s->temperature_c);
      t_max = std::max(t_max, *s->temperature_c);
    }
    if (s->power_mw) any_p = true, p_max = std::max(p_max, *s->power_mw);
    if (s->sm_clock_mhz) {
      any_c = true;
      c_min = std::min(c_min, *s->sm_clock_mhz);
      c_max = std::max(c_max, *s->sm_clock_mhz);
    }
    if (s->clock_event_reasons) reasons |= *s->clock_event_reasons;
  }
  if (any_t) parts.push_back(fmt::format("{}-{} °C", t_min, t_max));
  if (any_p) parts.push_back(fmt::format("up to {:.0f} W", p_max / 1000.0));
  if (any_c) parts.push_back(fmt::format("SM clock {}-{} MHz", c_min, c_max));
  if (reasons != 0) parts.push_back("clock event reasons " + reasons_text(reasons));
  *out += fmt::format("  under load ({} sample{}): {}\n", samples.size(),
                      samples.size() == 1 ? "" : "s",
                      parts.empty() ? "no values" : join_skip_leading_empty(parts, " · "));
}

void append_gpu(std::string* out, const GpuRef& g, const DiagRun& run,
                const std::vector<DiagFigure>& figures, bool verbose) {
  std::string head = fmt::format("GPU {} · {}", g.label, g.bus);
  if (!g.name.empty()) head += " · " + g.name;
  for (const auto& d : run.devices) {
    if (d.bus_id != g.bus) continue;
    head += fmt::format(" · cc {}.{} · {} SMs · {}", d.cc_major, d.cc_minor, d.multiprocessors,
                        format_bytes_whole_if_round(static_cast<double>(d.memory_bytes)));
  }
  *out += "\n" + head + "\n";

  std::vector<TestMark> tokens;
  std::vector<std::string> problems;
  for (const auto& t : run.tests) {
    if (t.bus_id == g.bus) add_test(t.test, t.status, t.message, &tokens, &problems);
  }
  for (const auto& c : run.copies) {
    if (c.bus_id != g.bus) continue;
    std::string message = c.message;
    if (message.empty() && c.mismatches > 0) {
      message = fmt::format("{} elements arrived wrong", c.mismatches);
    }
    add_test("copy." + c.direction, c.status, message, &tokens, &problems);
  }
  for (const auto& m : run.memtests) {
    if (m.bus_id == g.bus) add_test("memtest", m.status, "", &tokens, &problems);
  }
  for (const auto& x : run.gemms) {
    if (x.bus_id != g.bus) continue;
    std::string message = x.message;
    if (message.empty() && x.mismatches > 0) {
      message = fmt::format("{} elements differed over {} products (max relative error {:.3g})",
                            x.mismatches, x.checked, x.max_rel_error);
    }
    add_test("gemm." + x.dtype, x.status, message, &tokens, &problems);
  }
  for (const auto& e : run.errors) {
    if (e.bus_id != g.bus) continue;
    problems.push_back(fmt::format("{}error: {}", e.test.empty() ? "" : e.test + " ", e.message));
  }
  *out += "  tests: " + tests_line(tokens) + "\n";
  for (const auto& p : problems) *out += "    " + p + "\n";
  for (const auto& m : run.memtests) {
    if (m.bus_id == g.bus) append_memtest(out, m);
  }

  std::vector<const DiagFigure*> rows;
  for (const auto& f : figures) {
    if (f.bus_id == g.bus && f.metric.rfind("p2p.", 0) != 0) rows.push_back(&f);
  }
  append_figure_table(out, rows, "  ", verbose);

  std::vector<const DiagSample*> samples;
  for (const auto& s : run.samples) {
    if (s.bus_id == g.bus) samples.push_back(&s);
  }
  append_samples(out, samples);
}

const DiagP2pResult* find_p2p(const DiagRun& run, const std::string& src, const std::string& dst) {
  for (const auto& p : run.p2p) {
    if (p.src == src && p.dst == dst) return &p;
  }
  return nullptr;
}

const DiagFigure* find_figure(const std::vector<DiagFigure>& figures, const std::string& bus,
                              const std::string& metric) {
  for (const auto& f : figures) {
    if (f.bus_id == bus && f.metric == metric) return &f;
  }
  return nullptr;
}

// Two matrices, bandwidth and latency, rows the source GPU.
void append_p2p(std::string* out, const DiagRun& run, const std::vector<DiagFigure>& figures,
                const std::vector<GpuRef>& refs) {
  if (run.p2p.empty()) return;
  std::vector<const GpuRef*> used;
  for (const auto& g : refs) {
    bool in = std::any_of(run.p2p.begin(), run.p2p.end(), [&g](const DiagP2pResult& p) {
      return p.src == g.bus || p.dst == g.bus;
    });
    if (in) used.push_back(&g);
  }
  auto cell = [&](const GpuRef& src, const GpuRef& dst, bool latency) -> std::string {
    if (src.bus == dst.bus) return "-";
    const DiagP2pResult* p = find_p2p(run, src.bus, dst.bus);
    if (p == nullptr) return "";
    if (p->status == DiagStatus::kSkip) return "skip";
    if (p->status == DiagStatus::kError) return "E";
    if (!p->access) return "x";
    std::string v = latency ? fmt::format("{:.1f}", p->latency_us)
                            : fmt::format("{:.1f}", p->bytes_per_s / 1e9);
    if (p->status == DiagStatus::kFail || p->mismatches > 0) return v + "F";
    const DiagFigure* f = find_figure(figures, src.bus, "p2p." + dst.bus);
    if (!latency && f != nullptr && !f->judgement.empty() && f->judgement != "ok") v += "*";
    return v;
  };
  auto matrix = [&](const char* title, bool latency) {
    *out += fmt::format("{}\n  {:<8}", title, "from\\to");
    for (const GpuRef* d : used) *out += fmt::format("{:>9}", d->label);
    *out += "\n";
    for (const GpuRef* s : used) {
      *out += fmt::format("  {:<8}", s->label);
      for (const GpuRef* d : used) *out += fmt::format("{:>9}", cell(*s, *d, latency));
      *out += "\n";
    }
  };
  *out += "\n";
  matrix("Peer-to-peer bandwidth, GB/s one way (row: from GPU, column: to GPU)", false);
  matrix("Peer-to-peer latency, µs (one small copy, median)", true);
  *out +=
      "  * below the expected floor or its peers · x no peer access (copies go through host "
      "memory) · F data arrived wrong · E could not run\n";
  for (const auto& f : figures) {
    if (f.metric.rfind("p2p.", 0) == 0 && f.expected > 0) {
      *out +=
          fmt::format("  expected at least {} a pair{}\n", format_diag_value(f.expected, f.unit),
                      f.basis.empty() ? "" : " (" + f.basis + ")");
      break;
    }
  }
  std::vector<std::string> problems;
  for (const auto& p : run.p2p) {
    if (p.status != DiagStatus::kPass && !p.message.empty()) {
      problems.push_back(
          fmt::format("{} -> {} {}: {}", p.src, p.dst, status_word(p.status), p.message));
    }
  }
  for (const auto& p : problems) *out += "  " + p + "\n";
}

void append_nccl(std::string* out, const DiagRun& run) {
  if (!run.nccl) return;
  const DiagNcclResult& n = *run.nccl;
  *out += fmt::format("\nNCCL all-reduce over {} GPUs", n.bus_ids.size());
  if (n.nccl_version > 0) *out += " (NCCL " + triple_version(n.nccl_version) + ")";
  *out += ": " + status_word(n.status);
  if (!n.message.empty()) *out += ": " + n.message;
  if (n.mismatches > 0) *out += fmt::format(" · {} result elements wrong", n.mismatches);
  *out += "\n";
  if (n.points.empty()) return;
  *out += fmt::format("  {:<12} {:<12} {:<14} {}\n", "size", "time", "algbw", "busbw");
  for (const auto& p : n.points) {
    *out += fmt::format(
        "  {:<12} {:<12} {:<14} {}\n", format_bytes_whole_if_round(static_cast<double>(p.bytes)),
        format_time_us(p.time_us), format_diag_value(p.algbw_bytes_per_s, "bytes/s"),
        format_diag_value(p.busbw_bytes_per_s, "bytes/s"));
  }
}

void append_scaling(std::string* out, const DiagRun& run) {
  if (!run.scaling) return;
  const DiagScalingResult& s = *run.scaling;
  size_t n = s.bus_ids.size();
  if (s.status != DiagStatus::kPass && s.speedup <= 0) {
    *out += fmt::format("\nScaling over {} GPUs: {}{}\n", n, status_word(s.status),
                        s.message.empty() ? "" : ": " + s.message);
    return;
  }
  *out += fmt::format(
      "\nScaling: {} GPUs do {:.2f}x the work of one (ideal {}x): efficiency {:.1f} % · one GPU "
      "{:.1f} ms a step, all {:.1f} ms with the all-reduce of {}\n",
      n, s.speedup, n, s.efficiency * 100, s.one_gpu_step_ms, s.all_gpu_step_ms,
      format_bytes_whole_if_round(static_cast<double>(s.gradient_bytes)));
  if (!s.per_gpu_compute_ms.empty()) {
    std::vector<std::string> parts;
    for (double ms : s.per_gpu_compute_ms) parts.push_back(fmt::format("{:.1f}", ms));
    *out += "  compute alone per GPU, ms: " + join_skip_leading_empty(parts, " ") + "\n";
  }
}

}  // namespace

std::string render_diag_text(const Report& r, const DiagRun& run,
                             const std::vector<DiagFigure>& figures,
                             const std::vector<std::string>& gpus, const TextOptions& opt) {
  std::vector<GpuRef> refs = gpu_refs(r.snapshot, run, figures, gpus);
  std::string out = fmt::format("gpudoctor diag · level {} · {} GPU{}", run.level, refs.size(),
                                refs.size() == 1 ? "" : "s");
  if (run.level >= 2)
    out += fmt::format(" · {} per sustained test", format_seconds(run.duration_s));
  out += fmt::format(" · seed {}\n", run.seed);

  std::vector<std::string> helper;
  helper.push_back("helper " + (run.helper.empty() ? std::string("?") : basename(run.helper)));
  if (run.cuda_runtime_version > 0) {
    helper.push_back("CUDA runtime " + cuda_version(run.cuda_runtime_version));
  }
  if (run.cuda_driver_version > 0)
    helper.push_back("driver " + cuda_version(run.cuda_driver_version));
  if (run.cublas_version > 0) helper.push_back("cuBLAS " + triple_version(run.cublas_version));
  if (run.nccl_version > 0) helper.push_back("NCCL " + triple_version(run.nccl_version));
  helper.push_back("ran " + format_seconds(run.wall_ms / 1000));
  out += join_skip_leading_empty(helper, " · ") + "\n";
  if (!run.incomplete.empty()) {
    out += "Run ended early: " + run.incomplete;
    if (!run.last_started.empty()) out += " (running: " + run.last_started + ")";
    out += "; the results before it stand\n";
  }

  for (const auto& g : refs) append_gpu(&out, g, run, figures, opt.verbose);

  // Errors that name no GPU (a GPU's own are listed in its section).
  std::vector<std::string> loose;
  for (const auto& e : run.errors) {
    bool placed =
        std::any_of(refs.begin(), refs.end(), [&e](const GpuRef& g) { return g.bus == e.bus_id; });
    if (!placed) loose.push_back((e.test.empty() ? "" : e.test + ": ") + e.message);
  }
  if (!loose.empty()) {
    out += "\nHelper errors\n";
    for (const auto& l : loose) out += "  " + l + "\n";
  }

  append_p2p(&out, run, figures, refs);
  append_nccl(&out, run);
  append_scaling(&out, run);
  std::vector<const DiagFigure*> node;
  for (const auto& f : figures) {
    if (f.bus_id.empty()) node.push_back(&f);
  }
  if (!node.empty()) {
    out += "\nNode-wide figures\n";
    append_figure_table(&out, node, "  ", opt.verbose);
  }

  // The findings as `gpudoctor check` prints them, without its machine
  // header (the snapshot's time is not the run's).
  Report findings = r;
  findings.snapshot = nullptr;
  out += "\n" + render_text(findings, opt);
  return out;
}

}  // namespace gd
