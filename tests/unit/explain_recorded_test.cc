// explain over real nvidia-smi output: every record in tests/device/recorded/
// holds nvidia-smi's plain table (smi.txt), -q (smi-q.txt) and -L (smi-L.txt)
// beside gpudoctor's own snapshot of the same machine (snapshot.json). What
// explain reads from the text must be what NVML told the snapshot.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "explain/explain.h"
#include "snapshot/snapshot_json.h"

namespace gd {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> record_dirs() {
  std::vector<fs::path> out;
  fs::path root = fs::path(GD_SOURCE_DIR) / "tests" / "device" / "recorded";
  for (const auto& e : fs::directory_iterator(root)) {
    fs::path dc = e.path() / "device-check";
    if (fs::exists(dc / "snapshot.json")) out.push_back(dc);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const NvmlGpu* by_bus(const NvmlInfo& n, const std::string& bus) {
  for (const auto& g : n.gpus) {
    if (g.pci_bus_id.ok() && g.pci_bus_id.value == bus) return &g;
  }
  return nullptr;
}

bool fails(const Report& r) {
  for (const auto& f : r.findings) {
    if (f.severity == Severity::kFail) return true;
  }
  return false;
}

TEST(ExplainRecorded, ThereIsARecord) { EXPECT_FALSE(record_dirs().empty()); }

// The plain table and -q give the versions, and each GPU's bus id, name,
// memory size and persistence mode, as NVML gave them.
TEST(ExplainRecorded, NvidiaSmiTableAndQueryReadAsTheSnapshot) {
  for (const fs::path& dc : record_dirs()) {
    auto snap = snapshot_from_file((dc / "snapshot.json").string());
    ASSERT_TRUE(snap.ok()) << dc;
    const NvmlInfo& want = snap->nvml;
    for (const char* name : {"smi.txt", "smi-q.txt"}) {
      SCOPED_TRACE(dc.string() + "/" + name);
      if (!fs::exists(dc / name)) continue;
      Snapshot s = snapshot_from_text(slurp(dc / name));
      EXPECT_EQ(s.nvml.init_rc, 0);
      EXPECT_EQ(s.nvml.driver_version.value, want.driver_version.value);
      EXPECT_EQ(s.nvml.cuda_driver_version.value, want.cuda_driver_version.value);
      ASSERT_EQ(s.nvml.gpus.size(), want.gpus.size());
      EXPECT_EQ(s.nvml.device_count.value, want.device_count.value);
      for (const auto& g : want.gpus) {
        const NvmlGpu* seen = by_bus(s.nvml, g.pci_bus_id.value);
        ASSERT_NE(seen, nullptr) << g.pci_bus_id.value;
        EXPECT_EQ(seen->name.value, g.name.value);
        EXPECT_EQ(seen->persistence_mode.value, g.persistence_mode.value);
        // nvidia-smi prints whole MiB
        EXPECT_EQ(seen->memory_total_bytes.value, g.memory_total_bytes.value >> 20 << 20);
        EXPECT_EQ(seen->compute_mode.value, g.compute_mode.value);
      }
      EXPECT_FALSE(fails(explain_snapshot(s, Config{})));
    }
  }
}

// -q also names each GPU's UUID, minor number and MIG mode; -L the UUID.
TEST(ExplainRecorded, NvidiaSmiQueryAndListGiveUuids) {
  for (const fs::path& dc : record_dirs()) {
    auto snap = snapshot_from_file((dc / "snapshot.json").string());
    ASSERT_TRUE(snap.ok()) << dc;
    Snapshot q = snapshot_from_text(slurp(dc / "smi-q.txt"));
    Snapshot l = snapshot_from_text(slurp(dc / "smi-L.txt"));
    ASSERT_EQ(l.nvml.gpus.size(), snap->nvml.gpus.size()) << dc;
    for (size_t i = 0; i < snap->nvml.gpus.size(); ++i) {
      const NvmlGpu& g = snap->nvml.gpus[i];
      const NvmlGpu* seen = by_bus(q.nvml, g.pci_bus_id.value);
      ASSERT_NE(seen, nullptr) << dc;
      EXPECT_EQ(seen->uuid.value, g.uuid.value);
      EXPECT_EQ(seen->minor_number.value, g.minor_number.value);
      EXPECT_EQ(seen->mig_mode_current.value, g.mig_mode_current.value);
      EXPECT_EQ(l.nvml.gpus[i].uuid.value, g.uuid.value);
      EXPECT_EQ(l.nvml.gpus[i].name.value, g.name.value);
    }
  }
}

// The H200's own figures (nvidia-smi 580.159.04), so a change in the shared
// reading above cannot pass by reading nothing on both sides.
TEST(ExplainRecorded, H200Figures) {
  fs::path dc = fs::path(GD_SOURCE_DIR) / "tests/device/recorded/h200-vm-580.159.04/device-check";
  Snapshot q = snapshot_from_text(slurp(dc / "smi-q.txt"));
  EXPECT_EQ(q.nvml.driver_version.value, "580.159.04");
  EXPECT_EQ(q.nvml.cuda_driver_version.value, 13000);
  ASSERT_EQ(q.nvml.gpus.size(), 1u);
  const NvmlGpu& g = q.nvml.gpus[0];
  EXPECT_EQ(g.pci_bus_id.value, "0000:00:06.0");
  EXPECT_EQ(g.name.value, "NVIDIA H200");
  EXPECT_EQ(g.uuid.value, "GPU-45e11636-eca6-4b14-c5ee-af9440ab3d3d");
  EXPECT_EQ(g.memory_total_bytes.value, 143771ull << 20);
  EXPECT_EQ(g.memory_used_bytes.value, 0u);
  EXPECT_EQ(g.persistence_mode.value, 1);
  EXPECT_EQ(g.processes.rc, 0);  // "Processes : None"
  EXPECT_TRUE(g.processes.value.empty());

  Snapshot t = snapshot_from_text(slurp(dc / "smi.txt"));
  ASSERT_EQ(t.nvml.gpus.size(), 1u);
  EXPECT_EQ(t.nvml.gpus[0].pci_bus_id.value, "0000:00:06.0");
  EXPECT_EQ(t.nvml.gpus[0].name.value, "NVIDIA H200");
  EXPECT_EQ(t.nvml.gpus[0].memory_total_bytes.value, 143771ull << 20);
}

// A -q process block, as nvidia-smi prints it while another process holds
// the GPU (the H200's memheld fault, 580.159.04).
TEST(ExplainRecorded, NvidiaSmiQueryProcesses) {
  Snapshot s = snapshot_from_text(
      "GPU 00000000:00:06.0\n"
      "    Product Name                                       : NVIDIA H200\n"
      "    FB Memory Usage\n"
      "        Total                                          : 143771 MiB\n"
      "        Used                                           : 139511 MiB\n"
      "    Processes\n"
      "        GPU instance ID                                : N/A\n"
      "        Compute instance ID                            : N/A\n"
      "        Process ID                                     : 632\n"
      "            Type                                       : C\n"
      "            Name                                       : python3\n"
      "            Used GPU Memory                            : 138876 MiB\n");
  ASSERT_EQ(s.nvml.gpus.size(), 1u);
  const NvmlGpu& g = s.nvml.gpus[0];
  EXPECT_EQ(g.memory_used_bytes.value, 139511ull << 20);
  ASSERT_EQ(g.processes.value.size(), 1u);
  EXPECT_EQ(g.processes.value[0].pid, 632u);
  EXPECT_EQ(g.processes.value[0].used_memory_bytes, 138876ull << 20);
}

}  // namespace
}  // namespace gd
