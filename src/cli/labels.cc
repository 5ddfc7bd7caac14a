// gpudoctor labels: Node Feature Discovery labels (GPU model, count, driver,
// CUDA, health) for this node, printed or written as a feature file into
// NFD's features.d (docs/kubernetes.md).
//
// Exit codes: 0 the labels were printed or written, whatever the health they
// carry (an unhealthy node is a label value, not a failure of this command:
// the loop that runs it must keep running); 64 a bad command line or config;
// 3 the machine could not be probed, the snapshot not read, or the file not
// written.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "checks/runner.h"
#include "cli/commands.h"
#include "config/config.h"
#include "report/nfd.h"
#include "util/duration.h"
#include "util/time.h"

namespace gd {
namespace {

std::string errno_text() { return std::strerror(errno); }

// now + seconds as RFC 3339 UTC, the form NFD's expiry directive parses.
std::string rfc3339_after(double seconds) {
  auto t = std::chrono::system_clock::now() + std::chrono::seconds(static_cast<long long>(seconds));
  return iso_time_s(std::chrono::system_clock::to_time_t(t));
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// NFD must never read half a file: write a hidden temp file in the same
// directory (the local source skips names starting with "."), flush it, then
// rename it over the old one, which replaces it atomically.
Result<std::string> write_feature_file(const std::string& dir, const std::string& content) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return Error{"--nfd-dir " + dir + ": " + errno_text()};
  if (!S_ISDIR(st.st_mode)) return Error{"--nfd-dir " + dir + ": not a directory"};
  std::string final_path = dir + "/" + std::string(kNfdFileName);
  std::string tmp = dir + "/." + std::string(kNfdFileName) + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Error{"cannot create a file in " + dir + ": " + errno_text()};
  bool ok = write_all(fd, content) && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  std::string err = ok ? "" : errno_text();
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno_text();
  }
  if (ok && ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ok = false;
    err = errno_text();
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return Error{"cannot write " + final_path + ": " + err};
  }
  // The rename itself survives a crash once the directory is flushed.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return final_path;
}

}  // namespace

void setup_labels(CLI::App* app, LabelsArgs* args) {
  app->footer(
      "Prints the feature file, or with --nfd-dir writes it as DIR/gpudoctor for nfd-worker's "
      "local source (docs/kubernetes.md). Exit 0 when the labels were written, whatever the "
      "health they carry; 3 when they could not be; 64 on a bad command line.");
  app->add_option("--nfd-dir", args->nfd_dir,
                  "Write the feature file DIR/gpudoctor atomically (NFD's features.d: "
                  "/etc/kubernetes/node-feature-discovery/features.d); default: print it")
      ->option_text("DIR");
  add_from_option(app, &args->from, "Label from");
  app->add_flag("--json", args->json,
                "Print {\"schema\": \"gpudoctor.labels/v1\", \"labels\": {name: value}} instead "
                "of the feature file")
      ->excludes("--nfd-dir");
  add_config_option(app, &args->config);
  add_log_window_option(app, &args->log_window);
  add_selection_options(app, &args->only, &args->skip);
  app->add_option("--expiry", args->expiry,
                  "NFD drops the labels this long after they were written unless rewritten "
                  "(\"10m\"; default: never), so a node whose labeller stopped does not keep "
                  "claiming to be healthy")
      ->option_text("DURATION");
  add_probe_options(app, &args->probe);
}

int run_labels(const LabelsArgs& args) {
  auto config = load_config(config_path(args.config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!config.ok()) {
    print_error("labels: " + config.error());
    return kExitUsage;
  }
  auto window = parse_duration(args.log_window);
  if (!window.ok()) {
    print_error("labels: --log-window: " + window.error());
    return kExitUsage;
  }
  config->kernel_log_window_s = *window;
  config->fleet = true;  // node labels judge a job node: a running job is normal
  auto checks = select_for(args.only, args.skip, &*config);
  if (!checks.ok()) {
    print_error("labels: " + checks.error());
    return kExitUsage;
  }
  NfdFileOptions file;
  if (!args.expiry.empty()) {
    auto expiry = parse_duration(args.expiry);
    if (!expiry.ok() || *expiry < 1) {
      print_error("labels: --expiry: " +
                  (expiry.ok() ? std::string("must be at least 1s") : expiry.error()));
      return kExitUsage;
    }
    file.expiry_time = rfc3339_after(*expiry);
  }
  auto loaded = load_or_probe(args.from, args.probe);
  if (!loaded.ok()) {
    print_error("labels: " + loaded.error());
    return kExitInternal;
  }
  const Snapshot& snapshot = *loaded;
  Report report = run_checks(snapshot, *config, *checks, config->only, config->skip);
  const std::vector<NfdLabel> labels = nfd_labels(snapshot, report);
  if (args.json) {
    nlohmann::ordered_json by_name = nlohmann::ordered_json::object();
    for (const auto& l : labels) by_name[l.name] = l.value;
    nlohmann::ordered_json j = {{"schema", "gpudoctor.labels/v1"}, {"labels", by_name}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::string content = render_nfd(snapshot, labels, file);
  if (args.nfd_dir.empty()) {
    std::fwrite(content.data(), 1, content.size(), stdout);
    return 0;
  }
  auto written = write_feature_file(args.nfd_dir, content);
  if (!written.ok()) {
    print_error("labels: " + written.error());
    return kExitInternal;
  }
  return 0;
}

}  // namespace gd
