// `logs --since` on a log from elsewhere (issue 37): the scanner's wall-clock
// window (KernelLogScanner::set_since) judges each occurrence by the time its
// line gives, keeps and counts those whose line gives none, and a syslog
// stamp's year is inferred from when the log was written.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kernlog/line.h"
#include "kernlog/scanner.h"

namespace gd {
namespace {

constexpr int64_t k2026 = 1767225600;  // 2026-01-01T00:00:00Z

const KernelEvent* find(const KernelLogInfo& info, int code) {
  for (const KernelEvent& e : info.events) {
    if (e.kind == "xid" && e.code == code) return &e;
  }
  return nullptr;
}

std::string xid(const std::string& stamp, const std::string& bus, int code) {
  return stamp + " NVRM: Xid (PCI:" + bus + "): " + std::to_string(code) +
         ", pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
}

// A file's mixed lines: ISO stamps from 2025 and 2026, dmesg's seconds since
// boot (no date), and a last line with no boot clock (so none is anchored).
const std::string kMixed = xid("2025-11-03T08:00:00.000000+00:00 node7 kernel:", "0000:17:00", 79) +
                           xid("[  811.239125]", "0000:41:00", 48) +
                           xid("[  812.000000]", "0000:41:00", 48) +
                           xid("2026-02-10T09:30:00.000000+00:00 node7 kernel:", "0000:3b:00", 13);

TEST(ScannerSince, DropsByTheLinesOwnDateAndCountsTheUndated) {
  ScanReference ref{.now_boot_s = {}, .now_unix_s = k2026 + 40 * 86400, .from_log_end = true};
  KernelLogScanner s(2026);
  s.set_since(ref, k2026);
  s.add_text(kMixed);
  KernelLogInfo info = s.finish(ref, 3600.0);  // max_age_s is not used with set_since
  EXPECT_EQ(find(info, 79), nullptr) << "the 2025 event is before the window";
  ASSERT_NE(find(info, 13), nullptr);
  ASSERT_NE(find(info, 48), nullptr);
  EXPECT_EQ(find(info, 48)->count, 2);
  EXPECT_EQ(s.undated(), 2u);
}

TEST(ScannerSince, WithoutAWindowNothingIsUndated) {
  KernelLogScanner s(2026);
  s.add_text(kMixed);
  KernelLogInfo info = s.finish({});
  EXPECT_EQ(info.events.size(), 3u);
  EXPECT_EQ(s.undated(), 0u);
}

TEST(ScannerSince, AgeWindowCountsWhatItCannotAge) {
  // A bare line has no time on any clock: the age window keeps it and says so.
  KernelLogScanner s(2026);
  s.add_text(xid("[  100.0]", "0000:41:00", 79) + xid("[ 5000.0]", "0000:42:00", 48) +
             "NVRM: Xid (PCI:0000:43:00): 13, pid=7, name=python3, Graphics Exception\n");
  KernelLogInfo info = s.finish({.now_boot_s = 5100.0, .now_unix_s = {}}, 600.0);
  EXPECT_EQ(find(info, 79), nullptr);
  EXPECT_NE(find(info, 48), nullptr);
  EXPECT_NE(find(info, 13), nullptr);
  EXPECT_EQ(s.undated(), 1u);
}

TEST(ScannerSince, BootStampsAnchoredByTheLastLineAreDated) {
  // The last line prints both clocks: boot 10000 s is 2026-01-01T02:00:00Z,
  // so boot 100 s is in 2025 and boot 9000 s in 2026.
  const std::string text =
      xid("[  100.000000]", "0000:41:00", 48) + xid("[ 9000.000000]", "0000:17:00", 79) +
      "2026-01-01T02:00:00.000000+00:00 node7 kernel: [10000.000000] usb 1-1: new device\n";
  ScanReference ref{.now_boot_s = 10000.0, .now_unix_s = k2026 + 7200, .from_log_end = true};
  for (bool declared_with_ref : {true, false}) {  // a regular file; a pipe (ref known at the end)
    KernelLogScanner s(2026);
    s.set_since(declared_with_ref ? ref : ScanReference{}, k2026);
    s.add_text(text);
    KernelLogInfo info = s.finish(ref);
    EXPECT_EQ(find(info, 48), nullptr) << declared_with_ref;
    ASSERT_NE(find(info, 79), nullptr) << declared_with_ref;
    EXPECT_EQ(*find(info, 79)->last_unix_s, k2026 + 7200 - 1000);
    EXPECT_EQ(s.undated(), 0u);
  }
}

TEST(ScannerSince, ExactPastTheNewestFewOccurrences) {
  // 30 dated occurrences each side of the window's start, more than a fold
  // keeps one by one: the declared window counts exactly those inside it.
  std::string text;
  for (int i = 0; i < 60; ++i) {
    int64_t t = k2026 - 30 * 3600 + i * 3600;
    int64_t day = t / 86400 - 20454;  // days into 2026 (negative: 2025-12-31)
    int64_t secs = t % 86400;
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "%s%02lld:%02lld:00+00:00 node7 kernel:",
                  day < 0 ? "2025-12-31T" : (day == 0 ? "2026-01-01T" : "2026-01-02T"),
                  static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60));
    text += xid(stamp, "0000:41:00", 79);
  }
  ScanReference ref{.now_boot_s = {}, .now_unix_s = k2026 + 30 * 3600, .from_log_end = true};
  KernelLogScanner s(2026);
  s.set_since(ref, k2026);
  s.add_text(text);
  KernelLogInfo info = s.finish(ref);
  ASSERT_NE(find(info, 79), nullptr);
  EXPECT_EQ(find(info, 79)->count, 30);
  EXPECT_EQ(*find(info, 79)->first_unix_s, k2026);
}

