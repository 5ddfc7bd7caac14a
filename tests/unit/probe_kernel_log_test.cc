// The kernel-log probe over real code paths: recorded trees with a dev/kmsg
// file (tests/roots/), a real journal written by systemd-journal-remote, a
// kern.log fallback, --file (with a line across a 4 MiB chunk border), an
// unreadable /dev/kmsg (as a non-root user), and --follow on a growing file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probe/kernel_log.h"
#include "probe/probe.h"

namespace gd {
namespace {

namespace fs = std::filesystem;

const std::string kRoots = std::string(GD_SOURCE_DIR) + "/tests/roots/";
const std::string kLogs = std::string(GD_SOURCE_DIR) + "/tests/logs/";

constexpr const char* kXid79 =
    "NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";

// A temporary directory, removed at the end of the test.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/gd-kernlog-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::path p = fs::path(path) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string path;
};

const KernelEvent* find_event(const KernelLogInfo& info, const std::string& kind, int code) {
  for (const auto& e : info.events) {
    if (e.kind == kind && e.code == code) return &e;
  }
  return nullptr;
}

std::string describe(const KernelLogInfo& info) {
  std::string out = "source=" + info.source + " unreadable=" + info.unreadable + " events:";
  for (const auto& e : info.events) {
    out += " [" + e.kind + "/" + e.type + " " + std::to_string(e.code) + " " + e.gpu + "]";
  }
  return out;
}

// --- pure helpers ---------------------------------------------------------------------

TEST(KernelLogReason, DmesgRestrictWithoutCapSyslog) {
  EXPECT_EQ(kmsg_unreadable_reason(EPERM, 1, false),
            "/dev/kmsg: Operation not permitted (kernel.dmesg_restrict = 1 and this process "
            "lacks CAP_SYSLOG)");
  EXPECT_EQ(kmsg_unreadable_reason(EACCES, 1, false),
            "/dev/kmsg: Permission denied (kernel.dmesg_restrict = 1 and this process lacks "
            "CAP_SYSLOG)");
}

TEST(KernelLogReason, OtherCauses) {
  EXPECT_EQ(kmsg_unreadable_reason(ENOENT, 1, false), "no /dev/kmsg");
  std::string with_cap = kmsg_unreadable_reason(EPERM, 1, true);
  EXPECT_NE(with_cap.find("has CAP_SYSLOG"), std::string::npos) << with_cap;
  std::string unrestricted = kmsg_unreadable_reason(EPERM, 0, false);
  EXPECT_NE(unrestricted.find("dmesg_restrict = 0"), std::string::npos) << unrestricted;
  EXPECT_EQ(unrestricted.find("lacks CAP_SYSLOG"), std::string::npos) << unrestricted;
  std::string unknown = kmsg_unreadable_reason(EPERM, -1, std::nullopt);
  EXPECT_NE(unknown.find("unknown"), std::string::npos) << unknown;
  EXPECT_EQ(kmsg_unreadable_reason(EIO, 1, false), "/dev/kmsg: Input/output error");
}

TEST(KernelLogReason, CapSyslogIsBit34OfCapEff) {
  EXPECT_EQ(cap_syslog_from_status("Name:\tx\nCapEff:\t000001ffffffffff\n"), true);
  EXPECT_EQ(cap_syslog_from_status("CapEff:\t0000000000000000\n"), false);
  EXPECT_EQ(cap_syslog_from_status("CapEff:\t0000000400000000\n"), true);   // bit 34 alone
  EXPECT_EQ(cap_syslog_from_status("CapEff:\t0000000200000000\n"), false);  // bit 33
  EXPECT_EQ(cap_syslog_from_status("CapPrm:\t000001ffffffffff\n"), std::nullopt);
  EXPECT_EQ(cap_syslog_from_status("CapEff:\tzz\n"), std::nullopt);
  EXPECT_EQ(cap_syslog_from_status(std::string("\xff\x00\x01", 3)), std::nullopt);
}

TEST(KernelLogSplit, DictionaryLinesBelongToTheirRecord) {
  const std::string text =
      "6,1,10,-;a\n SUBSYSTEM=pci\n DEVICE=+pci:0000:17:00.0\n\n4,2,20,-;b\n 6,3,30,-;c";
  auto recs = split_kmsg_records(text);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0], "6,1,10,-;a\n SUBSYSTEM=pci\n DEVICE=+pci:0000:17:00.0");
  EXPECT_EQ(recs[1], "4,2,20,-;b\n 6,3,30,-;c");
  EXPECT_TRUE(split_kmsg_records("").empty());
  EXPECT_TRUE(split_kmsg_records(" orphan dictionary line\n\n").empty());
}

