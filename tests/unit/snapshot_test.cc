#include <gtest/gtest.h>

#include "snapshot/snapshot_json.h"

namespace gd {
namespace {

TEST(SnapshotJson, RoundTripKeepsEveryField) {
  Snapshot s;
  s.hostname = "node1";
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,1";
  s.limits.rlimit_as_bytes = 1ULL << 34;
  PciDevice d;
  d.bdf = "0000:17:00.0";
  d.kind = PciKind::kGpu;
  d.proc_minor = 3;
  s.pci.push_back(d);
  NvmlGpu g;
  g.name = {"NVIDIA GeForce RTX 4090", 0};
  g.processes = {{{123, 1ULL << 30}, {124, std::nullopt}}, 0};
  s.nvml.gpus.push_back(g);
  s.probes.push_back({"env", ProbeStatus::kTimedOut, "x", 1.5});
  std::string text = snapshot_to_string(s);
  auto back = snapshot_from_string(text);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(snapshot_to_string(*back), text);
  EXPECT_EQ(back->pci[0].kind, PciKind::kGpu);
  EXPECT_FALSE(back->nvml.gpus[0].processes.value[1].used_memory_bytes.has_value());
  EXPECT_EQ(back->probes[0].status, ProbeStatus::kTimedOut);
}

TEST(SnapshotJson, RejectsGarbageWithAClearError) {
  EXPECT_FALSE(snapshot_from_string("").ok());
  EXPECT_FALSE(snapshot_from_string("{\"schema\": 3}").ok());
  auto wrong = snapshot_from_string("{\"schema\": \"other/v9\"}");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().find("unsupported snapshot schema"), std::string::npos);
  auto bad_type = snapshot_from_string(
      "{\"schema\": \"gpudoctor.snapshot/v1\", \"pci\": [{\"numa_node\": \"x\"}]}");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.error().find("malformed snapshot"), std::string::npos);
}

}  // namespace
}  // namespace gd
