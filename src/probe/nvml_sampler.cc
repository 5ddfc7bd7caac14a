// The long-lived NVML sampler child (protocol in nvml_sampler.h). One
// nvmlInit for the life of the daemon instead of one per scrape: on a real
// driver nvmlInit costs tens of milliseconds per GPU, a sample a few.
#include "probe/nvml_sampler.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "probe/hw_common.h"
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"

namespace gd {
namespace {

using Clock = std::chrono::steady_clock;

// Requests are short ("sample"); a longer line is read and ignored past this.
constexpr size_t kMaxRequestBytes = 256;

// Reads one request line from stdin; false at end of input (the parent
// closed its end or died).
bool read_request(std::string* line) {
  line->clear();
  for (;;) {
    char c = 0;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    if (line->size() < kMaxRequestBytes) line->push_back(c);
  }
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

int nvml_sampler_child_main(const std::string& lib) {
  disable_core_dumps();
  ChildOutput out;
  NvmlInfo info;
  info.attempted = true;
  info.library_requested = lib.empty() ? "libnvidia-ml.so.1" : lib;
  nvml::Api a;
  auto start = Clock::now();
  bool ready = nvml::open_nvml(out, &info, &a);
  std::vector<nvml::nvmlDevice_t> devs;
  if (ready) {
    // Identity once: names, bus ids and modes do not change while the
    // driver stays loaded; memory and health are read on every request.
    nvml::read_system(a, out, &info);
    unsigned count = info.device_count.ok() ? info.device_count.value : 0;
    for (unsigned i = 0; i < count && i < nvml::kMaxGpus; ++i) {
      NvmlGpu& g = info.gpus.emplace_back();
      devs.push_back(nvml::read_gpu(a, out, i, &g));
    }
  }
  double open_ms = ms_since(start);
  std::string request;
  bool first = true;
  while (read_request(&request)) {
    auto t0 = Clock::now();
    if (!ready) {
      info.duration_ms = open_ms;
      out.result(nvml_info_to_json(info));
      return 0;  // the parent starts a fresh child, which tries again
    }
    for (size_t i = 0; i < devs.size(); ++i) {
      if (devs[i] == nullptr) continue;
      std::string at = " (GPU " + std::to_string(i) + ")";
      NvmlGpu& g = info.gpus[i];
      if (!first) nvml::read_memory(a, out, devs[i], at, &g);  // read_gpu just did
      g.health = NvmlHealth{};
      nvml::read_health(a, out, devs[i], at, &g.health);
    }
    info.duration_ms = ms_since(t0) + (first ? open_ms : 0);
    first = false;
    out.result(nvml_info_to_json(info));
  }
  if (a.shutdown.fn != nullptr) ask(out, a.shutdown, "", [](auto f) { return f(); });
  return 0;
}

}  // namespace gd
