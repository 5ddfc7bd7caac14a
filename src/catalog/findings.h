// The finding catalog: every stable finding id with its title and rank.
//
// rank orders root causes: when several findings fire, the one with the
// lowest rank is the most likely root cause (a missing kernel driver explains
// missing device nodes, which explain a failing cuInit). `symptom` marks ids
// that describe an effect (cuda.init-failed, gpu.missing) rather than a cause:
// in a report with a cause they are marked as following from it. `explains`
// lists the causes a root cause makes fire as well (no driver -> no device
// nodes): those are marked as following from it too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

struct CatalogEntry {
  const char* id;
  const char* title;
  int rank;
  bool symptom;
  std::vector<std::string_view> explains = {};
};

const std::vector<CatalogEntry>& finding_catalog();
// nullptr for an id not in the catalog; "xid.NN" ids map to the "xid.NN" entry.
const CatalogEntry* find_catalog_entry(std::string_view id);

}  // namespace gd
