// One /dev/kmsg record (Documentation/ABI/testing/dev-kmsg):
//
//   6,3964,206764307,-;nvidia-nvswitch2: open (major=510)
//   4,1201,88123456,-,caller=T812;NVRM: Xid (PCI:0000:17:00): 79, pid='<unknown>', ...
//    SUBSYSTEM=pci
//    DEVICE=+pci:0000:17:00.0
//
// PRIO,SEQ,TS_USEC,FLAGS[,more];MESSAGE, then optional continuation lines
// that start with a space (key=value dictionary, ignored here).
// Non-printable bytes in MESSAGE arrive escaped as \xHH.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace gd {

struct KmsgRecord {
  int level = 0;     // syslog level, 0 (emerg) .. 7 (debug)
  int facility = 0;  // 0 = kernel
  uint64_t seq = 0;
  uint64_t ts_usec = 0;       // microseconds since boot
  bool continuation = false;  // FLAGS 'c': a fragment of a continued line
  std::string message;        // \xHH unescaped; dictionary lines dropped
};

// Parses one record as read() returns it (with or without the trailing
// newline and dictionary lines). Garbage gives an Error, never a crash.
Result<KmsgRecord> parse_kmsg_record(std::string_view record);

// True when a text line looks like a kmsg record ("6,123,456,-;...").
bool looks_like_kmsg_record(std::string_view line);

}  // namespace gd
