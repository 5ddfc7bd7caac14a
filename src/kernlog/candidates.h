// The kernel log's fast path: one vectorscan literal scan over a buffer
// finds the lines the decoder may need (kernlog/decode.h), and only those are
// copied on, so unrelated kernel noise costs almost nothing
// (bench/logs_scan.py). The scanner that decodes (kernlog/scanner.h) takes
// them in text order, from its own finder or from finders that ran over the
// parts of a big file on other threads (probe/kernel_log_text.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

// An AER group's detail lines ("nvidia 0000:01:00.0:    [ 0] RxErr") hold no
// keyword: the lines after a group's first line that have their form
// (may_be_aer_detail) are kept as candidates, fed only while the decoder
// asks for them (KernelMessageDecoder::wants_aer_detail). The kernel prints a
// group as its first line, the device's status line and a line per set bit
// of a 32-bit status register (drivers/pci/pcie/aer.c), so 64 lines hold any
// group whole.
constexpr int kAerDetailLines = 64;

// The candidate lines found in a stretch [begin, end) of a text, in order.
struct CandidateLines {
  struct Line {
    uint64_t offset;  // of the line's first byte, in the whole text
    size_t at;        // of the line in `text`
    size_t size;      // without its newline
    // Holds a keyword; false: a line after an AER group's first line, which
    // counts only while the group asks for detail lines.
    bool hit;
  };
  std::string text;
  std::vector<Line> lines;
  uint64_t begin = 0;
  uint64_t end = 0;

  std::string_view line(const Line& l) const { return std::string_view(text).substr(l.at, l.size); }
};

// Finds the candidate lines of a text handed to it in pieces of whole lines.
// Each finder has its own vectorscan scratch: finders on several threads run
// at once.
class CandidateFinder {
 public:
  // offset: where the first piece starts in the whole text.
  explicit CandidateFinder(uint64_t offset = 0);
  ~CandidateFinder();
  CandidateFinder(const CandidateFinder&) = delete;
  CandidateFinder& operator=(const CandidateFinder&) = delete;

  // Whole lines that follow what came before (the last may lack its newline).
  void add_text(std::string_view text);
  // The next lines may continue an AER group begun before them, in text this
  // finder did not see (the part of a file before its own; a line the
  // decoder had from elsewhere): keep them as detail candidates.
  void expect_continuation();

  // The next `bytes` of the text are passed over unseen (a line too long to
  // hold); the lines found so far are kept.
  void pass_over(uint64_t bytes);

  // Where the next piece starts in the whole text.
  uint64_t offset() const;
  // The next piece starts at `offset`: the text before it went elsewhere.
  void skip_to(uint64_t offset);
  // The lines found since the last clear() or take(), from where that was.
  const CandidateLines& found() const;
  void clear();
  CandidateLines take();

  struct Impl;  // opaque state (public so the scan callback can reach it)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gd
