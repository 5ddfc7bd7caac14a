// The long-lived NVML sampler child (`gpudoctor __probe-nvml-sampler --lib
// PATH`), used by `gpudoctor serve` (src/probe/sampler.h): it loads NVML and
// calls nvmlInit once, reads the identity of every GPU once, then answers
// each request line on stdin with one NvmlInfo JSON line (identity + the
// current memory and health of every GPU) on stdout, until end of input.
//
// Protocol, one request at a time (the lines of ChildOutput, hw_common.h):
//   parent -> child   sample\n
//   child -> parent   @nvmlDeviceGetTemperature (GPU 0)   each call, before it is made
//                     {"init_rc":0,"gpus":[...],...}      the answer (an NvmlInfo)
// When dlopen or nvmlInit fails the child answers every request with that
// failure and exits after the first answer, so the parent retries with a
// fresh child on its next call.
#pragma once

#include <string>

#include "probe/nvml_api.h"

namespace gd {

int nvml_sampler_child_main(const std::string& lib);

namespace nvml {

// Shared with the one-shot probe (nvml.cc).

// dlopen, resolve, nvmlInit: fills library_loaded, dlopen_error,
// init_symbol, init_rc of *info. True when NVML is initialised.
bool open_nvml(ChildOutput& out, NvmlInfo* info, Api* a);
// Driver, NVML and CUDA versions and the device count.
void read_system(const Api& a, ChildOutput& out, NvmlInfo* info);
// Identity, modes and processes of one GPU; its handle (nullptr if none).
nvmlDevice_t read_gpu(const Api& a, ChildOutput& out, unsigned index, NvmlGpu* g);
// Total, used and free memory of one GPU.
void read_memory(const Api& a, ChildOutput& out, nvmlDevice_t dev, const std::string& at,
                 NvmlGpu* g);

}  // namespace nvml
}  // namespace gd
