// gpu.missing: the PCI bus shows more NVIDIA GPUs than NVML or CUDA can use.
// Usually the symptom of a narrower cause (unbound driver, fallen-off GPU,
// MIG without instances); the ranking marks it as following from that.
// The same id warns when the counts disagree the other way: NVML or CUDA
// lists more GPUs than there are (a snapshot edited, cut or forged).
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "catalog/cuda_errors.h"
#include "checks/checks.h"
#include "checks/compare.h"
#include "checks/util.h"
#include "facts/cuda_visible.h"
#include "facts/query.h"
#include "facts/runtime.h"
#include "util/text.h"

namespace gd {
namespace {

constexpr const char* kId = "gpu.missing";

bool contains(const std::unordered_set<std::string>& v, const std::string& x) {
  return v.count(x) != 0;
}

// Drivers that take a GPU away from the host on purpose (VM passthrough).
bool passthrough_driver(const std::string& driver) {
  return driver == "vfio-pci" || driver == "pci-stub";
}

// A CUDA run that counted every GPU (no CUDA_VISIBLE_DEVICES) and worked.
const CudaRun* counting_run(const Snapshot& s) {
  const CudaRun* cl = clean_cuda_run(s);
  if (cl != nullptr && cl->child_error.empty() && cl->init_rc == 0 && cl->device_count_rc == 0) {
    return cl;
  }
  const CudaRun* u = user_cuda_run(s);
  if (u != nullptr && u->child_error.empty() && u->init_rc == 0 && u->device_count_rc == 0 &&
      env_var(s, "CUDA_VISIBLE_DEVICES") == nullptr) {
    return u;
  }
  return nullptr;
}

// Bus ids listed more than once, with how often: "0000:01:00.0 (256 times)".
std::vector<std::string> repeated(const std::vector<std::string>& bdfs) {
  std::unordered_map<std::string, size_t> seen;
  std::vector<std::string> order;
  for (const auto& b : bdfs) {
    if (!b.empty() && seen[b]++ == 0) order.push_back(b);
  }
  std::vector<std::string> out;
  for (const auto& b : order) {
    if (seen[b] > 1) out.push_back(fmt::format("{} ({} times)", b, seen[b]));
  }
  return out;
}

// Of `bdfs`, those not in `known`, each once.
std::vector<std::string> unknown(const std::vector<std::string>& bdfs,
                                 const std::unordered_set<std::string>& known) {
  std::unordered_set<std::string> said;
  std::vector<std::string> out;
  for (const auto& b : bdfs) {
    if (!b.empty() && !contains(known, b) && said.insert(b).second) out.push_back(b);
  }
  return out;
}

// At most `shown` of a list, then how many more: evidence stays short
// whatever a snapshot holds.
std::string first_of(const std::vector<std::string>& v, size_t shown = 8) {
  if (v.size() <= shown) return join(v, ", ");
  std::vector<std::string> head(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(shown));
  return fmt::format("{} and {} more", join(head, ", "), v.size() - shown);
}

// A node's whole GPU list: no node built has more than 16 GPUs, so 64 shows
// every real one, and never a forged snapshot's thousand.
constexpr size_t kWholeList = 64;

// The counts disagree the other way: NVML or CUDA lists more GPUs than the machine has: a
// bus id listed twice, one the PCI bus does not show, a list longer than
// the count the library itself gave. A live machine does not answer so; an
// edited, corrupted or forged snapshot does (four GPUs copied 16,804 times), and
// its counts must not pass as "all usable". nullopt: the counts agree.
std::optional<Finding> count_mismatch(const Snapshot& s, bool use_pci,
                                      const std::vector<std::string>& nvml_bdfs, const CudaRun* run,
                                      const std::vector<std::string>& cuda_bdfs,
                                      size_t machine_gpus, const std::string& machine_from) {
  std::unordered_set<std::string> on_bus;
  for (const PciDevice* d : pci_gpus(s)) on_bus.insert(normalize_bdf(d->bdf));
  std::vector<std::string> ev;
  // A MIG GPU's instances share its bus id: CUDA may list it more than once.
  const bool mig = std::any_of(s.nvml.gpus.begin(), s.nvml.gpus.end(), [](const NvmlGpu& g) {
    return g.mig_mode_current.ok() && g.mig_mode_current.value == 1;
  });
  auto judge = [&](const char* who, const std::vector<std::string>& bdfs,
                   std::optional<uint64_t> counted, const char* dropped_field) {
    if (const FieldGap* g = field_gap(s, dropped_field)) ev.push_back(g->reason);
    // Only a list longer than the count: a shorter one is a GPU NVML could
    // not open, or a pasted error that gave the count alone (gpu.missing's).
    if (counted && *counted < bdfs.size()) {
      ev.push_back(fmt::format("{} counted {} GPU{} but lists {}", who, *counted,
                               *counted == 1 ? "" : "s", bdfs.size()));
    }
    auto twice =
        mig && std::string_view(who) == "CUDA" ? std::vector<std::string>{} : repeated(bdfs);
    if (!twice.empty()) {
      ev.push_back(fmt::format("{} lists {} bus id{} more than once: {}", who, twice.size(),
                               twice.size() == 1 ? "" : "s", first_of(twice)));
    }
    if (use_pci && !on_bus.empty()) {
      auto off_bus = unknown(bdfs, on_bus);
      if (!off_bus.empty()) {
        ev.push_back(fmt::format("{} lists {} GPU{} the PCI bus does not show: {}", who,
                                 off_bus.size(), off_bus.size() == 1 ? "" : "s",
                                 first_of(off_bus)));
      }
    }
  };
  if (nvml_answered(s)) {
    std::optional<uint64_t> counted;
    if (s.nvml.device_count.ok()) counted = s.nvml.device_count.value;
    judge("NVML", nvml_bdfs, counted, "nvml.gpus");
  }
  if (run != nullptr) {
    judge("CUDA", cuda_bdfs, static_cast<uint64_t>(std::max(run->device_count, 0)),
          "cuda.runs.devices");
  }
  if (ev.empty()) return std::nullopt;
  const bool nvml_more = nvml_bdfs.size() >= cuda_bdfs.size();
  // A list cut at the snapshot's cap (snapshot_json.cc) held more than it shows.
  const bool cut = field_gap(s, nvml_more ? "nvml.gpus" : "cuda.runs.devices") != nullptr;
  Finding f = make_finding(
      kId, Severity::kWarn,
      fmt::format("{} lists more GPUs than the machine has: {}{} against {} on {}",
                  nvml_more ? "NVML" : "CUDA", cut ? "over " : "",
                  nvml_more ? nvml_bdfs.size() : cuda_bdfs.size(), machine_gpus, machine_from));
  f.evidence = std::move(ev);
  f.remedy = {
      "a snapshot: record it again (gpudoctor snapshot -o node.json); one edited, cut or "
      "joined from several files gives such counts",
      "this machine: nvidia-smi -L and lspci -d 10de: should list each GPU once",
  };
  return f;
}

}  // namespace

std::vector<Finding> check_gpu_missing(const Snapshot& s, const Config&) {
  std::vector<std::string> ev;
  std::vector<std::string> expected;  // bus ids that should be usable
  std::string expected_from;
  bool use_pci = !s.container.in_container;
  if (use_pci) {
    std::vector<std::string> listed;
    for (const PciDevice* d : pci_gpus(s)) {
      std::string bdf = normalize_bdf(d->bdf);
      std::string driver = d->driver.empty() ? "no driver" : "driver " + d->driver;
      if (d->proc_excluded) {
        ev.push_back(bdf + " is excluded by the NVIDIA driver (GPU Excluded: Yes), not counted");
      } else if (passthrough_driver(d->driver)) {
        ev.push_back(fmt::format("{} is bound to {} (passthrough), not counted", bdf, d->driver));
      } else {
        expected.push_back(bdf);
        listed.push_back(fmt::format("{} ({})", bdf, driver));
      }
    }
    if (!listed.empty()) {
      ev.insert(ev.begin(), fmt::format("PCI bus: {} NVIDIA GPU{}: {}", listed.size(),
                                        listed.size() == 1 ? "" : "s", join(listed, ", ")));
      expected_from = "the PCI bus";
    }
  } else {
    ev.push_back(
        "inside a container: the PCI bus shows the host's GPUs, so only NVML's and "
        "CUDA's counts are compared");
  }

  bool nvml = nvml_answered(s);
  std::vector<std::string> nvml_bdfs;
  if (nvml) {
    for (const auto& g : s.nvml.gpus) {
      if (g.handle_rc != 0) {
        ev.push_back(
            fmt::format("NVML could not open GPU index {}: {}", g.index, nvml_error(g.handle_rc)));
      } else if (g.pci_bus_id.ok()) {
        nvml_bdfs.push_back(normalize_bdf(g.pci_bus_id.value));
      }
    }
    ev.push_back(fmt::format("NVML: {} GPU{}{}{}", nvml_bdfs.size(),
                             nvml_bdfs.size() == 1 ? "" : "s", nvml_bdfs.empty() ? "" : ": ",
                             first_of(nvml_bdfs, kWholeList)));
    if (expected.empty()) {
      expected = nvml_bdfs;
      expected_from = "NVML";
    }
  } else {
    ev.push_back(nvml_unavailable_reason(s) + " (not counted)");
  }

  const CudaRun* run = counting_run(s);
  std::vector<std::string> cuda_bdfs;
  if (run != nullptr) {
    for (const auto& d : run->devices) cuda_bdfs.push_back(normalize_bdf(d.pci_bus_id));
    ev.push_back(fmt::format("CUDA ({} run): {} device{}{}{}", run->label, run->device_count,
                             run->device_count == 1 ? "" : "s", cuda_bdfs.empty() ? "" : ": ",
                             first_of(cuda_bdfs, kWholeList)));
  } else if (const CudaRun* u = user_cuda_run(s)) {
    ev.push_back("CUDA: " + describe_run(*u) + " (not counted: CUDA did not start)");
  }

  // Counts that disagree upward: a warning of this id when nothing is missing,
  // more evidence for its failure when something is.
  // From NVML's own list (no PCI bus to compare with): its distinct bus ids.
  const size_t machine_gpus =
      expected_from == "NVML"
          ? std::unordered_set<std::string>(expected.begin(), expected.end()).size()
          : expected.size();
  std::optional<Finding> mismatch =
      machine_gpus == 0 ? std::nullopt
                        : count_mismatch(s, use_pci && expected_from == "the PCI bus", nvml_bdfs,
                                         run, cuda_bdfs, machine_gpus, expected_from);

  if (expected.empty()) return not_applicable(kId, "no NVIDIA GPU is known on this machine");
  if (!nvml && run == nullptr) {
    return not_applicable(kId,
                          "neither NVML nor CUDA gave a device list to compare with the "
                          "PCI bus");
  }

  std::vector<std::string> missing;
  std::vector<std::string> detail;
  // The counts the verdict rests on: of the expected GPUs, how many NVML and
  // CUDA list (by bus id, so a count that matches by accident does not pass).
  int nvml_found = 0, cuda_found = 0, cuda_expected = 0;
  // Sets for the lookups: linear in the GPUs, however many a snapshot lists.
  const std::unordered_set<std::string> nvml_set(nvml_bdfs.begin(), nvml_bdfs.end());
  const std::unordered_set<std::string> cuda_set(cuda_bdfs.begin(), cuda_bdfs.end());
  for (const auto& bdf : expected) {
    std::vector<std::string> lacks;
    if (nvml && !contains(nvml_set, bdf)) lacks.push_back("NVML");
    if (nvml && contains(nvml_set, bdf)) ++nvml_found;
    // MIG GPUs appear in CUDA as at most one instance: not comparable.
    const NvmlGpu* ng = nvml_gpu_by_bdf(s, bdf);
    bool mig = ng != nullptr && ng->mig_mode_current.ok() && ng->mig_mode_current.value == 1;
    if (run != nullptr && !mig) {
      ++cuda_expected;
      if (contains(cuda_set, bdf)) ++cuda_found;
    }
    if (run != nullptr && !mig && !contains(cuda_set, bdf)) lacks.push_back("CUDA");
    if (lacks.empty()) continue;
    missing.push_back(bdf);
    std::string driver;
    for (const auto& d : s.pci) {
      if (normalize_bdf(d.bdf) == bdf)
        driver = d.driver.empty() ? "no driver" : "driver " + d.driver;
    }
    detail.push_back(fmt::format("{} is missing from {}{}", bdf, join(lacks, " and "),
                                 driver.empty() ? "" : " (PCI: " + driver + ")"));
  }
  std::vector<Comparison> counts;
  if (nvml) {
    counts.push_back(compare_numbers("GPUs on " + expected_from + " that NVML lists vs all of them",
                                     nvml_found, "==", static_cast<double>(expected.size())));
  }
  if (run != nullptr && cuda_expected > 0) {
    counts.push_back(compare_numbers(
        "GPUs on " + expected_from + " (MIG ones aside) that CUDA lists vs all of them", cuda_found,
        "==", cuda_expected));
  }
  if (missing.empty()) {
    Finding f = make_finding(
        kId, Severity::kOk,
        fmt::format(
            "all {} GPU{} on {} are usable{}{}", expected.size(), expected.size() == 1 ? "" : "s",
            expected_from, nvml ? fmt::format(": NVML sees {}", nvml_bdfs.size()) : std::string(),
            run != nullptr ? fmt::format(", CUDA sees {}", run->device_count) : std::string()));
    f.evidence = ev;
    for (auto& x : counts) add_comparison(&f, std::move(x));
    if (mismatch) {
      Finding w = std::move(*mismatch);
      w.evidence.insert(w.evidence.begin(), f.evidence.begin(), f.evidence.end());
      return {w};
    }
    return {f};
  }
  Finding f =
      make_finding(kId, Severity::kFail,
                   fmt::format("{} of the {} GPU{} on {} {} not usable: {}", missing.size(),
                               expected.size(), expected.size() == 1 ? "" : "s", expected_from,
                               missing.size() == 1 ? "is" : "are", join(missing, ", ")));
  f.gpus = missing;
  f.evidence = ev;
  f.evidence.insert(f.evidence.end(), detail.begin(), detail.end());
  for (auto& x : counts) add_comparison(&f, std::move(x));
  f.remedy = {
      "this is usually a symptom: the findings ranked above it name the cause",
      fmt::format("lspci -nnk -s {}   # which driver holds the GPU", missing[0].substr(5)),
      "sudo dmesg | grep -iE 'NVRM|Xid'   # the kernel's messages about the missing GPUs",
  };
  if (mismatch) {
    f.evidence.insert(f.evidence.end(), mismatch->evidence.begin(), mismatch->evidence.end());
  }
  return {f};
}

}  // namespace gd
