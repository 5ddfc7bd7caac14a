#include "report/nfd.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <utility>

#include "catalog/gpu_models.h"
#include "facts/identity.h"
#include "job/fitness.h"
#include "util/ascii.h"

namespace gd {
namespace {

constexpr size_t kMaxLabelValue = 63;
constexpr size_t kMaxPrefix = 253;
constexpr uint64_t kMiB = 1024 * 1024;

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_value_char(char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; }

// "550.54.15" -> {"550", "54", "15"}; only digit runs count, "" missing.
std::vector<std::string> version_parts(const std::string& v) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (c == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      break;  // "550.54.15-open": the numbers end here
    }
  }
  out.push_back(cur);
  return out;
}

// An RFC 1123 subdomain: dot-separated [a-z0-9]([-a-z0-9]*[a-z0-9])?.
bool valid_dns_subdomain(std::string_view p) {
  if (p.empty() || p.size() > kMaxPrefix) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t dot = p.find('.', start);
    std::string_view part = p.substr(start, dot == std::string_view::npos ? p.npos : dot - start);
    if (part.empty() || part.size() > 63) return false;
    for (char c : part) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok) return false;
    }
    if (part.front() == '-' || part.back() == '-') return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

// The lowest compute capability among the GPUs: a job built for it runs on
// every GPU of the node.
std::optional<std::pair<int, int>> lowest_cc(const Snapshot& s) {
  std::optional<std::pair<int, int>> low;
  for (const auto& g : s.nvml.gpus) {
    if (!g.cc_major.ok() || !g.cc_minor.ok()) continue;
    std::pair<int, int> cc{g.cc_major.value, g.cc_minor.value};
    if (!low || cc < *low) low = cc;
  }
  if (low) return low;
  // Without NVML, the catalog knows the capability of a PCI device id.
  for (const auto& d : s.pci) {
    if (d.kind != PciKind::kGpu) continue;
    const GpuModel* m = find_gpu_model(d.device_id);
    if (m == nullptr) continue;
    std::pair<int, int> cc{m->cc_major, m->cc_minor};
    if (!low || cc < *low) low = cc;
  }
  return low;
}

// "hopper" when every GPU agrees; "" unknown or mixed.
std::string family(const Snapshot& s) {
  std::set<GpuArch> archs;
  for (const auto& g : s.nvml.gpus) {
    GpuArch a = g.architecture.ok() ? arch_from_nvml(g.architecture.value) : GpuArch::kUnknown;
    if (a == GpuArch::kUnknown && g.cc_major.ok() && g.cc_minor.ok()) {
      a = arch_from_cc(g.cc_major.value, g.cc_minor.value);
    }
    archs.insert(a);
  }
  if (archs.size() != 1 || *archs.begin() == GpuArch::kUnknown) return "";
  return ascii_lower(arch_name(*archs.begin()));
}

// The smallest GPU's memory, MiB: what a job can count on on any GPU.
std::optional<uint64_t> lowest_memory_mib(const Snapshot& s) {
  std::optional<uint64_t> low;
  for (const auto& g : s.nvml.gpus) {
    if (!g.memory_total_bytes.ok()) continue;
    uint64_t mib = g.memory_total_bytes.value / kMiB;
    if (!low || mib < *low) low = mib;
  }
  return low;
}

}  // namespace

std::string nfd_label_value(std::string_view raw) {
  std::string out;
  for (char c : raw) {
    char m = is_value_char(c) ? c : '-';
    if (m == '-' && !is_value_char(c) && !out.empty() && out.back() == '-') continue;
    out += m;
  }
  auto trim = [](std::string* s) {
    while (!s->empty() && !is_alnum(s->back())) s->pop_back();
    size_t first = 0;
    while (first < s->size() && !is_alnum((*s)[first])) ++first;
    s->erase(0, first);
  };
  trim(&out);
  if (out.size() > kMaxLabelValue) {
    out.resize(kMaxLabelValue);
    trim(&out);
  }
  return out;
}

bool valid_label_value(std::string_view v) {
  if (v.empty()) return true;
  if (v.size() > kMaxLabelValue) return false;
  if (!is_alnum(v.front()) || !is_alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), is_value_char);
}

bool valid_label_name(std::string_view n) {
  size_t slash = n.find('/');
  std::string_view name = n;
  if (slash != std::string_view::npos) {
    if (!valid_dns_subdomain(n.substr(0, slash))) return false;
    name = n.substr(slash + 1);
  }
  return !name.empty() && valid_label_value(name);
}

std::vector<NfdLabel> nfd_labels(const Snapshot& s, const Report& r) {
  std::vector<NfdLabel> out;
  auto add = [&](std::string_view name, const std::string& raw) {
    std::string value = nfd_label_value(raw);
    if (!value.empty()) out.push_back({std::string(kNfdLabelPrefix) + std::string(name), value});
  };
  NodeIdentity id = node_identity(s);
  Fitness fit = assess_fitness(s, r);

  add("gpu.count", std::to_string(id.gpu_count));
  add("gpu.healthy-count", std::to_string(fit.healthy_count()));
  // node_identity joins different models with ",": a mixed node gets "mixed"
  // rather than a value no selector would ever match.
  add("gpu.model", id.gpu_model.find(',') == std::string::npos ? id.gpu_model : "mixed");
  add("gpu.family", family(s));
  if (auto mib = lowest_memory_mib(s)) add("gpu.memory-mib", std::to_string(*mib));
  if (auto cc = lowest_cc(s)) {
    add("gpu.compute.major", std::to_string(cc->first));
    add("gpu.compute.minor", std::to_string(cc->second));
  }
  if (!id.driver_version.empty()) {
    add("driver.version", id.driver_version);
    auto parts = version_parts(id.driver_version);
    const char* names[] = {"driver.major", "driver.minor", "driver.rev"};
    for (size_t i = 0; i < parts.size() && i < 3; ++i) add(names[i], parts[i]);
  }
  if (s.nvml.cuda_driver_version.ok() && s.nvml.cuda_driver_version.value > 0) {
    int v = s.nvml.cuda_driver_version.value;  // 12040 = 12.4 (nvidia-facts.md)
    add("cuda.driver.major", std::to_string(v / 1000));
    add("cuda.driver.minor", std::to_string((v % 1000) / 10));
  }
  add("health", severity_name(r.verdict));
  if (r.verdict == Severity::kFail || r.verdict == Severity::kWarn) {
    for (const auto& f : r.findings) {
      if (f.severity != r.verdict) continue;
      add("health.finding", f.id);  // rank order: the most likely root cause
      break;
    }
  }
  return out;
}

std::string render_nfd(const Snapshot& s, const std::vector<NfdLabel>& labels,
                       const NfdFileOptions& opt) {
  std::string out = "# gpudoctor labels for Node Feature Discovery (docs/kubernetes.md)\n";
  // The host name is only a comment; it still must not break the line (or
  // start a "# +" directive: the "host " before it sees to that).
  std::string host = nfd_label_value(s.hostname);
  if (!host.empty()) out += "# host " + host + "\n";
  if (!opt.expiry_time.empty()) out += "# +expiry-time=" + opt.expiry_time + "\n";
  for (const auto& l : labels) out += l.name + "=" + l.value + "\n";
  return out;
}

}  // namespace gd
