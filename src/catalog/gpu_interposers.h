// GPU-sharing layers that interpose on libcuda and NVML through the
// dynamic loader's preload (LD_PRELOAD, /etc/ld.so.preload), each with
// the variables that carry its limits and where that is documented.
#pragma once

#include <string_view>
#include <vector>

namespace gd {

struct GpuInterposer {
  std::string_view library;  // the file name preloaded, "libvgpu.so"
  std::string_view project;  // "HAMi-core"
  std::string_view source;   // where its behaviour is documented
  // Environment variable prefixes that hold its limits ("CUDA_DEVICE_MEMORY_LIMIT"
  // also matches CUDA_DEVICE_MEMORY_LIMIT_0).
  std::vector<std::string_view> limit_vars;
};

const std::vector<GpuInterposer>& gpu_interposers();
// The interposer whose library this path's file name is; nullptr if none.
const GpuInterposer* find_gpu_interposer(std::string_view path);

}  // namespace gd
