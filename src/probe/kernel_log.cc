// The kernel-log probe and `--follow`: /dev/kmsg, else the systemd journal,
// else /var/log/kern.log, all under the root; or a file the user names. The
// text is handed to the kernlog scanner (src/kernlog/), which decodes and
// folds the events; these files only find, open and read the sources: this
// one reads (read_kernel_log) and probes; kernel_log_kmsg.cc, _journal.cc,
// _text.cc and _follow.cc hold the sources and --follow
// (kernel_log_source.h).
#include "probe/kernel_log.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <utility>

#include "kernlog/line.h"
#include "probe/file_probes.h"
#include "probe/kernel_log_source.h"
#include "probe/probe.h"
#include "probe/rootfs.h"
#include "util/text.h"
#include "util/time.h"

namespace gd {

namespace klog {

std::string errno_text(int err) { return std::strerror(err); }

// /proc/sys/kernel/dmesg_restrict: "0\n" or "1\n"; -1 when unknown.
int read_dmesg_restrict(const RootFs& fs) {
  auto r = fs.read_line("/proc/sys/kernel/dmesg_restrict");
  if (!r) return -1;
  auto v = parse_u64(*r);
  return v && *v <= 1 ? static_cast<int>(*v) : -1;
}

}  // namespace klog

using klog::drain_kmsg_device;
using klog::errno_text;
using klog::Fd;
using klog::Feed;
using klog::feed_journal;
using klog::feed_kmsg_file;
using klog::feed_text_fd;
using klog::file_time;
using klog::file_year;
using klog::open_kmsg;
using klog::open_user_file;
using klog::read_dmesg_restrict;

namespace {

constexpr int kCapSyslogBit = 34;  // include/uapi/linux/capability.h

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

// A file from elsewhere: "now" is the time of its last line, so ages say how
// long before the end of the log an event was (the scanner only looks at the
// lines that matter to it, which need not include the last one).
ScanReference line_reference(const std::string& line, int year, std::optional<int64_t> written_by) {
  ScanReference ref;
  ref.from_log_end = true;
  if (line.empty()) return ref;
  LogLine l = parse_log_line(line, year, written_by);
  ref.now_boot_s = l.boot_s;
  ref.now_unix_s = l.unix_s;
  return ref;
}

ScanReference newest_reference(const Feed& f) {
  return line_reference(f.last_line, f.year, f.written_by);
}

// A window (--since) is declared to the scanner before reading, so it folds
// only what is inside it as the log streams (kernlog/scanner.h). ref: this
// machine's "now"; none for a log from elsewhere, whose "now" is its last line
// (a regular file's is read first from its end) and whose events are judged
// by the wall-clock times their lines give (opt.since_unix_s): an age against
// its last line says nothing about a date the user named, and "2h" counts
// back from now, not from the log's end.
std::optional<ScanReference> declare_window(Feed* f, const KernelLogOptions& opt,
                                            std::optional<ScanReference> ref, int fd) {
  const bool from_elsewhere = !ref;
  const bool since = from_elsewhere && opt.since_unix_s;
  if (!opt.max_age_s && !since) return ref;
  if (!ref) {
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      ref = line_reference(klog::last_line_of(fd), f->year, f->written_by);
    }
  }
  if (since) {
    // A pipe's last line comes last: finish() places what streamed before it.
    f->scanner.set_since(ref ? *ref : ScanReference{}, *opt.since_unix_s);
  } else if (ref) {
    f->scanner.set_window(*ref, opt.max_age_s);
  }
  return ref;
}

KernelLogInfo finish(Feed& f, const ScanReference& ref, std::optional<double> max_age_s,
                     std::string source) {
  KernelLogInfo info = f.scanner.finish(ref, max_age_s);
  f.stats.undated = f.scanner.undated();
  info.attempted = true;
  info.source = std::move(source);
  if (info.bytes == 0) info.bytes = f.bytes;
  return info;
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
    f.set_written_by(file_time(fd->get()));
    auto ref = declare_window(&f, opt, std::nullopt, fd->get());
    std::string err = feed_text_fd(fd->get(), false, &f);
    if (!err.empty()) return Error{"cannot read " + opt.file + ": " + err};
    // A file from elsewhere: ages against its own last line.
    KernelLogInfo info = finish(f, ref ? *ref : newest_reference(f), opt.max_age_s,
                                opt.file == "-" ? "stdin" : opt.file);
    if (stats != nullptr) *stats = f.stats;
    return info;
  }

  RootFs fs(opt.root);
  std::vector<std::string> reasons;
  int dmesg_restrict = read_dmesg_restrict(fs);
  auto done = [&](Feed& f, const ScanReference& ref, std::string source) {
    KernelLogInfo info = finish(f, ref, opt.max_age_s, std::move(source));
    if (stats != nullptr) *stats = f.stats;
    info.unreadable = join_skip_leading_empty(reasons, "; ");
    info.dmesg_restrict = dmesg_restrict;
    return info;
  };
  int year = local_year(std::time(nullptr));

  if (auto k = open_kmsg(fs)) {
    Feed f(year);
    const ScanReference ref = reference_at(fs);
    declare_window(&f, opt, ref, -1);
    std::string problem;
    if (k->device) {
      problem = drain_kmsg_device(k->fd.get(), &f);
    } else {
      feed_kmsg_file(fs, &f, &problem);
    }
    if (problem.empty() || f.stats.records > 0) {
      if (!problem.empty()) reasons.push_back(problem);
      return done(f, ref, "/dev/kmsg");
    }
    reasons.push_back(problem);
  } else {
    reasons.push_back(k.error());
  }

  {
    Feed f(year);
    const ScanReference ref = reference_at(fs);
    declare_window(&f, opt, ref, -1);
    std::string problem = feed_journal(fs, &f);
    if (problem.empty()) return done(f, ref, "journal");
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
      Feed f(local_year(st.st_mtime));
      f.set_written_by(st.st_mtime);
      // Live: ages against now; a recorded tree's file against its newest line.
      auto ref =
          declare_window(&f, opt, fs.live() ? std::optional(reference_at(fs)) : std::nullopt, fd);
      std::string err = feed_text_fd(fd, true, &f);
      if (err.empty()) {
        return done(f,
                    ref         ? *ref
                    : fs.live() ? reference_at(fs)
                                : newest_reference(f),
                    "/var/log/kern.log");
      }
      reasons.push_back("cannot read /var/log/kern.log: " + err);
    }
  }

  KernelLogInfo info;
  info.attempted = true;
  info.unreadable = join_skip_leading_empty(reasons, "; ");
  info.dmesg_restrict = dmesg_restrict;
  if (stats != nullptr) *stats = KernelLogStats{};
  return info;
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
  auto skipped = skipped_lines_gap(stats.skipped_lines);
  if (skipped) notes.note(skipped->reason);
  ProbeRecord rec = notes.record("kernel-log");
  // Not notes.gap(), which makes the probe unavailable: the log was read.
  if (skipped) rec.gaps.push_back(std::move(*skipped));
  return rec;
}

}  // namespace gd
