// visible-devices.invalid, visible-devices.hides-all: what CUDA makes of
// CUDA_VISIBLE_DEVICES on this machine (rules in facts/cuda_visible.h), and
// what CUDA's own runs saw with and without it.
#include <fmt/format.h>

#include <algorithm>

#include "checks/checks.h"
#include "checks/util.h"
#include "facts/cuda_visible.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kInvalid = "visible-devices.invalid";
constexpr const char* kHidesAll = "visible-devices.hides-all";

struct Ctx {
  const Snapshot& s;
  GpuInventory inv;
  DeviceOrderSetting order;
  CvdResult cvd;
};

std::string entry_line(const Ctx& c, size_t i, size_t* next_ordinal) {
  const CvdEntry& e = c.cvd.entries[i];
  std::string head = fmt::format("entry {} \"{}\": ", i + 1, e.text);
  std::string body;
  switch (e.state) {
    case CvdState::kVisible: {
      const GpuIdentity& g = c.inv.gpus[*e.gpu];
      body = fmt::format("CUDA {} = {}", (*next_ordinal)++, gpu_ref(g));
      if (e.index) {
        body += fmt::format(" (index {} in {} order)", *e.index, device_order_name(c.order.order));
      }
      break;
    }
    case CvdState::kUnverified:
      body = "accepted, not checked here: " + e.reason;
      break;
    case CvdState::kInvalid:
      body = "rejected: " + e.reason + "; CUDA stops reading here";
      break;
    case CvdState::kDuplicate:
      body = "rejected: " + e.reason;
      break;
    case CvdState::kIgnored:
      body = "ignored: " + e.reason;
      if (e.gpu && e.form != CvdForm::kMig) {
        body += " (on its own it would select " + gpu_ref(c.inv.gpus[*e.gpu]) + ")";
      }
      break;
  }
  if (!e.note.empty()) body += " [" + e.note + "]";
  return head + body;
}

std::vector<std::string> base_evidence(const Ctx& c) {
  std::vector<std::string> ev;
  ev.push_back(env_assignment("CUDA_VISIBLE_DEVICES", c.cvd.value));
  if (c.order.set) {
    ev.push_back(env_assignment("CUDA_DEVICE_ORDER", c.order.value) +
                 (c.order.recognized ? ""
                                     : " is not FASTEST_FIRST or PCI_BUS_ID: the default "
                                       "FASTEST_FIRST order applies"));
  }
  if (!c.inv.gpus.empty()) {
    std::vector<std::string> bdfs;
    for (const auto& g : c.inv.gpus) bdfs.push_back(g.bdf);
    ev.push_back(fmt::format("GPUs here (from {}, nvidia-smi order): {}",
                             gpu_source_name(c.inv.source), join(bdfs, ", ")));
    bool any_index = std::any_of(c.cvd.entries.begin(), c.cvd.entries.end(),
                                 [](const CvdEntry& e) { return e.index.has_value(); });
    if (any_index) {
      std::vector<size_t> ord = cuda_order(c.inv.gpus, c.order.order);
      std::vector<std::string> parts;
      for (size_t k = 0; k < ord.size(); ++k) {
        parts.push_back(fmt::format("{} = {}", k, c.inv.gpus[ord[k]].bdf));
      }
      ev.push_back(fmt::format("indices count in CUDA's {} order{}: {}",
                               device_order_name(c.order.order),
                               c.order.order == DeviceOrder::kFastestFirst
                                   ? " (higher compute capability, then higher clock, then "
                                     "lower bus id)"
                                   : "",
                               join(parts, ", ")));
    }
  }
  size_t ordinal = 0;
  for (size_t i = 0; i < c.cvd.entries.size(); ++i) ev.push_back(entry_line(c, i, &ordinal));
  if (const CudaRun* u = user_cuda_run(c.s)) {
    if (run_succeeded(*u)) {
      std::vector<std::string> seen;
      for (const auto& d : u->devices) seen.push_back(d.pci_bus_id);
      ev.push_back(fmt::format("CUDA's run with this environment saw {} device{}{}{}",
                               u->device_count, u->device_count == 1 ? "" : "s",
                               seen.empty() ? "" : ": ", join(seen, ", ")));
      if (c.cvd.inventory_known && c.cvd.unverified_visible == 0 &&
          static_cast<size_t>(u->device_count) != c.cvd.visible_count()) {
        ev.push_back(
            fmt::format("that differs from the {} predicted above: CUDA's own run is "
                        "what counts",
                        c.cvd.visible_count()));
      }
    } else {
      ev.push_back("CUDA's run with this environment: " + describe_run(*u));
    }
  }
  if (const CudaRun* cl = clean_cuda_run(c.s)) {
    ev.push_back("CUDA's clean run (CUDA_VISIBLE_DEVICES unset, CUDA_DEVICE_ORDER=PCI_BUS_ID): " +
                 describe_run(*cl));
  }
  return ev;
}

