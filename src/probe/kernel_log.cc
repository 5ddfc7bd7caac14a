// The kernel-log probe and `--follow`: /dev/kmsg, else the systemd journal,
// else /var/log/kern.log, all under the root; or a file the user names. The
// text is handed to the kernlog scanner (src/kernlog/), which decodes and
// folds the events; this file only finds, opens and reads the sources.
//
// /dev/kmsg (Documentation/ABI/testing/dev-kmsg; shared/reference/
// nvidia-facts.md §7.3, 2026-12): each read() returns one record; EAGAIN
// (O_NONBLOCK) at the end; EPIPE when records were overwritten before they
// were read (go on reading); EINVAL when the buffer is too small (use 8 KiB).
// Opening it needs CAP_SYSLOG when kernel.dmesg_restrict = 1.
#include "probe/kernel_log.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>
#include <utility>

#include "kernlog/kmsg.h"
#include "kernlog/line.h"
#include "probe/file_probes.h"
#include "probe/probe.h"
#include "probe/rootfs.h"
#include "probe/text.h"

namespace gd {

namespace {

constexpr size_t kKmsgRecordBytes = 8192;  // read() needs room for one whole record
constexpr size_t kChunkBytes = 4 << 20;    // text files are read in chunks of whole lines
constexpr size_t kMaxRecordedKmsgBytes = 64 << 20;
constexpr int kPollMs = 200;  // --follow: how often `stop` and file growth are checked
// A log that floods faster than it can be read must not keep the probe busy
// forever: stop after this many records or journal entries.
constexpr uint64_t kMaxRecords = 4'000'000;
constexpr int kCapSyslogBit = 34;  // include/uapi/linux/capability.h

std::string errno_text(int err) { return std::strerror(err); }

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

int year_of(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

// /proc/uptime: seconds since boot, then idle seconds of all CPUs.
//   12345.67 45678.90
std::optional<double> parse_uptime(std::string_view line) {
  auto toks = split_ws(line);
  if (toks.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(toks[0].data(), toks[0].data() + toks[0].size(), v);
  if (ec != std::errc() || ptr != toks[0].data() + toks[0].size() || v < 0) return std::nullopt;
  return v;
}

// "Now" for the ages of kmsg and journal events. A recorded tree has its
// proc/uptime and no wall clock. Live: CLOCK_MONOTONIC rather than
// /proc/uptime, because printk stamps (local_clock) stop during suspend like
// CLOCK_MONOTONIC does, while /proc/uptime (CLOCK_BOOTTIME) goes on; after a
// suspend /proc/uptime would make recent events look old.
ScanReference reference_at(const RootFs& fs) {
  ScanReference ref;
  if (fs.live()) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ref.now_boot_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
    ref.now_unix_s = static_cast<int64_t>(std::time(nullptr));
  } else if (auto r = fs.read_line("/proc/uptime")) {
    ref.now_boot_s = parse_uptime(*r);
  }
  return ref;
}

// /proc/sys/kernel/dmesg_restrict: "0\n" or "1\n"; -1 when unknown.
int read_dmesg_restrict(const RootFs& fs) {
  auto r = fs.read_line("/proc/sys/kernel/dmesg_restrict");
  if (!r) return -1;
  auto v = parse_u64(*r);
  return v && *v <= 1 ? static_cast<int>(*v) : -1;
}

std::optional<bool> read_cap_syslog(const RootFs& fs) {
  auto r = fs.read("/proc/self/status", 64 * 1024);
  if (!r) return std::nullopt;
  return cap_syslog_from_status(*r);
}

// /proc/sys/kernel/random/boot_id: "a6a7c528-2340-47bb-984e-4e6b64c199cc";
// the journal's _BOOT_ID is the same without dashes. "" when unknown.
std::string current_boot_id(const RootFs& fs) {
  auto r = fs.read_line("/proc/sys/kernel/random/boot_id");
  if (!r) return "";
  std::string id;
  for (char c : *r) {
    if (c == '-') continue;
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!hex) return "";
    id += c;
  }
  return id.size() == 32 ? id : "";
}

// What was read, on its way to the scanner.
struct Feed {
  explicit Feed(int y) : scanner(y), year(y) {}
  KernelLogScanner scanner;
  int year;
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
  bool full() const { return stats.records + stats.garbled_records >= kMaxRecords; }
};

// A file from elsewhere: "now" is the time of its last line, so ages say how
// long before the end of the log an event was (the scanner only looks at the
// lines that matter to it, which need not include the last one).
ScanReference newest_reference(const Feed& f) {
  ScanReference ref;
  if (f.last_line.empty()) return ref;
  LogLine l = parse_log_line(f.last_line, f.year);
  ref.now_boot_s = l.boot_s;
  ref.now_unix_s = l.unix_s;
  return ref;
}

KernelLogInfo finish(Feed& f, const ScanReference& ref, std::optional<double> max_age_s,
                     std::string source) {
  KernelLogInfo info = f.scanner.finish(ref, max_age_s);
  info.attempted = true;
  info.source = std::move(source);
  if (info.bytes == 0) info.bytes = f.bytes;
  return info;
}

// Hands every event decoded since the last call to on_event; false when it
// asked to stop.
bool emit(Feed* f, const std::function<bool(const KernelEvent&)>& on_event) {
  for (const auto& e : f->scanner.take_new()) {
    if (!on_event(e)) return false;
  }
  return true;
}

// --- /dev/kmsg -----------------------------------------------------------------

struct Kmsg {
  Fd fd;
  bool device = false;  // false: a recorded tree's regular file
};

// Error: info.unreadable's text.
Result<Kmsg> open_kmsg(const RootFs& fs) {
  int fd = ::open(fs.path("/dev/kmsg").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    return Error{kmsg_unreadable_reason(err, read_dmesg_restrict(fs), read_cap_syslog(fs))};
  }
  Kmsg k{Fd(fd)};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{"/dev/kmsg: " + errno_text(errno)};
  if (S_ISCHR(st.st_mode)) {
    k.device = true;
  } else if (!S_ISREG(st.st_mode)) {
    return Error{"/dev/kmsg is not a character device"};
  }
  return k;
}

// Reads records until EAGAIN (the end). "" or why reading stopped early.
std::string drain_kmsg_device(int fd, Feed* f) {
  char buf[kKmsgRecordBytes];
  while (!f->full()) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      f->record(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) return "";
    if (errno == EINTR) continue;
    if (errno == EPIPE) continue;  // records lost; the next read gives the oldest kept
    if (errno == EAGAIN) return "";
    return "reading /dev/kmsg: " + errno_text(errno);
  }
  return "";
}

// A recorded /dev/kmsg: what read() returned, one record a line.
void feed_kmsg_file(const RootFs& fs, Feed* f, std::string* problem) {
  auto text = fs.read("/dev/kmsg", kMaxRecordedKmsgBytes);
  if (!text) {
    *problem = text.error();
    return;
  }
  for (auto rec : split_kmsg_records(*text)) {
    if (f->full()) break;
    f->record(rec);
  }
}

// --- the journal ---------------------------------------------------------------

struct Journal {
  sd_journal* j = nullptr;
  Journal() = default;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal() {
    if (j != nullptr) sd_journal_close(j);
  }
};

// The value of FIELD in the current entry ("MESSAGE" -> the text after
// "MESSAGE="); valid until the next call on j.
std::optional<std::string_view> journal_field(sd_journal* j, const char* name) {
  const void* data = nullptr;
  size_t len = 0;
  if (sd_journal_get_data(j, name, &data, &len) < 0) return std::nullopt;
  std::string_view s(static_cast<const char*>(data), len);
  size_t eq = s.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  return s.substr(eq + 1);
}

// Opens the system journal (live) or the tree's var/log/journal and
// run/log/journal. Error: why there is none.
Result<bool> open_journal(const RootFs& fs, Journal* out) {
  if (!fs.is_dir("/var/log/journal") && !fs.is_dir("/run/log/journal")) {
    return Error{"no journal"};
  }
  int r = fs.live() ? sd_journal_open(&out->j, SD_JOURNAL_LOCAL_ONLY)
                    // SD_JOURNAL_OS_ROOT: the path is an OS tree; its var/log/journal
                    // and run/log/journal are read.
                    : sd_journal_open_directory(&out->j, fs.root().c_str(), SD_JOURNAL_OS_ROOT);
  if (r < 0) return Error{"journal: " + errno_text(-r)};
  return true;
}

// The boot of the newest kernel entry: a recorded tree without boot_id.
std::string newest_kernel_boot(sd_journal* j) {
  sd_journal_flush_matches(j);
  if (sd_journal_add_match(j, "_TRANSPORT=kernel", 0) < 0) return "";
  std::string id;
  sd_id128_t boot;
  uint64_t usec = 0;
  if (sd_journal_seek_tail(j) >= 0 && sd_journal_previous(j) > 0 &&
      sd_journal_get_monotonic_usec(j, &usec, &boot) >= 0) {
    char s[SD_ID128_STRING_MAX];
    id = sd_id128_to_string(boot, s);
  }
  sd_journal_flush_matches(j);
  return id;
}

// (kernel AND this boot) OR (fabric manager AND this boot).
bool add_journal_matches(const RootFs& fs, sd_journal* j) {
  std::string boot = current_boot_id(fs);
  if (boot.empty()) boot = newest_kernel_boot(j);
  if (boot.empty()) return false;
  std::string boot_match = "_BOOT_ID=" + boot;
  sd_journal_flush_matches(j);
  return sd_journal_add_match(j, "_TRANSPORT=kernel", 0) >= 0 &&
         sd_journal_add_match(j, boot_match.c_str(), 0) >= 0 &&
         sd_journal_add_disjunction(j) >= 0 &&
         sd_journal_add_match(j, "SYSLOG_IDENTIFIER=nv-fabricmanager", 0) >= 0 &&
         sd_journal_add_match(j, boot_match.c_str(), 0) >= 0;
}

// "2026-12-02T10:00:01.123456+00:00": the ISO syslog stamp kernlog/line.h reads.
std::string iso_stamp(uint64_t realtime_usec) {
  std::time_t t = static_cast<std::time_t>(realtime_usec / 1000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[24];
  std::snprintf(frac, sizeof frac, ".%06u+00:00", static_cast<unsigned>(realtime_usec % 1000000));
  return std::string(buf) + frac;
}

// One journal entry. Kernel entries become kmsg records (journald keeps the
// record's stamp in _SOURCE_MONOTONIC_TIMESTAMP, microseconds):
//   _TRANSPORT=kernel  PRIORITY=4  _SOURCE_MONOTONIC_TIMESTAMP=88123456
//   MESSAGE=NVRM: Xid (PCI:0000:17:00): 79, pid='<unknown>', name=<unknown>, ...
// The fabric manager's entries become syslog lines:
//   2026-12-02T10:00:01.000000+00:00 node7 nv-fabricmanager[2301]: <MESSAGE>
void feed_journal_entry(sd_journal* j, Feed* f) {
  auto transport = journal_field(j, "_TRANSPORT");
  bool kernel = transport && *transport == "kernel";
  std::string prefix;
  if (!kernel) {
    uint64_t rt = 0;
    sd_journal_get_realtime_usec(j, &rt);
    auto host = journal_field(j, "_HOSTNAME");
    auto pid = journal_field(j, "_PID");
    prefix = iso_stamp(rt) + " " + std::string(host ? printable(*host, 64) : "localhost") +
             " nv-fabricmanager";
    if (pid) prefix += "[" + printable(*pid, 16) + "]";
    prefix += ": ";
  }
  KmsgRecord rec;
  if (kernel) {
    auto prio = journal_field(j, "PRIORITY");
    auto p = prio ? parse_u64(*prio) : std::nullopt;
    rec.level = p && *p <= 7 ? static_cast<int>(*p) : 4;
    uint64_t usec = 0;
    auto src = journal_field(j, "_SOURCE_MONOTONIC_TIMESTAMP");
    if (auto v = src ? parse_u64(*src) : std::nullopt) {
      usec = *v;
    } else {
      sd_id128_t boot;
      if (sd_journal_get_monotonic_usec(j, &usec, &boot) < 0) usec = 0;
    }
    rec.ts_usec = usec;
  }
  auto msg = journal_field(j, "MESSAGE");
  if (!msg) return;
  ++f->stats.records;
  f->bytes += msg->size();
  if (kernel) {
    rec.message = std::string(*msg);
    f->scanner.add_record(rec);
    return;
  }
  for (auto line : split_lines(*msg)) f->scanner.add_line(prefix + std::string(line));
}

// Reads this boot's kernel and fabric-manager entries. "" or why not.
std::string feed_journal(const RootFs& fs, Feed* f) {
  Journal jn;
  auto opened = open_journal(fs, &jn);
  if (!opened) return opened.error();
  if (!add_journal_matches(fs, jn.j)) return "journal: no kernel messages";
  int r = sd_journal_seek_head(jn.j);
  while (r >= 0 && !f->full() && (r = sd_journal_next(jn.j)) > 0) feed_journal_entry(jn.j, f);
  if (r < 0) return "journal: " + errno_text(-r);
  if (f->stats.records == 0) {
    std::string why = "journal: no kernel messages of the current boot";
    // Without root or the systemd-journal/adm group, only the user's own
    // journal files can be opened, and they hold no kernel messages.
    if (fs.live() && ::geteuid() != 0)
      why += " (reading them needs root or group systemd-journal or adm)";
    return why;
  }
  return "";
}

// --- text files (kern.log, --file) ------------------------------------------------

// Reads fd from its current position to the end in chunks, handing fn
// blocks of whole lines (the last one may lack its newline) and the block's
// offset from where reading began. "" or the read error.
std::string for_each_block(int fd, const std::function<void(std::string_view, uint64_t)>& fn) {
  std::string buf;
  uint64_t consumed = 0;
  std::string chunk(kChunkBytes, '\0');
  for (;;) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_text(errno);
    }
    if (n == 0) break;
    buf.append(chunk.data(), static_cast<size_t>(n));
    size_t nl = buf.rfind('\n');
    // A line longer than a chunk is passed on in pieces rather than held forever.
    size_t cut =
        nl != std::string::npos ? nl + 1 : (buf.size() >= 4 * kChunkBytes ? buf.size() : 0);
    if (cut == 0) continue;
    fn(std::string_view(buf).substr(0, cut), consumed);
    consumed += cut;
    buf.erase(0, cut);
  }
  if (!buf.empty()) fn(buf, consumed);
  return "";
}

