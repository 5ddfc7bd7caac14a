// /metrics in the Prometheus text format 0.0.4
// (prometheus.io/docs/instrumenting/exposition_formats/). What each metric
// means, its unit and its NVML source are in docs/metrics.md; a unit test
// keeps that page and kFamilies in step.
//
// Conventions (prometheus.io/docs/practices/naming/): base units (celsius,
// watts, hertz, bytes, seconds, ratios 0-1), _total on counters, _info
// series with the value 1 that carry text in labels. Per-GPU series are
// labelled {gpu, bus_id, uuid} only: NVML index (what nvidia-smi shows),
// PCI bus id (what the kernel log and the check report name) and UUID (what
// survives a reboot and CUDA_VISIBLE_DEVICES uses). A value whose NVML call
// did not return SUCCESS is left out: NOT_SUPPORTED is not zero.
#include "serve/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "facts/health.h"
#include "facts/identity.h"
#include "facts/query.h"

namespace gd {

namespace {

// clang-format off
const std::vector<MetricFamily> kFamilies = {
  // The exporter itself.
  {"gpudoctor_build_info", "gauge", "gpudoctor's version, as a label; always 1."},
  {"gpudoctor_start_time_seconds", "gauge", "When gpudoctor serve started, in seconds since the Unix epoch."},
  // The last full check.
  {"gpudoctor_node_info", "gauge", "What nodes that should be identical must agree on (driver, CUDA, GPU model and count, VBIOS, fabric manager, CUDA_VISIBLE_DEVICES), from the last check; always 1."},
  {"gpudoctor_verdict", "gauge", "The last check's verdict: 1 on the series of that severity, 0 on the others."},
  {"gpudoctor_finding", "gauge", "A finding of severity info, warn or fail in the last check, one series per finding id and GPU (empty GPU labels: the node) with its worst severity; always 1."},
  {"gpudoctor_check_runs_total", "counter", "Full checks run since gpudoctor serve started."},
  {"gpudoctor_check_timestamp_seconds", "gauge", "When the last full check finished, in seconds since the Unix epoch."},
  {"gpudoctor_check_duration_seconds", "gauge", "How long the last full check took."},
  {"gpudoctor_probe_success", "gauge", "1 when the probe read its source in the last check, 0 when it was unavailable, failed or timed out."},
  {"gpudoctor_probe_duration_seconds", "gauge", "How long the probe took in the last check."},
  {"gpudoctor_pci_gpus", "gauge", "NVIDIA GPUs on the PCI bus at the last check."},
  {"gpudoctor_gpus", "gauge", "GPUs each layer (pci, nvml, cuda) counted at the last check."},
  // The NVML sampler.
  {"gpudoctor_sample_stale", "gauge", "1 when the per-GPU values are stale: the latest NVML sample failed or the last good one is older than two intervals."},
  {"gpudoctor_sample_age_seconds", "gauge", "Age of the last good NVML sample at scrape time."},
  {"gpudoctor_sample_duration_seconds", "gauge", "How long the last good NVML sample took."},
  {"gpudoctor_sample_attempts_total", "counter", "NVML samples attempted."},
  {"gpudoctor_sample_failures_total", "counter", "NVML samples that failed (the probe child died, hung or answered badly)."},
  {"gpudoctor_sampler_restarts_total", "counter", "NVML sampler children started after the first."},
  // The kernel log and history.
  {"gpudoctor_xid_events_total", "counter", "Xid events in the kernel log this boot, by GPU (PCI bus id) and Xid code."},
  {"gpudoctor_kernel_log_readable", "gauge", "1 when gpudoctor can read the kernel log (Xid counters are meaningful), else 0."},
  {"gpudoctor_history_ok", "gauge", "1 when the last history write succeeded or history is off, 0 when it failed."},
  // The newest `gpudoctor diag` run in the history.
  {"gpudoctor_diag_last_run_timestamp_seconds", "gauge", "When the newest gpudoctor diag run in the history ran, in seconds since the Unix epoch."},
  {"gpudoctor_diag_level", "gauge", "The level (1, 2 or 3) of the newest gpudoctor diag run."},
  {"gpudoctor_diag_verdict", "gauge", "The newest gpudoctor diag run's verdict: 1 on the series of that severity, 0 on the others."},
  {"gpudoctor_diag_gemm_flops", "gauge", "Sustained GEMM throughput the newest diag run measured on the GPU, in FLOP/s, by input type."},
  {"gpudoctor_diag_memory_bandwidth_bytes_per_second", "gauge", "Device memory bandwidth the newest diag run measured on the GPU (device-to-device copy, read and write counted)."},
  {"gpudoctor_diag_pcie_bandwidth_bytes_per_second", "gauge", "Host-device copy bandwidth the newest diag run measured on the GPU, by direction."},
  {"gpudoctor_diag_memory_errors", "gauge", "Failing 64-bit words the newest diag run's memory test found on the GPU."},
  {"gpudoctor_diag_compute_mismatches", "gauge", "GEMM result elements that differed from the reference in the newest diag run, on the GPU."},
  {"gpudoctor_diag_p2p_bandwidth_bytes_per_second", "gauge", "Peer-to-peer copy bandwidth the newest diag run measured from GPU src to GPU dst (PCI bus ids)."},
  {"gpudoctor_diag_nccl_bus_bandwidth_bytes_per_second", "gauge", "NCCL all-reduce bus bandwidth over all tested GPUs in the newest diag run, by message size in bytes."},
  {"gpudoctor_diag_scaling_efficiency", "gauge", "Speedup of the newest diag run's data-parallel step on all tested GPUs over one GPU, divided by the GPU count (0-1)."},
  // Per GPU, from the last good NVML sample.
  {"gpudoctor_gpu_up", "gauge", "1 when NVML answers for this GPU, 0 when it cannot (GPU_IS_LOST: fallen off the bus; or no handle)."},
  // Per GPU, from the recovery gate (serve/recovery.h).
  {"gpudoctor_gpu_healthy", "gauge", "1 while the exporter calls the GPU healthy; 0 from the moment it is lost or a check fails on it until its cause has cleared and a re-probe (NVML, a CUDA context, a level-1 diag) passed."},
  {"gpudoctor_gpu_recovered_total", "counter", "Times the GPU was proven healthy again by a re-probe after being unhealthy."},
  {"gpudoctor_gpu_recovery_seconds", "gauge", "How long the GPU's last recovery took: from turning unhealthy to the re-probe that passed."},
  {"gpudoctor_gpu_reprobes_total", "counter", "Re-probes of the GPU after its cause cleared, by result (pass, fail)."},
  {"gpudoctor_gpu_flapping", "gauge", "1 while the GPU is held unhealthy as flapping: it came back --flap-returns times within --flap-window, and must stay without a loss for a whole hold before a re-probe may admit it."},
  {"gpudoctor_gpu_flaps_total", "counter", "Times the GPU was found flapping."},
  {"gpudoctor_gpu_info", "gauge", "The GPU's model and VBIOS version, as labels; always 1."},
  {"gpudoctor_gpu_temperature_celsius", "gauge", "GPU die temperature."},
  {"gpudoctor_gpu_memory_temperature_celsius", "gauge", "GPU memory (HBM) temperature."},
  {"gpudoctor_gpu_slowdown_temperature_celsius", "gauge", "Temperature at which the GPU slows its clocks down (hardware slowdown threshold)."},
  {"gpudoctor_gpu_shutdown_temperature_celsius", "gauge", "Temperature at which the GPU shuts down."},
  {"gpudoctor_gpu_memory_max_temperature_celsius", "gauge", "Highest memory temperature the GPU allows before slowing down."},
  {"gpudoctor_gpu_power_usage_watts", "gauge", "Power drawn by the board."},
  {"gpudoctor_gpu_power_limit_watts", "gauge", "Power limit the driver enforces."},
  {"gpudoctor_gpu_sm_clock_hertz", "gauge", "Current SM clock."},
  {"gpudoctor_gpu_sm_clock_max_hertz", "gauge", "Highest SM clock of the GPU."},
  {"gpudoctor_gpu_memory_clock_hertz", "gauge", "Current memory clock."},
  {"gpudoctor_gpu_memory_clock_max_hertz", "gauge", "Highest memory clock of the GPU."},
  {"gpudoctor_gpu_memory_used_bytes", "gauge", "GPU memory in use."},
  {"gpudoctor_gpu_memory_total_bytes", "gauge", "GPU memory in total."},
  {"gpudoctor_gpu_utilization_ratio", "gauge", "Share of the last sample period in which a kernel ran on the GPU (0-1)."},
  {"gpudoctor_gpu_memory_utilization_ratio", "gauge", "Share of the last sample period in which GPU memory was read or written (0-1)."},
  {"gpudoctor_gpu_fan_speed_ratio", "gauge", "Fan speed as a share of its maximum (0-1); absent on passively cooled GPUs."},
  {"gpudoctor_gpu_clocks_event_reason", "gauge", "1 when this reason is holding the GPU's clocks down (throttling), else 0."},
  {"gpudoctor_gpu_ecc_enabled", "gauge", "1 when ECC is enabled (current mode), else 0."},
  {"gpudoctor_gpu_ecc_errors_total", "counter", "ECC errors since the driver loaded (volatile counters), by type."},
  {"gpudoctor_gpu_ecc_lifetime_errors_total", "counter", "ECC errors over the GPU's lifetime (aggregate counters in the InfoROM), by type."},
  {"gpudoctor_gpu_remapped_rows", "gauge", "Memory rows remapped to spare rows, by the kind of error that caused it."},
  {"gpudoctor_gpu_row_remap_pending", "gauge", "1 when a row remap waits for a GPU reset, else 0."},
  {"gpudoctor_gpu_row_remap_failure", "gauge", "1 when a row remap failed (no spare rows left), else 0."},
  {"gpudoctor_gpu_retired_pages", "gauge", "Memory pages retired, by cause."},
  {"gpudoctor_gpu_retired_pages_pending", "gauge", "1 when a page retirement waits for a reboot or GPU reset, else 0."},
  {"gpudoctor_gpu_pcie_link_generation", "gauge", "Current PCIe link generation (GPUs lower it when idle)."},
  {"gpudoctor_gpu_pcie_link_generation_max", "gauge", "Highest PCIe link generation the GPU and its slot support."},
  {"gpudoctor_gpu_pcie_link_width", "gauge", "Current PCIe link width in lanes."},
  {"gpudoctor_gpu_pcie_link_width_max", "gauge", "Widest PCIe link the GPU and its slot support, in lanes."},
  {"gpudoctor_gpu_pcie_replays_total", "counter", "PCIe replays (link-level retransmissions) since the driver loaded."},
};

// nvidia-facts.md §4.5, in bit order; the label is NVML's name in snake case.
const std::vector<ClockEventReason> kReasons = {
  {0x001, "gpu_idle"},
  {0x002, "applications_clocks_setting"},
  {0x004, "sw_power_cap"},
  {0x008, "hw_slowdown"},
  {0x010, "sync_boost"},
  {0x020, "sw_thermal_slowdown"},
  {0x040, "hw_thermal_slowdown"},
  {0x080, "hw_power_brake_slowdown"},
  {0x100, "display_clock_setting"},
};
// clang-format on

// The verdict's state set: every check severity but n/a, which never is one.
const Severity kVerdicts[] = {Severity::kOk, Severity::kInfo, Severity::kWarn, Severity::kFail};

// Integral values print as integers (goldens and humans read 1980000000, not
// 1.98e+09); the rest in the shortest form that reads back exactly.
std::string format_value(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.0e15) {
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{}", v);
}

using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

std::string label_text(Labels labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (!out.empty()) out += ',';
    out += k;
    out += "=\"";
    out += escape_label_value(v);
    out += '"';
  }
  return out;
}

// Samples collected per family, printed in kFamilies' order: a family's
// samples must stay together, and each GPU adds to many families.
class Exposition {
 public:
  Exposition() : samples_(kFamilies.size()) {}

