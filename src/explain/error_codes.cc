// Error codes in the wrappers programs print them in. Real lines, one per
// form (tests/unit/explain_codes_test.cc has each with its source):
//
//   Check failed: error == cudaSuccess (30 vs. 0)  unknown error            (Caffe, glog CHECK_EQ)
//   Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(context) (0 vs. 216)   (TensorFlow 1.x)
//   CUDA error 999 at main.cu:12 / CUDA error (999) / CUDA error code 999
//   Error 2: out of memory                                                  (PyTorch, beside
//   cudaGetDeviceCount) code=100(cudaErrorNoDevice) "cudaGetDeviceCount(&n)" (CUDA samples'
//   checkCudaErrors) CUresult 999 / cuInit returned 100 / cuInit failed with error 999
//   DriverError(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected") (Rust cudarc, candle)
//   [999] Call to cuInit results in CUDA_ERROR_UNKNOWN                      (Numba)
//   CUDA error: unknown error (code 999, ERROR_UNKNOWN)                     (Julia CUDA.jl)
//   cudaErrorInsufficientDriver: CUDA driver version is insufficient ...    (CuPy)
//   NCCL WARN Cuda failure 'out of memory' / Cuda failure 1 'invalid argument'   (NCCL CUDACHECK)
//   ncclUnhandledCudaError: Call to CUDA function failed.                   (PyTorch c10d)
//   NCCL error in: ..., unhandled system error (run with NCCL_DEBUG=INFO for details)
//   nvmlInit_v2 failed: NVML_ERROR_LIB_RM_VERSION_MISMATCH / pynvml.NVMLError_DriverNotLoaded
//   ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected   (the text
//   itself)
//
// Numbers: since CUDA 10.1 the runtime's values equal the driver's (the
// table in catalog/cuda_errors.cc). Before it the runtime numbered its own
// (cudaErrorUnknown was 30, cudaErrorNoDevice 38): where a wrapper prints
// the runtime's text after the number, the text decides.
#include "explain/error_codes.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <vector>

#include "catalog/cuda_errors.h"
#include "explain/parse.h"
#include "util/ascii.h"
#include "util/substring_index.h"
#include "util/text.h"

namespace gd {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
// The decimal number at `pos` after blanks and one of ( = # : [; -1 if none
// (or one of more than 6 digits: no code is).
int number_at(std::string_view s, size_t pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '(' || s[pos] == '=' || s[pos] == '#' ||
                            s[pos] == ':' || s[pos] == '[')) {
    ++pos;
  }
  if (pos >= s.size() || !is_digit(s[pos])) return -1;
  long v = 0;
  size_t digits = 0;
  while (pos < s.size() && is_digit(s[pos])) {
    if (++digits > 6) return -1;
    v = v * 10 + (s[pos++] - '0');
  }
  // "12.4" is a version, "0x1f" a value, "02-20 16:43" a date, "3/4" a
  // fraction: none is a code.
  if (pos + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[pos + 1])) &&
      (s[pos] == '.' || s[pos] == 'x' || s[pos] == '-' || s[pos] == '/' || s[pos] == ':')) {
    return -1;
  }
  if (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos])))
    return -1;  // "3rd", "2GB"
  return static_cast<int>(v);
}

struct NcclResult {
  int code;
  const char* name;
  const char* text;  // ncclGetErrorString's, lower case, without its "(run with ...)" tail
};

// nccl.h and src/init.cc ncclGetErrorString, NCCL 2.x.
constexpr NcclResult kNcclResults[] = {
    {1, "ncclUnhandledCudaError", "unhandled cuda error"},
    {2, "ncclSystemError", "unhandled system error"},
    {3, "ncclInternalError", "internal error - please report this issue to the nccl developers"},
    {4, "ncclInvalidArgument", nullptr},  // "invalid argument": CUDA's text too
    {5, "ncclInvalidUsage", "invalid usage (run with nccl_debug"},
    {6, "ncclRemoteError", "remote process exited or there was a network error"},
    {7, "ncclInProgress", nullptr},
};

CodeMention mention(CodeSpace space, int code, std::string form, std::string_view printed) {
  return {space, code, std::move(form), std::string(trim(printed).substr(0, 120))};
}

bool known(CodeSpace space, int code) {
  if (code <= 0) return false;
  switch (space) {
    case CodeSpace::kCuda:
      return find_cuda_error(code) != nullptr;
    case CodeSpace::kNvml:
      return nvml_error_name(code) != nullptr;
    case CodeSpace::kNccl:
      return nccl_result_name(code) != nullptr;
  }
  return false;
}

