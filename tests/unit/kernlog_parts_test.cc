// A big kernel log read in parts (kernlog/candidates.h, probe/kernel_log_text.cc):
// candidate lines found by other finders, in pieces cut anywhere between
// lines, and a real file read by several threads, decode exactly as the
// whole text read in order does: the same events, counts, messages, times
// and evidence lines, AER groups cut between parts included.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernlog/candidates.h"
#include "kernlog/scanner.h"
#include "probe/kernel_log_source.h"
#include "util/text.h"

namespace gd {
namespace {

// Noise (some of it holding a stand-in keyword's piece, "module"), NVIDIA
// lines of several kinds and AER groups with their detail lines: a GPU's,
// another vendor's (no GPU event) and one cut short by an unrelated line.
std::string sample_log(unsigned seed, int lines) {
  std::mt19937 rng(seed);
  const std::vector<std::vector<std::string>> blocks = {
      {"audit: type=1400 audit(1700000000.123:42): apparmor=\"DENIED\" operation=\"open\""},
      {"mlx5_core 0000:8b:00.1: Port module event: module 1, Cable plugged"},
      {"nvme nvme0: I/O 12 QID 3 timeout, completion polled"},
      {"NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
       "bus."},
      {"NVRM: Xid (PCI:0000:17:00): 13, pid=41, name=python3, Graphics Exception: ESR "
       "0x405840=0xa0040800"},
      {"nvidia-nvswitch2: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress error"},
      {"nvidia-nvswitch0: open (major=510)"},
      {"nvidia-uvm: Loaded the UVM driver, major device number 510."},
      {"nvidia: module verification failed: signature and/or required key missing - tainting "
       "kernel"},
      {"pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
       "nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver "
       "ID)",
       "nvidia 0000:01:00.0:   device [10de:2684] error status/mask=00000041/0000e000",
       "nvidia 0000:01:00.0:    [ 0] RxErr                  (First)",
       "nvidia 0000:01:00.0:    [ 6] BadTLP"},
      {"pcieport 0000:00:03.0: AER: Uncorrected (Non-Fatal) error received: 0000:03:00.0",
       "nvidia 0000:03:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
       "Layer, (Requester ID)",
       "nvidia 0000:03:00.0:   device [10de:2330] error status/mask=00004000/00000000",
       "nvidia 0000:03:00.0:    [14] CmpltTO                (First)"},
      {"pcieport 0000:40:01.1: AER: Corrected error received: 0000:41:00.0",
       "nvme 0000:41:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
       "nvme 0000:41:00.0:   device [144d:a80a] error status/mask=00000001/0000e000",
       "nvme 0000:41:00.0:    [ 0] RxErr"},
      {"pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
       "nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, "
       "(Transmitter ID)",
       "usb 1-4: new high-speed USB device number 2 using xhci_hcd",
       "nvidia 0000:01:00.0:    [12] Timeout"},
  };
  std::string log;
  double t = 1;
  for (int n = 0; n < lines;) {
    // Mostly noise, as real logs are.
    size_t pick = rng() % 4 != 0 ? rng() % 3 : rng() % blocks.size();
    for (const std::string& line : blocks[pick]) {
      t += 0.001 * static_cast<double>(rng() % 1000);
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "[%12.6f] ", t);
      log += stamp + line + "\n";
      ++n;
    }
  }
  return log;
}

// Everything a report shows of the events, in their order.
std::string dump(const KernelLogInfo& info) {
  std::string out = "bytes " + std::to_string(info.bytes) + "\n";
  for (const KernelEvent& e : info.events) {
    out += e.kind + "|" + e.type + "|" + std::to_string(e.code) + "|" + e.gpu + "|" +
           std::to_string(e.count) + "|" + e.first + "|" + e.last + "|" + e.message + "|" + e.line +
           "\n";
  }
  return out;
}

std::string whole(const std::string& log) {
  KernelLogScanner s(2026);
  s.add_text(log);
  return dump(s.finish({}));
}

// Cuts text into pieces of whole lines, at most max_lines each.
std::vector<std::string_view> pieces(std::string_view text, std::mt19937* rng, int max_lines) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t to = from;
    for (int n = static_cast<int>((*rng)() % max_lines) + 1; n > 0 && to < text.size(); --n) {
      size_t nl = text.find('\n', to);
      to = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    out.push_back(text.substr(from, to - from));
    from = to;
  }
  return out;
}

