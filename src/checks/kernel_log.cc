// kernel-log.unreadable: the checks that read the kernel log (Xid, fallen
// off the bus, AER) are only as good as the log. /dev/kmsg needs CAP_SYSLOG
// when kernel.dmesg_restrict = 1 (the default on Ubuntu and Debian), so a
// user run often falls back to the journal or sees nothing. A log that names
// more distinct events than are kept (forged or corrupted lines) is read
// only in part, and says so here too.
#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "util/bytes.h"

namespace gd {

std::vector<Finding> check_kernel_log(const Snapshot& s, const Config&) {
  constexpr const char* kId = "kernel-log.unreadable";
  const KernelLogInfo& k = s.kernel_log;
  if (!k.attempted) return not_applicable(kId, "The kernel log was not read.");
  if (k.unreadable.empty() && k.unfolded == 0) {
    return all_ok(kId,
                  "Read the kernel log from " + k.source + " (" + format_bytes(k.bytes) + ").");
  }
  if (k.unreadable.empty()) {
    Finding f = make_finding(kId, Severity::kInfo,
                             "Only part of the kernel log's NVIDIA events were decoded.");
    f.evidence.push_back(unfolded_text(k));
    f.evidence.push_back("Read from " + k.source + " (" + format_bytes(k.bytes) + ").");
    f.remedy = {"The events that were decoded: gpudoctor logs",
                "The raw lines, to find the source of so many distinct ones: sudo dmesg | grep "
                "-E 'NVRM|Xid'"};
    return {f};
  }
  bool fallback = !k.source.empty();
  Finding f = make_finding(
      kId, Severity::kInfo,
      fallback
          ? "The kernel log could not be read from its first source; read " + k.source + " instead."
          : "The kernel log cannot be read: Xid, GPU-lost and PCIe error checks are blind.");
  f.evidence.push_back(k.unreadable);
  if (k.unfolded > 0) f.evidence.push_back(unfolded_text(k));
  if (k.dmesg_restrict >= 0) {
    f.evidence.push_back("kernel.dmesg_restrict = " + std::to_string(k.dmesg_restrict));
  }
  f.remedy = {"Run as root or with CAP_SYSLOG: sudo gpudoctor check",
              "Or let users read the kernel log: sudo sysctl kernel.dmesg_restrict=0 (persist it "
              "in /etc/sysctl.d/)",
              "In a container the log is the host's: run gpudoctor on the host, or grant the "
              "container CAP_SYSLOG"};
  return {f};
}

}  // namespace gd