// pynvml's class per code, "NVMLError_DriverNotLoaded" -> "NVML_ERROR_DRIVER_NOT_LOADED".
std::string pynvml_class_to_name(std::string_view camel) {
  std::string name = "NVML_ERROR";
  for (size_t i = 0; i < camel.size(); ++i) {
    const char c = camel[i];
    if (!std::isalnum(static_cast<unsigned char>(c))) break;
    if (std::isupper(static_cast<unsigned char>(c)) || i == 0) name += '_';
    name += ascii_upper(c);
  }
  return name;
}

std::optional<CodeMention> by_name(std::string_view line) {
  // CUDA_ERROR_* (driver API), and CUDA.jl's bare "ERROR_UNKNOWN" inside "(code 999, ...)".
  for (size_t at = line.find("ERROR_"); at != std::string_view::npos;
       at = line.find("ERROR_", at + 1)) {
    const bool cuda_prefix = at >= 5 && line.substr(at - 5, 5) == "CUDA_";
    const bool nvml_prefix = at >= 5 && line.substr(at - 5, 5) == "NVML_";
    if (nvml_prefix) {
      std::string_view name = ident_at(line, at - 5);
      if (int rc = nvml_error_by_name(name); rc > 0)
        return mention(CodeSpace::kNvml, rc, "name", name);
      continue;
    }
    if (!cuda_prefix && at > 0 && is_ident_char(line[at - 1])) continue;
    std::string name = cuda_prefix ? std::string(ident_at(line, at - 5))
                                   : "CUDA_" + std::string(ident_at(line, at));
    if (const CudaErrorInfo* e = find_cuda_error_by_name(name); e != nullptr && e->code > 0) {
      return mention(CodeSpace::kCuda, e->code, "name", cuda_prefix ? name : name.substr(5));
    }
  }
  for (size_t at = line.find("cudaError"); at != std::string_view::npos;
       at = line.find("cudaError", at + 1)) {
    std::string_view name = ident_at(line, at);
    if (const CudaErrorInfo* e = find_cuda_error_by_name(name); e != nullptr && e->code > 0) {
      return mention(CodeSpace::kCuda, e->code, "name", name);
    }
  }
  if (size_t at = line.find("NVMLError_"); at != std::string_view::npos) {
    std::string_view camel = ident_at(line, at + 10);
    if (int rc = nvml_error_by_name(pynvml_class_to_name(camel)); rc > 0) {
      return mention(CodeSpace::kNvml, rc, "name", line.substr(at, 10 + camel.size()));
    }
  }
  for (size_t at = line.find("nccl"); at != std::string_view::npos;
       at = line.find("nccl", at + 1)) {
    std::string_view name = ident_at(line, at);
    for (const NcclResult& r : kNcclResults) {
      if (name == r.name) return mention(CodeSpace::kNccl, r.code, "name", name);
    }
  }
  return std::nullopt;
}

// The CUDA code whose runtime text `rest` starts with ("out of memory in
// cuMemAlloc" -> 2), the longest that fits; nullptr if none.
const CudaErrorInfo* runtime_text_at(std::string_view rest) {
  struct Text {
    std::string lowered;  // without a trailing '.'
    const CudaErrorInfo* error;
  };
  // Longest first, lower-cased once: the first that fits is the longest.
  static const std::vector<Text> kTexts = [] {
    std::vector<Text> texts;
    for (const CudaErrorInfo& e : cuda_errors()) {
      if (e.code <= 0 || e.runtime_string == nullptr) continue;
      std::string t = ascii_lower(trim(std::string_view(e.runtime_string)));
      while (!t.empty() && t.back() == '.') t.pop_back();
      texts.push_back({std::move(t), &e});
    }
    std::stable_sort(texts.begin(), texts.end(), [](const Text& a, const Text& b) {
      return a.lowered.size() > b.lowered.size();
    });
    return texts;
  }();
  rest = trim(rest);
  while (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) rest.remove_prefix(1);
  for (const Text& t : kTexts) {
    if (rest.size() < t.lowered.size()) continue;
    bool same = true;
    for (size_t i = 0; i < t.lowered.size() && same; ++i) {
      same = ascii_lower(rest[i]) == t.lowered[i];
    }
    if (!same) continue;
    // A whole text, not the start of a longer word.
    if (rest.size() > t.lowered.size() &&
        std::isalnum(static_cast<unsigned char>(rest[t.lowered.size()]))) {
      continue;
    }
    return t.error;
  }
  return nullptr;
}