TEST(KernelLogParts, CandidatesOfAnotherFinderDecodeAsTheWholeText) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const std::string log = sample_log(seed, 400);
    const std::string expected = whole(log);
    ASSERT_NE(expected.find("(Requester ID) CmpltTO"), std::string::npos) << expected;
    std::mt19937 rng(seed);
    // The second part starts at every line of the log in turn: every AER
    // group is cut before, inside and after it.
    for (size_t cut = 0; cut <= log.size(); cut = log.find('\n', cut) + 1) {
      KernelLogScanner s(2026);
      std::string_view first = std::string_view(log).substr(0, cut);
      for (std::string_view p : pieces(first, &rng, 9)) s.add_text(p);
      CandidateFinder finder(s.text_offset());
      finder.expect_continuation();
      for (std::string_view p : pieces(std::string_view(log).substr(cut), &rng, 9)) {
        finder.add_text(p);
      }
      s.add_candidates(finder.take());
      ASSERT_EQ(dump(s.finish({})), expected)
          << "seed " << seed << ", cut at " << cut << ": "
          << std::string_view(log).substr(cut > 400 ? cut - 400 : 0, 600);
      if (cut == log.size()) break;
    }
  }
}

TEST(KernelLogParts, ManyPartsAndTextAfterThem) {
  // Parts of any size, each found by its own finder, then text read in order
  // (a part's thread that stopped early): the scanner goes on after each.
  const std::string log = sample_log(7, 3000);
  const std::string expected = whole(log);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    KernelLogScanner s(2026);
    for (std::string_view part : pieces(log, &rng, 200)) {
      if (rng() % 3 == 0) {
        s.add_text(part);
        continue;
      }
      CandidateFinder finder(s.text_offset());
      finder.expect_continuation();
      for (std::string_view p : pieces(part, &rng, 40)) finder.add_text(p);
      s.add_candidates(finder.take());
    }
    ASSERT_EQ(dump(s.finish({})), expected) << "round " << round;
  }
}

struct TempFile {
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/gd-parts-XXXXXX";
    int fd = ::mkstemp(tmpl);
    path = tmpl;
    ::close(fd);
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

// Reads the file through the probe's text reader with the given policy.
std::string read_with(const std::string& path, const klog::PartPolicy& policy,
                      std::string* last_line) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  klog::Feed f(2026);
  std::string err = klog::feed_text_fd(fd, false, &f, policy);
  ::close(fd);
  EXPECT_EQ(err, "");
  *last_line = f.last_line;
  return dump(f.scanner.finish({})) + "feed bytes " + std::to_string(f.bytes) + "\n";
}

TEST(KernelLogParts, AFileReadOnSeveralThreadsDecodesAsInOnePart) {
  const std::string log = sample_log(11, 6000) + "[99999.000000] the last line, no newline";
  TempFile file(log);
  std::string last_one;
  const std::string expected =
      read_with(file.path, klog::PartPolicy{1u << 30, 8u << 20, 1}, &last_one);
  EXPECT_EQ(last_one, "[99999.000000] the last line, no newline");
  EXPECT_NE(expected.find("\naer|"), std::string::npos);
  struct Case {
    uint64_t min_part;
    size_t held;
    size_t cpus;
  };
  // Parts of 1 KiB to a quarter of the file on 2 to 8 threads; a held
  // limit of 100 bytes stops every part's thread at its first block, so
  // the calling thread reads the rest of each part in order.
  for (Case c : {Case{log.size() / 4, 8u << 20, 2}, Case{4096, 8u << 20, 3},
                 Case{1024, 8u << 20, 8}, Case{1024, 100, 8}, Case{4096, 100, 2}}) {
    std::string last;
    EXPECT_EQ(read_with(file.path, klog::PartPolicy{c.min_part, c.held, c.cpus}, &last), expected)
        << "parts of " << c.min_part << " bytes, " << c.cpus << " threads, held " << c.held;
    EXPECT_EQ(last, last_one);
  }
}

