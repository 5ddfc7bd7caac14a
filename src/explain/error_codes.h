// The one recognizer of error codes in pasted text: CUDA driver (CUresult)
// and runtime (cudaError_t) codes, NVML return codes and NCCL results, by
// number or by name, in the wrappers frameworks print them in. The line
// parsers (parse_cuda.cc, parse_nvml.cc) ask it and record what it found;
// none of them reads a code on its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gd {

enum class CodeSpace { kCuda, kNvml, kNccl };

struct CodeMention {
  CodeSpace space = CodeSpace::kCuda;
  int code = -1;
  // The wrapper it came in, for the tests and the evidence: "name",
  // "vs" (glog's "(30 vs. 0)"), "number" ("CUDA error 999", "returned 100"),
  // "cuda-failure" (NCCL's "Cuda failure 'x'"), "text" (the message itself).
  std::string form;
  // What the line printed for it: "CUDA_ERROR_NO_DEVICE", "30 vs. 0 unknown
  // error", "system not yet initialized".
  std::string as_printed;
};

// The error code a line names, the most specific form first (a name before
// a number, a number before a bare message text); nullopt when it names none.
// `lowered` is the line in lower case.
std::optional<CodeMention> find_error_code(std::string_view line, std::string_view lowered);

// "CUDA error 999", "NVML error 9", "NCCL result 6": how a mention reads.
std::string code_words(CodeSpace space, int code);

// NCCL's ncclResult_t (nccl.h, NCCL 2.x): ncclUnhandledCudaError 1,
// ncclSystemError 2, ncclInternalError 3, ncclInvalidArgument 4,
// ncclInvalidUsage 5, ncclRemoteError 6, ncclInProgress 7. nullptr if unknown.
const char* nccl_result_name(int code);

}  // namespace gd