  // labels: already escaped "k=\"v\",..." text ("" for none); extra: more
  // of them appended (the per-GPU base labels plus one of the family's own).
  void add(std::string_view family, const std::string& labels, double value,
           std::string_view extra = {}) {
    std::string& out = samples_[index(family)];
    out += family;
    if (!labels.empty() || !extra.empty()) {
      out += '{';
      out += labels;
      if (!labels.empty() && !extra.empty()) out += ',';
      out += extra;
      out += '}';
    }
    out += ' ';
    out += format_value(value);
    out += '\n';
  }

  // value * mul / div: dividing (mW / 1000) rather than multiplying by
  // 1e-3 keeps 69995 mW at 69.995 W, not 69.99499999999999.
  template <class T>
  void add(std::string_view family, const std::string& labels, const NvmlValue<T>& v,
           double mul = 1, double div = 1) {
    if (v.ok()) add(family, labels, static_cast<double>(v.value) * mul / div);
  }

  std::string text() const {
    std::string out;
    out.reserve(16384);
    for (size_t i = 0; i < kFamilies.size(); ++i) {
      if (samples_[i].empty()) continue;  // no HELP for a family with nothing to say
      fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", kFamilies[i].name,
                     kFamilies[i].help, kFamilies[i].name, kFamilies[i].type);
      out += samples_[i];
    }
    return out;
  }

