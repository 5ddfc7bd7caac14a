// The re-probe (reprobe.h): NVML, then CUDA, then the diag helper, each
// step only for the GPUs the step before passed.
#include "diag/reprobe.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "catalog/cuda_errors.h"
#include "diag/evaluate.h"
#include "diag/run_helper.h"
#include "facts/health.h"
#include "facts/query.h"
#include "util/text.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// Why NVML as a whole gave no answer; "" when it answered.
std::string nvml_problem(const NvmlInfo& n) {
  if (!n.child_error.empty()) return "the NVML child " + n.child_error;
  if (!n.dlopen_error.empty()) return n.dlopen_error;
  if (n.init_rc != 0) return n.init_symbol + " returned " + nvml_error(n.init_rc);
  return "";
}

// Why NVML's answer for this GPU is no proof; "" when it is.
std::string nvml_gpu_problem(const Snapshot& s, const std::string& bus) {
  const NvmlInfo& n = s.nvml;
  const NvmlGpu* g = find_nvml_gpu(s, bus);
  if (g == nullptr) {
    size_t unanswered = static_cast<size_t>(std::count_if(
        n.gpus.begin(), n.gpus.end(), [](const NvmlGpu& x) { return x.handle_rc != 0; }));
    return fmt::format("lists no GPU at {} ({} GPUs listed, {} without a handle)", bus,
                       n.gpus.size(), unanswered);
  }
  for (const auto& [function, rc] : gpu_call_codes(*g)) {
    if (rc == kNvmlGpuLost || rc == kNvmlResetRequired) {
      return fmt::format("{} returned {}", function, nvml_error(rc));
    }
  }
  if (nvml_gpu_down(*g)) return "the GPU does not answer";
  return "";
}

// Why CUDA as a whole gave no answer; "" when it answered.
std::string cuda_problem(const CudaRun& r) {
  if (!r.child_error.empty()) return "the CUDA child " + r.child_error;
  if (!r.dlopen_error.empty()) return r.dlopen_error;
  if (r.init_rc != 0) return "cuInit returned " + cuda_driver_error(r.init_rc);
  return "";
}

// The step's line prefix for a GPU we did not open a context on.
constexpr const char* kWaitingForIdle = "waiting for the GPU to be idle: ";

std::string cuda_gpu_problem(const CudaRun& r, const std::string& bus) {
  auto d = std::find_if(r.devices.begin(), r.devices.end(),
                        [&](const CudaDevice& x) { return x.pci_bus_id == bus; });
  if (d == r.devices.end()) return fmt::format("no CUDA device at {}", bus);
  if (d->get_rc != 0) return "cuDeviceGet returned " + cuda_driver_error(d->get_rc);
  // The child's own reading of the gate (no answer came): no proof either way.
  if (!d->ctx_skipped.empty()) return kWaitingForIdle + d->ctx_skipped;
  if (d->ctx_rc != 0) return "the context failed: " + cuda_driver_error(d->ctx_rc);
  return "";
}

// The failing diag finding that concerns this GPU (one without GPUs
// concerns them all); nullptr when none.
const Finding* failing_finding(const std::vector<Finding>& findings, const std::string& bus) {
  for (const Finding& f : findings) {
    if (f.severity != Severity::kFail) continue;
    if (f.gpus.empty() || std::find(f.gpus.begin(), f.gpus.end(), bus) != f.gpus.end()) return &f;
  }
  return nullptr;
}

void fail(ReprobeResult* r, const std::string& step) {
  r->steps.push_back(step);
  r->failure = step;
}

}  // namespace

