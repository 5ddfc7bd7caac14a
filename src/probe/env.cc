// The environment probe: an allow-list of GPU-relevant variables, read from
// this process's environ (the environment the user's CUDA program would get),
// never from --root. Nothing outside the allow-list is ever recorded, a name
// that looks like a credential is dropped even inside an allowed prefix
// (NVIDIA_API_KEY, SLURM_JWT exist in the wild), and a value that is not of
// its variable's kind is recorded by its shape only.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "probe/file_probes.h"
#include "probe/probe.h"
#include "util/ascii.h"
#include "util/text.h"

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

// Words that mark a credential, matched case-insensitively. The long ones
// anywhere in the name (MYTOKEN, DB_PASSWORD); the short ones only as a whole
// part between underscores, so SLURM_JWT and GITHUB_PAT go but LD_LIBRARY_PATH
// and NCCL_IB_PKEY (an InfiniBand partition number) stay.
constexpr std::array<std::string_view, 9> kSecretWords = {
    "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "COOKIE", "SESSION", "BEARER", "AUTH"};
constexpr std::array<std::string_view, 5> kSecretParts = {"PWD", "KEY", "JWT", "PAT", "PSK"};

bool looks_secret(std::string_view name) {
  std::string u = ascii_upper(name);
  for (auto w : kSecretWords) {
    if (u.find(w) != std::string::npos) return true;
  }
  for (auto part : split(u, '_')) {
    for (auto p : kSecretParts) {
      if (part == p) return true;
    }
  }
  return false;
}

// What an allowed variable's value must look like. A value that does not
// (a token pasted into CUDA_VISIBLE_DEVICES) is recorded by its shape only,
// since it reaches reports, metrics labels, the status page and the history.
enum class ValueKind { kAny, kDeviceList, kPathList, kNumber };

ValueKind value_kind(std::string_view name) {
  if (name == "CUDA_VISIBLE_DEVICES" || name == "NVIDIA_VISIBLE_DEVICES") {
    return ValueKind::kDeviceList;
  }
  if (name == "LD_LIBRARY_PATH" || name == "LD_PRELOAD" || name == "CUDA_HOME" ||
      name == "CUDA_PATH") {
    return ValueKind::kPathList;
  }
  if (name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE") return ValueKind::kNumber;
  return ValueKind::kAny;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_id_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-' || c == '/';
}

// An entry of a list that is not of the list's kind, but short enough to be
// a user's mistake worth showing ("cuda:0", "gpu1"): tokens are longer.
constexpr size_t kShortMistake = 16;

bool device_entry_ok(std::string_view e) {
  e = trim(e);
  if (e.empty() || e == "all" || e == "none" || e == "void" || e.size() <= kShortMistake) {
    return true;
  }
  if (e.starts_with("GPU-") || e.starts_with("MIG-"))
    return std::all_of(e.begin() + 4, e.end(), is_id_char);
  return e.find_first_not_of("0123456789-") == std::string_view::npos;
}

bool path_entry_ok(std::string_view e) {
  return e.size() <= kShortMistake || e.find('/') != std::string_view::npos ||
         e.find('.') != std::string_view::npos || e.starts_with("$");
}

// A JSON Web Token: three base64url parts, the first a JSON header ("eyJ").
bool looks_like_jwt(std::string_view v) {
  return v.starts_with("eyJ") && std::count(v.begin(), v.end(), '.') == 2 && v.size() >= 32;
}

bool value_ok(std::string_view name, std::string_view v) {
  if (looks_like_jwt(v)) return false;
  switch (value_kind(name)) {
    case ValueKind::kDeviceList:
      for (auto e : split(v, ',')) {
        if (!device_entry_ok(e)) return false;
      }
      return true;
    case ValueKind::kPathList:
      for (auto list : split(v, ':')) {
        for (auto e : split_ws(list)) {
          if (!path_entry_ok(e)) return false;
        }
      }
      return true;
    case ValueKind::kNumber:
      return v.size() <= kShortMistake || std::all_of(v.begin(), v.end(), is_digit);
    case ValueKind::kAny:
      return true;
  }
  return true;
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

std::string env_value_kept(std::string_view name, std::string_view value) {
  if (!value_ok(name, value)) return "<redacted: " + std::to_string(value.size()) + " chars>";
  return std::string(value.substr(0, kEnvValueMaxBytes));
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
    // here; only the length is bounded, and a value not of its variable's
    // kind is kept as its shape.
    info.vars[std::string(name)] = env_value_kept(name, value);
  }
  return info;
}

ProbeRecord probe_env(const ProbeOptions&, Snapshot* s) {
  s->env = filter_env(environ);
  ProbeNotes notes;
  return notes.record("env");
}

}  // namespace gd