 private:
  static size_t index(std::string_view family) {
    static const auto* by_name = [] {
      auto* m = new std::unordered_map<std::string_view, size_t>();
      for (size_t i = 0; i < kFamilies.size(); ++i) (*m)[kFamilies[i].name] = i;
      return m;
    }();
    // A name missing from kFamilies is a programming error the unit tests
    // catch: every name is used in them.
    return by_name->at(family);
  }

  std::vector<std::string> samples_;
};

double seconds(int64_t unix_ms) { return static_cast<double>(unix_ms) / 1000.0; }

void add_check(const CheckState& c, const std::string& version, Exposition* e) {
  if (c.snapshot) {
    NodeIdentity id = node_identity(*c.snapshot);
    std::string labels;
    for (const auto& [k, v] : identity_fields(id)) {
      labels += k + "=\"" + escape_label_value(v) + "\",";
    }
    labels += label_text({{"version", version}});
    e->add("gpudoctor_node_info", labels, 1);
    e->add("gpudoctor_pci_gpus", "", id.gpu_count);
    // The GPUs each layer counted at the last check: a drop names the
    // layer that lost them (rule GpuCountDropped). A layer that did not
    // answer has no sample rather than a 0 that would read as a loss.
    const Snapshot& s = *c.snapshot;
    e->add("gpudoctor_gpus", label_text({{"layer", "pci"}}), id.gpu_count);
    if (s.nvml.device_count.ok()) {
      e->add("gpudoctor_gpus", label_text({{"layer", "nvml"}}), s.nvml.device_count.value);
    }
    if (const CudaRun* r = user_cuda_run(s); r != nullptr && r->init_rc >= 0) {
      // A CUDA that failed to start counts no GPU: that is a loss too.
      e->add("gpudoctor_gpus", label_text({{"layer", "cuda"}}),
             r->init_rc == 0 && r->device_count_rc == 0 ? r->device_count : 0);
    }
  }
  Severity verdict =
      c.report.verdict == Severity::kNotApplicable ? Severity::kOk : c.report.verdict;
  for (Severity s : kVerdicts) {
    e->add("gpudoctor_verdict", label_text({{"severity", severity_name(s)}}), s == verdict ? 1 : 0);
  }
  e->add("gpudoctor_check_runs_total", "", static_cast<double>(c.runs));
  e->add("gpudoctor_check_timestamp_seconds", "", seconds(c.finished_unix_ms));
  e->add("gpudoctor_check_duration_seconds", "", c.duration_ms / 1000.0);
  if (c.snapshot) {
    std::set<std::string> seen;  // a repeated name would be a duplicate series
    for (const auto& p : c.snapshot->probes) {
      if (!seen.insert(p.name).second) continue;
      std::string labels = label_text({{"probe", p.name}});
      e->add("gpudoctor_probe_success", labels, p.status == ProbeStatus::kOk ? 1 : 0);
      e->add("gpudoctor_probe_duration_seconds", labels, p.duration_ms / 1000.0);
    }
  }
}