TEST(KernelLogSplit, LastBootOfKernLog) {
  const std::string first = "Dec  1 08:00:00 node7 kernel: [    0.000000] Linux version 6.8.0\n";
  const std::string noise = "Dec  1 09:00:00 node7 sshd[12]: Linux version banner quoted\n";
  const std::string second = "Dec  2 09:58:01 node7 kernel: [    0.000000] Linux version 6.8.0\n";
  const std::string iso = "2026-12-02T09:58:01.000000+00:00 node7 kernel: Linux version 6.8.0\n";
  EXPECT_EQ(last_boot_offset(first + noise), 0u);
  EXPECT_EQ(last_boot_offset(first + second + noise), first.size());
  EXPECT_EQ(last_boot_offset(first + noise + iso), first.size() + noise.size());
  EXPECT_EQ(last_boot_offset(noise), std::string_view::npos);
  EXPECT_EQ(last_boot_offset("[    0.000000] Linux version 6.8.0\n"), 0u);
}

// --- recorded trees -------------------------------------------------------------------

TEST(KernelLogRoots, Xid79FromRecordedKmsg) {
  KernelLogOptions opt;
  opt.root = kRoots + "ws-4x4090-xid79";
  KernelLogStats stats;
  auto r = read_kernel_log(opt, &stats);
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->attempted);
  EXPECT_EQ(r->source, "/dev/kmsg");
  EXPECT_EQ(r->unreadable, "");
  EXPECT_EQ(r->dmesg_restrict, 1);
  EXPECT_EQ(stats.records, 15u);
  EXPECT_EQ(stats.garbled_records, 0u);
  EXPECT_EQ(stats.lost_records, 0u);
  EXPECT_GT(r->bytes, 0u);
  const KernelEvent* xid = find_event(*r, "xid", 79);
  ASSERT_NE(xid, nullptr) << describe(*r);
  EXPECT_EQ(xid->gpu, "0000:41:00.0");
  ASSERT_TRUE(xid->age_s.has_value());
  // proc/uptime 86400.25 s, the Xid record at 85990.123480 s.
  EXPECT_NEAR(*xid->age_s, 86400.25 - 85990.12348, 0.01);
  auto uuid = r->gpu_uuids.find("0000:41:00.0");
  ASSERT_NE(uuid, r->gpu_uuids.end()) << describe(*r);
  EXPECT_EQ(uuid->second, "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041");
}

TEST(KernelLogRoots, MaxAgeDropsOldEvents) {
  KernelLogOptions opt;
  opt.root = kRoots + "ws-4x4090-xid79";
  opt.max_age_s = 60;  // the Xid is ~410 s old
  auto r = read_kernel_log(opt);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(find_event(*r, "xid", 79), nullptr) << describe(*r);
}

TEST(KernelLogRoots, HealthyMachineHasNoXid) {
  auto r = read_kernel_log(KernelLogOptions{kRoots + "ws-4x4090", "", std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "/dev/kmsg");
  for (const auto& e : r->events) EXPECT_NE(e.kind, "xid") << describe(*r);
}

TEST(KernelLogRoots, ContainerWithoutKmsgIsUnreadableData) {
  KernelLogStats stats;
  auto r = read_kernel_log(
      KernelLogOptions{kRoots + "container-no-gpus", "", std::nullopt, std::nullopt}, &stats);
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->attempted);
  EXPECT_EQ(r->source, "");
  EXPECT_EQ(r->unreadable, "no /dev/kmsg; no journal; no /var/log/kern.log");
  EXPECT_TRUE(r->events.empty());
}

