// Scans kernel-log text or kmsg records for NVIDIA-related events and folds
// repeats. Text goes through the fast path of kernlog/candidates.h: only the
// lines a keyword scan finds are decoded.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlog/candidates.h"
#include "kernlog/decode.h"
#include "kernlog/kmsg.h"
#include "snapshot/snapshot.h"

namespace gd {

struct ScanReference {
  // "Now" for ages: the boot clock and wall clock when the log was read.
  // Unset: the newest time seen in the log itself (a file from elsewhere).
  std::optional<double> now_boot_s;
  std::optional<int64_t> now_unix_s;
  // These are a log's own newest line, not the moment it was read (a file
  // from elsewhere): ages say how long before the log's end.
  bool from_log_end = false;
};

// A log with lines of 4 MiB or more (no kernel message is that long; the
// readers of probe/kernel_log_source.h pass them over and read on) leaves a
// gap in kernel_log.events: the probe's record and `logs` carry it as a
// FieldGap of this field, which the kernel-log check and the logs output
// report.
inline constexpr const char* kKernelLogEventsField = "kernel_log.events";
// The gap for n skipped lines; nullopt when n is 0.
std::optional<FieldGap> skipped_lines_gap(uint64_t n);

class KernelLogScanner {
 public:
  explicit KernelLogScanner(int year);  // year for syslog stamps, which print none
  ~KernelLogScanner();
  KernelLogScanner(const KernelLogScanner&) = delete;
  KernelLogScanner& operator=(const KernelLogScanner&) = delete;

  // A whole buffer of lines in any form of kernlog/line.h (mixed is fine).
  void add_text(std::string_view text);
  // The candidate lines another finder found in the text that follows what
  // was added before (kernlog/candidates.h): a part of a big file scanned on
  // another thread. The next add_text continues after found.end.
  void add_candidates(const CandidateLines& found);
  // The next `bytes` of the text are passed over undecoded (a line too long
  // to hold): the next add_text starts after them, and an AER group open
  // before them ends.
  void skip_text(uint64_t bytes);
  // Where the next add_text starts in the text given so far.
  uint64_t text_offset() const;
  // One line (no newline).
  void add_line(std::string_view line);
  // One /dev/kmsg record.
  void add_record(const KmsgRecord& record);

  // Declares the window before the first line: occurrences older than
  // max_age_s against ref are dropped as they stream, so finish() with the
  // same window is exact for any log. Without it, finish() applies its
  // window to each event's summary of older occurrences as a whole.
  void set_window(const ScanReference& ref, std::optional<double> max_age_s);
  // Declares a window on the wall clock before the first line: `logs
  // --since WHEN` on a log not read live (a file from elsewhere), whose
  // events are judged by the times its lines give, not by their age. An
  // occurrence whose wall time is before since_unix_s is dropped: its line's
  // own (ISO 8601, syslog with its year inferred, dmesg -T), else a
  // boot-clock stamp put on the wall clock by ref's two clocks (a last line
  // that prints both). Occurrences with neither (dmesg's "[ 1234.5678]"
  // alone, bare lines) are kept and counted (undated()). finish() judges
  // again, with its own ref, what streamed before its ref was known (a
  // pipe); then its max_age_s is not used.
  void set_since(const ScanReference& ref, int64_t since_unix_s);
  // The log was written by then (its file's mtime, or now for a pipe): a
  // syslog stamp, which prints no year, that would fall more than a day
  // after it belongs to the year before (a log that spans New Year, read
  // with the year of its mtime).
  void set_written_by(int64_t unix_s);

  // Events decoded since the last call, unfolded, in log order (--follow).
  // At most the newest keep_new() of them are held between calls.
  std::vector<KernelEvent> take_new();
  // How many new events to hold for take_new (default 4096; 0: none, for a
  // one-shot read; SIZE_MAX: all, for a follower that takes them often).
  void keep_new(size_t max_events);

  // Occurrences of events not folded: the log named more distinct events
  // than the scanner keeps (forged addresses); their events are missing.
  uint64_t unfolded() const;

  // The folded events. max_age_s: drop occurrences older than this (events
  // with no time are kept). Ages are against ref. Memory grows with the
  // distinct events, not their occurrences: each keeps its newest few
  // occurrences and a summary of the rest. A window not declared up front
  // (set_window) keeps or drops each summary whole: exact only when the
  // window's edge falls among the newest few (older ones straddling it are
  // kept).
  KernelLogInfo finish(const ScanReference& ref, std::optional<double> max_age_s = {});
  // After finish() with a window (max_age_s, or set_since): the occurrences
  // it kept because it could not place them in time (no age, or no wall
  // time for set_since). 0 without a window.
  uint64_t undated() const;

  struct Impl;  // opaque state (public so the scan callback can reach it)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
