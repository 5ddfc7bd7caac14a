// The hardware probes, parent side: NVML and CUDA run in child processes
// (this binary re-executed as `__probe-nvml` / `__probe-cuda`) under one
// deadline, so a hanging or crashing driver becomes evidence instead of a
// hung or crashed gpudoctor.
//
// The CUDA probe runs with the user's environment first. When that run
// fails it runs again with a clean one (no CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER=PCI_BUS_ID) in the time left; the difference between
// the two is evidence for the checks.
//
// NVML and the user's CUDA run start together. CUDA does its context-free
// part (cuInit, the devices' attributes) and then waits on its stdin for
// the gate: the GPUs NVML shows idle, the only ones it may open a context
// on (context_policy.h). NVML gets kNvmlShareOfDeadline of the deadline to
// answer; a hung NVML then leaves every GPU alone rather than CUDA unheard.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "catalog/cuda_errors.h"
#include "probe/child.h"
#include "probe/file_probes.h"
#include "probe/hw_common.h"
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// A clean run in less time than this could not tell us anything.
constexpr auto kMinCleanRunTime = std::chrono::milliseconds(200);

bool has_name(const std::string& entry, const std::string& name) {
  return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
         entry[name.size()] == '=';
}

// The user's environment without what commonly hides or reorders GPUs.
// `changes` records what changed ("" = unset).
std::vector<std::string> clean_environment(const std::vector<std::string>& env,
                                           std::map<std::string, std::string>* changes) {
  std::vector<std::string> out;
  bool order_is_pci = false;
  for (const auto& e : env) {
    if (has_name(e, "CUDA_VISIBLE_DEVICES")) {
      (*changes)["CUDA_VISIBLE_DEVICES"] = "";
      continue;
    }
    if (has_name(e, "CUDA_DEVICE_ORDER")) {
      if (e == "CUDA_DEVICE_ORDER=PCI_BUS_ID") order_is_pci = true;
      continue;
    }
    out.push_back(e);
  }
  out.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  if (!order_is_pci) (*changes)["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  return out;
}

ChildSpec nvml_spec(const std::string& exe, const ProbeOptions& opt,
                    const std::vector<std::string>& env) {
  ChildSpec spec;
  spec.exe = exe;
  spec.args = {"__probe-nvml", "--lib", opt.nvml_lib};
  spec.env = env;
  return spec;
}

// Whether the user's run shows CUDA not working. A library that did not
// load is not retried: the clean environment loads it the same way.
bool cuda_run_failed(const CudaRun& r) {
  if (!r.child_error.empty()) return true;
  if (!r.dlopen_error.empty()) return false;
  if (r.init_rc != 0 || r.device_count_rc != 0 || r.device_count == 0) return true;
  return !r.cudart_loaded.empty() && r.cudart_rc != 0;
}

ProbeStatus status_of_child(const std::string& child_error) {
  return child_error.rfind("timeout", 0) == 0 ? ProbeStatus::kTimedOut : ProbeStatus::kFailed;
}

ProbeRecord nvml_record(const NvmlInfo& n) {
  ProbeRecord rec{"nvml", ProbeStatus::kOk, "", n.duration_ms, {}, 0};
  if (!n.child_error.empty()) {
    rec.status = status_of_child(n.child_error);
    rec.detail = n.child_error;
  } else if (!n.dlopen_error.empty()) {
    rec.status = ProbeStatus::kUnavailable;
    rec.detail = n.dlopen_error;
  } else if (n.init_rc != 0) {
    rec.status = ProbeStatus::kFailed;
    rec.detail = n.init_symbol + " returned " + nvml_error(n.init_rc);
  } else if (n.device_count.rc != 0) {
    rec.status = ProbeStatus::kFailed;
    rec.detail = "nvmlDeviceGetCount returned " + nvml_error(n.device_count.rc);
  }
  return rec;
}

std::string describe_run(const CudaRun& r) {
  if (!r.child_error.empty()) return r.child_error;
  if (!r.dlopen_error.empty()) return r.dlopen_error;
  if (r.init_rc != 0) return "cuInit returned " + cuda_driver_error(r.init_rc);
  if (r.device_count_rc != 0) {
    return "cuDeviceGetCount returned " + cuda_driver_error(r.device_count_rc);
  }
  std::string s = std::to_string(r.device_count) + " device(s)";
  if (!r.cudart_loaded.empty() && r.cudart_rc != 0) {
    s += ", cudaGetDeviceCount returned " + cuda_runtime_error(r.cudart_rc);
  }
  return s;
}

ProbeRecord cuda_record(const CudaInfo& c, double duration_ms) {
  ProbeRecord rec{"cuda", ProbeStatus::kOk, "", duration_ms, {}, 0};
  if (c.runs.empty()) return rec;
  const CudaRun& user = c.runs.front();
  if (!user.child_error.empty()) {
    rec.status = status_of_child(user.child_error);
  } else if (!user.dlopen_error.empty()) {
    rec.status = ProbeStatus::kUnavailable;
  } else if (cuda_run_failed(user)) {
    rec.status = ProbeStatus::kFailed;
  } else {
    return rec;
  }
  rec.detail = describe_run(user);
  if (c.runs.size() > 1) rec.detail += "; clean environment: " + describe_run(c.runs[1]);
  return rec;
}

// CUDA_ERROR_OUT_OF_MEMORY / cudaErrorMemoryAllocation: what an
// address-space limit turns cuInit, cudaGetDeviceCount or a context into.
constexpr int kOutOfMemory = 2;

bool failed_out_of_memory(const CudaRun& r) {
  if (r.init_rc == kOutOfMemory || r.cudart_rc == kOutOfMemory) return true;
  return std::any_of(r.devices.begin(), r.devices.end(),
                     [](const CudaDevice& d) { return d.ctx_rc == kOutOfMemory; });
}

// Whether this process may raise a soft address-space or data limit: only
// then can a child prove that the limit is what CUDA ran into.
bool soft_limit_below_hard() {
  ProcessRlimits rl = process_rlimits();
  auto below = [](const std::optional<uint64_t>& soft, const std::optional<uint64_t>& hard) {
    return soft && (!hard || *hard > *soft);
  };
  return below(rl.as_bytes, rl.as_hard_bytes) || below(rl.data_bytes, rl.data_hard_bytes);
}

// The children's deadline: `seconds` after t0 (10 s when not finite).
Clock::time_point deadline_after(Clock::time_point t0, double seconds) {
  double s = std::isfinite(seconds) ? std::clamp(seconds, 0.05, 3600.0) : 10;
  return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

ChildSpec cuda_spec(const std::string& exe, const ProbeOptions& opt,
                    const std::vector<std::string>& env, const std::string& label,
                    CudaContexts contexts) {
  ChildSpec spec;
  spec.exe = exe;
  bool gate = contexts == CudaContexts::kGate;
  spec.args = {"__probe-cuda", "--lib",        opt.cuda_lib,
               "--cudart",     opt.cudart_lib, "--label",
               label,          "--contexts",   gate ? "gate" : "none"};
  spec.env = env;
  spec.stdin_pipe = gate;
  return spec;
}

namespace {

// The child's answer, or as much of it as it said before it hung or
// crashed (its last checkpoint), with the outcome in child_error.
template <class T>
T from_child(const ChildResult& r, Result<T> (*decode)(const nlohmann::json&)) {
  ParsedChildOutput p = parse_child_output(r.out);
  T value;
  std::string decode_error;
  const nlohmann::json* doc = p.has_result ? &p.result : p.has_checkpoint ? &p.checkpoint : nullptr;
  if (doc != nullptr) {
    Result<T> got = decode(*doc);
    if (got.ok()) {
      value = std::move(*got);
    } else {
      decode_error = got.error();
    }
  }
  value.child_error = child_failure(r, p);
  if (value.child_error.empty() && !decode_error.empty()) {
    value.child_error = "bad output: " + decode_error;
  }
  value.duration_ms = r.duration_ms;
  return value;
}

NvmlInfo nvml_from_child(const ChildResult& r, const ProbeOptions& opt) {
  NvmlInfo info = from_child<NvmlInfo>(r, nvml_info_from_json);
  info.attempted = true;
  if (info.library_requested.empty()) info.library_requested = opt.nvml_lib;
  return info;
}

}  // namespace

CudaRun cuda_from_child(const ChildResult& r, const ProbeOptions& opt, const std::string& label) {
  CudaRun run = from_child<CudaRun>(r, cuda_run_from_json);
  run.label = label;
  if (run.library_requested.empty()) run.library_requested = opt.cuda_lib;
  return run;
}

void probe_hardware(const ProbeOptions& opt, Snapshot* s) {
  probe_hardware(opt, current_environment(), s);
}

void probe_hardware(const ProbeOptions& opt, const std::vector<std::string>& env, Snapshot* s) {
  auto t0 = Clock::now();
  auto deadline = deadline_after(t0, opt.deadline_s);
  // /proc/self/exe is this very binary even if it was moved or run by a
  // relative path.
  std::string exe = opt.self_exe.empty() ? "/proc/self/exe" : opt.self_exe;

  ChildRunner runner(deadline);
  size_t nvml_id = runner.start(nvml_spec(exe, opt, env));
  if (!opt.cuda) {
    s->nvml = nvml_from_child(runner.wait(nvml_id), opt);
    s->probes.push_back(nvml_record(s->nvml));
    return;
  }
  size_t user_id = runner.start(cuda_spec(exe, opt, env, "user", CudaContexts::kGate));
  s->cuda.attempted = true;

  // NVML's answer decides where CUDA may open a context; whatever it
  // answers, the workload probe reads who holds the GPUs it lists.
  ProbeRecord workload_rec;
  auto take_nvml = [&] {
    s->nvml = nvml_from_child(runner.result(nvml_id), opt);
    auto w0 = Clock::now();
    workload_rec = probe_workload(opt, s);
    workload_rec.duration_ms = ms_since(w0);
  };
  auto nvml_until =
      t0 + std::chrono::duration_cast<Clock::duration>((deadline - t0) * kNvmlShareOfDeadline);
  bool nvml_in_time = runner.wait_until(nvml_id, nvml_until);
  ContextGate gate;
  if (nvml_in_time) {
    take_nvml();
    gate = context_gate(s->nvml, s->workload);
  } else {
    double waited_s = std::chrono::duration<double>(nvml_until - t0).count();
    gate = deny_all_contexts(fmt::format(
        "NVML did not answer within {:.1f} s: whether it is busy is unknown", waited_s));
  }
  const std::string gate_line = context_gate_line(gate);
  runner.send(user_id, gate_line);  // a child already gone: its result says why

  s->cuda.runs.push_back(cuda_from_child(runner.wait(user_id), opt, "user"));
  if (cuda_run_failed(s->cuda.runs.front()) && deadline - Clock::now() > kMinCleanRunTime) {
    std::map<std::string, std::string> changes;
    std::vector<std::string> clean_env = clean_environment(env, &changes);
    size_t clean_id = runner.start(cuda_spec(exe, opt, clean_env, "clean", CudaContexts::kGate));
    runner.send(clean_id, gate_line);
    // Out of memory under a soft limit that may be raised: the same run with
    // the limit lifted, at the same time, proves or clears the limit.
    std::optional<size_t> raised_id;
    if (failed_out_of_memory(s->cuda.runs.front()) && soft_limit_below_hard()) {
      raised_id = runner.start(cuda_spec(exe, opt, env, kRaisedLimitLabel, CudaContexts::kGate));
      runner.send(*raised_id, gate_line);
    }
    CudaRun clean = cuda_from_child(runner.wait(clean_id), opt, "clean");
    clean.env_changes = std::move(changes);
    s->cuda.runs.push_back(std::move(clean));
    if (raised_id) {
      s->cuda.runs.push_back(cuda_from_child(runner.wait(*raised_id), opt, kRaisedLimitLabel));
    }
  }
  double cuda_ms = ms_since(t0);

  if (!nvml_in_time) {
    runner.wait(nvml_id);
    take_nvml();
  }
  s->probes.push_back(nvml_record(s->nvml));
  s->probes.push_back(std::move(workload_rec));
  s->probes.push_back(cuda_record(s->cuda, cuda_ms));
}

void probe_cuda_order(const ProbeOptions& opt, Snapshot* s) {
  probe_cuda_order(opt, current_environment(), nullptr, s);
}

void probe_cuda_order(const ProbeOptions& opt, const std::vector<std::string>& env,
                      const ContextGate* gate, Snapshot* s) {
  auto t0 = Clock::now();
  ChildRunner runner(deadline_after(t0, opt.deadline_s));
  std::string exe = opt.self_exe.empty() ? "/proc/self/exe" : opt.self_exe;
  CudaContexts contexts = gate != nullptr ? CudaContexts::kGate : CudaContexts::kNone;
  size_t user_id = runner.start(cuda_spec(exe, opt, env, "user", contexts));
  if (gate != nullptr) runner.send(user_id, context_gate_line(*gate));
  s->cuda.attempted = true;
  s->cuda.runs.push_back(cuda_from_child(runner.wait(user_id), opt, "user"));
  s->probes.push_back(cuda_record(s->cuda, ms_since(t0)));
}

}  // namespace gd
