#include "facts/cuda_visible.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <unordered_map>

#include "util/ascii.h"
#include "util/text.h"

namespace gd {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// A CUDA run that enumerated every GPU: it succeeded and nothing hid GPUs.
bool run_saw_all(const CudaRun& r, bool cvd_unset) {
  if (!r.child_error.empty() || r.init_rc != 0 || r.device_count_rc != 0) return false;
  if (r.devices.empty()) return false;
  if (r.label == "clean") return true;
  auto it = r.env_changes.find("CUDA_VISIBLE_DEVICES");
  return cvd_unset && it == r.env_changes.end();
}

// Every CUDA device of every run by normalized bus id, in run order: one
// pass, so that filling N GPUs stays linear in N (a snapshot may list
// thousands of GPUs).
using CudaDevicesByBdf = std::unordered_map<std::string, std::vector<const CudaDevice*>>;

CudaDevicesByBdf cuda_devices_by_bdf(const Snapshot& s) {
  CudaDevicesByBdf out;
  for (const auto& run : s.cuda.runs) {
    for (const auto& d : run.devices) {
      if (d.get_rc == 0) out[normalize_bdf(d.pci_bus_id)].push_back(&d);
    }
  }
  return out;
}

void fill_from_cuda(const CudaDevicesByBdf& by_bdf, GpuIdentity& g) {
  auto it = by_bdf.find(g.bdf);
  if (it == by_bdf.end()) return;
  for (const CudaDevice* d : it->second) {
    if (g.cc_major == 0 && d->cc_major > 0) {
      g.cc_major = d->cc_major;
      g.cc_minor = d->cc_minor;
    }
    if (g.max_sm_clock_mhz == 0 && d->clock_khz > 0) {
      g.max_sm_clock_mhz = static_cast<uint32_t>(d->clock_khz / 1000);
    }
    if (g.uuid.empty()) g.uuid = d->uuid;
    if (g.name.empty()) g.name = d->name;
    if (g.memory_total_bytes == 0) g.memory_total_bytes = d->total_memory_bytes;
  }
}

std::vector<GpuIdentity> from_nvml(const Snapshot& s) {
  std::vector<GpuIdentity> out;
  if (!s.nvml.attempted || !s.nvml.child_error.empty() || s.nvml.init_rc != 0) return out;
  for (const auto& n : s.nvml.gpus) {
    if (n.handle_rc != 0 || !n.pci_bus_id.ok() || n.pci_bus_id.value.empty()) continue;
    GpuIdentity g;
    g.bdf = normalize_bdf(n.pci_bus_id.value);
    if (n.uuid.ok()) g.uuid = n.uuid.value;
    if (n.name.ok()) g.name = n.name.value;
    if (n.cc_major.ok() && n.cc_minor.ok()) {
      g.cc_major = n.cc_major.value;
      g.cc_minor = n.cc_minor.value;
    }
    if (n.max_sm_clock_mhz.ok()) g.max_sm_clock_mhz = n.max_sm_clock_mhz.value;
    if (n.memory_total_bytes.ok()) g.memory_total_bytes = n.memory_total_bytes.value;
    g.smi_index = static_cast<int>(n.index);
    if (n.mig_mode_current.ok()) g.mig_enabled = n.mig_mode_current.value == 1;
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const GpuIdentity& a, const GpuIdentity& b) {
    return a.smi_index < b.smi_index;
  });
  return out;
}

std::vector<GpuIdentity> from_cuda(const Snapshot& s) {
  bool cvd_unset = s.env.vars.count("CUDA_VISIBLE_DEVICES") == 0;
  const CudaRun* best = nullptr;
  for (const auto& r : s.cuda.runs) {
    if (!run_saw_all(r, cvd_unset)) continue;
    if (best == nullptr || r.label == "clean") best = &r;
  }
  std::vector<GpuIdentity> out;
  if (best == nullptr) return out;
  for (const auto& d : best->devices) {
    if (d.get_rc != 0 || d.pci_bus_id.empty()) continue;
    GpuIdentity g;
    g.bdf = normalize_bdf(d.pci_bus_id);
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const GpuIdentity& a, const GpuIdentity& b) { return a.bdf < b.bdf; });
  for (size_t i = 0; i < out.size(); ++i) out[i].smi_index = static_cast<int>(i);
  return out;
}

