// The diag findings that are not judged from figures: memory.test-failed
// (failing addresses), compute.mismatch (every verification the helper
// made: the level-1 kernel and copies, the GEMM products, peer copies,
// NCCL's sums), clocks.throttled under load (the parent's NVML samples) and
// diag.incomplete (the helper did not run to the end, or a test could not
// run).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "checks/util.h"
#include "diag/format.h"
#include "diag/outliers.h"
#include "facts/health.h"
#include "util/bytes.h"
#include "util/text.h"

namespace gd {

namespace {

std::string plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

bool ran(DiagStatus st) { return st == DiagStatus::kPass || st == DiagStatus::kFail; }

// A thermal or hardware slowdown: a finding under load. The SW power cap
// (0x4) is what a full GEMM load normally runs into, and idle, application
// clocks, sync boost and display clocks are settings, not events.
constexpr uint64_t kSlowdownBits =
    kReasonHwSlowdown | kReasonSwThermal | kReasonHwThermal | kReasonHwPowerBrake;

}  // namespace

Finding memtest_finding(const DiagRun& run, const Snapshot& s) {
  constexpr const char* kId = "memory.test-failed";
  std::vector<const DiagMemtestResult*> done;
  for (const auto& m : run.memtests) {
    if (ran(m.status)) done.push_back(&m);
  }
  if (done.empty()) {
    return diag_finding(kId, Severity::kNotApplicable,
                        run.level < 2 ? fmt::format("Level {} runs no memory test (gpudoctor diag "
                                                    "--level 2).",
                                                    run.level)
                                      : "No memory test result (see diag.incomplete).");
  }
  Finding f = diag_finding(kId, Severity::kOk, "");
  std::vector<std::string> ok_lines;
  int64_t total_errors = 0;
  for (const DiagMemtestResult* m : done) {
    NodeGpu g = node_gpu(run, s, m->bus_id);
    std::string tested =
        fmt::format("{} tested over {} (patterns {}; seed {})",
                    format_bytes_whole_if_round(static_cast<double>(m->bytes)),
                    plural(m->passes, "pass", "passes"), join(m->patterns, ", "), m->seed);
    if (m->errors <= 0 && m->status == DiagStatus::kPass) {
      ok_lines.push_back(fmt::format("{}: no failing word in {}", g.label(), tested));
      continue;
    }
    add_finding_gpu(&f, m->bus_id);
    total_errors += m->errors;
    f.evidence.push_back(
        fmt::format("{}: {} in {}", g.label(),
                    plural(m->errors, "failing 64-bit word", "failing 64-bit words"), tested));
    if (!m->message.empty()) f.evidence.push_back("  helper: " + m->message);
    for (const DiagMemFailure& x : m->failures) {
      f.evidence.push_back(fmt::format(
          "  offset 0x{:x} (address 0x{:x}), pattern {}: expected 0x{:016x}, read 0x{:016x} "
          "(bits 0x{:x} differ)",
          x.offset, x.address, x.pattern, x.expected, x.actual, x.expected ^ x.actual));
    }
    if (m->errors > static_cast<int64_t>(m->failures.size())) {
      f.evidence.push_back(
          fmt::format("  (the first {} of {} shown)", m->failures.size(), m->errors));
    }
  }
  if (f.gpus.empty()) {
    f.summary = fmt::format("The memory test found no failing address on {}.",
                            plural(static_cast<int64_t>(done.size()), "GPU", "GPUs"));
    f.evidence = ok_lines;
    return f;
  }
  f.severity = Severity::kFail;
  f.summary = fmt::format(
      "GPU memory returned wrong data: {} on {} ({}). Programs on it can "
      "compute wrong results or crash.",
      plural(total_errors, "failing word", "failing words"),
      plural(static_cast<int64_t>(f.gpus.size()), "GPU", "GPUs"), join(f.gpus, ", "));
  f.remedy = {
      per_gpu_command(f.gpus, "nvidia-smi -q -d ROW_REMAPPER,ECC -i {}") +
          ": pending row remaps, failed remaps or uncorrectable ECC errors confirm failing "
          "memory (gpudoctor check --only ecc,rows-pending)",
      "Drain the node (no jobs on these GPUs), then reset each GPU, which activates pending "
      "row remaps: " +
          per_gpu_command(f.gpus, "sudo nvidia-smi -r -i {}"),
      "Rerun the memory test: gpudoctor diag --level 2 --gpus " + join(f.gpus, ","),
      "If it fails again (above all at the same addresses), or a remap failed: take the GPU "
      "out of service and open an RMA with this report.",
  };
  return f;
}

Finding mismatch_finding(const DiagRun& run, const Snapshot& s) {
  constexpr const char* kId = "compute.mismatch";
  Finding f = diag_finding(kId, Severity::kOk, "");
  int verified = 0;
  auto bad = [&](const std::string& bus, std::string line) {
    add_finding_gpu(&f, bus);
    f.evidence.push_back(std::move(line));
  };
  auto label = [&](const std::string& bus) { return node_gpu(run, s, bus).label(); };
  for (const auto& t : run.tests) {
    if (t.test != "kernel" || !ran(t.status)) continue;
    ++verified;
    if (t.status == DiagStatus::kFail) {
      bad(t.bus_id, fmt::format("{}: the verification kernel's result was wrong: {}",
                                label(t.bus_id), t.message.empty() ? "no detail" : t.message));
    }
  }
  for (const auto& c : run.copies) {
    if (!ran(c.status)) continue;
    ++verified;
    if (c.status == DiagStatus::kFail || c.mismatches > 0) {
      bad(c.bus_id, fmt::format("{}: {} copy of {}: {} differ{}", label(c.bus_id), c.direction,
                                format_bytes_whole_if_round(static_cast<double>(c.bytes)),
                                plural(c.mismatches, "element", "elements"),
                                c.message.empty() ? "" : " (" + c.message + ")"));
    }
  }
  for (const auto& g : run.gemms) {
    if (!ran(g.status)) continue;
    ++verified;
    if (g.status == DiagStatus::kFail || g.mismatches > 0) {
      bad(g.bus_id,
          fmt::format("{}: {} GEMM {}x{}x{}: {} differed over {} compared products; the first "
                      "product against the reference: max relative error {:.3g}{}",
                      label(g.bus_id), g.dtype, g.m, g.n, g.k,
                      plural(g.mismatches, "element", "elements"), g.checked, g.max_rel_error,
                      g.message.empty() ? "" : " (" + g.message + ")"));
    }
  }
  for (const auto& p : run.p2p) {
    if (!ran(p.status)) continue;
    ++verified;
    if (p.status == DiagStatus::kFail || p.mismatches > 0) {
      add_finding_gpu(&f, p.src);
      bad(p.dst, fmt::format("peer copy {} -> {}: {} differ{}", p.src, p.dst,
                             plural(p.mismatches, "element", "elements"),
                             p.message.empty() ? "" : " (" + p.message + ")"));
    }
  }
  if (run.nccl && ran(run.nccl->status)) {
    ++verified;
    const DiagNcclResult& n = *run.nccl;
    if (n.status == DiagStatus::kFail || n.mismatches > 0) {
      for (const auto& b : n.bus_ids) add_finding_gpu(&f, b);
      f.evidence.push_back(
          fmt::format("NCCL all-reduce over {} GPUs: {} not equal to the expected sum{}",
                      n.bus_ids.size(), plural(n.mismatches, "result element", "result elements"),
                      n.message.empty() ? "" : " (" + n.message + ")"));
    }
  }
  if (verified == 0) {
    return diag_finding(kId, Severity::kNotApplicable,
                        "No verified test ran (see diag.incomplete).");
  }
  if (f.evidence.empty()) {
    f.summary =
        fmt::format("Every verified result of {} was right.", plural(verified, "test", "tests"));
    return f;
  }
  f.severity = Severity::kFail;
  f.summary = fmt::format(
      "Wrong results without an error: {} of {} verified tests on {} ({}). "
      "Silent corruption: jobs on it can produce wrong numbers.",
      f.evidence.size(), verified, plural(static_cast<int64_t>(f.gpus.size()), "GPU", "GPUs"),
      join(f.gpus, ", "));
  f.remedy = {
      "Rerun to see whether it repeats: gpudoctor diag --level 2 --gpus " + join(f.gpus, ","),
      per_gpu_command(f.gpus, "nvidia-smi -q -d ECC,ROW_REMAPPER,PERFORMANCE,CLOCK -i {}") +
          ": memory errors, and clocks beyond the default (an overclock makes wrong results)",
      "Undo clock changes: " +
          per_gpu_command(f.gpus, "sudo nvidia-smi -i {0} -rgc; sudo nvidia-smi -i {0} -rmc"),
      "gpudoctor check --only xid,ecc: Xid 48/63/64/94/95 (memory) or 13/31/43 (faults) at "
      "the time of the test",
      "For peer-copy or NCCL errors: nvidia-smi nvlink -e (NVLink error counters) and "
      "gpudoctor check --only pcie-errors",
      "If it repeats: take the GPU out of service and open an RMA with this report.",
  };
  return f;
}

Finding clocks_finding(const DiagRun& run, const Snapshot& s) {
  constexpr const char* kId = "clocks.throttled";
  struct Seen {
    int samples = 0, slowed = 0;
    uint64_t bits = 0;       // every reason seen
    uint64_t slow_bits = 0;  // the slowdown reasons seen
    int max_temp_c = -1000;
    uint32_t min_sm_mhz = 0;      // under load
    uint32_t min_sm_any_mhz = 0;  // any sample
  };
  std::map<std::string, Seen> by_gpu;
  for (const auto& x : run.samples) {
    Seen& g = by_gpu[x.bus_id];
    ++g.samples;
    if (x.clock_event_reasons) {
      g.bits |= *x.clock_event_reasons;
      if ((*x.clock_event_reasons & kSlowdownBits) != 0) {
        ++g.slowed;
        g.slow_bits |= *x.clock_event_reasons & kSlowdownBits;
      }
    }
    if (x.temperature_c) g.max_temp_c = std::max(g.max_temp_c, *x.temperature_c);
    if (x.sm_clock_mhz) {
      bool loaded = !x.utilization_pct || *x.utilization_pct >= 50;
      auto lower = [&](uint32_t* v) {
        if (*v == 0 || *x.sm_clock_mhz < *v) *v = *x.sm_clock_mhz;
      };
      lower(&g.min_sm_any_mhz);
      if (loaded) lower(&g.min_sm_mhz);
    }
  }
  if (by_gpu.empty()) {
    return diag_finding(kId, Severity::kNotApplicable,
                        "No NVML samples were taken during the run, so throttling under load is "
                        "unknown.");
  }
  Finding f = diag_finding(kId, Severity::kOk, "");
  std::vector<std::string> ok_lines;
  int power_capped = 0;
  for (const auto& [bus, g] : by_gpu) {
    NodeGpu n = node_gpu(run, s, bus);
    uint32_t max_mhz = 0;
    for (const auto& d : run.devices) {
      if (d.bus_id == bus && d.clock_khz > 0) max_mhz = static_cast<uint32_t>(d.clock_khz / 1000);
    }
    std::string line = fmt::format("{}: {} samples", n.label(), g.samples);
    if (g.max_temp_c > -1000) line += fmt::format("; max temperature {} °C", g.max_temp_c);
    uint32_t min_sm = g.min_sm_mhz != 0 ? g.min_sm_mhz : g.min_sm_any_mhz;
    if (min_sm != 0) {
      line +=
          fmt::format("; SM clock min {} MHz{}{}", min_sm, g.min_sm_mhz != 0 ? " under load" : "",
                      max_mhz != 0 ? fmt::format(" (max {} MHz)", max_mhz) : "");
    }
    if ((g.bits & kReasonSwPowerCap) != 0) ++power_capped;
    if (g.slowed == 0) {
      ok_lines.push_back(line + "; reasons seen " + reasons_text(g.bits));
      continue;
    }
    add_finding_gpu(&f, bus);
    f.evidence.push_back(fmt::format("{}; {} in {} of {} samples", line, reasons_text(g.slow_bits),
                                     g.slowed, g.samples));
  }
  if (f.gpus.empty()) {
    f.summary = fmt::format("No thermal or hardware clock slowdown during the load on {}.",
                            plural(static_cast<int64_t>(by_gpu.size()), "GPU", "GPUs"));
    if (power_capped > 0) {
      f.summary += fmt::format(
          " {} at the SW power cap (0x4), which is normal under a full "
          "GEMM load.",
          plural(power_capped, "GPU ran", "GPUs ran"));
    }
    f.evidence = ok_lines;
    return f;
  }
  f.severity = Severity::kWarn;
  f.summary = fmt::format(
      "{} slowed by a thermal or hardware event under load ({}): the "
      "figures measured there are lower than the GPU can do.",
      plural(static_cast<int64_t>(f.gpus.size()), "GPU", "GPUs"), join(f.gpus, ", "));
  f.remedy = {
      per_gpu_command(f.gpus, "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i {}") +
          ": the clock-event reasons, temperatures against the slowdown threshold, power draw",
      "Thermal slowdown (0x20, 0x40): check the fans, airflow and inlet temperature; a GPU "
      "hotter than its neighbours under the same load has a cooling fault (fan, heatsink "
      "contact, blocked slot).",
      "HW slowdown (0x8) or power brake (0x80) without heat: the chassis asked the GPU to "
      "slow (a lost power supply or a power-brake signal): check the PSUs and the BMC log "
      "(ipmitool sel elist).",
      "Rerun: gpudoctor diag --level 2 --gpus " + join(f.gpus, ","),
  };
  return f;
}

Finding incomplete_finding(const DiagRun& run) {
  constexpr const char* kId = "diag.incomplete";
  Finding f = diag_finding(kId, Severity::kOk, "");
  if (!run.incomplete.empty()) {
    f.evidence.push_back("the helper's answer ended early: " + run.incomplete);
    if (!run.last_started.empty()) {
      f.evidence.push_back("test running when it ended: " + run.last_started);
    }
  }
  for (const auto& e : run.errors) {
    add_finding_gpu(&f, e.bus_id);
    std::string where = e.test.empty() ? "" : " in " + e.test;
    if (!e.bus_id.empty()) where += " on " + e.bus_id;
    f.evidence.push_back(fmt::format("helper error{}: {}", where, e.message));
  }
  auto errored = [&](DiagStatus st, const std::string& test, const std::string& bus,
                     const std::string& message) {
    if (st != DiagStatus::kError) return;
    add_finding_gpu(&f, bus);
    f.evidence.push_back(fmt::format("{}{} could not run: {}", test,
                                     bus.empty() ? "" : " on " + bus,
                                     message.empty() ? "no detail" : message));
  };
  for (const auto& t : run.tests) errored(t.status, t.test, t.bus_id, t.message);
  for (const auto& c : run.copies) errored(c.status, c.direction + " copy", c.bus_id, c.message);
  for (const auto& m : run.memtests) errored(m.status, "memtest", m.bus_id, m.message);
  for (const auto& g : run.gemms) errored(g.status, g.dtype + " GEMM", g.bus_id, g.message);
  for (const auto& p : run.p2p) {
    if (p.status == DiagStatus::kError) add_finding_gpu(&f, p.src);
    errored(p.status, "peer copy " + p.src + " -> " + p.dst, "", p.message);
  }
  if (run.nccl) errored(run.nccl->status, "NCCL all-reduce", "", run.nccl->message);
  if (run.scaling) errored(run.scaling->status, "scaling", "", run.scaling->message);
  if (f.evidence.empty()) {
    f.summary = fmt::format("The helper ran every level-{} test to the end.", run.level);
    return f;
  }
  if (!run.stderr_tail.empty()) {
    std::istringstream in(run.stderr_tail);
    std::vector<std::string> tail;
    for (std::string l; std::getline(in, l);) {
      if (!l.empty()) tail.push_back(l);
    }
    if (tail.size() > 10) tail.erase(tail.begin(), tail.end() - 10);
    for (const auto& l : tail) f.evidence.push_back("stderr: " + l);
  }
  f.severity = Severity::kFail;
  f.summary = run.incomplete.empty()
                  ? "Some diagnostics could not run, so the GPUs they concern are untested."
                  : "The diagnostics did not run to the end (" + run.incomplete +
                        "): what did not run is untested.";
  f.remedy = {
      "Run gpudoctor check: the passive checks name why a GPU cannot be opened or a test "
      "cannot run (driver, Xid, a GPU off the bus, memory held by other processes).",
      "A test that hangs or crashes the helper under load is itself a sign of a faulty GPU: "
      "gpudoctor check --only xid,fallen-off-bus,reset-required",
      fmt::format("After fixing: gpudoctor diag --level {}", run.level),
  };
  return f;
}

}  // namespace gd
