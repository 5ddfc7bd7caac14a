// The kernel log's second source, the systemd journal: everything that
// uses libsystemd, reading and following (kernel_log_source.h).
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <string>

#include "kernlog/kmsg.h"
#include "probe/kernel_log_source.h"
#include "probe/rootfs.h"
#include "util/dl.h"
#include "util/text.h"
#include "util/time.h"

namespace gd::klog {

namespace {

// --- libsystemd, loaded on first use ----------------------------------------------
// Most machines give root /dev/kmsg, and the journal is only the second
// source: the library and its own (gcrypt, lz4, zstd, lzma, cap) are mapped
// only by a process that reads a journal.

constexpr char kLibSystemd[] = "libsystemd.so.0";

#define GD_SD_FUNCTIONS(X)         \
  X(sd_journal_open)               \
  X(sd_journal_open_directory)     \
  X(sd_journal_close)              \
  X(sd_journal_get_data)           \
  X(sd_journal_flush_matches)      \
  X(sd_journal_add_match)          \
  X(sd_journal_add_disjunction)    \
  X(sd_journal_seek_tail)          \
  X(sd_journal_seek_head)          \
  X(sd_journal_previous)           \
  X(sd_journal_next)               \
  X(sd_journal_get_monotonic_usec) \
  X(sd_journal_get_realtime_usec)  \
  X(sd_journal_wait)               \
  X(sd_id128_to_string)

struct Sd {
  GD_SD_FUNCTIONS(GD_DL_POINTER)
  std::string error;  // why it cannot be used ("" when loaded)
};

const Sd& sd() {
  static const Sd lib = [] {
    Sd table;
    const char* lib_name = kLibSystemd;
    std::string why;
    void* handle = dl_open(lib_name, &why);
    if (handle == nullptr) {
      table.error = std::string("journal: cannot load ") + lib_name + " (" + why + ")";
      return table;
    }
    GD_SD_FUNCTIONS(GD_DL_RESOLVE)
    return table;
  }();
  return lib;
}

// --- the journal ---------------------------------------------------------------

struct Journal {
  sd_journal* j = nullptr;
  Journal() = default;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal() {
    if (j != nullptr) sd().sd_journal_close(j);
  }
};

// The value of FIELD in the current entry ("MESSAGE" -> the text after
// "MESSAGE="); valid until the next call on j.
std::optional<std::string_view> journal_field(sd_journal* j, const char* name) {
  const void* data = nullptr;
  size_t len = 0;
  if (sd().sd_journal_get_data(j, name, &data, &len) < 0) return std::nullopt;
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
  if (!sd().error.empty()) return Error{sd().error};
  int r = fs.live()
              ? sd().sd_journal_open(&out->j, SD_JOURNAL_LOCAL_ONLY)
              // SD_JOURNAL_OS_ROOT: the path is an OS tree; its var/log/journal
              // and run/log/journal are read.
              : sd().sd_journal_open_directory(&out->j, fs.root().c_str(), SD_JOURNAL_OS_ROOT);
  if (r < 0) return Error{"journal: " + errno_text(-r)};
  return true;
}

// The boot of the newest kernel entry: a recorded tree without boot_id.
std::string newest_kernel_boot(sd_journal* j) {
  sd().sd_journal_flush_matches(j);
  if (sd().sd_journal_add_match(j, "_TRANSPORT=kernel", 0) < 0) return "";
  std::string id;
  sd_id128_t boot;
  uint64_t usec = 0;
  if (sd().sd_journal_seek_tail(j) >= 0 && sd().sd_journal_previous(j) > 0 &&
      sd().sd_journal_get_monotonic_usec(j, &usec, &boot) >= 0) {
    char s[SD_ID128_STRING_MAX];
    id = sd().sd_id128_to_string(boot, s);
  }
  sd().sd_journal_flush_matches(j);
  return id;
}

// The fabric's user-space programs whose journal entries are read beside
// the kernel's: the fabric manager, the start script its unit runs (it
// loads NVLSM on NVLink5 systems and says why it gave up), and NVLSM.
constexpr const char* kFabricIdentifiers[] = {"nv-fabricmanager", "nvidia-fabricmanager-start.sh",
                                              "nvlsm"};

// (kernel AND this boot) OR (a fabric program AND this boot), for each program.
bool add_journal_matches(const RootFs& fs, sd_journal* j) {
  std::string boot = boot_id_hex(fs);
  if (boot.empty()) boot = newest_kernel_boot(j);
  if (boot.empty()) return false;
  std::string boot_match = "_BOOT_ID=" + boot;
  sd().sd_journal_flush_matches(j);
  bool ok = sd().sd_journal_add_match(j, "_TRANSPORT=kernel", 0) >= 0 &&
            sd().sd_journal_add_match(j, boot_match.c_str(), 0) >= 0;
  for (const char* id : kFabricIdentifiers) {
    std::string match = std::string("SYSLOG_IDENTIFIER=") + id;
    ok = ok && sd().sd_journal_add_disjunction(j) >= 0 &&
         sd().sd_journal_add_match(j, match.c_str(), 0) >= 0 &&
         sd().sd_journal_add_match(j, boot_match.c_str(), 0) >= 0;
  }
  return ok;
}

// One journal entry. Kernel entries become kmsg records (journald keeps the
// record's stamp in _SOURCE_MONOTONIC_TIMESTAMP, microseconds):
//   _TRANSPORT=kernel  PRIORITY=4  _SOURCE_MONOTONIC_TIMESTAMP=88123456
//   MESSAGE=NVRM: Xid (PCI:0000:17:00): 79, pid='<unknown>', name=<unknown>, ...
// The fabric programs' entries become syslog lines under their identifier:
//   2026-12-02T10:00:01.000000+00:00 node7 nv-fabricmanager[2301]: <MESSAGE>
void feed_journal_entry(sd_journal* j, Feed* f) {
  auto transport = journal_field(j, "_TRANSPORT");
  bool kernel = transport && *transport == "kernel";
  std::string prefix;
  if (!kernel) {
    uint64_t rt = 0;
    sd().sd_journal_get_realtime_usec(j, &rt);
    auto host = journal_field(j, "_HOSTNAME");
    auto pid = journal_field(j, "_PID");
    auto ident = journal_field(j, "SYSLOG_IDENTIFIER");
    prefix = iso_time_us(rt) + " " + std::string(host ? printable(*host, 64) : "localhost") + " " +
             std::string(ident ? printable(*ident, 64) : "nv-fabricmanager");
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
      if (sd().sd_journal_get_monotonic_usec(j, &usec, &boot) < 0) usec = 0;
    }
    rec.ts_usec = usec;
  }
  auto msg = journal_field(j, "MESSAGE");
  if (!msg) return;
  ++f->stats.records;
  f->bytes += msg->size();
  if (msg->size() >= kMaxLineBytes) {  // no message; copying it would cost its size again
    ++f->stats.skipped_lines;
    return;
  }
  if (kernel) {
    rec.message = std::string(*msg);
    f->scanner.add_record(rec);
    return;
  }
  for (auto line : split_lines(*msg)) f->scanner.add_line(prefix + std::string(line));
}

}  // namespace

