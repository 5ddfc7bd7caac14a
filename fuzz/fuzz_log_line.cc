// libFuzzer target: kernel-log lines in every form (kernlog/line.h) and the
// scanner's text paths (kernlog/scanner.h). The input is a log file:
//
//   [  12.345678] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15 ...
//   Dec  2 10:00:01 node7 kernel: [  12.345678] NVRM: Xid (PCI:0000:17:00): 79, ...
//   2026-12-02T10:00:01.123456+00:00 node7 kernel: NVRM: ...
//   4,1201,88123456,-;NVRM: ...
//
// Each line goes through parse_log_line; the whole input through
// KernelLogScanner::add_text (the vectorscan fast path) and, line by line,
// add_line; then finish with and without a window. The input is also read
// as a big file is, in two parts (kernlog/candidates.h): the first in
// blocks, the second by another finder, cut at a line the input picks; the
// events must be the very same.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "fuzz/invariants.h"
#include "kernlog/candidates.h"
#include "kernlog/kmsg.h"
#include "kernlog/line.h"
#include "kernlog/scanner.h"

namespace {

// v lies inside s (a view into it, not a copy): "a substring of the input".
bool inside(std::string_view v, std::string_view s) {
  if (v.empty()) return true;
  return v.data() >= s.data() && v.data() + v.size() <= s.data() + s.size();
}

void check_line(std::string_view line, int year) {
  gd::LogLine l = gd::parse_log_line(line, year);
  GD_REQUIRE(inside(l.message, line) && inside(l.stamp, line) && inside(l.ident, line));
  GD_REQUIRE(gd::fuzz::finite_non_negative(l.boot_s));
  switch (l.form) {
    case gd::LineForm::kBare: {
      std::string_view whole = line;
      if (!whole.empty() && whole.back() == '\r') whole.remove_suffix(1);
      GD_REQUIRE(l.message == whole && l.stamp.empty() && !l.boot_s && !l.unix_s);
      break;
    }
    case gd::LineForm::kDmesg:
      GD_REQUIRE(l.boot_s.has_value() && !l.stamp.empty() && l.stamp.front() == '[');
      break;
    case gd::LineForm::kDmesgHuman:
    case gd::LineForm::kFabricManager:
    case gd::LineForm::kSyslog:
    case gd::LineForm::kIsoSyslog:
      GD_REQUIRE(l.unix_s.has_value() && !l.stamp.empty());
      break;
    case gd::LineForm::kKmsg:
      GD_REQUIRE(gd::looks_like_kmsg_record(line) && l.boot_s.has_value());
      break;
  }
  // The message comes after the stamp; stripping a prefix never reorders the line.
  if (!l.stamp.empty() && !l.message.empty()) GD_REQUIRE(l.message.data() >= l.stamp.data());
}

using Key = std::tuple<std::string, std::string, int, std::string, int>;

std::map<Key, int> counts(const gd::KernelLogInfo& info) {
  std::map<Key, int> out;
  for (const gd::KernelEvent& e : info.events) {
    // One folded event per (kind, type, code, gpu, NVLink port).
    GD_REQUIRE(out.emplace(Key{e.kind, e.type, e.code, e.gpu, e.link}, e.count).second);
  }
  return out;
}

// Everything of the events, in their order.
std::string dump(const gd::KernelLogInfo& info) {
  std::string out = std::to_string(info.bytes);
  for (const gd::KernelEvent& e : info.events) {
    out += "\n" + e.kind + "|" + e.type + "|" + std::to_string(e.code) + "|" + e.gpu + "|" +
           std::to_string(e.count) + "|" + e.first + "|" + e.last + "|" + e.message + "|" + e.line;
  }
  return out;
}

// The start of the line after the n-th newline (n counted modulo the lines).
size_t line_start(std::string_view s, size_t n) {
  size_t lines = static_cast<size_t>(std::count(s.begin(), s.end(), '\n')) + 1;
  size_t at = 0;
  for (n %= lines; n > 0; --n) at = s.find('\n', at) + 1;
  return at;
}

// The input in two parts, each in two pieces: the decoding scanner's own
// and another finder's (a big file's part read on another thread).
std::string in_parts(std::string_view input, int year, size_t cut, size_t piece) {
  gd::KernelLogScanner s(year);
  std::string_view first = input.substr(0, cut), second = input.substr(cut);
  size_t a = line_start(first, piece), b = line_start(second, piece);
  s.add_text(first.substr(0, a));
  s.add_text(first.substr(a));
  gd::CandidateFinder finder(s.text_offset());
  finder.expect_continuation();
  finder.add_text(second.substr(0, b));
  finder.add_text(second.substr(b));
  s.add_candidates(finder.take());
  return dump(s.finish({}));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Syslog stamps print no year: let the input pick a plausible one.
  const int year = 1990 + (size > 0 ? data[0] % 80 : 0);

  gd::KernelLogScanner by_line(year);
  for (size_t start = 0; start <= input.size();) {
    size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) nl = input.size();
    std::string_view line = input.substr(start, nl - start);
    check_line(line, year);
    by_line.add_line(line);
    start = nl + 1;
  }
  gd::KernelLogInfo lines = by_line.finish({});
  gd::fuzz::check_info(lines, size, std::nullopt);

  gd::KernelLogScanner fast(year);
  fast.add_text(input);
  gd::KernelLogInfo text = fast.finish({});
  gd::fuzz::check_info(text, size, std::nullopt);
  GD_REQUIRE(text.bytes == size);
  std::map<Key, int> fast_counts = counts(text);
  std::map<Key, int> line_counts = counts(lines);
  // The fast path parses only lines with a prefilter keyword: it must find
  // the same events as parsing every line (the keywords cover every pattern).
  GD_REQUIRE(fast_counts == line_counts);
  if (size > 3) {
    GD_REQUIRE(in_parts(input, year, line_start(input, data[2]), data[3]) == dump(text));
  }

  // A window only drops occurrences: never more events, never a higher count.
  const double max_age_s = size > 1 ? data[1] * 60.0 : 3600;
  gd::KernelLogScanner windowed(year);
  windowed.add_text(input);
  gd::KernelLogInfo recent = windowed.finish({}, max_age_s);
  gd::fuzz::check_info(recent, size, max_age_s);
  for (const auto& [key, n] : counts(recent)) {
    auto it = fast_counts.find(key);
    GD_REQUIRE(it != fast_counts.end() && n <= it->second);
  }
  return 0;
}