// Feeds the text of fd to the scanner; from_last_boot: only from the last
// kernel "Linux version" banner on (kern.log holds several boots). "" or the
// read error.
std::string feed_text_fd(int fd, bool from_last_boot, Feed* f) {
  // A regular file is mapped and scanned in one pass, without copying it:
  // reading it through a buffer costs as much as the scan (bench/logs_scan.py).
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    size_t size = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map != MAP_FAILED && at >= 0 && static_cast<size_t>(at) <= size) {
      std::string_view text(static_cast<const char*>(map), size);
      text.remove_prefix(static_cast<size_t>(at));
      if (from_last_boot) {
        size_t b = last_boot_offset(text);
        if (b != std::string_view::npos) text.remove_prefix(b);
      }
      f->text(text);
      ::munmap(map, size);
      return "";
    }
    if (map != MAP_FAILED) ::munmap(map, size);
  }
  if (from_last_boot) {
    uint64_t start = 0;
    std::string err = for_each_block(fd, [&](std::string_view block, uint64_t off) {
      size_t b = last_boot_offset(block);
      if (b != std::string_view::npos) start = off + b;
    });
    if (!err.empty()) return err;
    if (::lseek(fd, static_cast<off_t>(start), SEEK_SET) < 0) return errno_text(errno);
  }
  return for_each_block(fd, [&](std::string_view block, uint64_t) { f->text(block); });
}