// The per-GPU labels of a GPU a finding or the diag run names by bus id
// ("" for none: empty labels): NVML's index and UUID from the live sample,
// else from the last check (empty when neither knows the GPU), as the other
// per-GPU series carry them.
class GpuLabels {
 public:
  explicit GpuLabels(const ExporterView& v) {
    auto take = [&](const NvmlInfo& nvml) {
      for (const auto& g : nvml.gpus) {
        if (!g.pci_bus_id.ok()) continue;
        known_.emplace(g.pci_bus_id.value,
                       std::pair{std::to_string(g.index), g.uuid.ok() ? g.uuid.value : ""});
      }
    };
    if (v.sample.have_sample) take(v.sample.nvml);
    if (v.check && v.check->snapshot) take(v.check->snapshot->nvml);
  }
  std::string operator()(const std::string& bus_id) const {
    auto it = known_.find(bus_id);
    std::string index = it == known_.end() ? "" : it->second.first;
    std::string uuid = it == known_.end() ? "" : it->second.second;
    return label_text({{"gpu", index}, {"bus_id", bus_id}, {"uuid", uuid}});
  }

 private:
  std::map<std::string, std::pair<std::string, std::string>> known_;  // bus id -> index, uuid
};

// gpudoctor_finding: the last check's findings that say something and,
// while it is current, the newest diag run's. One series per id and GPU (a
// finding about no GPU in particular has empty GPU labels), so that an alert
// can say which GPU; several findings may share one (the check's and the
// diag run's): the worse severity wins.
void add_findings(const ExporterView& v, Exposition* e) {
  std::map<std::pair<std::string, std::string>, Severity> active;  // (id, bus id)
  auto take = [&](const std::vector<Finding>& findings) {
    for (const auto& f : findings) {
      if (!says_something(f.severity)) continue;
      std::vector<std::string> gpus = f.gpus.empty() ? std::vector<std::string>{""} : f.gpus;
      for (const auto& bus : gpus) {
        auto [it, fresh] = active.emplace(std::pair{f.id, bus}, f.severity);
        if (!fresh) it->second = worse(it->second, f.severity);
      }
    }
  };
  if (v.check) take(v.check->report.findings);
  if (v.diag && diag_is_current(*v.diag, v.now_unix_ms, v.diag_max_age_s)) take(v.diag->findings);
  GpuLabels gpu_labels(v);
  for (const auto& [key, sev] : active) {
    e->add("gpudoctor_finding", label_text({{"id", key.first}, {"severity", severity_name(sev)}}),
           1, gpu_labels(key.second));
  }
}