TEST(KernelLogRoots, GarbageNeverCrashes) {
  KernelLogStats stats;
  auto r =
      read_kernel_log(KernelLogOptions{kRoots + "garbage", "", std::nullopt, std::nullopt}, &stats);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "/dev/kmsg");
  EXPECT_EQ(r->dmesg_restrict, -1);  // "2" is no value of the sysctl
  EXPECT_GT(stats.garbled_records, 0u);
}

TEST(KernelLogRoots, ProbeInCollectSnapshot) {
  ProbeOptions opt;
  opt.root = kRoots + "ws-4x4090-xid79";
  opt.hardware = false;
  Snapshot s = collect_snapshot(opt);
  auto rec = std::find_if(s.probes.begin(), s.probes.end(),
                          [](const ProbeRecord& p) { return p.name == "kernel-log"; });
  ASSERT_NE(rec, s.probes.end());
  EXPECT_EQ(rec->status, ProbeStatus::kOk) << rec->detail;
  EXPECT_TRUE(s.kernel_log.attempted);
  EXPECT_NE(find_event(s.kernel_log, "xid", 79), nullptr) << describe(s.kernel_log);

  opt.root = kRoots + "container-no-gpus";
  s = collect_snapshot(opt);
  rec = std::find_if(s.probes.begin(), s.probes.end(),
                     [](const ProbeRecord& p) { return p.name == "kernel-log"; });
  ASSERT_NE(rec, s.probes.end());
  EXPECT_EQ(rec->status, ProbeStatus::kUnavailable);
  EXPECT_NE(rec->detail.find("no /dev/kmsg"), std::string::npos) << rec->detail;

  opt.root = kRoots + "garbage";
  s = collect_snapshot(opt);
  rec = std::find_if(s.probes.begin(), s.probes.end(),
                     [](const ProbeRecord& p) { return p.name == "kernel-log"; });
  ASSERT_NE(rec, s.probes.end());
  EXPECT_EQ(rec->status, ProbeStatus::kFailed) << rec->detail;
}

// --- the journal ----------------------------------------------------------------------

constexpr const char* kJournalRemote = "/lib/systemd/systemd-journal-remote";
constexpr const char* kBoot = "5ff914d3a9ab471386838a33674c1ee5";
constexpr const char* kOldBoot = "0a6d2e07b4c84e0c9d3d3f4f6f1b2c3d";

// One entry in journal export format (systemd.io/JOURNAL_EXPORT_FORMATS).
std::string export_entry(const std::string& boot, uint64_t mono_usec, const std::string& transport,
                         const std::string& ident, const std::string& message) {
  // The old boot a day earlier, so the wall clock only goes forward.
  uint64_t realtime = 1764669600000000ull + mono_usec + (boot == kOldBoot ? 0 : 86400000000ull);
  std::string e = "__REALTIME_TIMESTAMP=" + std::to_string(realtime) + "\n";
  e += "__MONOTONIC_TIMESTAMP=" + std::to_string(mono_usec) + "\n";
  e += "_BOOT_ID=" + boot + "\n_TRANSPORT=" + transport + "\nSYSLOG_IDENTIFIER=" + ident + "\n";
  e += "_HOSTNAME=node7\nPRIORITY=4\n";
  if (transport == "kernel") {
    e += "_SOURCE_MONOTONIC_TIMESTAMP=" + std::to_string(mono_usec - 1000) + "\n";
  } else {
    e += "_PID=2301\n";
  }
  return e + "MESSAGE=" + message + "\n\n";
}

