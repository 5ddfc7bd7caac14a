// The environment probe: an allow-list of GPU-relevant variables, read from
// this process's environ (the environment the user's CUDA program would get),
// never from --root. Nothing outside the allow-list is ever recorded, and a
// name that looks like a credential is dropped even inside an allowed prefix
// (NVIDIA_API_KEY exists in the wild).
#include <unistd.h>

#include <array>
#include <string_view>

#include "probe/file_probes.h"
#include "probe/probe.h"

extern char** environ;

namespace gd {

namespace {

// GPU, launcher and scheduler variables that change how CUDA starts or which
// devices it sees. Framework prefixes that carry tokens (HF_, ...) and
// unrelated ones (XLA_, TF_, JAX_) stay out on purpose.
constexpr std::array<std::string_view, 10> kPrefixes = {"CUDA_",   "NVIDIA_", "NCCL_", "PYTORCH_",
                                                        "TORCH_",  "SLURM_",  "OMPI_", "PMIX_",
                                                        "CUBLAS_", "CUDNN_"};

constexpr std::array<std::string_view, 8> kExactNames = {"LD_LIBRARY_PATH",
                                                         "LD_PRELOAD",
                                                         "LOCAL_RANK",
                                                         "RANK",
                                                         "WORLD_SIZE",
                                                         "__NV_PRIME_RENDER_OFFLOAD",
                                                         "KUBERNETES_SERVICE_HOST",
                                                         "container"};

// Only presence matters; the value (a cluster address) is not recorded.
constexpr std::string_view kPresenceOnly = "KUBERNETES_SERVICE_HOST";
constexpr std::string_view kPresentValue = "(present)";

constexpr std::array<std::string_view, 7> kSecretWords = {
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"};

bool looks_secret(std::string_view name) {
  for (auto w : kSecretWords) {
    // Case-insensitive enough: allowed names are upper case, except "container".
    if (name.find(w) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

bool env_name_allowed(std::string_view name) {
  if (name.empty() || looks_secret(name)) return false;
  for (auto n : kExactNames) {
    if (name == n) return true;
  }
  for (auto p : kPrefixes) {
    if (name.size() > p.size() && name.substr(0, p.size()) == p) return true;
  }
  return false;
}

EnvInfo filter_env(const char* const* envp) {
  EnvInfo info;
  if (envp == nullptr) return info;
  for (const char* const* e = envp; *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (!env_name_allowed(name)) continue;
    std::string_view value = entry.substr(eq + 1);
    if (name == kPresenceOnly) value = kPresentValue;
    // The exact bytes matter (CUDA_VISIBLE_DEVICES parsing), so no escaping
    // here; only the length is bounded.
    info.vars[std::string(name)] = std::string(value.substr(0, kEnvValueMaxBytes));
  }
  return info;
}

ProbeRecord probe_env(const ProbeOptions&, Snapshot* s) {
  s->env = filter_env(environ);
  ProbeNotes notes;
  return notes.record("env");
}

}  // namespace gd
