// The helper's command line, environment and deadline, and which GPUs to
// test. run_diag_helper() itself is in run_diag.cc.
#include "diag/run_helper.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kernlog/decode.h"
#include "util/ascii.h"
#include "util/exe.h"
#include "util/text.h"

namespace gd {

// The deadline, in seconds, for n GPUs and d = --duration:
//   margin   60                  context creation (seconds per GPU without
//                                persistence mode), cuBLAS handles and NCCL
//                                communicator start-up, process start
//   level 1  30 + 5 n            context, a small kernel, 64 MiB copies
//   level 2  n (12 d + 10)       per GPU, one after another: the memory test,
//                                three sustained copies and four GEMM dtypes
//                                are 8 steps of about d each; x 1.5 for their
//                                verification phases and set-up, + 10 s to
//                                allocate and fill most of the memory
//   level 3  3 n (n - 1)         every ordered pair peer-to-peer (bandwidth,
//            + 40 + 2.5 d        latency, verify: about 3 s), NCCL over sizes
//                                (30 s + d), scaling (10 s + 1.5 d)
// Level 2 on one GPU at d = 20 is 60 + 35 + 250 = 345 s; on 8 GPUs 2130 s:
// long, but a hung helper is still caught, and a healthy one never is.
double diag_deadline_s(int level, double duration_s, size_t gpus) {
  double d = std::isfinite(duration_s) && duration_s > 0 ? duration_s : 0;
  double n = static_cast<double>(std::max<size_t>(gpus, 1));
  double s = 60 + 30 + 5 * n;
  if (level >= 2) s += n * (12 * d + 10);
  if (level >= 3) s += 3 * n * (n - 1) + 40 + 2.5 * d;
  return s;
}

double diag_deadline_s(const DiagOptions& opt) {
  return opt.deadline_s > 0 ? opt.deadline_s
                            : diag_deadline_s(opt.level, opt.duration_s, opt.bus_ids.size());
}

std::vector<std::string> diag_environment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  out.reserve(env.size() + 1);
  for (const std::string& e : env) {
    if (e.starts_with("CUDA_VISIBLE_DEVICES=") || e.starts_with("CUDA_DEVICE_ORDER=")) continue;
    out.push_back(e);
  }
  out.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  return out;
}

namespace {

// "20", "0.5": the shortest text that reads back as the same number.
std::string number_text(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  return buf;
}

// A GPU --gpus can name.
struct Candidate {
  std::string bus_id;
  std::string index;  // nvidia-smi index, or the position on the PCI bus
  std::string uuid;   // lower-case
};

std::vector<Candidate> candidates(const Snapshot& s, std::string* source) {
  std::vector<Candidate> out;
  for (const NvmlGpu& g : s.nvml.gpus) {
    if (!g.pci_bus_id.ok()) continue;
    std::string bus = normalize_pci_address(ascii_lower(g.pci_bus_id.value));
    if (bus.empty()) continue;
    out.push_back({bus, std::to_string(g.index), g.uuid.ok() ? ascii_lower(g.uuid.value) : ""});
  }
  *source = "NVML";
  if (!out.empty()) return out;
  // No NVML (not loaded, broken): the display controllers on the bus. The
  // helper's CUDA may still open them, and if not, it says so.
  *source = "the PCI bus";
  for (const PciDevice& d : s.pci) {
    if (d.vendor_id != 0x10de || (d.class_code >> 16) != 0x03) continue;
    out.push_back({d.bdf, std::to_string(out.size()), ascii_lower(d.proc_uuid)});
  }
  return out;
}

}  // namespace

std::vector<std::string> diag_helper_args(const DiagOptions& opt) {
  std::vector<std::string> a = {"--level", std::to_string(opt.level)};
  for (const std::string& bus : opt.bus_ids) {
    auto it = opt.gpu_cpus.find(bus);
    a.push_back("--gpu");
    a.push_back(it == opt.gpu_cpus.end() || it->second.empty() ? bus : bus + "@" + it->second);
  }
  a.push_back("--duration");
  a.push_back(number_text(opt.duration_s));
  a.push_back("--seed");
  a.push_back(std::to_string(opt.seed));
  if (!opt.plant_fault.empty()) {
    a.push_back("--plant-fault");
    a.push_back(opt.plant_fault);
  }
  return a;
}

std::string find_diag_helper() { return sibling_exe("gpudoctor-diag"); }

Result<std::vector<std::string>> resolve_diag_gpus(const Snapshot& s, const std::string& list) {
  std::string source;
  std::vector<Candidate> all = candidates(s, &source);
  if (all.empty()) return Error{"no NVIDIA GPU found: NVML lists none and the PCI bus shows none"};
  std::vector<std::string> out;
  if (trim(list).empty()) {
    for (const Candidate& c : all) out.push_back(c.bus_id);
    return out;
  }
  for (std::string_view raw : split(list, ',')) {
    std::string item = ascii_lower(trim(raw));
    if (item.empty()) continue;
    std::string bus = item;
    // "17:00.0" and "17:00": bus:device[.function] without the domain.
    if (std::count(bus.begin(), bus.end(), ':') == 1) bus = "0000:" + bus;
    bus = normalize_pci_address(bus);
    // "1" and "01" are nvidia-smi index 1; ten digits are no index.
    bool digits = item.size() < 10 && std::all_of(item.begin(), item.end(), [](char ch) {
                    return std::isdigit(static_cast<unsigned char>(ch)) != 0;
                  });
    std::string index = digits ? std::to_string(std::strtoul(item.c_str(), nullptr, 10)) : "";
    const Candidate* hit = nullptr;
    for (const Candidate& c : all) {
      if ((digits && c.index == index) || (!bus.empty() && c.bus_id == bus) ||
          (!c.uuid.empty() && c.uuid == item)) {
        hit = &c;
        break;
      }
    }
    if (hit == nullptr) {
      std::string known;
      for (const Candidate& c : all) known += (known.empty() ? "" : ", ") + c.bus_id;
      return Error{"--gpus: \"" + printable(trim(raw), 64) + "\" names no GPU " + source +
                   " lists (" + known + ")"};
    }
    if (std::find(out.begin(), out.end(), hit->bus_id) != out.end()) {
      return Error{"--gpus: " + hit->bus_id + " is named twice"};
    }
    out.push_back(hit->bus_id);
  }
  if (out.empty()) return Error{"--gpus: \"" + printable(list, 64) + "\" names no GPU"};
  return out;
}

std::map<std::string, std::string> diag_gpu_cpus(const Snapshot& s,
                                                 const std::vector<std::string>& bus_ids) {
  std::map<std::string, std::string> out;
  for (const std::string& bus : bus_ids) {
    out[bus] = "";
    for (const PciDevice& d : s.pci) {
      if (d.bdf == bus) out[bus] = d.local_cpulist;
    }
  }
  return out;
}

}  // namespace gd
