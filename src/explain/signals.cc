// The text's signals: what in the pasted lines points at causes. Each
// signal is a key rules.cc maps to candidate finding ids ("cuda:999",
// "nvml:18", "uvm-node-missing", a phrase row's signal) and the lines that
// show it.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "catalog/components.h"
#include "catalog/cuda_errors.h"
#include "catalog/error_phrases.h"
#include "checks/util.h"
#include "explain/error_codes.h"
#include "explain/parse.h"
#include "explain/ranking.h"
#include "util/ascii.h"
#include "util/text.h"

namespace gd {
namespace {}  // namespace

bool has_reported(const Snapshot& s, std::string_view kind) {
  return std::any_of(s.reported.begin(), s.reported.end(),
                     [&](const ReportedError& r) { return r.kind == kind; });
}

namespace {

void add_signal(std::vector<Signal>* out, const std::string& key, std::vector<std::string> lines,
                std::string origin = "") {
  for (auto& sig : *out) {
    if (sig.key == key) return;
  }
  out->push_back({key, std::move(lines), std::move(origin)});
}

// A code after CUDA started (a kernel fault, a bad argument, NCCL, an
// allocation): not about whether the machine can start CUDA.
bool after_start(const std::string& key) {
  static const std::set<std::string> kAfterStart = {"cuda-alloc",    "oom-own-process", "nccl:shm",
                                                    "nccl:p2p-hang", "nccl-watchdog",   "smi-err"};
  if (kAfterStart.count(key) != 0 || key.starts_with("nccl:")) return true;
  if (!key.starts_with("cuda:")) return false;
  int code = std::atoi(key.c_str() + 5);
  return code > 0 && !cuda_start_error(code);
}

}  // namespace

std::vector<std::string> reported_lines(const Snapshot& s, std::initializer_list<const char*> kinds,
                                        int code) {
  // The first few lines say it; a log that repeats it a thousand times
  // only needs the count.
  constexpr size_t kMaxLines = 3;
  std::vector<std::string> out;
  size_t more = 0;
  for (const auto& r : s.reported) {
    for (const char* k : kinds) {
      if (r.kind != k || (code >= 0 && r.code != code)) continue;
      if (out.size() < kMaxLines) {
        out.push_back(line_ref(r));
      } else {
        ++more;
      }
    }
  }
  if (more > 0) out.push_back("(and " + std::to_string(more) + " more lines like these)");
  return out;
}

std::vector<Signal> signals(const Snapshot& s) {
  std::vector<Signal> out;
  for (const auto& run : s.cuda.runs) {
    if (run.label != "user") continue;
    if (run.child_error.rfind("crashed", 0) == 0) continue;
    if (run.library_loaded.empty()) {
      add_signal(&out, "cuda:no-libcuda", reported_lines(s, {"cuda-driver"}, -1));
    }
    for (int code : {run.cudart_rc, run.init_rc}) {
      if (code <= 0) continue;
      std::string key = "cuda:" + std::to_string(code);
      if (code == 35 && run.driver_version_rc == 0 && run.driver_version == 0) {
        key = "cuda:35-no-driver";
      } else if (code == 35 && run.driver_version_rc == 0 && run.driver_version > 0) {
        // "found version 11040": a driver answered, too old for this runtime.
        key = "cuda:35-old-driver";
      }
      add_signal(&out, key, reported_lines(s, {"cuda-runtime", "cuda-driver", "nccl"}, code));
    }
  }
  const NvmlInfo& n = s.nvml;
  if (n.child_error.rfind("crashed", 0) == 0) {
    add_signal(&out, "nvml:crash", reported_lines(s, {"crash"}, -1));
  } else if (n.init_rc > 0) {
    add_signal(&out, "nvml:" + std::to_string(n.init_rc), reported_lines(s, {"nvml"}, n.init_rc));
  }
  for (const auto& g : n.gpus) {
    if (g.handle_rc > 0) {
      add_signal(&out, "nvml-handle:" + std::to_string(g.handle_rc),
                 reported_lines(s, {"nvml"}, g.handle_rc));
    }
  }
  if (has_reported(s, "nvml-no-devices")) {
    add_signal(&out, "nvml:no-devices", reported_lines(s, {"nvml-no-devices"}, -1));
  }
  // A hang over PCIe-only GPUs, or one NCCL_P2P_DISABLE=1 is said to cure:
  // peer-to-peer traffic stopped on the way (NCCL guide, facts §12.2).
  if (has_reported(s, "hang") && (has_reported(s, "topo-pcie") || has_reported(s, "p2p-disable"))) {
    add_signal(&out, "nccl:p2p-hang", reported_lines(s, {"hang", "topo-pcie", "p2p-disable"}, -1));
  }
  // A missing device node is itself a cause CUDA names only by 999 or 100
  // (facts §7.5: without /dev/nvidia-uvm, CUDA error 999).
  for (const char* kind :
       {"nvidia-smi-missing", "cuda-alloc", "oom-own-process", "smi-err", "nccl-watchdog",
        "container-no-gpu-flag", "nccl-nvls", "uvm-node-missing", "devnodes-missing",
        "driver-proc-missing", "devnodes-permission", "selinux-denial", "mig-none", "nouveau"}) {
    if (has_reported(s, kind)) add_signal(&out, kind, reported_lines(s, {kind}, -1));
  }
  for (const auto& r : s.reported) {
    if (r.kind.starts_with(kPhraseKindPrefix)) {
      const ErrorPhrase* row = find_error_phrase(ascii_lower(r.line));
      add_signal(&out, r.kind.substr(kPhraseKindPrefix.size()), {line_ref(r)},
                 row != nullptr ? std::string("phrase:") + row->seen_in : "");
    }
    // Every code, started or not (rules.cc has a row for each): a code
    // after CUDA started names the program's or the GPU's fault.
    const bool cuda_kind = r.kind == "cuda-runtime" || r.kind == "cuda-driver" || r.kind == "nccl";
    if (cuda_kind && r.code > 0 && !cuda_start_error(r.code)) {
      add_signal(&out, "cuda:" + std::to_string(r.code), {line_ref(r)});
    }
    if (r.kind == "nccl-result" && r.code > 0) {
      add_signal(&out, "nccl:" + std::to_string(r.code), {line_ref(r)});
    }
    if (r.kind == "nvml" && r.code > 0 && s.nvml.init_rc != r.code) {
      add_signal(&out, "nvml:" + std::to_string(r.code), {line_ref(r)});
    }
  }
  for (const auto& r : s.reported) {
    if (r.kind == "libcuda-missing-symbol")
      add_signal(&out, "libcuda:missing-symbol", {line_ref(r)});
    if (r.kind == "k8s-no-gpus") add_signal(&out, "k8s:no-gpus", {line_ref(r)});
    if (r.kind == "libcuda-unversioned") add_signal(&out, "libcuda-unversioned", {line_ref(r)});
    if (r.kind == "k8s-plugin-unregistered") {
      add_signal(&out, "k8s:plugin-unregistered", {line_ref(r)});
    }
    if (r.kind == "ngc-banner") {
      add_signal(&out, r.text.empty() ? "container:no-driver" : "container:requirement",
                 {line_ref(r)});
    }
    if (r.kind != "container-runtime") continue;
    if (r.text.rfind("load library failed", 0) == 0) {
      add_signal(&out, "container:lib-missing", {line_ref(r)});
    } else if (r.text.rfind("driver error: failed to process request", 0) == 0) {
      add_signal(&out, "container:driver-error", {line_ref(r)});
    } else if (r.text.rfind("unsatisfied condition", 0) == 0 ||
               r.text.rfind("unsupported CUDA version", 0) == 0) {
      add_signal(&out, "container:requirement", {line_ref(r)});
    } else if (r.text.rfind("nvml error", 0) == 0 && r.code > 0) {
      add_signal(&out, "nvml:" + std::to_string(r.code), {line_ref(r)});
    }
  }
  // A container runtime's hook that failed in a rootless runtime.
  if (has_reported(s, "rootless-hint") && has_reported(s, "container-runtime")) {
    add_signal(&out, "rootless-hook",
               reported_lines(s, {"container-runtime", "rootless-hint"}, -1));
  }
  // A fabric manager that found no NVSwitch exits, and its unit fails:
  // harmless on a PCIe machine, so the unit's failure alone names nothing then.
  const bool no_nvswitch = std::any_of(
      s.kernel_log.events.begin(), s.kernel_log.events.end(),
      [](const KernelEvent& e) { return e.kind == "fabric-manager" && e.type == "no-nvswitch"; });
  for (const auto& e : s.kernel_log.events) {
    if (e.kind == "fabric-manager" && e.type == "unit-failed" && no_nvswitch) continue;
    if (e.kind == "nvrm") add_signal(&out, "nvrm:" + e.type, {e.line});
    if (e.kind == "nouveau") add_signal(&out, "kernel:nouveau", {e.line});
    if (e.kind == "module-signature") add_signal(&out, "module-signature:" + e.type, {e.line});
    if (e.kind == "fabric-manager") add_signal(&out, "fabric-manager:" + e.type, {e.line});
  }
  if (has_reported(s, "wsl1-kernel")) {
    add_signal(&out, "wsl1-kernel", reported_lines(s, {"wsl1-kernel"}, -1));
  }
  // WSL 2 named beside a failure to start: the Windows driver's side. An
  // error after CUDA started (out of memory, NCCL, ECC) is not about it.
  bool start_failed =
      std::any_of(out.begin(), out.end(), [](const Signal& sig) { return !after_start(sig.key); });
  if (start_failed && has_reported(s, "wsl-hint")) {
    add_signal(&out, "wsl", reported_lines(s, {"wsl-hint"}, -1));
  }
  // A bare "not available" and nothing else: the causes of a CUDA that did
  // not start, as far as the text can tell (any other signal in the text,
  // an error code or a missing node, brings its own).
  if (out.empty() && has_reported(s, "torch-not-available")) {
    add_signal(&out, "torch-not-available", reported_lines(s, {"torch-not-available"}, -1));
  }
  // Last: a component named in words adds to what the lines above show (a
  // fabric manager failing without NVSwitches is harmless, as above).
  for (const auto& r : s.reported) {
    if (!r.kind.starts_with(kComponentKindPrefix)) continue;
    if (no_nvswitch && r.kind == "component:fabric-manager") continue;
    add_signal(&out, r.kind, {line_ref(r)});
  }
  return out;
}

// A signal key in words, for ranked_by: "cuda:999" -> "CUDA error 999".
std::string signal_words(const std::string& key) {
  auto after = [&](std::string_view prefix) { return key.substr(prefix.size()); };
  if (key == "cuda:35-no-driver") return "CUDA error 35 with no driver version";
  if (key == "cuda:35-old-driver") return "CUDA error 35 with the driver's version";
  if (key == "oom-own-process")
    return "an out-of-memory in which this process holds the GPU's memory";
  if (key == "smi-err") return "nvidia-smi showing ERR!";
  if (key == "nccl-watchdog") return "NCCL's watchdog timing out a collective";
  if (key.starts_with(kComponentKindPrefix)) {
    const Component* c = find_component(std::string_view(key).substr(kComponentKindPrefix.size()));
    return std::string(c != nullptr ? c->name : key.c_str()) + " named beside a failure";
  }
  if (key == "cuda:no-libcuda") return "libcuda.so.1 not found";
  if (key == "nvml:no-devices") return "nvidia-smi's \"No devices were found\"";
  if (key == "nvml:crash") return "nvidia-smi crashing";
  if (key == "uvm-node-missing") return "/dev/nvidia-uvm or nvidia_uvm missing";
  if (key == "devnodes-missing") return "/dev/nvidia* missing";
  if (key == "driver-proc-missing") return "/proc/driver/nvidia missing";
  if (key == "wsl1-kernel") return "a WSL 1 kernel";
  if (key == "wsl") return "a failure under WSL 2";
  if (key == "libcuda:missing-symbol") return "a driver entry point missing from libcuda";
  if (key == "framework:no-cuda") return "a framework built without CUDA (or without this CUDA)";
  if (key == "library:cuda-mismatch") return "a CUDA library missing or of another version";
  if (key == "libcuda-unversioned") return "the program loading libcuda.so, not libcuda.so.1";
  if (key == "k8s:no-gpus") return "a node advertising nvidia.com/gpu: 0";
  if (key == "k8s:plugin-unregistered") return "the device plugin failing to register";
  if (key == "mig-none") return "\"No MIG devices found\"";
  if (key == "nouveau") return "nouveau named";
  if (key == "selinux-denial") return "an SELinux denial of an NVIDIA node";
  if (key == "devnodes-permission") return "permission denied on /dev/nvidia*";
  if (key == "rootless-hook") return "a rootless runtime's hook failing";
  if (key.starts_with("cuda:") && std::isdigit(static_cast<unsigned char>(key[5]))) {
    return "CUDA error " + after("cuda:");
  }
  if (key.starts_with("nccl:") && std::isdigit(static_cast<unsigned char>(key[5]))) {
    const char* name = nccl_result_name(std::atoi(key.c_str() + 5));
    return std::string("NCCL's ") + (name != nullptr ? name : key.c_str());
  }
  if (key.starts_with("nvml-handle:")) return "NVML error " + after("nvml-handle:") + " for a GPU";
  if (key.starts_with("nvml:") && std::isdigit(static_cast<unsigned char>(key[5]))) {
    return "NVML error " + after("nvml:");
  }
  for (std::string_view log : {"nvrm:", "kernel:", "module-signature:", "fabric-manager:"}) {
    if (key.starts_with(log)) return "the kernel log (" + after(log) + ")";
  }
  return key;
}

}  // namespace gd
