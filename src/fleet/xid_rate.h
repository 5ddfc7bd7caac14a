// The Xid rate by driver version across a fleet (`gpudoctor diff`,
// docs/diff.md "Xid rate by driver"): a driver regression shows as one
// version whose nodes log Xids the nodes on the other versions do not.
// Pure: counts the Xid events of each node's kernel log (this boot).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleet/diff.h"

namespace gd {

struct DriverXidRate {
  std::string driver;                  // the kernel module's version, "unknown" without one
  std::vector<std::string> nodes;      // nodes on it whose kernel log was read
  std::vector<std::string> with_xids;  // those of them that logged an Xid
  uint64_t events = 0;                 // Xid occurrences, all its nodes
  std::map<int, uint64_t> codes;       // occurrences by Xid code
  double per_node() const {
    return nodes.empty() ? 0 : static_cast<double>(events) / static_cast<double>(nodes.size());
  }
  // At least half of its nodes logged an Xid, and its events per node are
  // at least kStandOutRatio times those of the other versions together.
  bool stands_out = false;
  std::string rollback_to;  // when it stands out: the quietest other version
  double others_per_node = 0;
};

inline constexpr double kStandOutRatio = 3;

// One entry per driver version among the nodes whose kernel log was read,
// most nodes first; empty when fewer than two versions are there, or no
// node logged an Xid (nothing to compare). `skipped`: nodes left out for a
// kernel log that could not be read (a report file has none).
std::vector<DriverXidRate> xid_rate_by_driver(const std::vector<DiffNode>& nodes,
                                              std::vector<std::string>* skipped);

}  // namespace gd
