// gpudoctor logs: the NVIDIA-related events of the kernel log, decoded and
// folded; --follow streams new ones.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "kernlog/scanner.h"
#include "probe/kernel_log.h"
#include "report/events.h"
#include "util/ascii.h"
#include "util/duration.h"
#include "util/since.h"
#include "util/time.h"

namespace gd {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

// Every line a log holds reaches a terminal through here: escaped.
void print(const std::string& text) {
  std::string s = escape_controls(text);
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

// The GPUs of this machine (sysfs and /proc/driver/nvidia, no NVML) to put
// index, name and UUID next to a PCI address. Not for a `--from` file, which may
// come from another machine.
void probe_identity(const std::string& root, Snapshot* s) {
  ProbeOptions opt;
  opt.root = root;
  probe_driver(opt, s);
  probe_pci(opt, s);
}

}  // namespace

void setup_logs(CLI::App* app, LogsArgs* args) {
  app->add_option("--since", args->since,
                  "Only events since then: a duration back from now (90s, 30m, 2h, 1d), today, "
                  "yesterday, a date or a time (2026-03-01 14:00); a --from file by its lines' "
                  "dates (lines with none, as dmesg's, are shown and counted)")
      ->option_text("WHEN");
  app->add_option("--from", args->file,
                  "Read this saved log instead of this machine's (dmesg, dmesg -T, journal, "
                  "syslog or kmsg form; - for stdin)")
      ->option_text("FILE");
  app->add_option("--file", args->file)->group("");  // its first name, kept for scripts
  app->add_flag("-f,--follow", args->follow, "Keep printing new events as they are logged");
  app->add_flag("--json", args->json,
                "Print {\"events\": [...]} (with --follow: one JSON object per line)");
  app->add_option("--root", args->root, "Read /dev, /proc, /sys and /var/log under DIR")
      ->option_text("DIR")
      ->check(CLI::ExistingDirectory);
}

int run_logs(const LogsArgs& args) {
  KernelLogOptions opt;
  opt.root = args.root;
  opt.file = args.file;
  EventsWindow window;
  if (!args.since.empty()) {
    // One parser with `history --since`: a duration, today, yesterday, a
    // date or a time; the window is what lies between it and now.
    int64_t now_ms = now_unix_ms();
    auto since = parse_since(args.since, now_ms);
    if (!since.ok()) {
      print_error(since.error());  // it names --since
      return kExitUsage;
    }
    opt.max_age_s = std::max<double>(0, static_cast<double>(now_ms - *since) / 1000.0);
    // A log from elsewhere is judged by its lines' own times (kernel_log.h).
    // Floored: the lines' stamps are read to the second.
    opt.since_unix_s = *since >= 0 ? *since / 1000 : -((-*since + 999) / 1000);
    window.since_unix_s = opt.since_unix_s;
  }
  Snapshot s;
  if (args.file.empty()) probe_identity(args.root, &s);

  if (args.follow) {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    auto followed = follow_kernel_log(
        opt,
        [&](const KernelEvent& e) {
          print(args.json ? event_to_json(s, e).dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace) +
                                "\n"
                          : render_event_text(s, e) + "\n");
          return true;
        },
        g_stop);
    if (!followed.ok()) {
      print_error(followed.error());
      return kExitInternal;
    }
    return 0;
  }

  KernelLogStats stats;
  auto log = read_kernel_log(opt, &stats);
  if (!log.ok()) {
    print_error(log.error());
    return kExitInternal;
  }
  s.kernel_log = std::move(*log);
  window.undated = stats.undated;
  if (s.kernel_log.source.empty()) {
    // Nothing readable: say why and how to fix it, as check does.
    print_error("cannot read the kernel log: " + s.kernel_log.unreadable +
                " (run as root, or: sudo sysctl kernel.dmesg_restrict=0)");
    return kExitInternal;
  }
  // Over-long lines skipped: the renderers say so, as check's probe record does.
  if (auto gap = skipped_lines_gap(stats.skipped_lines)) {
    ProbeRecord r;
    r.name = "kernel-log";
    r.gaps.push_back(std::move(*gap));
    s.probes.push_back(std::move(r));
  }
  print(args.json ? render_events_json(s, window) : render_events_text(s, window));
  return 0;
}

}  // namespace gd