TEST(ScannerSince, UndatedPastTheNewestFewAreAllCounted) {
  std::string text;
  for (int i = 0; i < 20; ++i)
    text += xid("[  " + std::to_string(100 + i) + ".0]", "0000:41:00", 79);
  KernelLogScanner s(2026);
  s.set_since({}, k2026);
  s.add_text(text);
  KernelLogInfo info = s.finish({});
  ASSERT_NE(find(info, 79), nullptr);
  EXPECT_EQ(find(info, 79)->count, 20);
  EXPECT_EQ(s.undated(), 20u);
}

TEST(LineYear, ASyslogStampAfterTheLogWasWrittenIsOfTheYearBefore) {
  const int64_t written = 1767441600;  // 2026-01-03T12:00:00Z
  LogLine dec = parse_log_line("Dec 30 23:59:01 node7 kernel: NVRM: x", 2026, written);
  ASSERT_TRUE(dec.unix_s.has_value());
  EXPECT_EQ(*dec.unix_s, 1767139141);  // 2025-12-30T23:59:01
  LogLine jan = parse_log_line("Jan  2 10:00:01 node7 kernel: NVRM: x", 2026, written);
  EXPECT_EQ(*jan.unix_s, k2026 + 86400 + 36001);
  // Within a day after it (a local stamp read as UTC): the same year.
  LogLine late = parse_log_line("Jan  4 06:00:00 node7 kernel: NVRM: x", 2026, written);
  EXPECT_EQ(*late.unix_s, k2026 + 3 * 86400 + 6 * 3600);
  // ISO stamps carry their year.
  LogLine iso = parse_log_line("2026-12-30T23:59:01+00:00 node7 kernel: NVRM: x", 2026, written);
  EXPECT_EQ(*iso.unix_s, 1767139141 + 365 * 86400);
}

TEST(ScannerSince, ASyslogLogAcrossNewYearIsWindowedByItsInferredYear) {
  KernelLogScanner s(2026);  // the year of the file's mtime
  s.set_written_by(1767441600);
  s.set_since({}, k2026);
  s.add_text(xid("Dec 30 23:59:01 node7 kernel:", "0000:17:00", 79) +
             xid("Jan  2 10:00:01 node7 kernel:", "0000:3b:00", 13));
  KernelLogInfo info = s.finish({});
  EXPECT_EQ(find(info, 79), nullptr) << "December is last year's";
  EXPECT_NE(find(info, 13), nullptr);
  EXPECT_EQ(s.undated(), 0u);
}

}  // namespace
}  // namespace gd