// Writes <root>/var/log/journal/<machine-id>/test.journal from export text.
bool write_journal(const TempDir& root, const std::string& export_text) {
  const std::string dir = root.path + "/var/log/journal/0123456789abcdef0123456789abcdef";
  fs::create_directories(dir);
  root.write("export.txt", export_text);
  const std::string cmd = std::string(kJournalRemote) + " -o " + dir + "/test.journal " +
                          root.path + "/export.txt >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::string journal_export() {
  return export_entry(
             kOldBoot, 5000000, "kernel", "kernel",
             "NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: ESR 0x405840=0xa0040800") +
         export_entry(kBoot, 4000000, "kernel", "kernel", "usb 1-4: new high-speed USB device") +
         export_entry(kBoot, 9000000, "syslog", "sshd",
                      "NVRM: Xid (PCI:0000:01:00): 48, pasted into a user's ssh banner") +
         export_entry(kBoot, 10000000, "kernel", "kernel", kXid79) +
         export_entry(kBoot, 11000000, "stdout", "nv-fabricmanager",
                      "detected number of NVSwitches don't match with any supported system "
                      "topology, aborting fabric manager");
}

TEST(KernelLogJournal, KernelEntriesOfThisBootOnly) {
  if (::access(kJournalRemote, X_OK) != 0) GTEST_SKIP() << "no " << kJournalRemote;
  TempDir root;
  ASSERT_TRUE(write_journal(root, journal_export()));
  root.write("proc/sys/kernel/random/boot_id", "5ff914d3-a9ab-4713-8683-8a33674c1ee5\n");
  root.write("proc/uptime", "20.00 30.00\n");
  KernelLogStats stats;
  auto r = read_kernel_log(KernelLogOptions{root.path, "", std::nullopt, std::nullopt}, &stats);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "journal");
  EXPECT_EQ(r->unreadable, "no /dev/kmsg");
  EXPECT_EQ(stats.records, 3u);  // two kernel entries of this boot + the fabric manager's
  const KernelEvent* xid = find_event(*r, "xid", 79);
  ASSERT_NE(xid, nullptr) << describe(*r);
  EXPECT_EQ(xid->gpu, "0000:41:00.0");
  ASSERT_TRUE(xid->age_s.has_value());
  EXPECT_NEAR(*xid->age_s, 20.0 - 9.999, 0.01);   // _SOURCE_MONOTONIC_TIMESTAMP
  EXPECT_EQ(find_event(*r, "xid", 13), nullptr);  // another boot
  EXPECT_EQ(find_event(*r, "xid", 48), nullptr);  // not the kernel's
  auto fm = std::find_if(r->events.begin(), r->events.end(),
                         [](const KernelEvent& e) { return e.kind == "fabric-manager"; });
  ASSERT_NE(fm, r->events.end()) << describe(*r);
  EXPECT_EQ(fm->type, "topology-mismatch");
}

