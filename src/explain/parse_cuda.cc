// CUDA errors as programs print them. Real lines this file reads:
//
// PyTorch 2.x (c10/cuda/CUDAFunctions.cpp, torch/cuda/__init__.py; facts §3):
//   UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run
//     some cuda functions before calling NumCudaDevices() that might have already set an error?
//     Error 2: out of memory (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)
//   UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have a
//     CUDA gpu.
//   UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set
//     up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.
//   RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA
//     GPU and installed a driver from http://www.nvidia.com/Download/index.aspx
//   UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found
//     version 12020).
//   RuntimeError: CUDA error: system not yet initialized
//   RuntimeError: No CUDA GPUs are available
//   RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with
//     multiprocessing, you must use the 'spawn' start method
//   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total
//     capacity of 23.65 GiB of which 17.06 MiB is free.
// Driver and runtime API users, frameworks:
//   cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
//   CUDA error 999 at main.cu:12 / CUDA error (999) / cudaErrorStubLibrary
//   ImportError: libcuda.so.1: cannot open shared object file: No such file or directory
// NCCL (src/include/checks.h CUDACHECK):
//   node1:2201:2201 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'
//   torch.distributed.DistBackendError: NCCL error in: ..., unhandled cuda error

#include "catalog/cuda_errors.h"
#include "explain/error_codes.h"
#include "explain/parse.h"
#include "util/substring_index.h"