// The user's run found no device while the clean run found some: CUDA itself
// says the variable hides every GPU, whatever the prediction says.
bool observed_none(const Snapshot& s) {
  const CudaRun* u = user_cuda_run(s);
  if (u == nullptr || !u->child_error.empty()) return false;
  bool none = run_failed_with(*u, 100) ||
              (u->init_rc == 0 && u->device_count_rc == 0 && u->device_count == 0);
  if (!none) return false;
  const CudaRun* cl = clean_cuda_run(s);
  return cl == nullptr || (cl->init_rc == 0 && cl->device_count > 0);
}

// The entries CUDA would accept, in order, without the one that stops it.
std::vector<size_t> usable_entries(const CvdResult& r) {
  std::vector<size_t> out;
  std::vector<size_t> gpus_taken;
  for (size_t i = 0; i < r.entries.size(); ++i) {
    const CvdEntry& e = r.entries[i];
    bool was_visible = e.state == CvdState::kVisible;
    bool hidden_valid = e.state == CvdState::kIgnored && e.gpu && e.form != CvdForm::kMig;
    if (!was_visible && !hidden_valid) continue;
    if (std::find(gpus_taken.begin(), gpus_taken.end(), *e.gpu) != gpus_taken.end()) continue;
    gpus_taken.push_back(*e.gpu);
    out.push_back(i);
  }
  return out;
}

// `export` lines that keep what the user meant: the same entries without the
// bad one, and the same GPUs by UUID (immune to CUDA_DEVICE_ORDER).
std::vector<std::string> corrected_exports(const Ctx& c) {
  std::vector<std::string> out;
  std::vector<size_t> keep = usable_entries(c.cvd);
  if (keep.empty()) return out;
  std::vector<std::string> texts;
  std::vector<std::string> uuids;
  std::vector<std::string> bdfs;
  for (size_t i : keep) {
    const CvdEntry& e = c.cvd.entries[i];
    texts.push_back(e.index ? std::to_string(*e.index) : std::string(trim_isspace(e.text)));
    const GpuIdentity& g = c.inv.gpus[*e.gpu];
    uuids.push_back(g.uuid);
    bdfs.push_back(g.bdf);
  }
  out.push_back(
      fmt::format("export CUDA_VISIBLE_DEVICES={}   # {}", join(texts, ","), join(bdfs, ", ")));
  bool uuids_known =
      std::none_of(uuids.begin(), uuids.end(), [](const std::string& u) { return u.empty(); });
  if (uuids_known && c.cvd.entries[keep[0]].form != CvdForm::kUuid) {
    out.push_back(
        fmt::format("export CUDA_VISIBLE_DEVICES={}   # the same GPUs by UUID, "
                    "whatever the device order",
                    join(uuids, ",")));
  }
  return out;
}

