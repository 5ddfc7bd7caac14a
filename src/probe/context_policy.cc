// The context gate (context_policy.h): NVML's answer -> which GPUs may get
// a CUDA context, and the line the CUDA probe child reads it from.
#include "probe/context_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "catalog/cuda_errors.h"
#include "snapshot/gpu_process.h"

namespace gd {
namespace {

// How many of a busy GPU's processes a reason names; the rest are counted.
constexpr size_t kProcessesNamed = 4;

// Why NVML as a whole gave no answer; "" when it answered.
std::string nvml_unanswered(const NvmlInfo& n) {
  if (!n.attempted) return "it was not asked";
  if (!n.child_error.empty()) return "the NVML child " + n.child_error;
  if (!n.dlopen_error.empty()) return n.dlopen_error;
  if (n.init_rc != 0) {
    return (n.init_symbol.empty() ? std::string("nvmlInit") : n.init_symbol) + " returned " +
           nvml_error(n.init_rc);
  }
  if (n.device_count.rc != 0) return "nvmlDeviceGetCount returned " + nvml_error(n.device_count.rc);
  return "";
}

// "pid 4711, slurm job 4711, alice": what /proc told of the pid, where the
// workload probe read it.
std::string process_text(uint32_t pid, const WorkloadInfo& w) {
  std::string s = "pid " + std::to_string(pid);
  const GpuProcess* p = find_gpu_process(w, pid);
  if (p == nullptr) return s;
  if (std::string job = job_text(*p); !job.empty()) s += ", " + job;
  if (!p->user.empty()) {
    s += ", " + p->user;
  } else if (p->uid) {
    s += ", uid " + std::to_string(*p->uid);
  }
  return s;
}

// "busy: 2 processes (pid 4711, slurm job 4711, alice; pid 4712)".
std::string busy_text(const std::vector<uint32_t>& pids, const WorkloadInfo& w) {
  std::string s = fmt::format("busy: {} process{} (", pids.size(), pids.size() == 1 ? "" : "es");
  for (size_t i = 0; i < pids.size() && i < kProcessesNamed; ++i) {
    if (i > 0) s += "; ";
    s += process_text(pids[i], w);
  }
  if (pids.size() > kProcessesNamed) {
    s += fmt::format("; and {} more", pids.size() - kProcessesNamed);
  }
  return s + ")";
}

std::string compute_mode_text(int mode) {
  std::string name = "compute mode " + nvml_compute_mode_name(mode);
  if (mode == 2) return name + ": no process may create a context here";
  if (mode == 1 || mode == 3) return name + ": a context here could take the GPU from a job";
  return name + ": not DEFAULT (0), so a context here is not ours to open";
}

// Why no context on this GPU; "" when it is idle and in DEFAULT mode.
std::string gpu_denied(const NvmlGpu& g, const WorkloadInfo& w) {
  if (!g.processes.ok()) {
    return "NVML could not list its processes: " + nvml_error(g.processes.rc);
  }
  // rc -1: never asked (a driver or fake without the symbol); compute
  // processes are what a context would compete with.
  if (!g.graphics_processes.ok() && g.graphics_processes.rc != -1) {
    return "NVML could not list its graphics processes: " + nvml_error(g.graphics_processes.rc);
  }
  std::vector<uint32_t> pids;
  std::set<uint32_t> seen;
  for (const auto* list : {&g.processes, &g.graphics_processes}) {
    if (!list->ok()) continue;
    for (const NvmlProcess& p : list->value) {
      if (seen.insert(p.pid).second) pids.push_back(p.pid);
    }
  }
  if (!pids.empty()) return busy_text(pids, w);
  if (!g.compute_mode.ok()) {
    return "NVML could not read its compute mode: " + nvml_error(g.compute_mode.rc) +
           ": whether a context is allowed is unknown";
  }
  if (g.compute_mode.value != 0) return compute_mode_text(g.compute_mode.value);
  return "";
}

std::string unknown_text(const std::string& why) {
  return "NVML did not answer (" + why + "): whether it is busy is unknown";
}

}  // namespace

ContextGate deny_all_contexts(const std::string& reason) {
  ContextGate g;
  g.other = reason;
  return g;
}

ContextGate context_gate(const NvmlInfo& nvml, const WorkloadInfo& workload) {
  if (std::string why = nvml_unanswered(nvml); !why.empty()) {
    return deny_all_contexts(unknown_text(why));
  }
  ContextGate gate;
  size_t without_handle = 0;
  for (const NvmlGpu& g : nvml.gpus) {
    if (g.handle_rc != 0 || !g.pci_bus_id.ok() || g.pci_bus_id.value.empty()) {
      ++without_handle;
      continue;
    }
    const std::string& bus = g.pci_bus_id.value;
    if (std::string why = gpu_denied(g, workload); !why.empty()) {
      gate.deny[bus] = why;
    } else if (gate.deny.count(bus) == 0 &&
               std::find(gate.allow.begin(), gate.allow.end(), bus) == gate.allow.end()) {
      gate.allow.push_back(bus);
    }
  }
  // A bus NVML listed twice, once busy: busy wins.
  std::erase_if(gate.allow, [&](const std::string& b) { return gate.deny.count(b) > 0; });
  gate.other = without_handle == 0
                   ? "NVML lists no GPU at this bus id: whether it is busy is unknown"
                   : fmt::format(
                         "NVML lists no GPU at this bus id ({} of its {} GPUs gave no handle or "
                         "bus id): whether it is busy is unknown",
                         without_handle, nvml.gpus.size());
  return gate;
}

std::string context_denied(const ContextGate& gate, const std::string& bus_id) {
  if (!bus_id.empty()) {
    if (auto d = gate.deny.find(bus_id); d != gate.deny.end()) return d->second;
    if (std::find(gate.allow.begin(), gate.allow.end(), bus_id) != gate.allow.end()) return "";
  }
  return gate.other.empty() ? std::string("not among the GPUs the parent found idle") : gate.other;
}

std::string context_gate_line(const ContextGate& gate) {
  nlohmann::ordered_json j;
  j["allow"] = gate.allow;
  j["deny"] = nlohmann::ordered_json::object();
  for (const auto& [bus, why] : gate.deny) j["deny"][bus] = why;
  j["other"] = gate.other;
  // Invalid UTF-8 (a comm read from /proc) is replaced, never thrown on.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<ContextGate> parse_context_gate(std::string_view line) {
  if (line.size() > kMaxContextGateBytes) return Error{"the gate line is over 64 KiB"};
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) return Error{"the gate line is not JSON"};
  if (!j.is_object()) return Error{"the gate line is not a JSON object"};
  ContextGate g;
  if (auto a = j.find("allow"); a != j.end()) {
    if (!a->is_array()) return Error{"\"allow\" is not a list"};
    for (const auto& bus : *a) {
      if (!bus.is_string()) return Error{"\"allow\" holds a value that is not a string"};
      g.allow.push_back(bus.get<std::string>());
    }
  }
  if (auto d = j.find("deny"); d != j.end()) {
    if (!d->is_object()) return Error{"\"deny\" is not an object"};
    for (const auto& [bus, why] : d->items()) {
      if (!why.is_string()) return Error{"\"deny\" holds a reason that is not a string"};
      g.deny[bus] = why.get<std::string>();
    }
  }
  if (auto o = j.find("other"); o != j.end()) {
    if (!o->is_string()) return Error{"\"other\" is not a string"};
    g.other = o->get<std::string>();
  }
  return g;
}

}  // namespace gd
