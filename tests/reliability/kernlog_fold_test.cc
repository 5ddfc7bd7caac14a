// The scanner folds as it streams (issue 20, serious 3 and 4): each event
// keeps its newest occurrences and a summary of the rest. These tests hold
// the folded result to a plain fold over every occurrence, window and all,
// and bound what the scanner holds for take_new and for distinct events.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernlog/scanner.h"

namespace gd {
namespace {

std::string stamp(double t) {
  char b[32];
  std::snprintf(b, sizeof b, "[%12.6f]", t);
  return b;
}

std::string xid_line(double t, int bus, int code) {
  char b[160];
  std::snprintf(b, sizeof b,
                "%s NVRM: Xid (PCI:0000:%02x:00): %d, pid='<unknown>', "
                "name=<unknown>, GPU has fallen off the bus.",
                stamp(t).c_str(), bus, code);
  return b;
}

struct Expected {
  int count = 0;
  std::string first, last;
  double age = 0;
};

// Every occurrence held, as the scanner once did: the reference.
std::map<std::pair<int, int>, Expected> plain_fold(
    const std::vector<std::tuple<double, int, int>>& log, double now,
    std::optional<double> max_age) {
  std::map<std::pair<int, int>, Expected> out;
  for (const auto& [t, bus, code] : log) {
    // The time as the line prints it, as the scanner reads it back.
    double age = std::max(0.0, now - std::stod(stamp(t).substr(1)));
    if (max_age && age > *max_age) continue;
    Expected& e = out[{bus, code}];
    if (e.count++ == 0) e.first = stamp(t);
    e.last = stamp(t);
    e.age = age;
  }
  return out;
}

TEST(KernlogFold, StreamingFoldEqualsThePlainFold) {
  std::mt19937 rng(20);
  for (int round = 0; round < 6; ++round) {
    // Times rise, as a log's do; many repeats of few events, so most
    // occurrences end in the summaries.
    std::vector<std::tuple<double, int, int>> log;
    double t = 1;
    const int n = 2000 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < n; ++i) {
      t += static_cast<double>(rng() % 1000) / 100.0;
      log.emplace_back(t, 0x17 + static_cast<int>(rng() % 3),
                       std::vector<int>{13, 31, 48, 79}[rng() % 4]);
    }
    const double now = t + 5;
    for (std::optional<double> max_age :
         {std::optional<double>{}, std::optional<double>{60.0}, std::optional<double>{3000.0},
          std::optional<double>{t / 2}, std::optional<double>{0.0}}) {
      KernelLogScanner s(2026);
      s.keep_new(0);
      s.set_window({.now_boot_s = now, .now_unix_s = {}}, max_age);  // as read_kernel_log does
      std::string text;
      for (const auto& [lt, bus, code] : log) text += xid_line(lt, bus, code) + "\n";
      // In pieces, as a reader hands blocks on.
      for (size_t at = 0; at < text.size();) {
        size_t nl = text.find('\n', std::min(text.size() - 1, at + 4096));
        size_t end = nl == std::string::npos ? text.size() : nl + 1;
        s.add_text(std::string_view(text).substr(at, end - at));
        at = end;
      }
      KernelLogInfo info = s.finish({.now_boot_s = now, .now_unix_s = {}}, max_age);
      auto want = plain_fold(log, now, max_age);
      ASSERT_EQ(info.events.size(), want.size()) << "round " << round;
      for (const KernelEvent& e : info.events) {
        int bus = std::stoi(e.gpu.substr(5, 2), nullptr, 16);
        const Expected& w = want.at({bus, e.code});
        EXPECT_EQ(e.count, w.count) << e.gpu << " " << e.code;
        EXPECT_EQ(e.first, w.first) << e.gpu << " " << e.code;
        EXPECT_EQ(e.last, w.last) << e.gpu << " " << e.code;
        ASSERT_TRUE(e.age_s.has_value());
        EXPECT_NEAR(*e.age_s, w.age, 1e-6);
      }
    }
  }
}

// Without a declared window, the newest occurrences decide alone.
TEST(KernlogFold, UndeclaredWindowIsExactWithinTheNewest) {
  KernelLogScanner s(2026);
  for (int i = 0; i < 1000; ++i) s.add_line(xid_line(1.0 + i, 0x41, 79));
  KernelLogInfo info = s.finish({.now_boot_s = 1005.0, .now_unix_s = {}}, 6.5);
  ASSERT_EQ(info.events.size(), 1u);
  EXPECT_EQ(info.events[0].count, 2);  // 999 and 1000
  EXPECT_EQ(info.events[0].first, stamp(999.0));
  KernelLogInfo none = s.finish({.now_boot_s = 5000.0, .now_unix_s = {}}, 60.0);
  EXPECT_TRUE(none.events.empty());
}

TEST(KernlogFold, NewestTimeIsTheReferenceWithoutOne) {
  KernelLogScanner s(2026);
  for (int i = 0; i < 100; ++i) s.add_line(xid_line(10.0 + i, 0x41, 79));
  s.add_line(xid_line(500.0, 0x42, 48));
  KernelLogInfo info = s.finish({}, 200.0);  // "now" is 500: the Xid 79s are 391..490 s old
  ASSERT_EQ(info.events.size(), 1u);
  EXPECT_EQ(info.events[0].code, 48);
}

TEST(KernlogFold, TakeNewHoldsAtMostWhatWasAskedFor) {
  KernelLogScanner s(2026);
  for (int i = 0; i < 10000; ++i) s.add_line(xid_line(1.0 + i, 0x41, 79));
  auto held = s.take_new();
  ASSERT_EQ(held.size(), 4096u);  // the default: the newest
  EXPECT_EQ(held.back().last, stamp(10000.0));
  s.keep_new(0);
  s.add_line(xid_line(20000.0, 0x41, 79));
  EXPECT_TRUE(s.take_new().empty());
  s.keep_new(SIZE_MAX);
  for (int i = 0; i < 5000; ++i) s.add_line(xid_line(30000.0 + i, 0x41, 79));
  EXPECT_EQ(s.take_new().size(), 5000u);
  EXPECT_TRUE(s.take_new().empty());  // taken events are not held again
  KernelLogInfo info = s.finish({});
  ASSERT_EQ(info.events.size(), 1u);
  EXPECT_EQ(info.events[0].count, 15001);  // the fold counts them all
}

TEST(KernlogFold, DistinctEventsAreBounded) {
  KernelLogScanner s(2026);
  s.keep_new(0);
  // 65536 forged PCI addresses.
  char b[160];
  for (int dom = 0; dom < 256; ++dom) {
    for (int bus = 0; bus < 256; ++bus) {
      std::snprintf(b, sizeof b, "[ 1.0] NVRM: Xid (PCI:%04x:%02x:00): 79, GPU has fallen", dom,
                    bus);
      s.add_line(b);
    }
  }
  KernelLogInfo info = s.finish({});
  EXPECT_EQ(info.events.size(), 8192u);
  EXPECT_EQ(s.unfolded(), 65536u - 8192u);
  EXPECT_EQ(info.unfolded, 65536u - 8192u);  // what logs and check report
}

}  // namespace
}  // namespace gd