std::vector<GpuIdentity> from_pci(const Snapshot& s) {
  std::vector<GpuIdentity> out;
  for (const auto& d : s.pci) {
    if (d.kind != PciKind::kGpu || d.proc_excluded || d.driver != "nvidia") continue;
    GpuIdentity g;
    g.bdf = normalize_bdf(d.bdf);
    g.uuid = d.proc_uuid;
    g.name = d.proc_model;
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const GpuIdentity& a, const GpuIdentity& b) { return a.bdf < b.bdf; });
  for (size_t i = 0; i < out.size(); ++i) out[i].smi_index = static_cast<int>(i);
  return out;
}

// --- CUDA_VISIBLE_DEVICES entries -----------------------------------------------

CvdForm form_of(const std::string& text) {
  if (text.empty()) return CvdForm::kEmpty;
  if (starts_with(text, "GPU-")) return CvdForm::kUuid;
  if (starts_with(text, "MIG-")) return CvdForm::kMig;
  return CvdForm::kIndex;
}

struct Resolution {
  bool ok = false;
  bool unverified = false;
  std::optional<size_t> gpu;
  std::optional<uint64_t> index;
  std::string reason;
  std::string note;
  bool junk = false;
};

Resolution invalid(std::string reason) {
  Resolution r;
  r.reason = std::move(reason);
  return r;
}

// Why an entry does not have the list's form. The list's form is that of its
// first entry; CUDA stops at an entry of another form.
std::string wrong_form_reason(const std::string& text, CvdForm list_form) {
  std::string t(trim_isspace(text));
  if (text.empty()) return "empty entry";
  if (t.empty()) return "blank entry";
  bool uuidish = starts_with(t, "GPU-") || starts_with(t, "MIG-");
  if (list_form == CvdForm::kIndex) {
    if (uuidish && t != text) {
      return "blank before a UUID: CUDA compares UUIDs character by character (remove the blank)";
    }
    if (uuidish) {
      return "a UUID in a list that starts with an index: CUDA reads every entry in the form "
             "of the first one";
    }
    return "not a number";
  }
  const char* want = list_form == CvdForm::kUuid ? "GPU-" : "MIG-";
  if (starts_with(t, want)) {
    return "blank around the id: CUDA compares ids character by character (remove the blank)";
  }
  if (!t.empty() &&
      (std::isdigit(static_cast<unsigned char>(t[0])) != 0 || t[0] == '-' || t[0] == '+')) {
    return fmt::format(
        "an index in a list that starts with a {} id: CUDA reads every entry in "
        "the form of the first one",
        want);
  }
  if (uuidish) return fmt::format("not a {} id: CUDA does not mix GPU- and MIG- ids", want);
  return fmt::format("not a {} id", want);
}

