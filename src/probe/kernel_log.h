// The kernel log: /dev/kmsg, then the systemd journal (libsystemd), then
// /var/log/kern.log, all under the probe root. Unreadable is data with its
// reason (kernel.dmesg_restrict, missing CAP_SYSLOG), never an error exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlog/scanner.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct KernelLogOptions {
  std::string root = "/";           // every path is read under this root
  std::string file;                 // read this file instead ("-" = stdin); any text form
  std::optional<double> max_age_s;  // drop events older than this (--since, check window)
  // `logs --since`'s start on the wall clock. A log from elsewhere (file,
  // or a recorded tree's kern.log) is judged by it, by the times its lines
  // give (KernelLogScanner::set_since), instead of by max_age_s against its
  // last line; the sources read against this machine's clocks use
  // max_age_s.
  std::optional<int64_t> since_unix_s;
};

// How the reading went, beyond what KernelLogInfo records (for the probe's
// detail and for tests).
struct KernelLogStats {
  uint64_t records = 0;          // kmsg records / journal entries fed to the scanner
  uint64_t lost_records = 0;     // /dev/kmsg EPIPE: overwritten before they were read
  uint64_t garbled_records = 0;  // records parse_kmsg_record() refused
  uint64_t skipped_lines = 0;    // lines of klog::kMaxLineBytes or more, passed over
  // With a window: occurrences kept because they could not be placed in time
  // (KernelLogScanner::undated(): dmesg's seconds since boot in a file).
  uint64_t undated = 0;
};

// Reads the first source that can be read (or opt.file) and decodes it.
// info.source names what was read; info.unreadable says why a better source
// could not be. An unreadable explicit `logs --from` file is an Error; unreadable system
// sources are not (info.source is then "").
Result<KernelLogInfo> read_kernel_log(const KernelLogOptions& opt);
Result<KernelLogInfo> read_kernel_log(const KernelLogOptions& opt, KernelLogStats* stats);

// Streams new events as they are logged until on_event returns false or stop
// becomes true: /dev/kmsg from its end, else the journal, else kern.log
// tailed; a `logs --from` file is read to its end (its events are passed on too) and
// then tailed, "-" (stdin) until end of input. Returns why it could not
// follow (no readable source) or ends cleanly.
Result<bool> follow_kernel_log(const KernelLogOptions& opt,
                               const std::function<bool(const KernelEvent&)>& on_event,
                               const std::atomic<bool>& stop);

// --- internals, exposed for tests ----------------------------------------------

// info.unreadable's text for /dev/kmsg failing to open with errno err:
// "/dev/kmsg: Operation not permitted (kernel.dmesg_restrict = 1 and this
// process lacks CAP_SYSLOG)". dmesg_restrict -1 / has_cap_syslog nullopt:
// not known.
std::string kmsg_unreadable_reason(int err, int dmesg_restrict, std::optional<bool> has_cap_syslog);

// CAP_SYSLOG (bit 34) of the "CapEff:" line of /proc/<pid>/status; nullopt
// when the line is missing or garbled.
std::optional<bool> cap_syslog_from_status(std::string_view proc_status);

// A recorded /dev/kmsg (a regular file holding what read() returned, one
// record per line): the records, each with its " KEY=value" dictionary lines.
std::vector<std::string_view> split_kmsg_records(std::string_view text);

// Offset of the start of the last boot in kern.log/syslog text: the line of
// the last "Linux version " banner printed by the kernel; npos when none.
size_t last_boot_offset(std::string_view text);

}  // namespace gd
