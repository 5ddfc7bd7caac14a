// The GPU interposer table (gpu_interposers.h).
#include "catalog/gpu_interposers.h"

namespace gd {

const std::vector<GpuInterposer>& gpu_interposers() {
  static const std::vector<GpuInterposer> kTable = {
      // HAMi's device plugin writes /usr/local/vgpu/libvgpu.so into the
      // container's /etc/ld.so.preload (Project-HAMi/HAMi#777, #1346); run by
      // hand it is LD_PRELOAD=libvgpu.so (HAMi-core README, HAMi-core#7, #21).
      // It caps device memory per GPU and the SM share; an allocation past
      // the cap fails as out of memory ("[HAMI-core ERROR ...]: Device 0 OOM",
      // Project-HAMi/HAMi#1181).
      {"libvgpu.so",
       "HAMi-core (Project-HAMi)",
       "https://github.com/Project-HAMi/HAMi-core",
       {"CUDA_DEVICE_MEMORY_LIMIT", "CUDA_DEVICE_SM_LIMIT"}},
  };
  return kTable;
}

const GpuInterposer* find_gpu_interposer(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  for (const GpuInterposer& g : gpu_interposers()) {
    if (name == g.library) return &g;
  }
  return nullptr;
}

}  // namespace gd
