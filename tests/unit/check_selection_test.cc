// What --only, --skip and the config file's [checks] select (report.h's
// select_checks, config.cc's [checks] table), through the real checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checks/runner.h"
#include "config/config.h"
#include "report/render.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using fixtures::ws_4x4090;

using testing_util::checked;

}  // namespace
}  // namespace gd

namespace gd {
namespace {

// --only / --skip and the config file's [checks]: ids, areas, the xid.NN
// template and globs; a name that matches nothing is refused.
TEST(CheckSelection, IdsTemplatesAndGlobs) {
  for (const char* item : {"xid.79", "xid.*", "advice.*", "*.mismatch", "device-order", "xid"}) {
    EXPECT_TRUE(select_checks({}, {item}).ok()) << item;
  }
  for (const char* item : {"xid.7x", "nosuch.*", "xid.", "bogus"}) {
    EXPECT_FALSE(select_checks({}, {item}).ok()) << item;
  }
  EXPECT_NE(select_checks({}, {"nosuch.*"}).error().find("matches no check"), std::string::npos);
}

TEST(CheckSelection, SkippedIdsLeaveTheReportAndAreListedInIt) {
  Snapshot s = ws_4x4090();
  std::vector<std::string> skip = {"advice.*", "device-order.mismatch"};
  auto checks = select_checks({}, skip);
  ASSERT_TRUE(checks.ok());
  Report r = run_checks(s, Config{}, *checks, {}, skip);
  for (const Finding& f : r.findings) {
    EXPECT_FALSE(f.id.starts_with("advice.") || f.id == "device-order.mismatch") << f.id;
  }
  EXPECT_EQ(r.skip, skip);
  EXPECT_NE(render_json(r).find("\"silenced\""), std::string::npos);
  EXPECT_EQ(render_json(checked(s)).find("\"silenced\""), std::string::npos);
}

TEST(CheckSelection, TheConfigFileTakesOnlyAndSkipLists) {
  auto c =
      parse_config("[checks]\nskip = [\"advice.*\", \"xid.79\"]\nonly = [\"driver\"]\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->skip, (std::vector<std::string>{"advice.*", "xid.79"}));
  EXPECT_EQ(c->only, (std::vector<std::string>{"driver"}));
  for (const char* bad : {"[checks]\nskip = \"x\"\n", "[checks]\nskip = [1]\n",
                          "[checks]\nignore = []\n", "checks = 1\n"}) {
    auto b = parse_config(bad, "c.toml");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_TRUE(b.error().starts_with("c.toml:")) << b.error();
  }
}

}  // namespace
}  // namespace gd