TEST(KernelLogParts, AnAerGroupCutBetweenTwoPartsStaysWhole) {
  // Two parts, the second starting at each line of an AER group in turn:
  // the half of the file falls inside the line before.
  const std::vector<std::string> group = {
      "[ 10.0] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n",
      "[ 10.0] nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer\n",
      "[ 10.0] nvidia 0000:01:00.0:   device [10de:2684] error status/mask=00000041/0000e000\n",
      "[ 10.0] nvidia 0000:01:00.0:    [ 0] RxErr                  (First)\n",
      "[ 10.0] nvidia 0000:01:00.0:    [ 6] BadTLP\n"};
  std::string noise;
  while (noise.size() < 4096) noise += "[  9.0] usb 1-4: new high-speed USB device number 2\n";
  for (size_t cut = 1; cut < group.size(); ++cut) {
    std::string head = noise;
    for (size_t i = 0; i < cut; ++i) head += group[i];
    std::string log = head;
    for (size_t i = cut; i < group.size(); ++i) log += group[i];
    log += "[ 11.0] the end\n";
    // The half falls one byte before the second part's first line.
    const size_t half = head.size() - 1;
    const std::string filler = "[ 12.0] filler ";
    log += filler + std::string(2 * half - log.size() - filler.size() - 1, 'x') + "\n";
    ASSERT_EQ(log.size(), 2 * half);
    TempFile file(log);
    std::string last;
    std::string parts = read_with(file.path, klog::PartPolicy{1024, 8u << 20, 2}, &last);
    EXPECT_EQ(parts, read_with(file.path, klog::PartPolicy{1u << 30, 8u << 20, 1}, &last));
    EXPECT_NE(parts.find("Physical Layer RxErr BadTLP|"), std::string::npos)
        << "second part from group line " << cut << ": " << parts;
  }
}

TEST(KernelLogParts, AnOverLongLineIsSkippedAndTheRestReadInEveryPart) {
  // Two lines of 5 MiB (over klog::kMaxLineBytes), one holding an Xid of
  // its own that must not count, among NVIDIA lines: read in parts or in
  // one, the lines are skipped, counted, and the text after them decoded as
  // if they were not there (only the byte count tells).
  const std::string long_line =
      "[ 5.0] junk NVRM: Xid (PCI:0000:99:00): 13, " + std::string(5u << 20, 'x') + "\n";
  const std::string a = sample_log(21, 800);
  const std::string b = sample_log(22, 800);
  const std::string tail = "[ 7.0] NVRM: Xid (PCI:0000:41:00): 79, pid=1, GPU has fallen off\n";
  TempFile with_long(a + long_line + b + long_line + tail);
  TempFile without(a + b + tail);
  auto read = [](const std::string& path, const klog::PartPolicy& policy, uint64_t* skipped) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    klog::Feed f(2026);
    EXPECT_EQ(klog::feed_text_fd(fd, false, &f, policy), "");
    ::close(fd);
    *skipped = f.stats.skipped_lines;
    KernelLogInfo info = f.scanner.finish({});
    info.bytes = 0;  // the long lines' bytes count as read
    return dump(info);
  };
  uint64_t skipped = 0;
  const std::string expected =
      read(without.path, klog::PartPolicy{1u << 30, 8u << 20, 1}, &skipped);
  EXPECT_EQ(skipped, 0u);
  EXPECT_NE(expected.find("79|"), std::string::npos) << expected;
  EXPECT_EQ(expected.find("0000:99:00"), std::string::npos);
  for (klog::PartPolicy p :
       {klog::PartPolicy{1u << 30, 8u << 20, 1}, klog::PartPolicy{1024, 8u << 20, 2},
        klog::PartPolicy{1024, 8u << 20, 8}, klog::PartPolicy{1u << 20, 100, 4}}) {
    EXPECT_EQ(read(with_long.path, p, &skipped), expected)
        << "parts of " << p.min_part_bytes << " bytes, " << p.cpus << " threads";
    EXPECT_EQ(skipped, 2u) << "parts of " << p.min_part_bytes << " bytes, " << p.cpus;
  }
}

TEST(KernelLogParts, ASmallFileOrAPipeIsReadInOnePart) {
  const std::string log = sample_log(3, 200);
  TempFile file(log);
  std::string last;
  // Less than two parts' worth: read in order, the same as ever.
  EXPECT_EQ(read_with(file.path, klog::PartPolicy{log.size(), 8u << 20, 8}, &last),
            whole(log) + "feed bytes " + std::to_string(log.size()) + "\n");
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], log.data(), log.size()), static_cast<ssize_t>(log.size()));
  ::close(p[1]);
  klog::Feed f(2026);
  EXPECT_EQ(klog::feed_text_fd(p[0], false, &f, klog::PartPolicy{1024, 8u << 20, 8}), "");
  ::close(p[0]);
  EXPECT_EQ(dump(f.scanner.finish({})), whole(log));
}

}  // namespace
}  // namespace gd