// Opens a file the user named. Error: "cannot read FILE: why".
Result<Fd> open_user_file(const std::string& file) {
  if (file == "-") return Fd(STDIN_FILENO, false);
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Error{"cannot read " + file + ": " + errno_text(errno)};
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{"cannot read " + file + ": " + errno_text(errno)};
  if (S_ISDIR(st.st_mode)) return Error{"cannot read " + file + ": " + errno_text(EISDIR)};
  return owned;
}

int file_year(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return year_of(st.st_mtime);
  return year_of(std::time(nullptr));
}

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

// --- follow ----------------------------------------------------------------------

using OnEvent = std::function<bool(const KernelEvent&)>;

bool stopped(const std::atomic<bool>& stop) { return stop.load(std::memory_order_relaxed); }

Result<bool> follow_kmsg_device(int fd, Feed* f, const OnEvent& on_event,
                                const std::atomic<bool>& stop) {
  ::lseek(fd, 0, SEEK_END);  // only records logged from now on
  while (!stopped(stop)) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, kPollMs);
    if (r < 0 && errno != EINTR) return Error{"poll /dev/kmsg: " + errno_text(errno)};
    if (r <= 0) continue;
    std::string err = drain_kmsg_device(fd, f);
    if (!emit(f, on_event)) return true;
    if (!err.empty()) return Error{err};
  }
  return true;
}

