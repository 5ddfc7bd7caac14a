#include "probe/job_request.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "util/text.h"

namespace gd {
namespace {

struct Launcher {
  std::string_view name;  // what it is called in the request ("torchrun")
  std::array<std::string_view, 2> count_options;
};

constexpr Launcher kTorchrun = {"torchrun", {"--nproc_per_node", "--nproc-per-node"}};
constexpr Launcher kDeepspeed = {"deepspeed", {"--num_gpus", "--num-gpus"}};
constexpr Launcher kAccelerate = {"accelerate launch", {"--num_processes", "--num-processes"}};

std::string_view base_name(std::string_view word) {
  size_t slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

// Where the launcher's own words start, and which launcher it is.
const Launcher* find_launcher(const std::vector<std::string>& argv, size_t* at) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string_view w = base_name(argv[i]);
    if (w == "torchrun" || w == "torch.distributed.run" || w == "torch.distributed.launch") {
      *at = i + 1;
      return &kTorchrun;
    }
    if (w == "deepspeed") {
      *at = i + 1;
      return &kDeepspeed;
    }
    if (w == "accelerate" && i + 1 < argv.size() && argv[i + 1] == "launch") {
      *at = i + 2;
      return &kAccelerate;
    }
  }
  return nullptr;
}

// The value of --name (as "--name N" or "--name=N") among argv[from..];
// nullopt when absent.
std::optional<std::string_view> option_value(const std::vector<std::string>& argv, size_t from,
                                             std::string_view name, std::string* spelled) {
  for (size_t i = from; i < argv.size(); ++i) {
    std::string_view w = argv[i];
    if (w == name && i + 1 < argv.size()) {
      *spelled = std::string(w) + " " + argv[i + 1];
      return std::string_view(argv[i + 1]);
    }
    if (w.starts_with(name) && w.size() > name.size() && w[name.size()] == '=') {
      *spelled = std::string(w);
      return w.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

std::optional<int> positive_count(std::string_view v) {
  if (v.empty() || v.size() > 6 ||
      !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int n = 0;
  for (char c : v) n = n * 10 + (c - '0');
  return n > 0 ? std::optional<int>(n) : std::nullopt;
}

}  // namespace

std::optional<JobRequest> job_gpu_request(const std::vector<std::string>& argv) {
  size_t from = 0;
  const Launcher* l = find_launcher(argv, &from);
  if (l == nullptr) return std::nullopt;
  for (std::string_view option : l->count_options) {
    std::string spelled;
    auto v = option_value(argv, from, option, &spelled);
    if (!v) continue;
    auto n = positive_count(*v);
    if (!n) return std::nullopt;
    if (l == &kAccelerate) {
      // --num_processes counts every machine's processes.
      std::string ignored;
      for (std::string_view m : {"--num_machines", "--num-machines"}) {
        auto machines = option_value(argv, from, m, &ignored);
        if (machines && *machines != "1") return std::nullopt;
      }
    }
    return JobRequest{*n, std::string(l->name) + " " + spelled};
  }
  return std::nullopt;
}

std::optional<JobRequest> job_gpu_request(std::string_view command_line) {
  std::vector<std::string> words;
  for (std::string_view w : split_ws(command_line)) words.emplace_back(w);
  return job_gpu_request(words);
}

}  // namespace gd