// A test that measured something: passed, or ran and found the hardware
// wrong. error and skip measured nothing.
bool measured(DiagStatus s) { return s == DiagStatus::kPass || s == DiagStatus::kFail; }

void add_diag(const ExporterView& v, Exposition* e) {
  const DiagState& d = *v.diag;
  e->add("gpudoctor_diag_last_run_timestamp_seconds", "", seconds(d.time_unix_ms));
  e->add("gpudoctor_diag_level", "", d.level);
  Severity verdict = d.verdict == Severity::kNotApplicable ? Severity::kOk : d.verdict;
  for (Severity s : kVerdicts) {
    e->add("gpudoctor_diag_verdict", label_text({{"severity", severity_name(s)}}),
           s == verdict ? 1 : 0);
  }
  if (!d.run) return;
  const DiagRun& run = *d.run;
  GpuLabels gpu(v);
  // Sorted by bus id (and label), so scrapes compare byte for byte whatever
  // order the helper answered in.
  std::map<std::pair<std::string, std::string>, double> flops, pcie;
  std::map<std::string, double> memory_bw;
  std::map<std::string, int64_t> mem_errors, mismatches;
  for (const DiagGemmResult& g : run.gemms) {
    if (!measured(g.status)) continue;
    if (g.flops_per_s > 0) flops[{g.bus_id, g.dtype}] = g.flops_per_s;
    mismatches[g.bus_id] += g.mismatches;
  }
  for (const DiagCopyResult& c : run.copies) {
    if (!measured(c.status) || c.bytes_per_s <= 0) continue;
    if (c.direction == "d2d") {
      memory_bw[c.bus_id] = c.bytes_per_s;
    } else {
      pcie[{c.bus_id, c.direction}] = c.bytes_per_s;
    }
  }
  for (const DiagMemtestResult& m : run.memtests) {
    if (measured(m.status)) mem_errors[m.bus_id] += m.errors;
  }
  for (const auto& [key, value] : flops) {
    e->add("gpudoctor_diag_gemm_flops", gpu(key.first), value, label_text({{"dtype", key.second}}));
  }
  for (const auto& [bus, value] : memory_bw) {
    e->add("gpudoctor_diag_memory_bandwidth_bytes_per_second", gpu(bus), value);
  }
  for (const auto& [key, value] : pcie) {
    e->add("gpudoctor_diag_pcie_bandwidth_bytes_per_second", gpu(key.first), value,
           label_text({{"direction", key.second}}));
  }
  for (const auto& [bus, n] : mem_errors) {
    e->add("gpudoctor_diag_memory_errors", gpu(bus), static_cast<double>(n));
  }
  for (const auto& [bus, n] : mismatches) {
    e->add("gpudoctor_diag_compute_mismatches", gpu(bus), static_cast<double>(n));
  }
  std::map<std::pair<std::string, std::string>, double> p2p;
  for (const DiagP2pResult& p : run.p2p) {
    if (measured(p.status) && p.bytes_per_s > 0) p2p[{p.src, p.dst}] = p.bytes_per_s;
  }
  for (const auto& [key, value] : p2p) {
    e->add("gpudoctor_diag_p2p_bandwidth_bytes_per_second",
           label_text({{"src", key.first}, {"dst", key.second}}), value);
  }
  if (run.nccl && measured(run.nccl->status)) {
    std::map<uint64_t, double> points;  // by size: the numeric order, not the text's
    for (const DiagNcclPoint& p : run.nccl->points) {
      if (p.busbw_bytes_per_s > 0) points[p.bytes] = p.busbw_bytes_per_s;
    }
    for (const auto& [bytes, value] : points) {
      e->add("gpudoctor_diag_nccl_bus_bandwidth_bytes_per_second",
             label_text({{"bytes", std::to_string(bytes)}}), value);
    }
  }
  if (run.scaling && measured(run.scaling->status) && run.scaling->efficiency > 0) {
    e->add("gpudoctor_diag_scaling_efficiency", "", run.scaling->efficiency);
  }
}