// strtoul(text, &end, 10) as CUDA applies it: blanks skipped, one sign,
// decimal digits, the rest ignored. Example: " 1gpu" -> 1 (rest "gpu").
Resolution read_index(const std::string& text, const std::vector<GpuIdentity>& gpus,
                      const std::vector<size_t>& ordinal_to_gpu) {
  size_t i = 0;
  while (i < text.size() && is_blank(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  size_t digits_start = i;
  uint64_t value = 0;
  bool overflow = false;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (value > (kMax - d) / 10) {
      overflow = true;
      value = kMax;
    } else if (!overflow) {
      value = value * 10 + d;
    }
    ++i;
  }
  if (i == digits_start) return invalid(wrong_form_reason(text, CvdForm::kIndex));
  if (negative && value != 0) {
    return invalid(fmt::format("negative index {} (-1 is the usual way to hide every GPU)",
                               trim_isspace(text)));
  }
  Resolution r;
  r.index = value;
  std::string rest = text.substr(i);
  bool leading_blank = digits_start > 0 && is_blank(text[0]);
  if (!trim_isspace(rest).empty()) {
    r.junk = true;
    r.note =
        fmt::format("CUDA reads only the leading digits: \"{}\" is index {}, \"{}\" is ignored",
                    text, overflow ? std::string("(too large)") : std::to_string(value), rest);
  } else if (leading_blank || !rest.empty()) {
    r.note = fmt::format("blanks around \"{}\" are ignored for an index", trim_isspace(text));
  }
  if (gpus.empty()) {
    r.ok = true;
    r.unverified = true;
    r.reason = "no GPU list to check the index against";
    return r;
  }
  if (overflow || value >= gpus.size()) {
    Resolution bad =
        invalid(fmt::format("index {} is past the last GPU: CUDA numbers the {} GPU{} here 0-{}",
                            overflow ? std::string(trim_isspace(text)) : std::to_string(value),
                            gpus.size(), gpus.size() == 1 ? "" : "s", gpus.size() - 1));
    bad.index = value;
    return bad;
  }
  r.ok = true;
  r.gpu = ordinal_to_gpu[static_cast<size_t>(value)];
  return r;
}

std::vector<size_t> uuid_prefix_matches(const std::string& prefix,
                                        const std::vector<GpuIdentity>& gpus, bool ignore_case) {
  std::vector<size_t> out;
  std::string p = ignore_case ? ascii_lower(prefix) : prefix;
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::string u = ignore_case ? ascii_lower(gpus[i].uuid) : gpus[i].uuid;
    if (!u.empty() && starts_with(u, p.c_str())) out.push_back(i);
  }
  return out;
}

bool any_uuid_unknown(const std::vector<GpuIdentity>& gpus) {
  return std::any_of(gpus.begin(), gpus.end(), [](const GpuIdentity& g) { return g.uuid.empty(); });
}