Result<bool> follow_journal(const RootFs& fs, Feed* f, const OnEvent& on_event,
                            const std::atomic<bool>& stop) {
  Journal jn;
  auto opened = open_journal(fs, &jn);
  if (!opened) return Error{opened.error()};
  if (!add_journal_matches(fs, jn.j)) return Error{"journal: no kernel messages"};
  // seek_tail then one step back: the next sd_journal_next() is a new entry.
  sd_journal_seek_tail(jn.j);
  sd_journal_previous(jn.j);
  while (!stopped(stop)) {
    int r;
    while ((r = sd_journal_next(jn.j)) > 0) feed_journal_entry(jn.j, f);
    if (r < 0) return Error{"journal: " + errno_text(-r)};
    if (!emit(f, on_event)) return true;
    r = sd_journal_wait(jn.j, kPollMs * 1000);
    if (r < 0) return Error{"journal: " + errno_text(-r)};
  }
  return true;
}

// Tails a file the way `tail -F` does: reads what is appended, and starts
// over on a new file when the path's inode changes (rotation) or the file
// shrinks (truncation). records: each line is a kmsg record (a recorded
// /dev/kmsg; its " KEY=value" dictionary lines are skipped).
Result<bool> follow_path(const std::string& path, const std::string& shown, bool from_start,
                         bool records, Feed* f, const OnEvent& on_event,
                         const std::atomic<bool>& stop) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return Error{"cannot read " + shown + ": " + errno_text(errno)};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error{"cannot read " + shown + ": " + errno_text(errno)};
  if (S_ISDIR(st.st_mode)) return Error{"cannot read " + shown + ": " + errno_text(EISDIR)};
  ino_t ino = st.st_ino;
  uint64_t off = from_start ? 0 : static_cast<uint64_t>(st.st_size);
  std::string carry;
  std::string chunk(64 * 1024, '\0');
  auto feed_lines = [&](bool flush) {
    size_t nl = carry.rfind('\n');
    size_t cut = flush ? carry.size() : (nl == std::string::npos ? 0 : nl + 1);
    if (cut == 0) return;
    std::string_view whole = std::string_view(carry).substr(0, cut);
    if (records) {
      for (auto line : split_lines(whole)) {
        if (!line.empty() && line.front() != ' ') f->record(line);
      }
    } else {
      f->text(whole);
    }
    carry.erase(0, cut);
  };
  while (!stopped(stop)) {
    for (;;) {
      ssize_t n = ::pread(fd.get(), chunk.data(), chunk.size(), static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<uint64_t>(n);
      carry.append(chunk.data(), static_cast<size_t>(n));
      feed_lines(false);
      if (stopped(stop)) break;
    }
    if (!emit(f, on_event)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0) continue;  // rotated away; the new one comes soon
    if (now.st_ino != ino || static_cast<uint64_t>(now.st_size) < off) {
      feed_lines(true);  // a last line without its newline
      int nfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      if (nfd < 0) continue;
      fd = Fd(nfd);
      struct stat fst {};
      ino = ::fstat(nfd, &fst) == 0 ? fst.st_ino : now.st_ino;
      off = 0;
    }
  }
  return true;
}

