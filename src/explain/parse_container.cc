// Container runtime errors. Real lines this file reads (Docker 24-27,
// nvidia-container-toolkit 1.14-1.17; facts §6.3):
//
//   docker: Error response from daemon: could not select device driver "" with capabilities:
//     [[gpu]].
//   nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.
//   nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot
//     open shared object file: no such file or directory: unknown.
//   nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update
//     your driver to a newer version, or use an earlier cuda container: unknown.
//   nvidia-container-cli: device error: 3: unknown device: unknown.
//   nvidia-docker | 2017/11/21 00:48:39 Error: unsupported CUDA version: driver 8.0 < image 9.0.176
// NGC images' entrypoint (nvidia_entrypoint.sh; facts §6.3) when the kernel
// module is older than the image's CUDA needs and forward compatibility
// did not help:
//   ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but
//          version 510.85.02 was detected and compatibility mode is UNAVAILABLE.
// Kubernetes, a node whose device plugin found no GPU (kubectl describe node):
//    nvidia.com/gpu:     0
#include "catalog/cuda_errors.h"
#include "explain/parse.h"
#include "util/substring_index.h"

namespace gd {
namespace {

// The text between `key` and the next ": " or ", " (or the end).
std::string field_after(std::string_view line, size_t at, size_t key_len) {
  std::string_view rest = line.substr(at + key_len);
  size_t end = std::min(rest.find(": "), rest.find(", "));
  return std::string(trim(rest.substr(0, end)));
}

}  // namespace

bool parse_container_line(std::string_view line, std::string_view lowered, int line_no,
                          TextParse* p) {
  // Most lines hold none of these: one pass over the line rules them out.
  static const SubstringIndex kAny(
      {"compatibility mode is unavailable", "nvidia.com/gpu:", "unsupported cuda version",
       "could not select device driver", "nvidia-container-cli", "nvidia-container-runtime",
       "could not register device plugin", "could not contact kubelet"});
  if (kAny.first_in(lowered) < 0) return false;
  // The banner's second line; an empty version means the script found no
  // driver version at all (no driver mounted in).
  if (size_t at = lowered.find("was detected and compatibility mode is unavailable");
      at != std::string_view::npos) {
    std::string_view head = trim(lowered.substr(0, at));
    std::string version(head.starts_with("version") ? trim(head.substr(7)) : std::string_view());
    add_reported(p, "ngc-banner", -1, version, line, line_no);
    return true;
  }
  if (size_t at = lowered.find("nvidia.com/gpu:"); at != std::string_view::npos) {
    std::string_view rest = trim(lowered.substr(at + 15));
    if (rest == "0") {
      add_reported(p, "k8s-no-gpus", -1, "nvidia.com/gpu: 0", line, line_no);
      return true;
    }
  }
  // The device plugin that cannot register with the kubelet advertises no
  // GPU (NVIDIA/k8s-device-plugin's own log; #10, #55: the feature gate off,
  // a kubelet whose socket directory is elsewhere):
  //   2017/11/24 09:06:29 Could not register device plugin: context deadline exceeded
  //   2018/06/06 12:40:16 Could not contact Kubelet, retrying. Did you enable the device plugin
  //   feature gate?
  if (icontains(lowered, "could not register device plugin") ||
      icontains(lowered, "could not contact kubelet")) {
    add_reported(p, "k8s-plugin-unregistered", -1, "the device plugin cannot register", line,
                 line_no);
    return true;
  }
  if (size_t at = lowered.find("unsupported cuda version: driver ");
      at != std::string_view::npos && icontains(lowered, "nvidia-docker")) {
    add_reported(p, "container-runtime", -1, std::string(trim(line.substr(at))), line, line_no);
    return true;
  }
  if (icontains(lowered, "could not select device driver") &&
      icontains(lowered, "capabilities: [[gpu]]")) {
    add_reported(p, "container-runtime", -1, "could not select device driver \"\" for [[gpu]]",
                 line, line_no);
    return true;
  }
  if (!icontains(lowered, "nvidia-container-cli") &&
      !icontains(lowered, "nvidia-container-runtime"))
    return false;
  if (size_t at = lowered.find("nvml error: "); at != std::string_view::npos) {
    std::string what = field_after(line, at, 12);
    int rc = nvml_error_by_string(what);
    add_reported(p, "container-runtime", rc, "nvml error: " + what, line, line_no);
    return true;
  }
  if (size_t at = lowered.find("load library failed: "); at != std::string_view::npos) {
    add_reported(p, "container-runtime", -1, "load library failed: " + field_after(line, at, 21),
                 line, line_no);
    return true;
  }
  if (size_t at = lowered.find("unsatisfied condition: "); at != std::string_view::npos) {
    add_reported(p, "container-runtime", -1, "unsatisfied condition: " + field_after(line, at, 23),
                 line, line_no);
    return true;
  }
  // libnvidia-container's driver service (driver.c) could not open the
  // driver: no usable driver on the host ("driver error: timed out" is the
  // phrase table's slow driver).
  if (size_t at = lowered.find("driver error: failed to process request");
      at != std::string_view::npos) {
    add_reported(p, "container-runtime", -1, "driver error: failed to process request", line,
                 line_no);
    return true;
  }
  if (size_t at = lowered.find("device error: "); at != std::string_view::npos) {
    std::string dev = field_after(line, at, 14);
    add_reported(p, "container-runtime", -1, "unknown device: " + dev, line, line_no);
    return true;
  }
  add_reported(p, "container-runtime", -1, std::string(trim(line)).substr(0, 200), line, line_no);
  return true;
}

}  // namespace gd
