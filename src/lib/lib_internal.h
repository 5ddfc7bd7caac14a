// libgpudoctor's internals behind the C ABI (gpudoctor_c.cc): option
// parsing, finding the gpudoctor binary, the CUDA-only probe. Nothing here
// is exported; the ABI boundary turns Results into return codes and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "probe/probe.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd::lib {

struct PreflightOptions {
  ProbeOptions probe;  // self_exe is filled in later (find_gpudoctor_exe)
  std::string config;
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::optional<double> log_window_s;  // nullopt: the config's window
};

struct CudaOptions {
  std::string cuda_lib = "libcuda.so.1";
  std::string cudart_lib;  // "" = search
  double deadline_s = 10;
};

// options_json: nullptr, "" or a JSON object with only the documented keys
// (include/gpudoctor/gpudoctor.h). The error is one line naming the key.
Result<PreflightOptions> parse_preflight_options(const char* options_json);
Result<CudaOptions> parse_cuda_options(const char* options_json);

// The gpudoctor binary to re-execute as probe child: $GPUDOCTOR_EXE, else
// next to this library (installed layout, then build tree), else the
// install prefix compiled in, else $PATH. Never this process's own
// executable: inside Python, /proc/self/exe is the interpreter.
Result<std::string> find_gpudoctor_exe();

// Runs only the CUDA probe child (the "user" run: this process's
// environment) under the deadline and returns what it saw. Never fails:
// a child that hung, crashed or could not start is in run.child_error.
CudaRun probe_cuda_only(const CudaOptions& opt, const std::string& exe);

// The run judged as torch.cuda.is_available() would: "" when CUDA works
// with at least one device, else one line saying why not.
std::string cuda_unavailable_reason(const CudaRun& run);

// gpudoctor_cuda_available's result object (documented in the header).
nlohmann::ordered_json cuda_status_json(const CudaRun& run);

}  // namespace gd::lib
