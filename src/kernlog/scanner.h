// Scans kernel-log text or kmsg records for NVIDIA-related events and folds
// repeats. The text fast path finds candidate lines with one vectorscan
// literal scan over the buffer, so unrelated kernel noise costs almost
// nothing (bench/logs_scan.py).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlog/decode.h"
#include "kernlog/kmsg.h"
#include "snapshot/snapshot.h"

namespace gd {

struct ScanReference {
  // "Now" for ages: the boot clock and wall clock when the log was read.
  // Unset: the newest time seen in the log itself (a file from elsewhere).
  std::optional<double> now_boot_s;
  std::optional<int64_t> now_unix_s;
};

class KernelLogScanner {
 public:
  explicit KernelLogScanner(int year);  // year for syslog stamps, which print none
  ~KernelLogScanner();
  KernelLogScanner(const KernelLogScanner&) = delete;
  KernelLogScanner& operator=(const KernelLogScanner&) = delete;

  // A whole buffer of lines in any form of kernlog/line.h (mixed is fine).
  void add_text(std::string_view text);
  // One line (no newline).
  void add_line(std::string_view line);
  // One /dev/kmsg record.
  void add_record(const KmsgRecord& record);

  // Events decoded since the last call, unfolded, in log order (--follow).
  std::vector<KernelEvent> take_new();

  // The folded events. max_age_s: drop occurrences older than this (events
  // with no time are kept). Ages are against ref.
  KernelLogInfo finish(const ScanReference& ref, std::optional<double> max_age_s = {});

  struct Impl;  // opaque state (public so the scan callback can reach it)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