// Example: "GPU-1b9a0c7e" (unique prefix of GPU-1b9a0c7e-0d3f-...-000000000041).
Resolution read_uuid(const std::string& text, const std::vector<GpuIdentity>& gpus) {
  if (gpus.empty()) {
    Resolution r;
    r.ok = true;
    r.unverified = true;
    r.reason = "no GPU list to check the UUID against";
    return r;
  }
  std::vector<size_t> m = uuid_prefix_matches(text, gpus, false);
  if (m.size() == 1) {
    Resolution r;
    r.ok = true;
    r.gpu = m[0];
    return r;
  }
  if (m.size() > 1) {
    std::string which;
    for (size_t i : m) which += (which.empty() ? "" : ", ") + gpus[i].uuid;
    return invalid(
        fmt::format("ambiguous UUID prefix: \"{}\" matches {} GPUs ({})", text, m.size(), which));
  }
  if (any_uuid_unknown(gpus)) {
    Resolution r;
    r.ok = true;
    r.unverified = true;
    r.reason = "not every GPU's UUID is known here";
    return r;
  }
  std::string reason = fmt::format("no GPU's UUID starts with \"{}\"", text);
  std::string t(trim_isspace(text));
  if (t != text && uuid_prefix_matches(t, gpus, false).size() == 1) {
    reason += " (without the blanks it would match: CUDA does not trim them)";
  } else if (uuid_prefix_matches(text, gpus, true).size() == 1) {
    reason +=
        " (it matches when letter case is ignored: write the UUID as nvidia-smi -L prints it)";
  }
  return invalid(reason);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// Examples: "MIG-GPU-5f2e81a4-7b6c-4d8e-8f10-000000000018/1/0" (parent GPU
// UUID, GPU instance, compute instance) or "MIG-3b1d5e0a-..." (the MIG
// device's own UUID, R470+). Neither instance list is in the snapshot, so a
// MIG entry is at best unverified.
Resolution read_mig(const std::string& text, const std::vector<GpuIdentity>& gpus) {
  std::string body = text.substr(4);
  Resolution r;
  r.ok = true;
  r.unverified = true;
  bool any_mig_known = false;
  bool any_mig_enabled = false;
  for (const auto& g : gpus) {
    if (g.mig_enabled.has_value()) any_mig_known = true;
    if (g.mig_enabled.value_or(false)) any_mig_enabled = true;
  }
  if (starts_with(body, "GPU-")) {
    size_t slash = body.find('/');
    size_t slash2 = slash == std::string::npos ? slash : body.find('/', slash + 1);
    if (slash2 == std::string::npos || !all_digits(body.substr(slash + 1, slash2 - slash - 1)) ||
        !all_digits(body.substr(slash2 + 1))) {
      return invalid("malformed MIG id: expected MIG-GPU-<uuid>/<GI>/<CI> or MIG-<uuid>");
    }
    std::string parent = body.substr(0, slash);
    if (gpus.empty()) {
      r.reason = "no GPU list to check the MIG id against";
      return r;
    }
    std::vector<size_t> m = uuid_prefix_matches(parent, gpus, false);
    if (m.size() != 1) {
      if (m.empty() && any_uuid_unknown(gpus)) {
        r.reason = "not every GPU's UUID is known here";
        return r;
      }
      return invalid(m.empty() ? fmt::format("no GPU's UUID is \"{}\"", parent)
                               : fmt::format("ambiguous GPU UUID \"{}\"", parent));
    }
    const GpuIdentity& g = gpus[m[0]];
    if (g.mig_enabled.has_value() && !*g.mig_enabled) {
      return invalid(fmt::format("GPU {} ({}) does not have MIG mode enabled", g.bdf, g.uuid));
    }
    r.gpu = m[0];
    r.reason = fmt::format(
        "a MIG instance of {}; whether GPU instance {} / compute instance {} "
        "exists is not in the snapshot",
        g.bdf, body.substr(slash + 1, slash2 - slash - 1), body.substr(slash2 + 1));
    return r;
  }
  if (any_mig_known && !any_mig_enabled) return invalid("no GPU here has MIG mode enabled");
  r.reason = "MIG device UUIDs are not in the snapshot, so this id cannot be checked";
  return r;
}

Resolution resolve(const std::string& text, CvdForm list_form, const std::vector<GpuIdentity>& gpus,
                   const std::vector<size_t>& ordinal_to_gpu) {
  switch (list_form) {
    case CvdForm::kIndex:
    case CvdForm::kEmpty:
      return read_index(text, gpus, ordinal_to_gpu);
    case CvdForm::kUuid:
      if (!starts_with(text, "GPU-")) return invalid(wrong_form_reason(text, list_form));
      return read_uuid(text, gpus);
    case CvdForm::kMig:
      if (!starts_with(text, "MIG-")) return invalid(wrong_form_reason(text, list_form));
      return read_mig(text, gpus);
  }
  return invalid("unreadable entry");
}

}  // namespace

std::string normalize_bdf(const std::string& bdf) {
  std::string v = ascii_lower(trim_isspace(bdf));
  if (v.size() == 16 && v.compare(0, 4, "0000") == 0 && v[8] == ':') v = v.substr(4);
  return v;
}

GpuInventory gpu_inventory(const Snapshot& s) {
  GpuInventory inv;
  inv.gpus = from_nvml(s);
  inv.source = GpuSource::kNvml;
  if (inv.gpus.empty()) {
    inv.gpus = from_cuda(s);
    inv.source = GpuSource::kCudaRun;
  }
  if (inv.gpus.empty()) {
    inv.gpus = from_pci(s);
    inv.source = GpuSource::kPci;
  }
  if (inv.gpus.empty()) inv.source = GpuSource::kNone;
  CudaDevicesByBdf by_bdf = cuda_devices_by_bdf(s);
  for (auto& g : inv.gpus) fill_from_cuda(by_bdf, g);
  return inv;
}

const char* gpu_source_name(GpuSource source) {
  switch (source) {
    case GpuSource::kNvml:
      return "NVML";
    case GpuSource::kCudaRun:
      return "CUDA";
    case GpuSource::kPci:
      return "the PCI bus";
    case GpuSource::kNone:
      break;
  }
  return "nothing";
}

DeviceOrderSetting parse_device_order(const std::string* value) {
  DeviceOrderSetting d;
  if (value == nullptr) return d;
  d.set = true;
  d.value = *value;
  if (*value == "PCI_BUS_ID") {
    d.order = DeviceOrder::kPciBusId;
  } else if (*value != "FASTEST_FIRST") {
    d.recognized = false;
  }
  return d;
}

