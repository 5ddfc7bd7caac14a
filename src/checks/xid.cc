// xid.NN: one finding per Xid code the kernel log holds, decoded from the
// catalog (catalog/xid.cc): what it means, where the fault usually lies and
// what to do. Events older than the window (Config::kernel_log_window_s)
// are reported as info, so a handled error does not keep a node failing.
#include "catalog/xid.h"

#include <algorithm>
#include <map>

#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"

namespace gd {

namespace {

Severity xid_severity(const XidInfo* x) {
  if (x == nullptr) return Severity::kWarn;
  switch (x->action) {
    case XidAction::kNone:
      return Severity::kInfo;
    case XidAction::kRestartApp:
    case XidAction::kUpdateSoftware:
    case XidAction::kFollowOther:
      return Severity::kWarn;
    case XidAction::kResetGpu:
    case XidAction::kReboot:
    case XidAction::kDrainInspect:
      return Severity::kFail;
  }
  return Severity::kWarn;
}

}  // namespace

std::vector<Finding> check_xid(const Snapshot& s, const Config& c) {
  if (!kernel_log_read(s)) {
    return not_applicable("xid.NN",
                          "The kernel log could not be read (see kernel-log.unreadable).");
  }
  std::map<int, std::vector<const KernelEvent*>> by_code;
  for (const KernelEvent* e : events_of(s, "xid")) by_code[e->code].push_back(e);
  if (by_code.empty()) return all_ok("xid.NN", "No Xid error in the kernel log since boot.");

  std::vector<Finding> out;
  for (const auto& [code, events] : by_code) {
    const XidInfo* x = find_xid(code);
    bool recent = false;
    int count = 0;
    std::vector<std::string> gpus;
    for (const KernelEvent* e : events) {
      recent = recent || in_window(*e, c);
      count += e->count;
      if (!e->gpu.empty() && std::find(gpus.begin(), gpus.end(), e->gpu) == gpus.end()) {
        gpus.push_back(e->gpu);
      }
    }
    std::string what = x ? std::string(x->meaning) : "an Xid this catalog does not know";
    std::string summary = "Xid " + std::to_string(code) + " (" + what + ") on " +
                          std::to_string(gpus.size()) + " GPU(s), " + std::to_string(count) +
                          (count == 1 ? " time" : " times");
    Severity sev = xid_severity(x);
    if (!recent) {
      sev = Severity::kInfo;
      summary += ", last " + format_age(*events.front()->age_s) + " ago: outside the " +
                 format_age(c.kernel_log_window_s) + " window";
    }
    Finding f = make_finding("xid." + std::to_string(code), sev, summary + ".");
    f.gpus = gpus;
    for (const KernelEvent* e : events) f.evidence.push_back(event_evidence(s, *e));
    if (x) {
      f.evidence.push_back(std::string("catalog: ") + x->mnemonic + "; usually " +
                           xid_fault_name(x->fault) + "; action: " + xid_action_name(x->action));
      f.remedy.push_back(x->advice);
    } else {
      f.remedy.push_back(
          "Look the code up in NVIDIA's Xid catalog "
          "(docs.nvidia.com/deploy/xid-errors) and keep the lines above.");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gd
