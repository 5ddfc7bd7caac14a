#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

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
  s.probes.push_back({"env", ProbeStatus::kTimedOut, "x", 1.5, {}, 0});
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

// Mutation fuzzing of the snapshot reader with a recorded snapshot as the
// seed: flipped bytes, truncations, swapped value types. Every input must
// give a snapshot or an error, never a crash (ASan/UBSan run this too).
TEST(SnapshotJson, SurvivesMutatedRecordedSnapshots) {
  std::ifstream in(std::string(GD_SOURCE_DIR) + "/tests/snapshots/ws-4x4090-ulimit.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string seed = ss.str();
  ASSERT_TRUE(snapshot_from_string(seed).ok());
  std::mt19937 rng(20261202);
  const std::string replacements[] = {"null", "-1", "\"x\"", "[]", "{}", "1e999", "true"};
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = seed;
    switch (i % 3) {
      case 0:  // flip a few bytes
        for (int k = 0; k < 4; ++k) text[rng() % text.size()] = static_cast<char>(rng());
        break;
      case 1:  // truncate
        text.resize(rng() % text.size());
        break;
      default: {  // replace a value after a colon by one of another type
        size_t at = text.find(": ", rng() % text.size());
        if (at == std::string::npos) break;
        size_t end = text.find_first_of(",\n", at + 2);
        text.replace(at + 2, end - at - 2, replacements[rng() % std::size(replacements)]);
      }
    }
    auto r = snapshot_from_string(text);
    if (!r.ok()) {
      ++errors;
      EXPECT_FALSE(r.error().empty());
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace gd