std::vector<ReprobeResult> reprobe_gpus(const ReprobeOptions& opt,
                                        const std::vector<std::string>& bus_ids) {
  auto t0 = Clock::now();
  std::vector<ReprobeResult> out;
  for (const std::string& bus : bus_ids) {
    ReprobeResult r;
    r.bus_id = bus;
    out.push_back(std::move(r));
  }
  auto passing = [&] {
    std::vector<ReprobeResult*> p;
    for (ReprobeResult& r : out) {
      if (r.failure.empty()) p.push_back(&r);
    }
    return p;
  };

  // 1. NVML, in a fresh child: a new nvmlInit sees a GPU that was reset or
  //    re-bound, which a long-lived session may not. Its answer, with who
  //    holds each GPU, also says where step 2 may open a context.
  Snapshot s;
  ProbeOptions nvml_opt = opt.probe;
  nvml_opt.cuda = false;
  probe_hardware(nvml_opt, opt.env, &s);
  s.probes.push_back(probe_workload(opt.probe, &s));
  const ContextGate gate = context_gate(s.nvml, s.workload);
  std::string whole = nvml_problem(s.nvml);
  std::vector<std::string> uuids;
  for (ReprobeResult* r : passing()) {
    std::string why = whole.empty() ? nvml_gpu_problem(s, r->bus_id) : whole;
    if (!why.empty()) {
      fail(r, "NVML: " + why);
      continue;
    }
    const NvmlGpu& g = *find_nvml_gpu(s, r->bus_id);
    r->steps.push_back("NVML: answers" + (g.name.ok() ? " (" + g.name.value + ")" : std::string()));
    if (!g.uuid.ok()) {
      fail(r, "NVML: no UUID to open CUDA on this GPU alone: nvmlDeviceGetUUID returned " +
                  nvml_error(g.uuid.rc));
    } else if (std::string busy = context_denied(gate, r->bus_id); !busy.empty()) {
      // A job's GPU (or one whose use is unknown) gets no context from us:
      // the health it proves is not ours to prove, and it does not pass.
      fail(r, std::string("CUDA: ") + kWaitingForIdle + busy);
    } else {
      uuids.push_back(g.uuid.value);
    }
  }

  // 2. CUDA sees only these GPUs, and opens a context only where the gate
  //    allows (the GPU may have been taken since step 1).
  if (!uuids.empty()) {
    std::vector<std::string> env = diag_environment(opt.env);
    env.push_back("CUDA_VISIBLE_DEVICES=" + join(uuids, ","));
    probe_cuda_order(opt.probe, env, &gate, &s);
    const CudaRun& run = s.cuda.runs.back();
    std::string all = cuda_problem(run);
    for (ReprobeResult* r : passing()) {
      std::string why = all.empty() ? cuda_gpu_problem(run, r->bus_id) : all;
      if (why.empty()) {
        r->steps.push_back("CUDA: a context opened and its memory answered");
      } else {
        fail(r, "CUDA: " + why);
      }
    }
  }

  // 3. The diag helper's level 1 (context, kernel, copies), when installed.
  std::vector<ReprobeResult*> left = passing();
  if (opt.diag_helper.empty()) {
    for (ReprobeResult* r : left) {
      r->steps.push_back("diag: not run (no gpudoctor-diag: NVML and CUDA only)");
    }
  } else if (!left.empty()) {
    DiagOptions d;
    d.level = 1;
    for (ReprobeResult* r : left) d.bus_ids.push_back(r->bus_id);
    d.duration_s = opt.diag_duration_s;
    d.helper = opt.diag_helper;
    d.env = diag_environment(opt.env);
    d.deadline_s = opt.diag_deadline_s;
    DiagRun run = run_diag_helper(d);
    std::vector<Finding> findings = evaluate_diag(run, s);
    for (ReprobeResult* r : left) {
      if (!run.incomplete.empty()) {
        fail(r, "diag level 1: " + run.incomplete);
      } else if (const Finding* f = failing_finding(findings, r->bus_id)) {
        fail(r, "diag level 1: " + f->id + ": " + f->summary +
                    (f->evidence.empty() ? "" : " (" + f->evidence.front() + ")"));
      } else {
        r->steps.push_back("diag level 1: passed (context, kernel, copies)");
      }
    }
  }
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  for (ReprobeResult& r : out) {
    r.ok = r.failure.empty();
    r.duration_ms = ms;
  }
  return out;
}

std::string reprobe_line(const ReprobeResult& r) {
  if (!r.ok) return fmt::format("re-probe failed on {}: {}", r.bus_id, r.failure);
  return fmt::format("re-probe passed on {}: {}", r.bus_id, join(r.steps, "; "));
}

}  // namespace gd
