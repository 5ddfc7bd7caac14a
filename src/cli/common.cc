#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "checks/runner.h"
#include "cli/commands.h"
#include "diag/run_helper.h"
#include "util/text.h"

namespace gd {

void print_error(std::string_view message) {
  std::fprintf(stderr, "gpudoctor: %.*s\n", static_cast<int>(message.size()), message.data());
}

int print_listing(const std::vector<ListedTest>& rows, bool json, const std::string& kind) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json row = {{"name", r.name}, {"description", r.description}, {"ids", r.ids}};
      if (r.level > 0) row["level"] = r.level;
      list.push_back(row);
    }
    nlohmann::ordered_json out = {{"schema", "gpudoctor." + kind + "/v1"}, {kind, list}};
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  for (const auto& r : rows) {
    std::string ids = join_skip_leading_empty(r.ids, ", ");
    std::string level = r.level > 0 ? fmt::format("level {}, ", r.level) : "";
    std::fputs(fmt::format("{:<24} {}\n{:<24}   {}ids: {}\n", r.name, r.description, "", level, ids)
                   .c_str(),
               stdout);
  }
  return 0;
}

void add_probe_options(CLI::App* app, ProbeOptions* opt) {
  app->add_option("--root", opt->root, "Read /proc, /sys, /dev and /run under DIR")
      ->option_text("DIR")
      ->check(CLI::ExistingDirectory);
  app->add_option("--nvml-lib", opt->nvml_lib, "NVML library to load (default libnvidia-ml.so.1)")
      ->option_text("PATH");
  app->add_option("--cuda-lib", opt->cuda_lib, "CUDA driver library to load (default libcuda.so.1)")
      ->option_text("PATH");
  app->add_option("--cudart-lib", opt->cudart_lib,
                  "CUDA runtime library for cudaGetDeviceCount (default: search)")
      ->option_text("PATH");
  app->add_option("--deadline", opt->deadline_s,
                  "Seconds NVML and CUDA may take before they count as hung (default 10)")
      ->option_text("SECONDS")
      ->check(finite_range(0.1, 600.0));
}

CLI::Validator finite_range(double lo, double hi) {
  std::string range = fmt::format("a finite number in [{}, {}]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) {
        double v = 0;
        std::istringstream in(text);
        in >> v;
        bool ok = in && in.eof() && std::isfinite(v) && v >= lo && v <= hi;
        return ok ? std::string() : "'" + printable(text, 32) + "' is not " + range;
      },
      range);
}

CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& text) {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        bool ok = ec == std::errc() && end == text.data() + text.size() && !text.empty();
        return ok ? std::string()
                  : "'" + printable(text, 32) + "' is not a whole number in [0, " +
                        std::to_string(UINT64_MAX) + "]";
      },
      "N");
}

bool color_wanted(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if (no_color != nullptr && *no_color != '\0') return false;
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return isatty(fd) == 1;
}

void add_config_option(CLI::App* app, std::string* path) {
  app->add_option("--config", *path,
                  "Health thresholds (TOML, docs/config.md); default $GPUDOCTOR_CONFIG, else "
                  "built-in")
      ->option_text("FILE");
}

void add_from_option(CLI::App* app, std::string* path, const std::string& what) {
  app->add_option("--from", *path, what + " a snapshot recorded by `gpudoctor snapshot`")
      ->option_text("SNAPSHOT");
}

void add_log_window_option(CLI::App* app, std::string* window) {
  app->add_option("--log-window", *window,
                  "Kernel-log events older than this no longer fail the node (default 2h)")
      ->option_text("DURATION");
}

Result<Done> write_text_file(const std::string& path, const std::string& text) {
  // O_NOFOLLOW: a symbolic link planted where a report goes (a shared
  // directory such as the Slurm Epilog's) is refused, never written
  // through. O_NONBLOCK: a FIFO with no reader fails the open instead of
  // blocking it; a FIFO, /dev/null or a terminal is then written as usual.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    int err = errno;
    struct stat st {};
    if (err == ELOOP && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Error{"is a symbolic link; not followed (give the file's own path)"};
    }
    return Error{std::strerror(err)};
  }
  struct stat st {};
  int flags = ::fcntl(fd, F_GETFL);
  bool ok = ::fstat(fd, &st) == 0 && flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 &&
            (!S_ISREG(st.st_mode) || ::ftruncate(fd, 0) == 0);
  for (size_t done = 0; ok && done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  int err = ok ? 0 : (errno != 0 ? errno : EIO);
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) return Error{std::strerror(err)};
  return Done{};
}

void add_diag_helper_option(CLI::App* app, std::string* path) {
  app->add_option("--diag-helper", *path,
                  "The gpudoctor-diag whose level 1 (context, kernel, copies) the re-probe runs "
                  "before a GPU is called healthy again (default: beside this binary when "
                  "installed; none: NVML and a CUDA context only)")
      ->option_text("PATH");
}

std::string reprobe_diag_helper(const std::string& flag) {
  if (flag == "none") return "";
  return flag.empty() ? find_diag_helper() : flag;
}

void add_selection_options(CLI::App* app, std::vector<std::string>* only,
                           std::vector<std::string>* skip) {
  app->add_option("--only", *only,
                  "Run only these checks, finding ids, areas or globs (xid.79, advice.*)")
      ->option_text("IDS")
      ->delimiter(',');
  app->add_option("--skip", *skip,
                  "Leave out these checks, finding ids, areas or globs; the report lists them")
      ->option_text("IDS")
      ->delimiter(',');
}

int job_check_or_exit(const std::string& command, const ProbeOptions& probe,
                      const std::string& from, const std::string& config,
                      const std::vector<std::string>& only, const std::vector<std::string>& skip,
                      const std::vector<std::string>& job, JobCheck* out) {
  auto failed = check_for_job(probe, from, config, only, skip, job, out);
  if (!failed) return 0;
  print_error(command + ": " + failed->message);
  return failed->usage ? kExitUsage : kExitInternal;
}

}  // namespace gd