// stdin until end of input.
Result<bool> follow_stream(int fd, Feed* f, const OnEvent& on_event,
                           const std::atomic<bool>& stop) {
  std::string carry;
  std::string chunk(64 * 1024, '\0');
  while (!stopped(stop)) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, kPollMs);
    if (r < 0 && errno != EINTR) return Error{"cannot read stdin: " + errno_text(errno)};
    if (r <= 0) continue;
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Error{"cannot read stdin: " + errno_text(errno)};
    }
    if (n == 0) {
      if (!carry.empty()) f->text(carry);
      emit(f, on_event);
      return true;
    }
    carry.append(chunk.data(), static_cast<size_t>(n));
    size_t nl = carry.rfind('\n');
    if (nl != std::string::npos) {
      f->text(std::string_view(carry).substr(0, nl + 1));
      carry.erase(0, nl + 1);
    }
    if (!emit(f, on_event)) return true;
  }
  return true;
}

}  // namespace

// --- exposed helpers -----------------------------------------------------------------

std::string kmsg_unreadable_reason(int err, int dmesg_restrict,
                                   std::optional<bool> has_cap_syslog) {
  if (err == ENOENT || err == ENOTDIR) return "no /dev/kmsg";
  std::string out = "/dev/kmsg: " + errno_text(err);
  if (err != EPERM && err != EACCES) return out;
  if (dmesg_restrict == 1) {
    if (has_cap_syslog == false) {
      out += " (kernel.dmesg_restrict = 1 and this process lacks CAP_SYSLOG)";
    } else if (has_cap_syslog == true) {
      out +=
          " (kernel.dmesg_restrict = 1; this process has CAP_SYSLOG, so a security module "
          "or the device cgroup denied it)";
    } else {
      out += " (kernel.dmesg_restrict = 1; CAP_SYSLOG of this process unknown)";
    }
  } else if (dmesg_restrict == 0) {
    out +=
        " (kernel.dmesg_restrict = 0: the file mode, a security module or the device cgroup "
        "denied it)";
  } else {
    out += " (kernel.dmesg_restrict unknown)";
  }
  return out;
}

