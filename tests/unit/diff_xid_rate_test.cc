// gpudoctor diff's Xid rate by driver (fleet/xid_rate.h): counting each
// node's Xid occurrences by its driver version, the stand-out rule and the
// rollback it suggests, and what is left out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "checks/runner.h"
#include "fleet/xid_rate.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

Snapshot node(const std::string& driver, std::vector<std::pair<int, int>> xids) {
  Snapshot s = fixtures::hgx_8xh100();
  s.driver.version = driver;
  s.kernel_log.attempted = true;
  s.kernel_log.source = "/dev/kmsg";
  s.kernel_log.events.clear();
  for (const auto& [code, count] : xids) {
    KernelEvent e;
    e.kind = "xid";
    e.code = code;
    e.count = count;
    e.gpu = "0000:18:00.0";
    s.kernel_log.events.push_back(e);
  }
  return s;
}

struct Fleet {
  std::vector<Snapshot> snaps;
  DiffResult diff() const {
    std::vector<const Snapshot*> p;
    std::vector<std::string> files;
    for (size_t i = 0; i < snaps.size(); ++i) {
      p.push_back(&snaps[i]);
      files.push_back("n" + std::to_string(i + 1) + ".json");
    }
    return diff_snapshots(p, files, Config{}, select_checks({}, {}).value());
  }
};

Fleet fleet_with_a_bad_upgrade() {
  Fleet f;
  for (int i = 0; i < 4; ++i) f.snaps.push_back(node("550.54.15", {}));
  f.snaps[1].kernel_log.events.push_back({});
  f.snaps[1].kernel_log.events.back().kind = "xid";
  f.snaps[1].kernel_log.events.back().code = 13;  // one app error on the old driver
  f.snaps.push_back(node("550.90.07", {{119, 3}, {79, 1}}));
  f.snaps.push_back(node("550.90.07", {{119, 2}}));
  for (size_t i = 0; i < f.snaps.size(); ++i) f.snaps[i].hostname = "n" + std::to_string(i + 1);
  return f;
}

TEST(DiffXidRate, TheUpgradedDriverStandsOutAndTheOldOneIsSuggested) {
  Fleet f = fleet_with_a_bad_upgrade();  // the diff points into its snapshots
  DiffResult d = f.diff();
  std::vector<std::string> skipped;
  auto rates = xid_rate_by_driver(d.nodes, &skipped);
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_TRUE(skipped.empty());
  // Most nodes first.
  EXPECT_EQ(rates[0].driver, "550.54.15");
  EXPECT_EQ(rates[0].nodes.size(), 4u);
  EXPECT_EQ(rates[0].events, 1u);
  EXPECT_FALSE(rates[0].stands_out);
  EXPECT_EQ(rates[1].driver, "550.90.07");
  EXPECT_EQ(rates[1].events, 6u);  // occurrences, not distinct events
  EXPECT_EQ(rates[1].codes.at(119), 5u);
  EXPECT_DOUBLE_EQ(rates[1].per_node(), 3.0);
  EXPECT_DOUBLE_EQ(rates[1].others_per_node, 0.25);
  EXPECT_TRUE(rates[1].stands_out);
  EXPECT_EQ(rates[1].rollback_to, "550.54.15");

  std::string text = render_diff_text(d, {});
  EXPECT_NE(
      text.find("Xid rate by driver (this boot's kernel logs):\n"
                "  550.54.15: 1 Xid event on 4 nodes (0.25 per node; 1 of 4 nodes; Xid 13 x1)\n"
                "  550.90.07: 6 Xid events on 2 nodes (3.00 per node; 2 of 2 nodes; Xid 119 "
                "x5, 79 x1)\n"
                "  550.90.07 stands out: 3.00 Xid events per node against 0.25 on the other "
                "drivers; consider rolling back to 550.54.15\n"),
      std::string::npos)
      << text;
  auto j = nlohmann::json::parse(render_diff_json(d));
  ASSERT_EQ(j["xid_by_driver"].size(), 2u);
  EXPECT_EQ(j["xid_by_driver"][1]["rollback_to"], "550.54.15");
  EXPECT_EQ(j["xid_by_driver"][1]["codes"]["119"], 5);
  EXPECT_TRUE(j["xid_by_driver"][0]["rollback_to"].is_null());
}

TEST(DiffXidRate, ALoneXidOnOneOfManyNodesDoesNotStandOut) {
  Fleet f;
  f.snaps = {node("550.54.15", {}), node("550.54.15", {}), node("550.90.07", {{79, 1}}),
             node("550.90.07", {}), node("550.90.07", {})};
  std::vector<std::string> skipped;
  DiffResult d = f.diff();
  auto rates = xid_rate_by_driver(d.nodes, &skipped);
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_EQ(rates[0].driver, "550.90.07");
  EXPECT_FALSE(rates[0].stands_out);  // 1 of 3 nodes
}

TEST(DiffXidRate, NothingToCompareOnOneDriverOrWithoutXids) {
  Fleet one;
  one.snaps = {node("550.54.15", {{79, 1}}), node("550.54.15", {})};
  std::vector<std::string> skipped;
  DiffResult d1 = one.diff();
  EXPECT_TRUE(xid_rate_by_driver(d1.nodes, &skipped).empty());
  Fleet quiet;
  quiet.snaps = {node("550.54.15", {}), node("550.90.07", {})};
  DiffResult d = quiet.diff();
  EXPECT_TRUE(xid_rate_by_driver(d.nodes, &skipped).empty());
  EXPECT_EQ(render_diff_text(d, {}).find("Xid rate"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(render_diff_json(d))["xid_by_driver"].empty());
}

TEST(DiffXidRate, ANodeWhoseLogWasNotReadIsLeftOutAndNamed) {
  Fleet f = fleet_with_a_bad_upgrade();
  f.snaps[0].kernel_log.source.clear();
  DiffResult d = f.diff();
  std::vector<std::string> skipped;
  auto rates = xid_rate_by_driver(d.nodes, &skipped);
  EXPECT_EQ(skipped, std::vector<std::string>{"n1"});
  EXPECT_EQ(rates[0].nodes.size(), 3u);
  EXPECT_NE(render_diff_text(d, {}).find("  not counted (kernel log not read): n1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace gd
