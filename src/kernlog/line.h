// One kernel-log line in any of the forms people have: the time prefix is
// parsed and stripped, leaving the kernel message.
//
//   dmesg          [  12.345678] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15 ...
//   dmesg -T       [Wed Dec  2 10:00:01 2026] NVRM: Xid (PCI:0000:17:00): 79, ...
//   dmesg -x       kern  :warn  : [  12.345678] NVRM: ...
//                  kern  :err   : 2025-01-25T10:34:54,859532+00:00 NVRM: ... (--time-format iso)
//   dmesg -r       <4>[  12.345678] NVRM: ...
//   syslog         Dec  2 10:00:01 node7 kernel: [  12.345678] NVRM: ...
//   journal        Dec 02 10:00:01 node7 kernel: NVRM: ...
//   ISO syslog     2026-12-02T10:00:01.123456+00:00 node7 kernel: NVRM: ...
//   kmsg record    4,1201,88123456,-;NVRM: ...
//   fabric manager [Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error ...
//                  (its own /var/log/fabricmanager.log)
//   bare           NVRM: Xid (PCI:0000:17:00): 79, ...
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gd {

enum class LineForm { kBare, kDmesg, kDmesgHuman, kSyslog, kIsoSyslog, kKmsg, kFabricManager };

struct LogLine {
  LineForm form = LineForm::kBare;
  std::string_view message;       // the kernel message, every prefix stripped
  std::string_view stamp;         // the time as printed ("" when none)
  std::optional<double> boot_s;   // seconds since boot, when the line has it
  std::optional<int64_t> unix_s;  // wall clock (UTC seconds), when the line has it
  std::string_view ident;         // syslog/journal identifier ("kernel", "nv-fabricmanager")
};

// Never fails: a line with no recognised prefix is kBare with the whole
// line as message. year: for syslog stamps, which print none.
LogLine parse_log_line(std::string_view line, int year);
// A syslog stamp's year inferred from when the log was last written (its
// file's mtime, or now): `year` (that moment's), or the year before where
// the stamp would then fall more than a day after written_by ("Dec 30
// 23:59:01" in a log written on Jan 2, which spans New Year).
LogLine parse_log_line(std::string_view line, int year, std::optional<int64_t> written_by);

}  // namespace gd
