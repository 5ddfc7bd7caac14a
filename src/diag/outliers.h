// Who a diag figure is compared with, shared by diag/evaluate*.cc: the
// tested GPUs' models (the datasheet row and the peers of the same name),
// the path between two GPUs (NVLink, a PCIe switch, the CPU), the peer
// median and the judgement; and the finding builders evaluate_diag() calls
// from evaluate_links.cc and evaluate_checks.cc. Pure functions over the
// run and the snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/gpu_models.h"
#include "catalog/gpu_perf.h"
#include "checks/finding.h"
#include "diag/evaluate.h"
#include "diag/result.h"
#include "snapshot/snapshot.h"

namespace gd {

// A tested GPU as the comparisons see it.
struct NodeGpu {
  std::string bus_id;
  std::string name;                 // the CUDA name, else NVML's, else the table's; "GPU" if none
  uint16_t device_id = 0;           // PCI device id; 0 unknown
  const GpuPerf* perf = nullptr;    // datasheet row; nullptr when none
  const GpuModel* model = nullptr;  // gpu_models row; nullptr when none
  // "GPU 0000:17:00.0 NVIDIA H200"
  std::string label() const;
};

// Model lookup: bus id -> the snapshot's PciDevice.device_id, else NVML's
// pci_device_id >> 16 -> find_gpu_perf / find_gpu_model.
NodeGpu node_gpu(const DiagRun& run, const Snapshot& s, const std::string& bus_id);

// The PCIe rate a GPU's link should carry per direction, bytes/s (0 unknown):
// the current width (a link that trained narrow is pcie.link-degraded's
// business) at the speed the link can reach (the narrower of the GPU's and
// the port's maximum, else NVML's system maximum, else the current speed:
// GPUs drop their link speed when idle, and the snapshot may be idle).
struct PcieRate {
  double bytes_per_s = 0;
  std::string text;  // "x16 at 32.0 GT/s (current 2.5 GT/s)"
};
PcieRate pcie_rate(const Snapshot& s, const std::string& bus_id);

// How two GPUs reach each other.
enum class PathKind { kNvSwitch, kNvLink, kPcieSwitch, kPcieCpu, kUnknown };
struct GpuPath {
  PathKind kind = PathKind::kUnknown;
  int links = 0;           // kNvLink: links from src to dst
  double bytes_per_s = 0;  // raw per-direction rate of the path; 0 unknown
  std::string text;        // "NVLink via NVSwitch, 450 GB/s per direction"
  std::string group;       // what pairs are compared with: kind, links, models
};
GpuPath gpu_path(const DiagRun& run, const Snapshot& s, const std::string& src,
                 const std::string& dst);

// Median of the values; 0 for none.
double median(std::vector<double> values);

// "ok", "below-expected", "outlier", "below-expected,outlier". A higher-is-
// better value: below `expected` (when > 0), or below outlier_fraction x
// peer_median (when > 0).
std::string judge(double value, double expected, double peer_median, double outlier_fraction);
bool is_outlier(const std::string& judgement);

// p2p.slow and nccl.slow (evaluate_links.cc).
// A finding of the diag "check"; a GPU added to it once.
Finding diag_finding(const char* id, Severity sev, std::string summary);
void add_finding_gpu(Finding* f, const std::string& bus_id);

Finding p2p_finding(const DiagRun& run, const Snapshot& s, const std::vector<DiagFigure>& figures);
Finding nccl_finding(const DiagRun& run, const Snapshot& s, const std::vector<DiagFigure>& figures,
                     const DiagThresholds& t);

// The findings not judged from figures (evaluate_checks.cc).
Finding memtest_finding(const DiagRun& run, const Snapshot& s);
Finding mismatch_finding(const DiagRun& run, const Snapshot& s);
Finding clocks_finding(const DiagRun& run, const Snapshot& s);
Finding incomplete_finding(const DiagRun& run);

}  // namespace gd