// "cuinit", "cuctxcreate", "cudevicegetcount", "cumemalloc": a driver API
// call named in the line (lower case, so by the calls' own names).
bool names_driver_call(std::string_view lowered) {
  static const SubstringIndex kCalls({"cuinit", "cuctx", "cudevice", "cumem", "culaunch",
                                      "cumodule", "custream", "cuevent", "cugeterror"});
  return kCalls.first_in(lowered) >= 0;
}

// The space a numbered code on this line belongs to, from the words around it.
std::optional<CodeSpace> space_of(std::string_view lowered) {
  if (lowered.find("nccl") != std::string_view::npos &&
      lowered.find("cuda failure") == std::string_view::npos) {
    return CodeSpace::kNccl;
  }
  if (lowered.find("cuda") != std::string_view::npos || names_driver_call(lowered)) {
    return CodeSpace::kCuda;
  }
  if (lowered.find("nvml") != std::string_view::npos) return CodeSpace::kNvml;
  return std::nullopt;
}

// NCCL's CUDACHECK: "Cuda failure 'out of memory'", "Cuda failure 1 'invalid argument'".
std::optional<CodeMention> cuda_failure(std::string_view line, std::string_view lowered) {
  size_t at = lowered.find("cuda failure ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + 13);
  int number = number_at(rest, 0);
  size_t quote = rest.find('\'');
  if (quote != std::string_view::npos) {
    if (const CudaErrorInfo* e = runtime_text_at(rest.substr(quote + 1))) {
      return mention(CodeSpace::kCuda, e->code, "cuda-failure", line.substr(at));
    }
  }
  if (known(CodeSpace::kCuda, number)) {
    return mention(CodeSpace::kCuda, number, "cuda-failure", line.substr(at));
  }
  return std::nullopt;
}

// glog's CHECK_EQ/CHECK_OP: "(30 vs. 0)", "(0 vs. 216)": the one not zero.
std::optional<CodeMention> versus(std::string_view line, std::string_view lowered) {
  for (size_t at = line.find(" vs. "); at != std::string_view::npos;
       at = line.find(" vs. ", at + 1)) {
    size_t open = line.rfind('(', at);
    size_t close = line.find(')', at);
    if (open == std::string_view::npos || close == std::string_view::npos || at - open > 8)
      continue;
    int a = number_at(line, open + 1);
    int b = number_at(line, at + 5);
    if (a < 0 || b < 0 || (a != 0 && b != 0)) continue;
    int code = a != 0 ? a : b;
    auto space = space_of(lowered);
    if (!space || code == 0) continue;
    std::string_view printed = line.substr(open + 1);
    // An earlier runtime's numbering: the text after it decides.
    if (*space == CodeSpace::kCuda) {
      if (const CudaErrorInfo* e = runtime_text_at(line.substr(close + 1))) {
        return mention(CodeSpace::kCuda, e->code, "vs", printed);
      }
    }
    if (known(*space, code)) return mention(*space, code, "vs", printed);
  }
  return std::nullopt;
}

// "<words> N": a number right after words that introduce a code.
struct NumberForm {
  const char* lowered;
  bool
      strong;  // names a code outright; a weak form counts only for a code CUDA fails to start with
};
constexpr NumberForm kNumberForms[] = {
    {"cuda error code ", true},
    {"cuda error", true},
    {"curesult ", true},
    {"cuda runtime error", true},
    {"(code ", true},
    {"error code ", true},
    {"failed with error ", true},
    {"error ", true},
    {"returned ", false},
    {"error=", false},
    {"err: ", false},
    {"err=", false},
    {"code=", false},
    {"init failure: ", false},
    {"status ", false},
    {"failed with ", false},
    {"result ", false},
};

// "error 999" in prose with no word of CUDA's on its line ("I found this on
// error 999, which was showing in my logs"): a code only when it is one
// CUDA fails to start with and has three digits (100, 304, 802-804, 999),
// which no other layer of this stack prints as "error N".
std::optional<CodeMention> bare_start_code(std::string_view line, std::string_view lowered) {
  for (size_t at = lowered.find("error "); at != std::string_view::npos;
       at = lowered.find("error ", at + 1)) {
    int code = number_at(line, at + 6);
    if (code >= 100 && code <= 999 && cuda_start_error(code) && find_cuda_error(code) != nullptr) {
      return mention(CodeSpace::kCuda, code, "number", line.substr(at));
    }
  }
  return std::nullopt;
}

std::optional<CodeMention> by_number(std::string_view line, std::string_view lowered) {
  auto space = space_of(lowered);
  if (!space) return bare_start_code(line, lowered);
  // make's "*** [all] Error 2" under an nvcc line is make's own status.
  if (lowered.find("***") != std::string_view::npos) return std::nullopt;
  // The first number its runtime's text follows ("Error 2: out of memory")
  // is sure; else the first one a strong form introduces.
  std::optional<CodeMention> first;
  for (const NumberForm& form : kNumberForms) {
    std::string_view words = form.lowered;
    for (size_t at = lowered.find(words); at != std::string_view::npos;
         at = lowered.find(words, at + 1)) {
      if (at > 0 && std::isalpha(static_cast<unsigned char>(lowered[at - 1])) &&
          std::isalpha(static_cast<unsigned char>(words.front()))) {
        continue;  // "myerror 3"
      }
      int code = number_at(line, at + words.size());
      if (!known(*space, code)) continue;
      size_t after = lowered.find_first_not_of("0123456789 ()=#:[]", at + words.size());
      const CudaErrorInfo* text = *space == CodeSpace::kCuda && after != std::string_view::npos
                                      ? runtime_text_at(line.substr(after))
                                      : nullptr;
      if (text != nullptr) return mention(*space, text->code, "number", line.substr(at));
      bool sure = form.strong || *space != CodeSpace::kCuda || cuda_start_error(code);
      if (sure && !first) first = mention(*space, code, "number", line.substr(at));
    }
  }
  return first;
}

std::optional<CodeMention> by_text(std::string_view line, std::string_view lowered) {
  // "CUDA error: out of memory", "CUDA Error: no kernel image ...", Blender's
  // "CUDA error: Out of memory in cuMemAlloc(...)".
  if (size_t at = lowered.find("cuda error: "); at != std::string_view::npos) {
    if (const CudaErrorInfo* e = runtime_text_at(line.substr(at + 12))) {
      return mention(CodeSpace::kCuda, e->code, "text", line.substr(at + 12));
    }
  }
  if (const CudaErrorInfo* e = find_cuda_error_in_text(lowered)) {
    return mention(CodeSpace::kCuda, e->code, "text", e->runtime_string);
  }
  for (const NcclResult& r : kNcclResults) {
    if (r.text == nullptr) continue;
    if (size_t at = lowered.find(r.text); at != std::string_view::npos) {
      return mention(CodeSpace::kNccl, r.code, "text", line.substr(at));
    }
  }
  // pynvml's base class with NVML's text: "NVMLError: Driver Not Loaded".
  if (size_t at = line.find("NVMLError: "); at != std::string_view::npos) {
    if (int rc = nvml_error_by_string(trim(line.substr(at + 11))); rc > 0) {
      return mention(CodeSpace::kNvml, rc, "text", line.substr(at + 11));
    }
  }
  return std::nullopt;
}

// Every form's words, so that a line with none of them (most of a log)
// costs one pass.
bool may_hold_a_code(std::string_view lowered) {
  static const SubstringIndex kWords({"error", "cuda", "nccl", "nvml", " vs. ", "curesult",
                                      "returned", "status", "err:", "err=", "code=", "failure",
                                      "cannot", "not", "no ", "invalid", "unknown"});
  return kWords.first_in(lowered) >= 0;
}

}  // namespace

const char* nccl_result_name(int code) {
  for (const NcclResult& r : kNcclResults) {
    if (r.code == code) return r.name;
  }
  return nullptr;
}

std::string code_words(CodeSpace space, int code) {
  switch (space) {
    case CodeSpace::kCuda:
      return "CUDA error " + std::to_string(code);
    case CodeSpace::kNvml:
      return "NVML error " + std::to_string(code);
    case CodeSpace::kNccl:
      return "NCCL result " + std::to_string(code);
  }
  return "error " + std::to_string(code);
}

std::optional<CodeMention> find_error_code(std::string_view line, std::string_view lowered) {
  if (!may_hold_a_code(lowered)) return std::nullopt;
  if (auto m = by_name(line)) return m;
  if (auto m = cuda_failure(line, lowered)) return m;
  // The numbered forms need a digit: most lines of a log have none.
  if (line.find_first_of("0123456789") != std::string_view::npos) {
    if (auto m = versus(line, lowered)) return m;
    if (auto m = by_number(line, lowered)) return m;
  }
  return by_text(line, lowered);
}

}  // namespace gd
