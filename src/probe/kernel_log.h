// The kernel log: /dev/kmsg, then the systemd journal (libsystemd), then
// /var/log/kern.log, all under the probe root. Unreadable is data with its
// reason (kernel.dmesg_restrict, missing CAP_SYSLOG), never an error exit.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "kernlog/scanner.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct KernelLogOptions {
  std::string root = "/";           // every path is read under this root
  std::string file;                 // read this file instead ("-" = stdin); any text form
  std::optional<double> max_age_s;  // drop events older than this (--since, check window)
};

// Reads the first source that can be read (or opt.file) and decodes it.
// info.source names what was read; info.unreadable says why a better source
// could not be. An unreadable explicit --file is an Error; unreadable system
// sources are not (info.source is then "").
Result<KernelLogInfo> read_kernel_log(const KernelLogOptions& opt);

// Streams new events as they are logged until on_event returns false or stop
// becomes true: /dev/kmsg from its end, else the journal, else kern.log
// tailed; a --file is read to its end and then tailed. Returns why it could
// not follow (no readable source) or ends cleanly.
Result<bool> follow_kernel_log(const KernelLogOptions& opt,
                               const std::function<bool(const KernelEvent&)>& on_event,
                               const std::atomic<bool>& stop);

}  // namespace gd