// Reads this boot's kernel and fabric-manager entries. "" or why not.
std::string feed_journal(const RootFs& fs, Feed* f) {
  Journal jn;
  auto opened = open_journal(fs, &jn);
  if (!opened) return opened.error();
  if (!add_journal_matches(fs, jn.j)) return "journal: no kernel messages";
  int r = sd().sd_journal_seek_head(jn.j);
  while (r >= 0 && !f->full() && (r = sd().sd_journal_next(jn.j)) > 0) feed_journal_entry(jn.j, f);
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

// --- follow ----------------------------------------------------------------------

Result<bool> follow_journal(const RootFs& fs, Feed* f, const OnEvent& on_event,
                            const std::atomic<bool>& stop) {
  Journal jn;
  auto opened = open_journal(fs, &jn);
  if (!opened) return Error{opened.error()};
  if (!add_journal_matches(fs, jn.j)) return Error{"journal: no kernel messages"};
  // seek_tail then one step back: the next sd_journal_next() is a new entry.
  sd().sd_journal_seek_tail(jn.j);
  sd().sd_journal_previous(jn.j);
  while (!stopped(stop)) {
    int r;
    while ((r = sd().sd_journal_next(jn.j)) > 0) feed_journal_entry(jn.j, f);
    if (r < 0) return Error{"journal: " + errno_text(-r)};
    if (!emit(f, on_event)) return true;
    r = sd().sd_journal_wait(jn.j, kPollMs * 1000);
    if (r < 0) return Error{"journal: " + errno_text(-r)};
  }
  return true;
}

}  // namespace gd::klog
