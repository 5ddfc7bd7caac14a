// kernel-log.unreadable: the checks that read the kernel log (Xid, fallen
// off the bus, AER) are only as good as the log. /dev/kmsg needs CAP_SYSLOG
// when kernel.dmesg_restrict = 1 (the default on Ubuntu and Debian), so a
// user run often falls back to the journal or sees nothing. A log that names
// more distinct events than are kept (forged or corrupted lines), or lines
// too long to be kernel messages (skipped), is read only in part, and says
// so here too.
#include "checks/checks.h"
#include "checks/kernel_events.h"
#include "checks/util.h"
#include "facts/query.h"
#include "kernlog/scanner.h"
#include "util/bytes.h"

namespace gd {

std::vector<Finding> check_kernel_log(const Snapshot& s, const Config&) {
  constexpr const char* kId = "kernel-log.unreadable";
  const KernelLogInfo& k = s.kernel_log;
  if (!k.attempted) return not_applicable(kId, "The kernel log was not read.");
  // Lines too long to be kernel messages were skipped (kernlog/scanner.h).
  const FieldGap* skipped = field_gap(s, kKernelLogEventsField);
  if (k.unreadable.empty() && k.unfolded == 0 && skipped == nullptr) {
    return all_ok(kId,
                  "Read the kernel log from " + k.source + " (" + format_bytes(k.bytes) + ").");
  }
  if (k.unreadable.empty()) {
    Finding f = make_finding(kId, Severity::kInfo,
                             skipped != nullptr
                                 ? "The kernel log was read only in part: over-long lines were "
                                   "skipped."
                                 : "Only part of the kernel log's NVIDIA events were decoded.");
    if (skipped != nullptr) f.evidence.push_back(skipped->reason + ".");
    if (k.unfolded > 0) f.evidence.push_back(unfolded_text(k));
    f.evidence.push_back("Read from " + k.source + " (" + format_bytes(k.bytes) + ").");
    f.remedy = {"The events that were decoded: gpudoctor logs"};
    if (skipped != nullptr) {
      f.remedy.push_back(
          "Where the long lines are: awk 'length($0) >= 4194304 { print FNR }' " +
          (!k.source.empty() && k.source[0] == '/' ? k.source : std::string("LOGFILE")));
    }
    if (k.unfolded > 0) {
      f.remedy.push_back(
          "The raw lines, to find the source of so many distinct ones: sudo dmesg | grep -E "
          "'NVRM|Xid'");
    }
    return {f};
  }
  bool fallback = !k.source.empty();
  Finding f = make_finding(
      kId, Severity::kInfo,
      fallback ? "The kernel log could not be read from its first source; read " + k.source +
                     " instead" +
                     (skipped != nullptr ? ", only in part: over-long lines were skipped." : ".")
               : "The kernel log cannot be read: Xid, GPU-lost and PCIe error checks are blind.");
  f.evidence.push_back(k.unreadable);
  if (k.unfolded > 0) f.evidence.push_back(unfolded_text(k));
  if (skipped != nullptr) f.evidence.push_back(skipped->reason + ".");
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