namespace gd {
namespace {

// Codes that happen after CUDA started (kernel faults, bad arguments): they
// are reported, but do not say CUDA failed to start.
bool after_start_code(int code) { return !cuda_start_error(code); }

void set_driver_code(TextParse* p, int code) {
  if (after_start_code(code)) return;
  CudaRun& r = text_cuda_run(p);
  if (r.init_rc <= 0) r.init_rc = code;
}

void set_runtime_code(TextParse* p, int code, int driver_version = -1) {
  if (after_start_code(code)) return;
  CudaRun& r = text_cuda_run(p);
  if (r.cudart_rc <= 0) {
    r.cudart_rc = code;
    r.cudart_loaded = "as reported";
  }
  if (driver_version >= 0) {
    r.driver_version = driver_version;
    r.driver_version_rc = 0;
  }
}

struct Phrase {
  const char* lowered;
  int code;            // cudaError_t
  int driver_version;  // -1 unknown; 0: PyTorch saw no driver at all
};

// PyTorch's own sentences for cudaGetDeviceCount results (facts §3 "Other
// points"), and other wrappers' words for a code.
const Phrase kPhrases[] = {
    {"cuda driver initialization failed, you might not have a cuda gpu", 3, -1},
    {"cuda unknown error - this may be due to an incorrectly set up environment", 999, -1},
    {"found no nvidia driver on your system", 35, 0},
    {"no cuda gpus are available", 100, -1},
    // An earlier runtime's text for 46 (cudaErrorDevicesUnavailable), which
    // TensorFlow quotes ("... failed. Status: all CUDA-capable devices are
    // busy or unavailable"); today's is "CUDA-capable device(s) is/are busy
    // or unavailable".
    {"all cuda-capable devices are busy or unavailable", 46, -1},
    // PyCUDA's words for cuDeviceGet given an ordinal past the last GPU
    // (CUDA_ERROR_INVALID_DEVICE, 101).
    {"cudeviceget failed: invalid device", 101, -1},
};

// A driver API entry point the loaded driver lacks: the program was built
// for a newer driver (facts §5.2). The loader's words on Linux and Windows,
// and Go's dlsym wrapper (ollama):
//   libcuda.so.1: undefined symbol: cuCtxCreate_v4
//   The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the dynamic
//     link library nvcuda.dll
//   error="symbol lookup for cuCtxCreate_v3 failed: ..."
// Driver API names are "cu" and a capital (cuCtx..., cuTensorMap...); the
// runtime's (cuda...) and the libraries' (cublas...) are other mismatches.
std::string missing_driver_symbol(std::string_view line, std::string_view lowered) {
  static constexpr std::string_view kForms[] = {"undefined symbol: ", "procedure entry point ",
                                                "symbol lookup for "};
  // One pass rules out the many lines that hold none of them.
  static const SubstringIndex kAny({std::begin(kForms), std::end(kForms)});
  if (kAny.first_in(lowered) < 0) return {};
  for (std::string_view form : kForms) {
    size_t at = lowered.find(form);
    if (at == std::string_view::npos) continue;
    std::string_view name = ident_at(line, at + form.size());
    if (name.size() < 4 || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z') {
      continue;
    }
    if (form == "procedure entry point " && !icontains(lowered, "nvcuda.dll")) continue;
    return std::string(name);
  }
  return {};
}

// The calls and words of CUDA's start: cuInit, cudaGetDeviceCount, the
// frameworks' "CUDA initialization" and ggml's "failed to initialize CUDA".
bool names_a_start_call(std::string_view lowered) {
  for (std::string_view w : {"cuinit", "cudagetdevicecount", "cuda initialization",
                             "initialize cuda", "cudevicegetcount", "cuda_init", "is_available"}) {
    if (lowered.find(w) != std::string_view::npos) return true;
  }
  return false;
}

// A CUDA code the recognizer found: a driver API name is cuInit's answer,
// anything else the runtime's; NCCL's CUDACHECK line is NCCL's report of it.
void report_cuda_code(const CodeMention& m, std::string_view line, std::string_view lowered,
                      int line_no, TextParse* p) {
  const CudaErrorInfo* e = find_cuda_error(m.code);
  const bool driver_name = m.form == "name" && !m.as_printed.starts_with("cuda");
  // Out of memory is a start failure only at start (facts §11.6: the
  // address-space reservation); in a wrapper that names no start call
  // ("Check failed: error == cudaSuccess (2 vs. 0) out of memory") it is
  // an allocation, like the allocators' own messages.
  if (m.code == 2 && m.form != "cuda-failure" && !names_a_start_call(lowered)) {
    add_reported(p, "cuda-alloc", 2, m.as_printed, line, line_no);
    return;
  }
  if (m.form == "cuda-failure") {
    set_runtime_code(p, m.code);
    std::string what =
        e != nullptr && e->runtime_string != nullptr ? e->runtime_string : m.as_printed;
    add_reported(p, "nccl", m.code, what, line, line_no);
  } else if (driver_name) {
    set_driver_code(p, m.code);
    add_reported(p, "cuda-driver", m.code, m.as_printed, line, line_no);
  } else {
    set_runtime_code(p, m.code);
    std::string what = m.form == "name" ? m.as_printed
                       : e != nullptr && e->runtime_string != nullptr
                           ? std::string(e->runtime_string)
                           : "CUDA error " + std::to_string(m.code);
    add_reported(p, "cuda-runtime", m.code, what, line, line_no);
  }
}

}  // namespace

bool parse_cuda_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  // The CUDA samples' last line (deviceQuery, bandwidthTest, vectorAdd):
  // "Result = PASS" is a CUDA that started and ran; FAIL is an error line.
  if (trim(lowered) == "result = pass") {
    CudaRun& r = text_cuda_run(p);
    if (r.cudart_rc < 0) r.cudart_rc = 0;
    if (r.init_rc < 0) r.init_rc = 0;
    if (r.device_count_rc < 0) {
      r.device_count_rc = 0;
      r.device_count = 1;  // a sample that ran had a GPU
    }
    add_reported(p, "cuda-sample-pass", -1, "a CUDA sample passed", line, line_no);
    return true;
  }
  if (icontains(lowered, "cannot re-initialize cuda in forked subprocess")) {
    add_reported(p, "fork-after-init", -1, "Cannot re-initialize CUDA in forked subprocess", line,
                 line_no);
    return true;
  }
  // PyTorch at start: "NVIDIA Tesla P100-PCIE-16GB with CUDA capability
  // sm_60 is not compatible with the current PyTorch installation."
  if (icontains(lowered, "is not compatible with the current pytorch installation")) {
    add_reported(p, "arch-not-in-build", -1, "the GPU's CUDA capability is not in this build", line,
                 line_no);
    return true;
  }
  // An allocation after CUDA started: PyTorch's caching allocator ("CUDA out
  // of memory. Tried to allocate ..."), TensorFlow's BFC allocator ("ran out
  // of memory trying to allocate"), MXNet's ("cudaMalloc failed: out of memory").
  if (lowered.find("out of mem") != std::string_view::npos) {  // one pass for the three
    for (std::string_view form : {"cuda out of memory", "ran out of memory trying to allocate",
                                  "cudamalloc failed: out of mem"}) {
      if (size_t at = lowered.find(form); at != std::string_view::npos) {
        add_reported(p, "cuda-alloc", 2, std::string(trim(line.substr(at))), line, line_no);
        return true;
      }
    }
  }
  // NCCL's NVLink SHARP (NVLS) buffers failing to set up, with or without
  // the code: after the fabric manager was restarted without a GPU reset,
  // as NCCL's maintainers answered in NVIDIA/nccl#1488 and #976:
  //   node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'
  if (icontains(lowered, "transport/nvls.cc") && icontains(lowered, "cuda failure")) {
    add_reported(p, "nccl-nvls", -1, "NCCL's NVLS setup failed", line, line_no);
  }
  if (size_t at = lowered.find("the nvidia driver on your system is too old");
      at != std::string_view::npos) {
    int version = -1;
    if (size_t v = lowered.find("found version", at); v != std::string_view::npos) {
      version = leading_number(trim(line.substr(v + 13)));
    }
    set_runtime_code(p, 35, version);
    add_reported(p, "cuda-runtime", 35, "The NVIDIA driver on your system is too old", line,
                 line_no);
    return true;
  }
  for (const Phrase& ph : kPhrases) {
    if (size_t at = lowered.find(ph.lowered); at != std::string_view::npos) {
      set_runtime_code(p, ph.code, ph.driver_version);
      std::string_view text = trim(line.substr(at));
      add_reported(p, "cuda-runtime", ph.code, std::string(text.substr(0, 120)), line, line_no);
      return true;
    }
  }
  // Every other code, in any wrapper (explain/error_codes.h).
  if (const auto& m = code_on_line(line, lowered, line_no, p)) {
    if (m->space == CodeSpace::kCuda) {
      report_cuda_code(*m, line, lowered, line_no, p);
      return true;
    }
    if (m->space == CodeSpace::kNccl) {
      std::string what = m->as_printed;
      if (const char* name = nccl_result_name(m->code)) what = name;
      add_reported(p, "nccl-result", m->code, what, line, line_no);
      return true;
    }
  }
  if (std::string symbol = missing_driver_symbol(line, lowered); !symbol.empty()) {
    add_reported(p, "libcuda-missing-symbol", -1, symbol, line, line_no);
    return true;
  }
  // "libcuda.so: cannot open ...": the program asks for the development
  // link, which only the toolkit's or a -dev package ships; the driver's own
  // name is libcuda.so.1 (facts §5.2), so this says nothing of the driver.
  if (size_t at = lowered.find("libcuda.so: cannot open shared object file");
      at != std::string_view::npos) {
    add_reported(p, "libcuda-unversioned", -1, "libcuda.so: cannot open shared object file", line,
                 line_no);
    return true;
  }
  if (size_t at = lowered.find("libcuda.so");
      at != std::string_view::npos && icontains(lowered, "cannot open shared object file") &&
      !icontains(lowered, "nvidia-container-cli")) {
    CudaRun& r = text_cuda_run(p);
    r.library_loaded.clear();
    r.dlopen_error = std::string(trim(line.substr(at)));
    add_reported(p, "cuda-driver", -1, r.dlopen_error, line, line_no);
    return true;
  }
  return false;
}

}  // namespace gd