// /proc/self/status:
//   CapInh:	0000000000000000
//   CapPrm:	000001ffffffffff
//   CapEff:	000001ffffffffff
std::optional<bool> cap_syslog_from_status(std::string_view proc_status) {
  for (auto line : split_lines(proc_status)) {
    if (line.substr(0, 7) != "CapEff:") continue;
    auto v = parse_hex(trim(line.substr(7)));
    if (!v) return std::nullopt;
    return ((*v >> kCapSyslogBit) & 1) != 0;
  }
  return std::nullopt;
}

// A recorded /dev/kmsg:
//   6,3964,206764307,-;nvidia-nvswitch2: open (major=510)
//   4,1201,88123456,-,caller=T812;NVRM: Xid (PCI:0000:17:00): 79, ...
//    SUBSYSTEM=pci
//    DEVICE=+pci:0000:17:00.0
std::vector<std::string_view> split_kmsg_records(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.front() == ' ') {
      // A dictionary line: extend the record before it (views are contiguous);
      // one with no record before it is dropped.
      if (!out.empty()) {
        const char* begin = out.back().data();
        out.back() = std::string_view(begin, static_cast<size_t>(text.data() + end - begin));
      }
    } else if (!trim(line).empty()) {
      out.push_back(line);
    }
    pos = end + 1;
  }
  return out;
}