TEST(KernelLogJournal, WithoutBootIdTheNewestBootIsRead) {
  if (::access(kJournalRemote, X_OK) != 0) GTEST_SKIP() << "no " << kJournalRemote;
  TempDir root;
  ASSERT_TRUE(write_journal(root, journal_export()));
  auto r = read_kernel_log(KernelLogOptions{root.path, "", std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "journal");
  EXPECT_NE(find_event(*r, "xid", 79), nullptr) << describe(*r);
  EXPECT_EQ(find_event(*r, "xid", 13), nullptr) << describe(*r);
}

TEST(KernelLogJournal, JournalWithoutThisBootFallsBack) {
  if (::access(kJournalRemote, X_OK) != 0) GTEST_SKIP() << "no " << kJournalRemote;
  TempDir root;
  ASSERT_TRUE(write_journal(root, journal_export()));
  root.write("proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
  auto r = read_kernel_log(KernelLogOptions{root.path, "", std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "");
  EXPECT_EQ(r->unreadable,
            "no /dev/kmsg; journal: no kernel messages of the current boot; no "
            "/var/log/kern.log");
}

// --- kern.log and --file --------------------------------------------------------------

TEST(KernelLogText, KernLogFromTheLastBoot) {
  TempDir root;
  root.write("var/log/kern.log",
             "Dec  1 08:00:00 node7 kernel: [    0.000000] Linux version 6.8.0-45-generic\n"
             "Dec  1 08:10:00 node7 kernel: [  600.000000] NVRM: Xid (PCI:0000:01:00): 13, "
             "Graphics Exception: ESR 0x405840=0xa0040800\n"
             "Dec  2 09:58:01 node7 kernel: [    0.000000] Linux version 6.8.0-45-generic\n"
             "Dec  2 10:00:01 node7 kernel: [  120.000000] " +
                 std::string(kXid79) +
                 "\n"
                 "Dec  2 10:05:01 node7 kernel: [  420.000000] usb 1-4: USB disconnect\n");
  auto r = read_kernel_log(KernelLogOptions{root.path, "", std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "/var/log/kern.log");
  EXPECT_EQ(r->unreadable, "no /dev/kmsg; no journal");
  const KernelEvent* xid = find_event(*r, "xid", 79);
  ASSERT_NE(xid, nullptr) << describe(*r);
  ASSERT_TRUE(xid->age_s.has_value());
  EXPECT_NEAR(*xid->age_s, 300, 1);  // against the file's newest line
  EXPECT_EQ(find_event(*r, "xid", 13), nullptr) << describe(*r);
}

TEST(KernelLogText, FileSample) {
  KernelLogOptions opt;
  opt.file = kLogs + "dmesg-xid79.txt";
  auto r = read_kernel_log(opt);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, opt.file);
  const KernelEvent* xid = find_event(*r, "xid", 79);
  ASSERT_NE(xid, nullptr) << describe(*r);
  EXPECT_EQ(xid->gpu, "0000:41:00.0");
  ASSERT_TRUE(xid->age_s.has_value());
  EXPECT_NEAR(*xid->age_s, 9.98, 0.01);  // the file's newest line is its reference
  EXPECT_NE(find_event(*r, "xid", 13), nullptr) << describe(*r);
}

TEST(KernelLogText, FileErrors) {
  KernelLogOptions opt;
  opt.file = "/nonexistent/kern.log";
  auto r = read_kernel_log(opt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "cannot read /nonexistent/kern.log: No such file or directory");
  TempDir dir;
  opt.file = dir.path;
  r = read_kernel_log(opt);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "cannot read " + dir.path + ": Is a directory");
}

TEST(KernelLogText, BinaryFileGivesNoEventsAndNoCrash) {
  TempDir dir;
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>(i * 37);
  dir.write("junk", junk + "NVRM: Xid (PCI:" + junk);
  auto r = read_kernel_log(KernelLogOptions{"/", dir.path + "/junk", std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->bytes, 2 * junk.size() + 15);
}

TEST(KernelLogText, LineAcrossTheChunkBorderIsWhole) {
  TempDir dir;
  const std::string noise = "[    1.000000] usb 1-4: new high-speed USB device number 2\n";
  const std::string xid = "[    2.000000] " + std::string(kXid79) + "\n";
  std::string text;
  const size_t border = 4u << 20;                 // kernel_log.cc reads 4 MiB chunks
  const size_t target = border - xid.size() / 2;  // where the Xid line starts
  while (text.size() + noise.size() + 64 < target) text += noise;
  const std::string filler = "[    1.500000] filler ";
  text += filler + std::string(target - text.size() - filler.size() - 1, 'x') + "\n";
  ASSERT_EQ(text.size(), target);
  text += xid;
  ASSERT_LT(text.size() - xid.size(), border);
  ASSERT_GT(text.size(), border);
  text += "[    3.000000] the end\n";
  dir.write("big.log", text);
  auto r =
      read_kernel_log(KernelLogOptions{"/", dir.path + "/big.log", std::nullopt, std::nullopt});
  ASSERT_TRUE(r) << r.error();
  const KernelEvent* e = find_event(*r, "xid", 79);
  ASSERT_NE(e, nullptr) << describe(*r);
  EXPECT_EQ(e->count, 1);
  EXPECT_EQ(e->gpu, "0000:41:00.0");
  EXPECT_EQ(r->bytes, text.size());
}

// --- unreadable /dev/kmsg -------------------------------------------------------------

// A tree whose dev/kmsg is mode 000, as a process without CAP_SYSLOG under
// dmesg_restrict = 1 would meet it; kern.log is the fallback.
void make_unreadable_tree(const TempDir& root) {
  root.write("dev/kmsg", "4,1,10,-;" + std::string(kXid79) + "\n");
  ::chmod((root.path + "/dev/kmsg").c_str(), 0);
  root.write("proc/sys/kernel/dmesg_restrict", "1\n");
  root.write("proc/self/status", "Name:\tgpudoctor\nCapEff:\t0000000000000000\n");
  root.write("var/log/kern.log", "[   12.500000] " + std::string(kXid79) + "\n");
  for (const auto& e : fs::recursive_directory_iterator(root.path)) {
    if (e.is_directory()) ::chmod(e.path().c_str(), 0755);
  }
  ::chmod(root.path.c_str(), 0755);
}

TEST(KernelLogUnreadable, KmsgDeniedFallsBackWithItsReason) {
  TempDir root;
  make_unreadable_tree(root);
  auto read = [&] {
    return read_kernel_log(KernelLogOptions{root.path, "", std::nullopt, std::nullopt});
  };
  std::string got;
  if (::geteuid() != 0) {
    auto r = read();
    ASSERT_TRUE(r) << r.error();
    got = r->unreadable + "|" + r->source + "|" + std::to_string(r->dmesg_restrict) + "|" +
          std::to_string(r->events.size());
  } else {
    // root passes every access check: read as nobody in a child process.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
      auto r = read();
      std::string out = r ? r->unreadable + "|" + r->source + "|" +
                                std::to_string(r->dmesg_restrict) + "|" +
                                std::to_string(r->events.size())
                          : "error " + r.error();
      ssize_t n = ::write(fds[1], out.data(), out.size());
      ::_exit(n == static_cast<ssize_t>(out.size()) ? 0 : 3);
    }
    ::close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(got,
            "/dev/kmsg: Permission denied (kernel.dmesg_restrict = 1 and this process lacks "
            "CAP_SYSLOG); no journal|/var/log/kern.log|1|1");
}

// --- follow -----------------------------------------------------------------------------

// Runs follow_kernel_log in a thread and collects its events.
struct Follower {
  explicit Follower(KernelLogOptions opt) {
    thread = std::thread([this, opt] {
      result = follow_kernel_log(
          opt,
          [this](const KernelEvent& e) {
            std::lock_guard<std::mutex> lock(mu);
            events.push_back(e);
            return true;
          },
          stop);
    });
  }
  ~Follower() { finish(); }
  void finish() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  // Waits up to 5 s for n events.
  bool wait_for(size_t n) {
    for (int i = 0; i < 250; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (events.size() >= n) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::vector<KernelEvent> snapshot() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<KernelEvent> events;
  Result<bool> result = Error{"not run"};
  std::thread thread;
};

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text << std::flush;
}

TEST(KernelLogFollow, GrowingFileRotatedAndTruncated) {
  TempDir dir;
  const std::string path = dir.path + "/kern.log";
  dir.write("kern.log", "[    1.000000] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception\n");
  KernelLogOptions opt;
  opt.file = path;
  Follower f(opt);
  ASSERT_TRUE(f.wait_for(1));  // a --file's own content comes first
  EXPECT_EQ(f.snapshot()[0].code, 13);

  append(path, "[    2.000000] usb 1-4: new high-speed USB device number 2\n[    3.000000] ");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  append(path, std::string(kXid79) + "\n");  // the line was written in two pieces
  ASSERT_TRUE(f.wait_for(2));
  EXPECT_EQ(f.snapshot()[1].code, 79);
  EXPECT_EQ(f.snapshot()[1].gpu, "0000:41:00.0");

  // Rotation: the old file is renamed, a new one appears at the path.
  ASSERT_EQ(::rename(path.c_str(), (path + ".1").c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  append(path, "[    4.000000] NVRM: Xid (PCI:0000:21:00): 31, MMU Fault\n");
  ASSERT_TRUE(f.wait_for(3));
  EXPECT_EQ(f.snapshot()[2].code, 31);

  // Truncation (copytruncate).
  ::truncate(path.c_str(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  append(path, "[    5.000000] NVRM: Xid (PCI:0000:61:00): 48, DBE\n");
  ASSERT_TRUE(f.wait_for(4));
  EXPECT_EQ(f.snapshot()[3].code, 48);

  f.finish();
  ASSERT_TRUE(f.result) << f.result.error();
  EXPECT_EQ(f.snapshot().size(), 4u);
}

TEST(KernelLogFollow, RecordedKmsgFromItsEnd) {
  TempDir root;
  root.write("dev/kmsg", "4,1,10,-;NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception\n");
  Follower f(KernelLogOptions{root.path, "", std::nullopt, std::nullopt});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  append(root.path + "/dev/kmsg", "4,2,20,-;" + std::string(kXid79) + "\n SUBSYSTEM=pci\n");
  ASSERT_TRUE(f.wait_for(1));
  f.finish();
  ASSERT_TRUE(f.result) << f.result.error();
  auto events = f.snapshot();
  ASSERT_EQ(events.size(), 1u);  // the Xid 13 was there before following began
  EXPECT_EQ(events[0].code, 79);
}

TEST(KernelLogFollow, JournalNewEntriesOnly) {
  if (::access(kJournalRemote, X_OK) != 0) GTEST_SKIP() << "no " << kJournalRemote;
  TempDir root;
  ASSERT_TRUE(write_journal(root, journal_export()));
  root.write("proc/sys/kernel/random/boot_id", "5ff914d3-a9ab-4713-8683-8a33674c1ee5\n");
  Follower f(KernelLogOptions{root.path, "", std::nullopt, std::nullopt});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // A second journal file in the same directory, as journald starts one.
  const std::string dir = root.path + "/var/log/journal/0123456789abcdef0123456789abcdef";
  root.write("more.txt", export_entry(kBoot, 30000000, "kernel", "kernel",
                                      "NVRM: Xid (PCI:0000:21:00): 31, MMU Fault"));
  const std::string cmd = std::string(kJournalRemote) + " -o " + dir + "/more.journal " +
                          root.path + "/more.txt >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_TRUE(f.wait_for(1));
  f.finish();
  ASSERT_TRUE(f.result) << f.result.error();
  auto events = f.snapshot();
  ASSERT_EQ(events.size(), 1u);  // the Xid 79 was logged before following began
  EXPECT_EQ(events[0].code, 31);
  EXPECT_EQ(events[0].gpu, "0000:21:00.0");
}

TEST(KernelLogFollow, StopsWhenOnEventSaysSo) {
  TempDir dir;
  dir.write("k.log", "[ 1.0] " + std::string(kXid79) + "\n[ 2.0] " + std::string(kXid79) + "\n");
  std::atomic<bool> stop{false};
  int seen = 0;
  auto r = follow_kernel_log(
      KernelLogOptions{"/", dir.path + "/k.log", std::nullopt, std::nullopt},
      [&](const KernelEvent&) { return ++seen < 1; }, stop);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(seen, 1);
}

TEST(KernelLogFollow, NothingToFollow) {
  TempDir root;
  std::atomic<bool> stop{false};
  auto r = follow_kernel_log(
      KernelLogOptions{root.path, "", std::nullopt, std::nullopt},
      [](const KernelEvent&) { return true; }, stop);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "no kernel log to follow: no /dev/kmsg; no journal; no /var/log/kern.log");
  r = follow_kernel_log(
      KernelLogOptions{"/", "/nonexistent", std::nullopt, std::nullopt},
      [](const KernelEvent&) { return true; }, stop);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "cannot read /nonexistent: No such file or directory");
}

}  // namespace
}  // namespace gd
