// The finding catalog against what gives its ids: every id is given by a
// registered check, a diag test or explain's rules, so no catalog row is dead and the docs
// generated from the two tables (docs/checks.md) name every id.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "catalog/findings.h"
#include "checks/check.h"
#include "diag/tests.h"
#include "explain/explain.h"

namespace gd {
namespace {

TEST(FindingCatalog, EveryIdIsGivenByACheckOrADiagTest) {
  std::set<std::string> given;
  for (const auto& c : all_checks()) given.insert(c.ids.begin(), c.ids.end());
  for (const auto& t : diag_tests()) given.insert(t.ids.begin(), t.ids.end());
  for (const auto& id : explain_ids()) given.insert(id);
  for (const auto& e : finding_catalog()) EXPECT_TRUE(given.count(e.id)) << e.id;
}

TEST(FindingCatalog, IdsAreUnique) {
  std::set<std::string> seen;
  for (const auto& e : finding_catalog()) EXPECT_TRUE(seen.insert(e.id).second) << e.id;
}

}  // namespace
}  // namespace gd