std::vector<size_t> all_positions(const GpuInventory& inv) {
  std::vector<size_t> out(inv.gpus.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

std::vector<std::string> bdfs_of(const GpuInventory& inv, const std::vector<size_t>& positions) {
  std::vector<std::string> out;
  for (size_t p : positions) out.push_back(inv.gpus[p].bdf);
  return out;
}

bool is_minus_one_only(const CvdResult& r) {
  if (r.entries.empty() || !r.stop || *r.stop != 0) return false;
  return trim_isspace(r.entries[0].text) == "-1";
}

Finding hides_all(const Ctx& c) {
  const CvdResult& r = c.cvd;
  bool predicted_none = r.visible_count() == 0;
  bool seen_none = observed_none(c.s);
  std::string machine =
      c.inv.gpus.empty() ? "" : fmt::format(" (this machine has {})", c.inv.gpus.size());
  if (!predicted_none && !seen_none) {
    std::string what = r.visible.empty() ? "" : ": " + join(bdfs_of(c.inv, r.visible), ", ");
    Finding f =
        make_finding(kHidesAll, Severity::kOk,
                     fmt::format("CUDA_VISIBLE_DEVICES leaves {} GPU{} visible to CUDA{}",
                                 r.visible_count(), r.visible_count() == 1 ? "" : "s", what));
    f.evidence = base_evidence(c);
    return f;
  }
  std::string summary;
  if (!predicted_none) {
    summary = "CUDA finds no GPU with this CUDA_VISIBLE_DEVICES, though it finds them without it";
  } else if (r.entries.empty()) {
    summary = "CUDA_VISIBLE_DEVICES is set but empty, so CUDA sees no GPU at all" + machine;
  } else if (r.duplicate) {
    summary = fmt::format(
        "CUDA_VISIBLE_DEVICES names the same GPU twice (\"{}\"), and then CUDA shows no GPU at "
        "all{}",
        r.entries[*r.stop].text, machine);
  } else if (is_minus_one_only(r)) {
    summary = "CUDA_VISIBLE_DEVICES=-1 hides every GPU from CUDA" + machine;
  } else if (r.stop && *r.stop == 0) {
    summary = fmt::format(
        "CUDA sees no GPU: CUDA_VISIBLE_DEVICES starts with \"{}\", which CUDA rejects, and CUDA "
        "stops reading there{}",
        r.entries[0].text, machine);
  } else {
    summary = "CUDA_VISIBLE_DEVICES leaves no GPU visible to CUDA" + machine;
  }
  Finding f = make_finding(kHidesAll, Severity::kFail, summary);
  f.evidence = base_evidence(c);
  f.gpus = bdfs_of(c.inv, all_positions(c.inv));
  if (predicted_none && seen_none) {
    f.evidence.push_back("CUDA's own run confirms it: no device with this environment");
  }
  f.remedy.push_back(
      fmt::format("unset CUDA_VISIBLE_DEVICES   # CUDA sees every GPU{}",
                  c.inv.gpus.empty() ? "" : fmt::format(" ({})", c.inv.gpus.size())));
  std::vector<std::string> fixed = corrected_exports(c);
  if (!fixed.empty()) {
    f.remedy.insert(f.remedy.end(), fixed.begin(), fixed.end());
  } else if (!c.inv.gpus.empty() && !c.inv.gpus[0].uuid.empty()) {
    f.remedy.push_back(fmt::format("export CUDA_VISIBLE_DEVICES={}   # only {}", c.inv.gpus[0].uuid,
                                   gpu_ref(c.inv.gpus[0])));
  }
  if (is_minus_one_only(r)) {
    f.remedy.push_back("if this job is meant to run on the CPU only, this is expected");
  }
  return f;
}

std::string quoted_entries(const CvdResult& r, const std::vector<size_t>& idx) {
  std::vector<std::string> q;
  for (size_t i : idx) q.push_back("\"" + r.entries[i].text + "\"");
  return join(q, ", ");
}

Finding invalid(const Ctx& c) {
  const CvdResult& r = c.cvd;
  std::vector<std::string> ev = base_evidence(c);
  if (r.entries.empty()) {
    Finding f = make_finding(kInvalid, Severity::kOk,
                             "CUDA_VISIBLE_DEVICES is empty: it has no entry for CUDA to reject");
    f.evidence = ev;
    return f;
  }
  std::vector<size_t> hidden = r.hidden_valid_entries();
  std::vector<size_t> hidden_gpus;
  for (size_t i : hidden) hidden_gpus.push_back(*r.entries[i].gpu);
  std::string kept =
      r.visible.empty() ? std::string("no GPU") : "only " + join(bdfs_of(c.inv, r.visible), ", ");
  Finding f;
  if (r.stop) {
    const CvdEntry& bad = r.entries[*r.stop];
    if (r.duplicate) {
      f = make_finding(kInvalid, Severity::kFail,
                       fmt::format("CUDA_VISIBLE_DEVICES repeats a GPU (\"{}\", entry {}), and "
                                   "CUDA then drops the whole list",
                                   bad.text, *r.stop + 1));
    } else if (!hidden.empty()) {
      // With a GPU left before the rejected entry CUDA starts, on fewer GPUs
      // than the job asked for: a warning that says which, not a failed start.
      f = make_finding(
          kInvalid, r.visible.empty() ? Severity::kFail : Severity::kWarn,
          fmt::format("CUDA_VISIBLE_DEVICES stops at \"{}\" (entry {}): CUDA uses {} and silently "
                      "drops {}",
                      bad.text, *r.stop + 1, kept, quoted_entries(r, hidden)));
    } else if (r.visible_count() == 0 && is_minus_one_only(r)) {
      f = make_finding(kInvalid, Severity::kInfo,
                       "CUDA_VISIBLE_DEVICES=-1 is the usual way to hide every GPU: CUDA stops "
                       "reading at -1 (see visible-devices.hides-all)");
    } else if (r.visible_count() == 0) {
      f = make_finding(kInvalid, Severity::kFail,
                       fmt::format("CUDA_VISIBLE_DEVICES's first entry \"{}\" is rejected ({}), "
                                   "so CUDA reads nothing after it",
                                   bad.text, bad.reason));
    } else {
      f = make_finding(kInvalid, Severity::kWarn,
                       fmt::format("CUDA_VISIBLE_DEVICES ends with an entry CUDA rejects (\"{}\": "
                                   "{}); CUDA uses the {} entr{} before it",
                                   bad.text, bad.reason, r.visible_count(),
                                   r.visible_count() == 1 ? "y" : "ies"));
    }
    f.gpus = bdfs_of(c.inv, hidden_gpus);
    f.evidence = ev;
    f.remedy = corrected_exports(c);
    f.remedy.push_back("unset CUDA_VISIBLE_DEVICES   # or use every GPU");
    return f;
  }
  auto junk = std::find_if(r.entries.begin(), r.entries.end(),
                           [](const CvdEntry& e) { return e.note_is_junk; });
  if (junk != r.entries.end()) {
    f = make_finding(kInvalid, Severity::kWarn,
                     fmt::format("CUDA_VISIBLE_DEVICES entry \"{}\" is not a clean index: {}",
                                 junk->text, junk->note));
    f.evidence = ev;
    f.remedy = corrected_exports(c);
    return f;
  }
  if (!r.inventory_known) {
    f = make_finding(kInvalid, Severity::kNotApplicable,
                     "no GPU list (NVML, CUDA and the PCI bus gave none) to check "
                     "CUDA_VISIBLE_DEVICES against");
    f.evidence = ev;
    return f;
  }
  f = make_finding(kInvalid, Severity::kOk,
                   fmt::format("every CUDA_VISIBLE_DEVICES entry is one CUDA accepts ({} GPU{} "
                               "visible)",
                               r.visible_count(), r.visible_count() == 1 ? "" : "s"));
  f.evidence = ev;
  return f;
}

// NVIDIA_VISIBLE_DEVICES outside a container: a common mix-up with
// CUDA_VISIBLE_DEVICES (nvidia-facts §6.3: only the container runtime reads it).
std::string nvidia_visible_note(const Snapshot& s) {
  const std::string* v = env_var(s, "NVIDIA_VISIBLE_DEVICES");
  if (v == nullptr || s.container.in_container) return "";
  return env_assignment("NVIDIA_VISIBLE_DEVICES", *v) +
         " is set, but outside a container nothing reads it: it tells the NVIDIA container "
         "runtime which GPUs to give a container; CUDA reads only CUDA_VISIBLE_DEVICES";
}

Finding with_nvidia_note(Finding f, const std::string& note) {
  if (note.empty()) return f;
  if (f.severity == Severity::kOk || f.severity == Severity::kNotApplicable) {
    f.severity = Severity::kInfo;
    f.summary = "NVIDIA_VISIBLE_DEVICES is set outside a container, where CUDA ignores it";
    f.remedy.push_back(
        "to choose GPUs for CUDA, set CUDA_VISIBLE_DEVICES instead (e.g. "
        "export CUDA_VISIBLE_DEVICES=0)");
  }
  f.evidence.push_back(note);
  return f;
}

}  // namespace

std::vector<Finding> check_visible_devices(const Snapshot& s, const Config&) {
  const std::string* value = env_var(s, "CUDA_VISIBLE_DEVICES");
  std::string note = nvidia_visible_note(s);
  if (value == nullptr) {
    const char* why = "CUDA_VISIBLE_DEVICES is not set, so CUDA sees every GPU";
    std::vector<Finding> out;
    out.push_back(with_nvidia_note(make_finding(kInvalid, Severity::kNotApplicable, why), note));
    out.push_back(make_finding(kHidesAll, Severity::kNotApplicable, why));
    return out;
  }
  Ctx c{s, gpu_inventory(s), parse_device_order(env_var(s, "CUDA_DEVICE_ORDER")), {}};
  c.cvd = parse_cuda_visible_devices(value, c.inv.gpus, c.order.order);
  return {with_nvidia_note(invalid(c), note), hides_all(c)};
}

}  // namespace gd