void add_gpu(const NvmlGpu& g, Exposition* e) {
  const std::string index = std::to_string(g.index);
  const std::string base =
      label_text({{"gpu", index},
                  {"bus_id", g.pci_bus_id.ok() ? g.pci_bus_id.value : std::string()},
                  {"uuid", g.uuid.ok() ? g.uuid.value : std::string()}});
  const bool down = nvml_gpu_down(g);
  e->add("gpudoctor_gpu_up", base, down ? 0 : 1);
  if (g.handle_rc != 0) return;  // nothing else was asked
  if (g.name.ok() || g.vbios_version.ok()) {
    e->add("gpudoctor_gpu_info", base, 1,
           label_text({{"name", g.name.ok() ? g.name.value : std::string()},
                       {"vbios", g.vbios_version.ok() ? g.vbios_version.value : std::string()}}));
  }
  const NvmlHealth& h = g.health;
  constexpr double kMhz = 1e6;  // MHz -> Hz (multiply)
  constexpr double kMw = 1000;  // mW -> W (divide)
  constexpr double kPct = 100;  // percent -> ratio (divide)
  e->add("gpudoctor_gpu_temperature_celsius", base, h.temperature_c);
  e->add("gpudoctor_gpu_memory_temperature_celsius", base, h.memory_temperature_c);
  e->add("gpudoctor_gpu_slowdown_temperature_celsius", base, h.temp_slowdown_c);
  e->add("gpudoctor_gpu_shutdown_temperature_celsius", base, h.temp_shutdown_c);
  e->add("gpudoctor_gpu_memory_max_temperature_celsius", base, h.temp_mem_max_c);
  e->add("gpudoctor_gpu_power_usage_watts", base, h.power_usage_mw, 1, kMw);
  e->add("gpudoctor_gpu_power_limit_watts", base, h.power_limit_mw, 1, kMw);
  e->add("gpudoctor_gpu_sm_clock_hertz", base, h.sm_clock_mhz, kMhz);
  e->add("gpudoctor_gpu_sm_clock_max_hertz", base, g.max_sm_clock_mhz, kMhz);
  e->add("gpudoctor_gpu_memory_clock_hertz", base, h.mem_clock_mhz, kMhz);
  e->add("gpudoctor_gpu_memory_clock_max_hertz", base, h.max_mem_clock_mhz, kMhz);
  e->add("gpudoctor_gpu_memory_used_bytes", base, g.memory_used_bytes);
  e->add("gpudoctor_gpu_memory_total_bytes", base, g.memory_total_bytes);
  e->add("gpudoctor_gpu_utilization_ratio", base, h.utilization_gpu_pct, 1, kPct);
  e->add("gpudoctor_gpu_memory_utilization_ratio", base, h.utilization_memory_pct, 1, kPct);
  e->add("gpudoctor_gpu_fan_speed_ratio", base, h.fan_speed_pct, 1, kPct);
  if (h.clock_event_reasons.ok()) {
    for (const auto& r : kReasons) {
      e->add("gpudoctor_gpu_clocks_event_reason", base,
             (h.clock_event_reasons.value & r.bit) != 0 ? 1 : 0, label_text({{"reason", r.label}}));
    }
  }
  e->add("gpudoctor_gpu_ecc_enabled", base, h.ecc_mode_current);
  auto typed = [&](const char* family, const char* key, const char* value, const auto& v) {
    if (v.ok()) e->add(family, base, static_cast<double>(v.value), label_text({{key, value}}));
  };
  typed("gpudoctor_gpu_ecc_errors_total", "type", "corrected", h.ecc_corrected_volatile);
  typed("gpudoctor_gpu_ecc_errors_total", "type", "uncorrected", h.ecc_uncorrected_volatile);
  typed("gpudoctor_gpu_ecc_lifetime_errors_total", "type", "corrected", h.ecc_corrected_aggregate);
  typed("gpudoctor_gpu_ecc_lifetime_errors_total", "type", "uncorrected",
        h.ecc_uncorrected_aggregate);
  typed("gpudoctor_gpu_remapped_rows", "type", "correctable", h.remapped_rows_correctable);
  typed("gpudoctor_gpu_remapped_rows", "type", "uncorrectable", h.remapped_rows_uncorrectable);
  e->add("gpudoctor_gpu_row_remap_pending", base, h.remap_pending);
  e->add("gpudoctor_gpu_row_remap_failure", base, h.remap_failure);
  typed("gpudoctor_gpu_retired_pages", "cause", "single_bit", h.retired_pages_sbe);
  typed("gpudoctor_gpu_retired_pages", "cause", "double_bit", h.retired_pages_dbe);
  e->add("gpudoctor_gpu_retired_pages_pending", base, h.retired_pages_pending);
  e->add("gpudoctor_gpu_pcie_link_generation", base, h.pcie_link_gen);
  e->add("gpudoctor_gpu_pcie_link_generation_max", base, h.pcie_link_gen_max);
  e->add("gpudoctor_gpu_pcie_link_width", base, h.pcie_link_width);
  e->add("gpudoctor_gpu_pcie_link_width_max", base, h.pcie_link_width_max);
  e->add("gpudoctor_gpu_pcie_replays_total", base, h.pcie_replay_count);
}