// The kernel's first line at each boot, as kern.log/syslog keep it:
//   Dec  2 09:58:01 node7 kernel: [    0.000000] Linux version 6.8.0-45-generic ...
//   2026-12-02T09:58:01.000000+00:00 node7 kernel: Linux version 6.8.0-45-generic ...
size_t last_boot_offset(std::string_view text) {
  constexpr std::string_view kBanner = "Linux version ";
  size_t pos = text.size();
  while (pos > 0) {
    size_t hit = text.rfind(kBanner, pos - 1);
    if (hit == std::string_view::npos) return std::string_view::npos;
    std::string_view before = text.substr(0, hit);
    size_t line_start = before.rfind('\n');
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    std::string_view head = trim(before.substr(line_start));
    bool kernel = head.empty() || head.back() == ']' ||
                  (head.size() >= 7 && head.substr(head.size() - 7) == "kernel:");
    if (kernel) return line_start;
    pos = hit;
  }
  return std::string_view::npos;
}

// --- read ------------------------------------------------------------------------------

Result<KernelLogInfo> read_kernel_log(const KernelLogOptions& opt) {
  return read_kernel_log(opt, nullptr);
}

Result<KernelLogInfo> read_kernel_log(const KernelLogOptions& opt, KernelLogStats* stats) {
  if (!opt.file.empty()) {
    auto fd = open_user_file(opt.file);
    if (!fd) return Error{fd.error()};
    Feed f(file_year(fd->get()));
    std::string err = feed_text_fd(fd->get(), false, &f);
    if (!err.empty()) return Error{"cannot read " + opt.file + ": " + err};
    if (stats != nullptr) *stats = f.stats;
    // A file from elsewhere: ages against its own last line.
    return finish(f, newest_reference(f), opt.max_age_s, opt.file == "-" ? "stdin" : opt.file);
  }

  RootFs fs(opt.root);
  std::vector<std::string> reasons;
  int dmesg_restrict = read_dmesg_restrict(fs);
  auto done = [&](Feed& f, const ScanReference& ref, std::string source) {
    if (stats != nullptr) *stats = f.stats;
    KernelLogInfo info = finish(f, ref, opt.max_age_s, std::move(source));
    info.unreadable = join_reasons(reasons);
    info.dmesg_restrict = dmesg_restrict;
    return info;
  };
  int year = year_of(std::time(nullptr));

  if (auto k = open_kmsg(fs)) {
    Feed f(year);
    std::string problem;
    if (k->device) {
      problem = drain_kmsg_device(k->fd.get(), &f);
    } else {
      feed_kmsg_file(fs, &f, &problem);
    }
    if (problem.empty() || f.stats.records > 0) {
      if (!problem.empty()) reasons.push_back(problem);
      return done(f, reference_at(fs), "/dev/kmsg");
    }
    reasons.push_back(problem);
  } else {
    reasons.push_back(k.error());
  }

  {
    Feed f(year);
    std::string problem = feed_journal(fs, &f);
    if (problem.empty()) return done(f, reference_at(fs), "journal");
    reasons.push_back(problem);
  }

  const std::string kern_log = fs.path("/var/log/kern.log");
  int fd = ::open(kern_log.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    reasons.push_back(err == ENOENT ? "no /var/log/kern.log"
                                    : "cannot read /var/log/kern.log: " + errno_text(err));
  } else {
    Fd owned(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      reasons.push_back("/var/log/kern.log is not a regular file");
    } else {
      Feed f(year_of(st.st_mtime));
      std::string err = feed_text_fd(fd, true, &f);
      if (err.empty()) {
        // Live: ages against now; a recorded tree's file against its newest line.
        return done(f, fs.live() ? reference_at(fs) : newest_reference(f), "/var/log/kern.log");
      }
      reasons.push_back("cannot read /var/log/kern.log: " + err);
    }
  }

  KernelLogInfo info;
  info.attempted = true;
  info.unreadable = join_reasons(reasons);
  info.dmesg_restrict = dmesg_restrict;
  if (stats != nullptr) *stats = KernelLogStats{};
  return info;
}

