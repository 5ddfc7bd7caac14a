// The Xid rate by driver version (xid_rate.h).
#include "fleet/xid_rate.h"

#include <algorithm>

#include "facts/identity.h"

namespace gd {
namespace {

bool log_read(const Snapshot& s) { return s.kernel_log.attempted && !s.kernel_log.source.empty(); }

void judge(std::vector<DriverXidRate>* rates) {
  for (DriverXidRate& r : *rates) {
    uint64_t other_events = 0;
    size_t other_nodes = 0;
    const DriverXidRate* quietest = nullptr;
    for (const DriverXidRate& o : *rates) {
      if (&o == &r) continue;
      other_events += o.events;
      other_nodes += o.nodes.size();
      // Ties go to the version more nodes run: the one known to work at scale.
      if (quietest == nullptr || o.per_node() < quietest->per_node()) quietest = &o;
    }
    r.others_per_node =
        other_nodes == 0 ? 0 : static_cast<double>(other_events) / static_cast<double>(other_nodes);
    r.stands_out = r.events > 0 && 2 * r.with_xids.size() >= r.nodes.size() &&
                   r.per_node() >= kStandOutRatio * r.others_per_node;
    if (r.stands_out && quietest != nullptr) r.rollback_to = quietest->driver;
  }
}

}  // namespace

std::vector<DriverXidRate> xid_rate_by_driver(const std::vector<DiffNode>& nodes,
                                              std::vector<std::string>* skipped) {
  std::vector<DriverXidRate> rates;
  uint64_t total = 0;
  for (const DiffNode& n : nodes) {
    if (!log_read(*n.snapshot)) {
      skipped->push_back(n.name);
      continue;
    }
    std::string driver = node_identity(*n.snapshot).driver_version;
    if (driver.empty()) driver = "unknown";
    auto it = std::find_if(rates.begin(), rates.end(),
                           [&](const DriverXidRate& r) { return r.driver == driver; });
    if (it == rates.end()) {
      rates.push_back({});
      it = rates.end() - 1;
      it->driver = driver;
    }
    it->nodes.push_back(n.name);
    uint64_t own = 0;
    for (const KernelEvent& e : n.snapshot->kernel_log.events) {
      if (e.kind != "xid") continue;
      uint64_t count = e.count > 0 ? static_cast<uint64_t>(e.count) : 1;
      own += count;
      it->codes[e.code] += count;
    }
    if (own > 0) it->with_xids.push_back(n.name);
    it->events += own;
    total += own;
  }
  if (rates.size() < 2 || total == 0) return {};
  std::stable_sort(rates.begin(), rates.end(), [](const DriverXidRate& a, const DriverXidRate& b) {
    return a.nodes.size() > b.nodes.size();
  });
  judge(&rates);
  return rates;
}

}  // namespace gd
