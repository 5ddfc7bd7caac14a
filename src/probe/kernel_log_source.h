// Internal to src/probe/kernel_log*.cc: what the kernel-log sources share.
// kernel_log.cc reads and probes, kernel_log_kmsg.cc reads /dev/kmsg,
// kernel_log_journal.cc the systemd journal (all of libsystemd),
// kernel_log_text.cc text files (kern.log, logs --from), kernel_log_follow.cc
// follows them (--follow). Not for use outside those files and their tests.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernlog/kmsg.h"
#include "kernlog/scanner.h"
#include "probe/kernel_log.h"
#include "probe/rootfs.h"
#include "util/result.h"
#include "util/text.h"

namespace gd::klog {

constexpr int kPollMs = 200;  // --follow: how often `stop` and file growth are checked
// A log that floods faster than it can be read must not keep the probe busy
// forever: stop after this many records or journal entries.
constexpr uint64_t kMaxRecords = 4'000'000;
// A line this long or longer is no kernel message (printk's lines are under
// 1 KiB, journald's at most 48 KiB): it is passed over to its end, counted
// (KernelLogStats::skipped_lines), and the lines after it are read. Memory
// stays at this bound whatever the line's length.
constexpr size_t kMaxLineBytes = 4 << 20;

// --- shared helpers (the functions are defined in kernel_log.cc) ------------------

std::string errno_text(int err);

class Fd {
 public:
  explicit Fd(int fd = -1, bool owned = true) : fd_(fd), owned_(owned) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)), owned_(o.owned_) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
      owned_ = o.owned_;
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0 && owned_) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  bool owned_;
};

int read_dmesg_restrict(const RootFs& fs);

// What was read, on its way to the scanner.
struct Feed {
  // A one-shot read holds no events for take_new; a follower asks for all
  // (scanner.keep_new(SIZE_MAX)) and takes them after every read.
  explicit Feed(int y) : scanner(y), year(y) { scanner.keep_new(0); }
  KernelLogScanner scanner;
  int year;
  std::optional<int64_t> written_by;  // KernelLogScanner::set_written_by
  void set_written_by(int64_t unix_s) {
    written_by = unix_s;
    scanner.set_written_by(unix_s);
  }
  std::string last_line;  // of the text: the log's own "now" (newest_reference)
  KernelLogStats stats;
  uint64_t bytes = 0;
  std::optional<uint64_t> last_seq;

  void record(std::string_view raw) {
    bytes += raw.size();
    auto r = parse_kmsg_record(raw);
    if (!r) {
      ++stats.garbled_records;
      return;
    }
    // A gap in the sequence numbers: records overwritten in the ring buffer
    // before they were read (EPIPE on the device).
    if (last_seq && r->seq > *last_seq + 1) stats.lost_records += r->seq - *last_seq - 1;
    last_seq = r->seq;
    ++stats.records;
    scanner.add_record(*r);
  }
  void text(std::string_view t) {
    bytes += t.size();
    scanner.add_text(t);
    std::string_view rest = t;
    while (!rest.empty()) {
      size_t nl = rest.substr(0, rest.size() - 1).rfind('\n');
      std::string_view line = trim(nl == std::string_view::npos ? rest : rest.substr(nl + 1));
      if (!line.empty()) {
        last_line = std::string(line.substr(0, 4096));
        break;
      }
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(0, nl + 1);
    }
  }
  // Bytes of an over-long line passed over (kMaxLineBytes); line_start: the
  // first of them, so the line is counted once.
  void skip(uint64_t n, bool line_start) {
    if (line_start) ++stats.skipped_lines;
    bytes += n;
    scanner.skip_text(n);
  }
  // Candidate lines found on another thread, in the text's order
  // (kernel_log_text.cc's parts); last_line is the caller's to set.
  void candidates(const CandidateLines& found) {
    bytes += found.end - found.begin;
    scanner.add_candidates(found);
  }
  bool full() const { return stats.records + stats.garbled_records >= kMaxRecords; }
};

using OnEvent = std::function<bool(const KernelEvent&)>;

// --- /dev/kmsg (kernel_log_kmsg.cc) ----------------------------------------------

struct Kmsg {
  Fd fd;
  bool device = false;  // false: a recorded tree's regular file
};

Result<Kmsg> open_kmsg(const RootFs& fs);
std::string drain_kmsg_device(int fd, Feed* f);
void feed_kmsg_file(const RootFs& fs, Feed* f, std::string* problem);

// --- the journal (kernel_log_journal.cc) -----------------------------------------

std::string feed_journal(const RootFs& fs, Feed* f);
Result<bool> follow_journal(const RootFs& fs, Feed* f, const OnEvent& on_event,
                            const std::atomic<bool>& stop);

// --- text files (kernel_log_text.cc) ---------------------------------------------

// How a big regular file is split into parts read on several CPUs
// (kernel_log_text.cc); tests make the parts small.
struct PartPolicy {
  uint64_t min_part_bytes = 32 << 20;  // a file of less than two is read in one part
  size_t held_bytes = 8 << 20;         // of candidate text a part's thread holds at most
  size_t cpus = 0;                     // at most one part each; 0: those this process may use
};
std::string feed_text_fd(int fd, bool from_last_boot, Feed* f, const PartPolicy& parts = {});
// Reads fd with read() to its end, handing fn blocks of whole lines (the
// last may lack its newline) with their offset from where reading began,
// until fn returns false; a line of kMaxLineBytes or more goes to skip in
// pieces instead (line_start on its first). "" or the read error.
using OnBlock = std::function<bool(std::string_view block, uint64_t offset)>;
using OnSkip = std::function<void(uint64_t bytes, bool line_start)>;
std::string read_line_blocks(int fd, const OnBlock& fn, const OnSkip& skip);
Result<Fd> open_user_file(const std::string& file);
// The last line of a regular file that is not blank, trimmed, at most 4096
// bytes (Feed::last_line), read from its end; "" when none.
std::string last_line_of(int fd);
// When a file was last written (its mtime; now for a pipe), and that
// moment's local year: the year of its syslog stamps, which print none.
int64_t file_time(int fd);
int file_year(int fd);

// --- follow (kernel_log_follow.cc) -----------------------------------------------

bool stopped(const std::atomic<bool>& stop);
bool emit(Feed* f, const std::function<bool(const KernelEvent&)>& on_event);

}  // namespace gd::klog
