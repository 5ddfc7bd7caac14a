#include "job/fitness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/ascii.h"
#include "util/text.h"

namespace gd {
namespace {

// --- the env fixes ------------------------------------------------------------

std::string ld_path_without_stubs(const std::string& v) {
  return filter_path_list(v, [](const std::string& e) { return is_stub_dir(e); });
}

std::string ld_path_without_compat(const std::string& v) {
  return filter_path_list(v, [](const std::string& e) { return is_compat_dir(e); });
}

// LD_PRELOAD takes colons or blanks between entries (ld.so(8)); a stub is a
// library whose directory is a stubs directory.
std::string preload_without_stubs(const std::string& v) {
  std::string colons = v;
  std::replace(colons.begin(), colons.end(), ' ', ':');
  return filter_path_list(colons, [](const std::string& e) {
    size_t slash = e.rfind('/');
    return slash != std::string::npos && is_stub_dir(e.substr(0, slash));
  });
}

// NVIDIA_DRIVER_CAPABILITIES: the container toolkit mounts libcuda for
// `compute` and NVML for `utility` (nvidia-facts.md §6.3, 2026-12).
std::string capabilities_with_compute_utility(const std::string& v) {
  std::vector<std::string> caps;
  for (auto& c : split_strings(v, ',')) {
    std::string t;
    for (char ch : c) {
      if (!std::isspace(static_cast<unsigned char>(ch))) {
        t += ascii_lower(ch);
      }
    }
    if (!t.empty()) caps.push_back(t);
  }
  auto has = [&](const char* c) {
    return std::find(caps.begin(), caps.end(), "all") != caps.end() ||
           std::find(caps.begin(), caps.end(), c) != caps.end();
  };
  bool compute = has("compute");
  bool utility = has("utility");
  if (!compute) caps.push_back("compute");
  if (!utility) caps.push_back("utility");
  if (compute && utility) return v;
  return join(caps, ",");
}

constexpr const char* kDeviceOrderId = "device-order.mismatch";

// A finding a setting can answer: a note too (device-order.mismatch is one
// unless the user selects GPUs by index), not only a problem.
bool answerable(const Finding& f) { return says_something(f.severity); }

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void add_unique(std::vector<std::string>* v, const std::string& x) {
  if (!contains(*v, x)) v->push_back(x);
}

const std::string* env_value(const Snapshot& s, const char* name) {
  auto it = s.env.vars.find(name);
  return it == s.env.vars.end() ? nullptr : &it->second;
}

// The fixes of the table that change a variable here, one setting per
// variable (stub and compat directories both leave LD_LIBRARY_PATH).
void apply_fix_rules(const Snapshot& s, const Report& r, Fitness* f,
                     std::vector<std::string>* cured) {
  std::vector<std::string> variables;
  for (const auto& rule : env_fix_rules()) {
    if (rule.apply != nullptr) add_unique(&variables, rule.variable);
  }
  for (const auto& var : variables) {
    const std::string* current = env_value(s, var.c_str());
    if (current == nullptr) continue;  // every rule here edits a value that is set
    EnvSetting set;
    set.name = var;
    set.value = *current;
    std::vector<std::string> whats;
    for (const auto& rule : env_fix_rules()) {
      if (rule.apply == nullptr || var != rule.variable) continue;
      bool fired = std::any_of(r.findings.begin(), r.findings.end(),
                               [&](const Finding& x) { return x.id == rule.id && answerable(x); });
      if (!fired) continue;
      std::string next = rule.apply(set.value);
      if (next == set.value) continue;
      set.value = next;
      add_unique(&set.ids, rule.id);
      add_unique(&whats, rule.what);
      set.container_only = set.container_only || rule.container_only;
      if (rule.cures_job) add_unique(cured, rule.id);
    }
    if (set.ids.empty()) continue;
    set.why = join(whats, "; ");
    f->fixes.push_back(std::move(set));
  }
}

}  // namespace

// Which finding is answered by which setting. Sources: each check's own
// remedy (src/checks/<check>.cc); nvidia-facts.md §6.1-§6.3 (2026-12).
// Findings whose remedy is not an environment setting are not here on
// purpose: uvm.hmm (a module parameter), memory.address-space-limit (ulimit,
// cgroup), mps.unreachable (a daemon, or the user's intent), cuda.fork-after-
// init (the program's start method), driver.* (packages and modules).
const std::vector<EnvFixRule>& env_fix_rules() {
  static const std::vector<EnvFixRule> kRules = {
      {kDeviceOrderId, "CUDA_DEVICE_ORDER", "PCI_BUS_ID: CUDA index = nvidia-smi index", nullptr,
       true, false},
      {"visible-devices.invalid", "CUDA_VISIBLE_DEVICES",
       "the GPUs it names, by UUID, without the entries CUDA rejects", nullptr, true, false},
      {"visible-devices.hides-all", "CUDA_VISIBLE_DEVICES",
       "the GPUs it names, by UUID, without the entries CUDA rejects", nullptr, true, false},
      {"cuda.stub-library", "LD_LIBRARY_PATH", "without the CUDA toolkit's stubs directory",
       ld_path_without_stubs, true, false},
      {"cuda.stub-library", "LD_PRELOAD", "without the CUDA toolkit's stub library",
       preload_without_stubs, true, false},
      {"cuda.compat-unsupported", "LD_LIBRARY_PATH", "without the forward-compat directory",
       ld_path_without_compat, true, false},
      {"cuda.compat-mismatch", "LD_LIBRARY_PATH", "without the forward-compat directory",
       ld_path_without_compat, true, false},
      {"container.capabilities", "NVIDIA_DRIVER_CAPABILITIES",
       "with compute and utility, read when the container is created",
       capabilities_with_compute_utility, false, true},
  };
  return kRules;
}

size_t Fitness::healthy_count() const {
  return static_cast<size_t>(
      std::count_if(gpus.begin(), gpus.end(), [](const GpuFitness& g) { return g.healthy; }));
}

const GpuFitness* Fitness::find(const std::string& bus_id) const {
  std::string want = normalize_bdf(bus_id);
  for (const auto& g : gpus) {
    if (g.bus_id == want) return &g;
  }
  return nullptr;
}

Fitness assess_fitness(const Snapshot& s, const Report& r) {
  Fitness f;
  f.inventory = gpu_inventory(s);
  const auto& inv = f.inventory.gpus;
  for (const auto& id : inv) {
    GpuFitness g;
    g.bus_id = id.bdf;
    g.uuid = id.uuid;
    g.name = id.name;
    g.smi_index = id.smi_index;
    f.gpus.push_back(std::move(g));
  }
  std::vector<size_t> pci_order = pci_bus_order(inv);
  for (size_t k = 0; k < pci_order.size(); ++k) {
    f.gpus[pci_order[k]].cuda_pci_index = static_cast<int>(k);
  }
  // Owned by the driver but listed by neither NVML nor CUDA.
  for (const auto& d : s.pci) {
    if (d.kind != PciKind::kGpu || d.driver != "nvidia" || d.proc_excluded) continue;
    if (f.find(d.bdf) != nullptr) continue;
    GpuFitness g;
    g.bus_id = normalize_bdf(d.bdf);
    g.uuid = d.proc_uuid;
    g.name = d.proc_model;
    g.enumerable = false;
    f.gpus.push_back(std::move(g));
  }
  for (auto& g : f.gpus) {
    for (const auto& d : s.pci) {
      if (normalize_bdf(d.bdf) != g.bus_id) continue;
      g.numa_node = d.numa_node;
      g.local_cpulist = d.local_cpulist;
    }
  }

  // What the plan's settings and the fixes answer.
  std::vector<std::string> cured;
  for (const auto& rule : env_fix_rules()) {
    if (rule.apply != nullptr) continue;
    for (const auto& x : r.findings) {
      if (x.id == rule.id && answerable(x)) add_unique(&cured, x.id);
    }
  }
  apply_fix_rules(s, r, &f, &cured);
  for (const auto& x : r.findings) {
    if (!answerable(x)) continue;
    if (contains(cured, x.id) || (!x.follows_from.empty() && contains(cured, x.follows_from))) {
      add_unique(&f.answered_ids, x.id);
    }
  }

  // Health, in rank order of the findings.
  for (const auto& x : r.findings) {
    if (x.severity != Severity::kFail || contains(f.answered_ids, x.id)) continue;
    if (x.gpus.empty()) {
      add_unique(&f.machine_ids, x.id);
      for (auto& g : f.gpus) add_unique(&g.unhealthy_ids, x.id);
      continue;
    }
    for (const auto& bdf : x.gpus) {
      std::string want = normalize_bdf(bdf);
      for (auto& g : f.gpus) {
        if (g.bus_id == want) add_unique(&g.unhealthy_ids, x.id);
      }
    }
  }
  for (auto& g : f.gpus) g.healthy = g.enumerable && g.unhealthy_ids.empty();
  return f;
}

// --- the job's environment ----------------------------------------------------

namespace {

std::string bus_ids(const Fitness& f, const std::vector<size_t>& positions) {
  std::vector<std::string> out;
  for (size_t p : positions) out.push_back(f.gpus[p].bus_id);
  return join(out, ", ");
}

// Why a user's CUDA_VISIBLE_DEVICES cannot be rewritten as whole GPUs by
// UUID; "" when it can.
std::string why_untranslatable(const CvdResult& r, const std::vector<GpuIdentity>& inv,
                               DeviceOrder order, bool* index_form) {
  *index_form = false;
  bool mig = false;
  for (const auto& e : r.entries) {
    if (e.form == CvdForm::kIndex) *index_form = true;
    if (e.form == CvdForm::kMig) mig = true;
  }
  if (r.entries.empty()) return "";
  if (!r.inventory_known) return "there is no GPU list here to resolve it against";
  if (mig) return "it names MIG instances, which a list of whole GPUs cannot express";
  if (*index_form && order == DeviceOrder::kFastestFirst && inv.size() > 1 &&
      !fastest_first_predictable(inv)) {
    return "its indices count in CUDA's default order, which cannot be predicted here "
           "(compute capability or clock unknown)";
  }
  bool unverified = r.unverified_visible > 0 ||
                    std::any_of(r.entries.begin(), r.entries.end(),
                                [](const CvdEntry& e) { return e.state == CvdState::kUnverified; });
  if (unverified) return "some of its entries cannot be checked here";
  return "";
}

// Entries CUDA accepts plus those it drops after a rejected one, each GPU
// once, in the user's order: the GPUs the user named.
std::vector<size_t> named_gpus(const CvdResult& r) {
  std::vector<size_t> out;
  for (const auto& e : r.entries) {
    bool usable = e.state == CvdState::kVisible || e.state == CvdState::kDuplicate ||
                  e.state == CvdState::kIgnored;
    if (!usable || !e.gpu || e.form == CvdForm::kMig) continue;
    if (std::find(out.begin(), out.end(), *e.gpu) == out.end()) out.push_back(*e.gpu);
  }
  return out;
}

EnvSetting visible_setting(const Fitness& f, const JobEnv& j, const std::string* user_value) {
  EnvSetting set;
  set.name = "CUDA_VISIBLE_DEVICES";
  bool all_uuids = std::all_of(j.visible.begin(), j.visible.end(),
                               [&](size_t p) { return !f.gpus[p].uuid.empty(); });
  std::vector<std::string> ids;
  for (size_t p : j.visible) {
    // Without every UUID, indices in PCI bus order (CUDA_DEVICE_ORDER is set
    // with it); a list may not mix the two forms.
    ids.push_back(all_uuids ? f.gpus[p].uuid : std::to_string(f.gpus[p].cuda_pci_index));
  }
  set.value = join(ids, ",");
  std::string what = all_uuids ? "by UUID" : "by index in PCI bus order (a UUID is unknown)";
  if (j.visible.empty()) {
    set.why = j.excluded.empty() ? "no GPU" : "no GPU: none of them is fit";
  } else if (j.excluded.empty() && j.unhealthy_kept.empty()) {
    set.why =
        fmt::format("the {} GPU{} {}, so no GPU lost later shifts the others: {}", j.visible.size(),
                    j.visible.size() == 1 ? "" : "s", what, bus_ids(f, j.visible));
  } else if (!j.excluded.empty()) {
    set.why = fmt::format("the {} fit GPU{} {}: {}", j.visible.size(),
                          j.visible.size() == 1 ? "" : "s", what, bus_ids(f, j.visible));
  } else {
    set.why = fmt::format("the {} GPU{} {}: {}", j.visible.size(), j.visible.size() == 1 ? "" : "s",
                          what, bus_ids(f, j.visible));
  }
  if (!j.excluded.empty()) set.why += "; left out: " + describe_unfit(f, j.excluded);
  if (user_value != nullptr) set.why += "; as selected by CUDA_VISIBLE_DEVICES=" + *user_value;
  for (const char* id : {"visible-devices.invalid", "visible-devices.hides-all"}) {
    if (contains(f.answered_ids, id)) set.ids.push_back(id);
  }
  return set;
}

}  // namespace

size_t JobEnv::visible_healthy(const Fitness& f) const {
  return static_cast<size_t>(
      std::count_if(visible.begin(), visible.end(), [&](size_t p) { return f.gpus[p].healthy; }));
}

const EnvSetting* JobEnv::find(const std::string& name) const {
  for (const auto& s : settings) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

JobEnv plan_job_env(const Snapshot& s, const Fitness& f, const JobEnvOptions& opt) {
  JobEnv j;
  const auto& inv = f.inventory.gpus;
  const std::string* user_value = env_value(s, "CUDA_VISIBLE_DEVICES");
  DeviceOrderSetting order = parse_device_order(env_value(s, "CUDA_DEVICE_ORDER"));
  bool set_order = true;
  if (user_value == nullptr) {
    j.selected = pci_bus_order(inv);
  } else {
    j.user_selection = true;
    CvdResult r = parse_cuda_visible_devices(user_value, inv, order.order);
    bool index_form = false;
    std::string why = why_untranslatable(r, inv, order.order, &index_form);
    if (!why.empty()) {
      j.kept_user_value = true;
      j.notes.push_back(fmt::format(
          "CUDA_VISIBLE_DEVICES={} is left as set: {}; unfit GPUs cannot be left out of it",
          *user_value, why));
      if (index_form && order.order != DeviceOrder::kPciBusId) {
        set_order = false;
        j.notes.push_back(
            "CUDA_DEVICE_ORDER is left as set too: the indices in CUDA_VISIBLE_DEVICES depend on "
            "it");
      }
      // Every reason to keep it is one we cannot resolve it for.
      j.visible_known = false;
    } else {
      j.selected = named_gpus(r);
      if (j.selected != r.visible) {
        j.notes.push_back(fmt::format(
            "CUDA_VISIBLE_DEVICES={}: CUDA itself would use {}; the job gets the GPUs it names: {}",
            *user_value, r.visible.empty() ? std::string("no GPU") : bus_ids(f, r.visible),
            j.selected.empty() ? std::string("none") : bus_ids(f, j.selected)));
      }
    }
  }
  for (size_t p : j.selected) {
    if (f.gpus[p].healthy) {
      j.visible.push_back(p);
    } else if (opt.exclude_unhealthy && !j.kept_user_value) {
      j.excluded.push_back(p);
    } else {
      j.visible.push_back(p);
      j.unhealthy_kept.push_back(p);
    }
  }

  if (set_order) {
    EnvSetting o;
    o.name = "CUDA_DEVICE_ORDER";
    o.value = "PCI_BUS_ID";
    if (contains(f.answered_ids, kDeviceOrderId)) {
      o.why =
          "CUDA numbers GPUs fastest first by default, unlike nvidia-smi on this machine: "
          "with PCI_BUS_ID CUDA index = nvidia-smi index";
      o.ids.push_back(kDeviceOrderId);
    } else {
      o.why = "CUDA index = nvidia-smi index (PCI bus order), whatever GPUs a machine has";
    }
    j.settings.push_back(std::move(o));
  }
  if (!j.kept_user_value && (opt.always_set_visible || opt.exclude_unhealthy || j.user_selection)) {
    j.settings.push_back(visible_setting(f, j, user_value));
  }
  for (const auto& fix : f.fixes) j.settings.push_back(fix);
  return j;
}

std::string describe_unfit(const Fitness& f, const std::vector<size_t>& positions) {
  std::vector<size_t> which = positions;
  if (which.empty()) {
    for (size_t p = 0; p < f.gpus.size(); ++p) which.push_back(p);
  }
  std::vector<std::string> parts;
  bool machine = false;
  for (size_t p : which) {
    const GpuFitness& g = f.gpus[p];
    if (g.healthy) continue;
    std::vector<std::string> own;
    for (const auto& id : g.unhealthy_ids) {
      if (!contains(f.machine_ids, id)) own.push_back(id);
    }
    machine = machine || own.size() < g.unhealthy_ids.size();
    if (!own.empty()) {
      parts.push_back(g.bus_id + " (" + join(own, ", ") + ")");
    } else if (!g.enumerable) {
      parts.push_back(g.bus_id + " (listed by neither NVML nor CUDA)");
    }
  }
  if (machine) parts.push_back("every GPU (" + join(f.machine_ids, ", ") + ")");
  return join(parts, "; ");
}

// --- CPU binding ------------------------------------------------------------------

LocalRank local_rank(const std::map<std::string, std::string>& env) {
  LocalRank out;
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    auto it = env.find(name);
    if (it == env.end()) continue;
    out.found = true;
    out.variable = name;
    const std::string& v = it->second;
    bool digits = !v.empty() && v.size() <= 6 &&
                  std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      out.error = fmt::format("{}={} is not a local rank (a number 0 or more)", name, v);
      return out;
    }
    out.rank = std::stoi(v);
    return out;
  }
  return out;
}

