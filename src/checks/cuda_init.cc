// cuda.init-failed / cuda.init-hang: the generic symptom — cuInit,
// cuDeviceGetCount, cudaGetDeviceCount or a per-GPU context failed, hung or
// crashed. Narrower findings name the cause; the report ranks them first.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kFailed = "cuda.init-failed";
constexpr const char* kHang = "cuda.init-hang";

bool run_failed(const CudaRun& r) {
  if (!r.child_error.empty()) return true;
  if (r.library_loaded.empty()) return true;
  if (r.init_rc != 0 || r.device_count_rc != 0) return true;
  return !r.cudart_loaded.empty() && r.cudart_rc != 0;
}

// "CUDA_VISIBLE_DEVICES unset, CUDA_DEVICE_ORDER=PCI_BUS_ID"
std::string env_changes_text(const CudaRun& r) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : r.env_changes) parts.push_back(v.empty() ? k + " unset" : k + "=" + v);
  return parts.empty() ? std::string("clean environment") : join(parts, ", ");
}

// The one-line failure of a run, as the user would quote it.
std::string failure_text(const CudaRun& r) {
  if (r.child_error.rfind("crashed", 0) == 0) {
    std::string how = r.child_error.substr(7);
    while (!how.empty() && (how[0] == ':' || how[0] == ' ')) how.erase(0, 1);
    return "the CUDA library crashed the process" + (how.empty() ? "" : " (" + how + ")");
  }
  if (!r.child_error.empty()) return r.child_error;
  if (r.library_loaded.empty()) {
    return r.library_requested + " could not be loaded" +
           (r.dlopen_error.empty() ? std::string() : " (" + r.dlopen_error + ")");
  }
  if (!r.cudart_loaded.empty() && r.cudart_rc > 0) {
    return "cudaGetDeviceCount: " + framework_error_text(r.cudart_rc);
  }
  if (r.init_rc > 0) return "cuInit: " + cuda_driver_error(r.init_rc);
  if (r.device_count_rc > 0) return "cuDeviceGetCount: " + cuda_driver_error(r.device_count_rc);
  return "no error";
}

void add_clean_run(const Snapshot& s, Finding* f) {
  const CudaRun* c = clean_cuda_run(s);
  if (c == nullptr) return;
  std::string env = env_changes_text(*c);
  if (child_timed_out(c->child_error)) {
    f->evidence.push_back("clean run (" + env + "): also hung");
  } else if (run_failed(*c)) {
    f->evidence.push_back("clean run (" + env + "): also fails: " + failure_text(*c));
  } else {
    f->evidence.push_back("clean run (" + env + "): works, " + std::to_string(c->device_count) +
                          " device(s) — the user's environment causes the failure");
  }
}

Finding hang_finding(const Snapshot& s, const CudaRun& r) {
  Finding f = make_finding(kHang, Severity::kFail,
                           "cuInit did not return within " + deadline_text(s) +
                               " s: CUDA hangs, usually on a GPU that stopped answering.");
  f.evidence.push_back("deadline_s: " + deadline_text(s));
  f.evidence.push_back("CUDA child (" + r.label + " environment): " + r.child_error);
  if (!r.library_loaded.empty()) f.evidence.push_back("library: " + r.library_loaded);
  add_clean_run(s, &f);
  f.remedy = {"sudo dmesg | grep -i -e xid -e 'fallen off' -e nvrm   # the GPU at fault",
              "A GPU reset (sudo nvidia-smi -r -i <N>) or a reboot clears a stuck GPU."};
  return f;
}

Finding failure_finding(const Snapshot& s, const CudaRun& r) {
  std::string text = failure_text(r);
  Finding f = make_finding(kFailed, Severity::kFail, "CUDA does not start: " + text + ".");
  if (!r.child_error.empty()) {
    f.evidence.push_back("CUDA child (" + r.label + " environment): " + r.child_error);
  } else if (r.library_loaded.empty()) {
    f.evidence.push_back("dlopen " + r.library_requested + ": " +
                         (r.dlopen_error.empty() ? std::string("failed") : r.dlopen_error));
  } else {
    for (auto& line : cuda_error_lines(r)) f.evidence.push_back(line);
    int code = r.cudart_rc > 0 && !r.cudart_loaded.empty() ? r.cudart_rc : r.init_rc;
    if (code <= 0) code = r.device_count_rc;
    if (const CudaErrorInfo* e = find_cuda_error(code); e != nullptr && e->meaning != nullptr) {
      f.evidence.push_back("error " + std::to_string(code) + " usually means: " + e->meaning);
    }
  }
  add_clean_run(s, &f);
  f.remedy = {
      "This is the symptom: fix the cause a finding ranked above names; where none does, "
      "no known cause was found, and these show more:",
      "sudo dmesg | grep -i -e nvrm -e xid   # the driver's side of the failure",
      "gpudoctor explain error.txt   # the program's whole error output, pasted"};
  return f;
}