const char* device_order_name(DeviceOrder order) {
  return order == DeviceOrder::kPciBusId ? "PCI_BUS_ID" : "FASTEST_FIRST";
}

std::vector<size_t> fastest_first_order(const std::vector<GpuIdentity>& gpus) {
  std::vector<size_t> out(gpus.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    const GpuIdentity& x = gpus[a];
    const GpuIdentity& y = gpus[b];
    if (x.cc_major != y.cc_major) return x.cc_major > y.cc_major;
    if (x.cc_minor != y.cc_minor) return x.cc_minor > y.cc_minor;
    if (x.max_sm_clock_mhz != y.max_sm_clock_mhz) return x.max_sm_clock_mhz > y.max_sm_clock_mhz;
    return x.bdf < y.bdf;
  });
  return out;
}

std::vector<size_t> pci_bus_order(const std::vector<GpuIdentity>& gpus) {
  std::vector<size_t> out(gpus.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  std::stable_sort(out.begin(), out.end(),
                   [&](size_t a, size_t b) { return gpus[a].bdf < gpus[b].bdf; });
  return out;
}

std::vector<size_t> cuda_order(const std::vector<GpuIdentity>& gpus, DeviceOrder order) {
  return order == DeviceOrder::kPciBusId ? pci_bus_order(gpus) : fastest_first_order(gpus);
}

bool fastest_first_predictable(const std::vector<GpuIdentity>& gpus) {
  return std::all_of(gpus.begin(), gpus.end(),
                     [](const GpuIdentity& g) { return g.cc_major > 0 && g.max_sm_clock_mhz > 0; });
}

bool fastest_first_ambiguous(const std::vector<GpuIdentity>& gpus) {
  if (gpus.size() < 2) return false;
  if (!fastest_first_predictable(gpus)) return true;
  return std::any_of(gpus.begin(), gpus.end(), [&](const GpuIdentity& g) {
    return g.cc_major != gpus[0].cc_major || g.cc_minor != gpus[0].cc_minor ||
           g.max_sm_clock_mhz != gpus[0].max_sm_clock_mhz;
  });
}

bool environment_shows_default_order(const Snapshot& s) {
  const auto& env = s.env.vars;
  auto order_it = env.find("CUDA_DEVICE_ORDER");
  return env.count("CUDA_VISIBLE_DEVICES") == 0 &&
         (order_it == env.end() || order_it->second != "PCI_BUS_ID");
}

DefaultOrder default_cuda_order(const Snapshot& s, const GpuInventory& inv) {
  DefaultOrder d;
  const std::vector<GpuIdentity>& gpus = inv.gpus;
  if (gpus.empty()) {
    d.why_unknown = "no GPU list: NVML, CUDA and the PCI bus gave none";
    return d;
  }
  const bool shows = environment_shows_default_order(s);
  for (const auto& r : s.cuda.runs) {
    if (r.label != "user" || !shows || !r.env_changes.empty()) continue;
    if (!r.child_error.empty() || r.init_rc != 0 || r.device_count_rc != 0) continue;
    if (r.devices.size() != gpus.size()) continue;
    std::unordered_map<std::string, std::vector<size_t>> index_of;
    for (size_t i = 0; i < gpus.size(); ++i) index_of[gpus[i].bdf].push_back(i);
    std::vector<size_t> seen;
    for (const auto& dev : r.devices) {
      auto it = index_of.find(normalize_bdf(dev.pci_bus_id));
      if (it != index_of.end()) seen.insert(seen.end(), it->second.begin(), it->second.end());
    }
    if (seen.size() != gpus.size()) continue;
    d.known = true;
    d.observed = true;
    d.order = seen;
    return d;
  }
  if (gpus.size() > 1 && !fastest_first_predictable(gpus)) {
    d.why_unknown = fmt::format(
        "compute capability or max SM clock is unknown for some GPU ({} gave no such data)",
        gpu_source_name(inv.source));
    return d;
  }
  d.known = true;
  d.order = fastest_first_order(gpus);
  return d;
}

std::vector<size_t> CvdResult::hidden_valid_entries() const {
  std::vector<size_t> out;
  std::vector<size_t> seen = visible;
  for (size_t i = 0; i < entries.size(); ++i) {
    const CvdEntry& e = entries[i];
    if (e.state != CvdState::kIgnored || e.form == CvdForm::kMig || !e.gpu) continue;
    if (std::find(seen.begin(), seen.end(), *e.gpu) != seen.end()) continue;
    seen.push_back(*e.gpu);
    out.push_back(i);
  }
  return out;
}

CvdResult parse_cuda_visible_devices(const std::string* value, const std::vector<GpuIdentity>& gpus,
                                     DeviceOrder order) {
  CvdResult r;
  r.inventory_known = !gpus.empty();
  std::vector<size_t> ordinal_to_gpu = cuda_order(gpus, order);
  if (value == nullptr) {
    r.visible = ordinal_to_gpu;
    return r;
  }
  r.set = true;
  r.value = *value;
  if (value->empty()) return r;

  std::vector<std::string> texts = split_strings(*value, ',');
  CvdForm list_form = form_of(texts[0]);
  bool stopped = false;
  size_t mig_seen = 0;
  std::vector<std::string> unverified_seen;  // for duplicates we cannot resolve
  for (size_t i = 0; i < texts.size(); ++i) {
    CvdEntry e;
    e.text = texts[i];
    e.form = form_of(texts[i]);
    if (stopped) {
      CvdForm own = e.form == CvdForm::kEmpty ? CvdForm::kIndex : e.form;
      Resolution alone = resolve(e.text, own, gpus, ordinal_to_gpu);
      e.state = CvdState::kIgnored;
      e.reason = "after the stop: CUDA never reads it";
      e.index = alone.index;
      if (alone.ok && !alone.unverified) e.gpu = alone.gpu;
      r.entries.push_back(std::move(e));
      continue;
    }
    Resolution res = resolve(e.text, list_form, gpus, ordinal_to_gpu);
    e.index = res.index;
    e.note = res.note;
    e.note_is_junk = res.junk;
    e.reason = res.reason;
    e.gpu = res.gpu;
    if (!res.ok) {
      e.state = CvdState::kInvalid;
      r.stop = i;
      stopped = true;
      r.entries.push_back(std::move(e));
      continue;
    }
    bool dup = false;
    if (res.gpu && list_form != CvdForm::kMig) {
      dup = std::find(r.visible.begin(), r.visible.end(), *res.gpu) != r.visible.end();
    } else {
      std::string key = res.index ? std::to_string(*res.index) : e.text;
      dup = std::find(unverified_seen.begin(), unverified_seen.end(), key) != unverified_seen.end();
      unverified_seen.push_back(key);
    }
    if (dup) {
      e.state = CvdState::kDuplicate;
      e.reason = "repeats a device named earlier: CUDA then shows no device at all";
      r.stop = i;
      r.duplicate = true;
      stopped = true;
      for (auto& earlier : r.entries) {
        if (earlier.state == CvdState::kVisible || earlier.state == CvdState::kUnverified) {
          earlier.state = CvdState::kIgnored;
          earlier.reason =
              fmt::format("dropped: entry {} repeats a device, which empties the list", i + 1);
        }
      }
      r.visible.clear();
      r.unverified_visible = 0;
      r.entries.push_back(std::move(e));
      continue;
    }
    if (list_form == CvdForm::kMig) {
      if (++mig_seen > 1) {
        e.state = CvdState::kIgnored;
        e.reason = "CUDA enumerates only one MIG instance per process";
        r.entries.push_back(std::move(e));
        continue;
      }
      e.state = CvdState::kUnverified;
      ++r.unverified_visible;
    } else if (res.unverified) {
      e.state = CvdState::kUnverified;
      ++r.unverified_visible;
    } else {
      e.state = CvdState::kVisible;
      r.visible.push_back(*res.gpu);
    }
    r.entries.push_back(std::move(e));
  }
  return r;
}

}  // namespace gd