// /sys/bus/pci/devices/0000:41:00.0/local_cpulist, as the kernel prints it
// (cpulist_print, bitmap_print_to_pagebuf):
//   0-15,32-47
//   16-31,48-63
//   0-255
Result<std::vector<int>> parse_cpu_list(const std::string& text) {
  constexpr long kMaxCpu = 1 << 16;  // CONFIG_NR_CPUS tops out at 8192
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::set<int> cpus;
  if (t.empty()) return std::vector<int>{};
  for (const auto& part : split_strings(t, ',')) {
    auto number = [&](const std::string& n, long* out) {
      if (n.empty() || n.size() > 6) return false;
      for (char c : n) {
        if (c < '0' || c > '9') return false;
      }
      *out = std::stol(n);
      return *out < kMaxCpu;
    };
    size_t dash = part.find('-');
    long lo = 0;
    long hi = 0;
    bool ok = dash == std::string::npos
                  ? number(part, &lo) && ((hi = lo), true)
                  : number(part.substr(0, dash), &lo) && number(part.substr(dash + 1), &hi);
    if (!ok || hi < lo)
      return Error{fmt::format("CPU list \"{}\": \"{}\" is not N or N-M", printable(t, 80),
                               printable(part, 32))};
    for (long c = lo; c <= hi; ++c) cpus.insert(static_cast<int>(c));
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < cpus.size();) {
    size_t k = i;
    while (k + 1 < cpus.size() && cpus[k + 1] == cpus[k] + 1) ++k;
    parts.push_back(k == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[k]));
    i = k + 1;
  }
  return join(parts, ",");
}

}  // namespace gd