// "0000:01:00.0 (CUDA device 2, NVIDIA GeForce RTX 4090)"
std::string device_text(const CudaDevice& d) {
  std::string where = d.pci_bus_id.empty() ? "device " + std::to_string(d.ordinal) : d.pci_bus_id;
  return where + " (CUDA device " + std::to_string(d.ordinal) +
         (d.name.empty() ? "" : ", " + d.name) + ")";
}

// "0000:41:00.0, 0000:61:00.0 (CUDA devices 0, 1): no context opened: why",
// one line per reason, in CUDA's order.
std::vector<std::string> skipped_lines(const CudaRun& r) {
  std::vector<std::pair<std::string, std::vector<const CudaDevice*>>> by_reason;
  for (const auto& d : r.devices) {
    if (d.get_rc > 0 || d.ctx_skipped.empty()) continue;
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&](const auto& e) { return e.first == d.ctx_skipped; });
    if (it == by_reason.end()) {
      by_reason.push_back({d.ctx_skipped, {}});
      it = by_reason.end() - 1;
    }
    it->second.push_back(&d);
  }
  std::vector<std::string> out;
  for (const auto& [why, devs] : by_reason) {
    if (devs.size() == 1) {
      out.push_back(device_text(*devs[0]) + ": no context opened: " + why);
      continue;
    }
    std::vector<std::string> where, ordinals;
    for (const CudaDevice* d : devs) {
      where.push_back(d->pci_bus_id.empty() ? "device " + std::to_string(d->ordinal)
                                            : d->pci_bus_id);
      ordinals.push_back(std::to_string(d->ordinal));
    }
    out.push_back(join(where, ", ") + " (CUDA devices " + join(ordinals, ", ") +
                  "): no context opened: " + why);
  }
  return out;
}

// A context the probe did not ask for (a job's GPU, compute mode not
// DEFAULT, NVML silent: ctx_skipped) is neither a failure nor a success:
// it is said, and counts for neither.
Finding context_finding(const CudaRun& r) {
  std::vector<std::string> gpus;
  std::vector<std::string> evidence;
  std::vector<std::string> skipped = skipped_lines(r);
  size_t skipped_count = 0;
  size_t opened = 0;
  for (const auto& d : r.devices) {
    if (d.get_rc > 0) {
      evidence.push_back("device " + std::to_string(d.ordinal) +
                         ": cuDeviceGet: " + cuda_driver_error(d.get_rc));
      if (!d.pci_bus_id.empty()) gpus.push_back(d.pci_bus_id);
    } else if (!d.ctx_skipped.empty()) {
      ++skipped_count;
    } else if (d.ctx_rc > 0) {
      evidence.push_back(device_text(d) +
                         ": context creation failed: " + cuda_driver_error(d.ctx_rc));
      if (!d.pci_bus_id.empty()) gpus.push_back(d.pci_bus_id);
    } else if (d.ctx_rc == 0) {
      ++opened;
    }
  }
  const size_t n = r.devices.size();
  if (evidence.empty()) {
    if (skipped.empty()) {
      return make_finding(kFailed, Severity::kOk,
                          "CUDA starts: cuInit succeeded and a context was created on all " +
                              std::to_string(n) + " device(s).");
    }
    std::string summary =
        opened == 0 ? "CUDA starts: cuInit succeeded on " + std::to_string(n) +
                          " device(s); no context was opened on any of them (see the evidence)."
                    : "CUDA starts: cuInit succeeded and a context was created on " +
                          std::to_string(opened) + " of " + std::to_string(n) +
                          " device(s); none was opened on the other " +
                          std::to_string(skipped_count) + " (see the evidence).";
    Finding f = make_finding(kFailed, Severity::kOk, summary);
    f.evidence = std::move(skipped);
    return f;
  }
  Finding f = make_finding(kFailed, Severity::kFail,
                           "CUDA starts, but " + std::to_string(evidence.size()) + " of " +
                               std::to_string(n) + " GPU(s) cannot create a context.");
  f.gpus = gpus;
  f.evidence = evidence;
  f.evidence.insert(f.evidence.end(), skipped.begin(), skipped.end());
  f.remedy = {
      "This is the symptom: fix the cause a finding ranked above names; where none does, "
      "no known cause was found, and this shows more:",
      "sudo dmesg | grep -i -e nvrm -e xid   # errors of those GPUs"};
  return f;
}

}  // namespace

std::vector<Finding> check_cuda_init(const Snapshot& s, const Config&) {
  const CudaRun* r = user_cuda_run(s);
  if (!s.cuda.attempted || r == nullptr) {
    std::string why = "The CUDA probe was not run.";
    return {make_finding(kFailed, Severity::kNotApplicable, why),
            make_finding(kHang, Severity::kNotApplicable, why)};
  }
  if (child_timed_out(r->child_error)) {
    return {make_finding(kFailed, Severity::kNotApplicable,
                         "CUDA did not finish (see cuda.init-hang)."),
            hang_finding(s, *r)};
  }
  Finding ok_hang = make_finding(kHang, Severity::kOk, "cuInit returned within the deadline.");
  if (run_failed(*r)) return {failure_finding(s, *r), ok_hang};
  return {context_finding(*r), ok_hang};
}

}  // namespace gd