// --- follow ------------------------------------------------------------------------------

Result<bool> follow_kernel_log(const KernelLogOptions& opt, const OnEvent& on_event,
                               const std::atomic<bool>& stop) {
  if (!opt.file.empty()) {
    auto fd = open_user_file(opt.file);
    if (!fd) return Error{fd.error()};
    Feed f(file_year(fd->get()));
    if (opt.file == "-") return follow_stream(fd->get(), &f, on_event, stop);
    return follow_path(opt.file, opt.file, true, false, &f, on_event, stop);
  }
  RootFs fs(opt.root);
  std::vector<std::string> reasons;
  int year = year_of(std::time(nullptr));
  if (auto k = open_kmsg(fs)) {
    Feed f(year);
    if (k->device) return follow_kmsg_device(k->fd.get(), &f, on_event, stop);
    return follow_path(fs.path("/dev/kmsg"), "/dev/kmsg", false, true, &f, on_event, stop);
  } else {
    reasons.push_back(k.error());
  }
  {
    // The journal is followed only when it holds this boot's kernel messages.
    Feed probe(year);
    std::string problem = feed_journal(fs, &probe);
    if (problem.empty()) {
      Feed f(year);
      return follow_journal(fs, &f, on_event, stop);
    }
    reasons.push_back(problem);
  }
  if (fs.exists("/var/log/kern.log")) {
    Feed f(year);
    return follow_path(fs.path("/var/log/kern.log"), "/var/log/kern.log", false, false, &f,
                       on_event, stop);
  }
  reasons.push_back("no /var/log/kern.log");
  return Error{"no kernel log to follow: " + join_reasons(reasons)};
}

// --- the probe ---------------------------------------------------------------------------

ProbeRecord probe_kernel_log(const ProbeOptions& opt, Snapshot* s) {
  KernelLogOptions ko;
  ko.root = opt.root;  // every event of the current boot: the checks apply their window
  KernelLogStats stats;
  ProbeNotes notes;
  auto r = read_kernel_log(ko, &stats);
  if (!r) {
    s->kernel_log.attempted = true;
    notes.garbled(r.error());
    return notes.record("kernel-log");
  }
  s->kernel_log = std::move(*r);
  if (s->kernel_log.source.empty()) {
    notes.unavailable(s->kernel_log.unreadable);
  } else {
    notes.note(s->kernel_log.unreadable);
  }
  if (stats.lost_records > 0) {
    notes.note(std::to_string(stats.lost_records) +
               " kernel log records were overwritten before they were read");
  }
  if (stats.garbled_records > 0) {
    notes.garbled(std::to_string(stats.garbled_records) + " unreadable /dev/kmsg records");
  }
  return notes.record("kernel-log");
}

}  // namespace gd