void add_sample(const ExporterView& v, Exposition* e) {
  const SampleState& s = v.sample;
  e->add("gpudoctor_sample_stale", "", s.stale || !s.have_sample ? 1 : 0);
  if (s.have_sample) {
    double age = seconds(v.now_unix_ms - s.taken_unix_ms);
    e->add("gpudoctor_sample_age_seconds", "", age < 0 ? 0 : age);
    e->add("gpudoctor_sample_duration_seconds", "", s.duration_ms / 1000.0);
  }
  e->add("gpudoctor_sample_attempts_total", "", static_cast<double>(s.attempts));
  e->add("gpudoctor_sample_failures_total", "", static_cast<double>(s.failures));
  e->add("gpudoctor_sampler_restarts_total", "", static_cast<double>(s.restarts));
  if (!s.have_sample) return;
  for (const auto& g : s.nvml.gpus) add_gpu(g, e);
}

}  // namespace

const std::vector<MetricFamily>& metric_families() { return kFamilies; }

const std::vector<ClockEventReason>& clock_event_reasons() { return kReasons; }

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The recovery gate's series: one set per GPU it has seen, a lost one
// included (labelled as it was last seen).
void add_gpu_health(const std::vector<GpuHealth>& gpus, Exposition* e) {
  for (const GpuHealth& g : gpus) {
    const std::string base =
        label_text({{"gpu", g.index < 0 ? std::string() : std::to_string(g.index)},
                    {"bus_id", g.bus_id},
                    {"uuid", g.uuid}});
    e->add("gpudoctor_gpu_healthy", base, g.healthy ? 1 : 0);
    e->add("gpudoctor_gpu_recovered_total", base, static_cast<double>(g.recovered));
    if (g.last_recovery_s >= 0) e->add("gpudoctor_gpu_recovery_seconds", base, g.last_recovery_s);
    e->add("gpudoctor_gpu_reprobes_total", base, static_cast<double>(g.reprobe_passes),
           label_text({{"result", "pass"}}));
    e->add("gpudoctor_gpu_reprobes_total", base, static_cast<double>(g.reprobe_failures),
           label_text({{"result", "fail"}}));
    e->add("gpudoctor_gpu_flapping", base, g.flapping ? 1 : 0);
    e->add("gpudoctor_gpu_flaps_total", base, static_cast<double>(g.flaps));
  }
}

std::string render_metrics(const ExporterView& v) {
  Exposition e;
  e.add("gpudoctor_build_info", label_text({{"version", v.version}}), 1);
  e.add("gpudoctor_start_time_seconds", "", seconds(v.started_unix_ms));
  if (v.check) add_check(*v.check, v.version, &e);
  add_findings(v, &e);
  add_sample(v, &e);
  add_gpu_health(v.gpu_health, &e);
  if (v.diag) add_diag(v, &e);
  for (const auto& [key, count] : v.xid_counts) {
    e.add("gpudoctor_xid_events_total",
          label_text({{"bus_id", key.first}, {"xid", std::to_string(key.second)}}),
          static_cast<double>(count));
  }
  e.add("gpudoctor_kernel_log_readable", "", v.kernel_log_source.empty() ? 0 : 1);
  e.add("gpudoctor_history_ok", "", v.history_ok ? 1 : 0);
  return e.text();
}

}  // namespace gd
