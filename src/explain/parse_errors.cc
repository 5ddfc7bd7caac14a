// Lines that show an error, whatever its cause: what lets explain tell a
// text that shows a healthy state (an nvidia-smi table of working GPUs, a
// CUDA sample's "Result = PASS") from one that shows a failure it cannot
// attribute, which gets verdict unknown, never ok. Real lines:
//
//   RuntimeError: CUDA error: an illegal memory access was encountered
//   [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE,
//   ...) ran for 600000 milliseconds before timing out. |   1  NVIDIA A100-SXM4-80GB          On  |
//   00000000:0F:00.0 Off |                  ERR! | torch.OutOfMemoryError: CUDA out of memory.
//   Tried to allocate 20.00 MiB. GPU 0 has a total
//     capacity of 79.15 GiB of which 1.44 MiB is free. Including non-PyTorch memory, this
//     process has 78.07 GiB memory in use.
#include <cctype>
#include <cstdlib>
#include <iterator>

#include "explain/parse.h"
#include "util/substring_index.h"

namespace gd {
namespace {

constexpr const char* kErrorWords[] = {
    "error",
    "result = fail",  // the CUDA samples' verdict line
    "failed",        "failure",   "fatal",         "exception", "traceback",
    "err!",          "timed out", "timeout",       "abort",     "segmentation fault",
    "core dumped",   "panic",     "cannot ",       "can't ",    "unable to",
    "could not",     "couldn't",  "not available", "illegal",   "denied",
    "refused",       "killed",    "unhealthy",     "crash",     "no cuda",
    "insufficient",  "mismatch",
};

// Words that say there was none: "0 errors", "No errors found".
constexpr const char* kNoErrorWords[] = {"no error",       "0 error",       "errors: 0",
                                         "error: 0",       "without error", "error-free",
                                         "errors found: 0"};

bool shows_error(std::string_view lowered) {
  static const SubstringIndex kWords({std::begin(kErrorWords), std::end(kErrorWords)});
  static const SubstringIndex kNone({std::begin(kNoErrorWords), std::end(kNoErrorWords)});
  return kWords.first_in(lowered) >= 0 && kNone.first_in(lowered) < 0;
}

// "78.07 GiB" at the start of `s` -> bytes (GiB, MiB, KiB, GB, MB); -1 if not that shape.
double size_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  size_t start = i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == start) return -1;
  double v = std::atof(std::string(s.substr(start, i - start)).c_str());
  while (i < s.size() && s[i] == ' ') ++i;
  std::string_view unit = s.substr(i, 3);
  if (unit == "gib" || unit.starts_with("gb")) return v * 1073741824.0;
  if (unit == "mib" || unit.starts_with("mb")) return v * 1048576.0;
  if (unit == "kib" || unit.starts_with("kb")) return v * 1024.0;
  if (unit == "byt") return v;
  return -1;
}

// The size just before `words` ("22.50 GiB already allocated"); -1 if none.
double size_before(std::string_view lowered, size_t at) {
  size_t start = at;
  int spaces = 0;
  while (start > 0 && spaces < 2) {
    --start;
    if (lowered[start] == ' ' && start + 1 < at && lowered[start + 1] != ' ') ++spaces;
  }
  return size_at(lowered.substr(start, at - start));
}

enum class OomHolder { kUnknown, kThisProcess, kOthers };

// PyTorch's OOM: who holds the GPU's memory, from the sizes it prints.
// 2.x: "GPU 0 has a total capacity of 79.15 GiB ... this process has 78.07
// GiB memory in use" or "Process 4242 has 23.00 GiB memory in use. Of the
// allocated memory 0 bytes is allocated by PyTorch"; 1.x: "(GPU 0; 23.65 GiB
// total capacity; 22.50 GiB already allocated; ...)". This process holding
// half or more: its own allocations; PyTorch holding under a tenth while a
// process is listed: the others.
OomHolder who_holds_the_gpu(std::string_view lowered) {
  double total = -1, own = -1, by_pytorch = -1;
  if (size_t at = lowered.find("total capacity of "); at != std::string_view::npos) {
    total = size_at(lowered.substr(at + 18));
  } else if (size_t at2 = lowered.find(" total capacity"); at2 != std::string_view::npos) {
    total = size_before(lowered, at2 + 1);
  }
  if (size_t at = lowered.find("this process has "); at != std::string_view::npos) {
    own = size_at(lowered.substr(at + 17));
  } else if (size_t at2 = lowered.find(" already allocated"); at2 != std::string_view::npos) {
    own = size_before(lowered, at2 + 1);
  }
  if (size_t at = lowered.find("of the allocated memory "); at != std::string_view::npos) {
    by_pytorch = size_at(lowered.substr(at + 24));
  }
  if (total <= 0) return OomHolder::kUnknown;
  if (own >= 0.5 * total) return OomHolder::kThisProcess;
  if (own < 0 && by_pytorch >= 0 && by_pytorch < 0.1 * total &&
      lowered.find("process ") != std::string_view::npos) {
    return OomHolder::kOthers;
  }
  return OomHolder::kUnknown;
}

// Inside an nvidia-smi -q block, "Uncorrectable Error : 0", "Remapping
// Failure Occurred : No" and the heading "ECC Errors" are counters and
// headings of a healthy GPU: only a value that itself shows an error counts.
bool benign_query_line(std::string_view lowered, const TextParse& p) {
  if (p.smi_q_gpu < 0 && p.smi_q_section.empty()) return false;
  size_t colon = lowered.find(" : ");
  if (colon == std::string_view::npos) colon = lowered.rfind(':');
  if (colon == std::string_view::npos) return true;  // a heading
  std::string_view value = trim(lowered.substr(colon + 1));
  if (value.empty() || value == "0" || value == "no" || value == "n/a" || value == "none" ||
      value == "not active" || value == "not supported") {
    return true;
  }
  return !shows_error(value);
}

}  // namespace

bool parse_error_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  if (!shows_error(lowered) || benign_query_line(lowered, *p)) return false;
  // Bounded: evidence quotes the first few, and a log of a thousand
  // failures must not crowd the other signals out of the snapshot.
  constexpr int kMaxErrorLines = 20;
  if (p->error_lines < kMaxErrorLines) {
    ++p->error_lines;
    add_reported(p, "error-line", -1, "an error", line, line_no);
  }
  // nvidia-smi prints ERR! where NVML could not read a GPU's value.
  std::string_view t = trim(line);
  if (t.starts_with("|") && t.find("ERR!") != std::string_view::npos) {
    add_reported(p, "smi-err", -1, "nvidia-smi shows ERR! for a GPU", line, line_no);
  }
  if (icontains(lowered, "watchdog") &&
      (icontains(lowered, "timeout") || icontains(lowered, "timed out")) &&
      (icontains(lowered, "nccl") || icontains(lowered, "collective"))) {
    add_reported(p, "nccl-watchdog", -1, "NCCL's watchdog timed out a collective", line, line_no);
  }
  if (icontains(lowered, "out of memory")) {
    OomHolder who = who_holds_the_gpu(lowered);
    if (who == OomHolder::kThisProcess) {
      add_reported(p, "oom-own-process", -1, "this process holds most of the GPU's memory", line,
                   line_no);
    } else if (who == OomHolder::kOthers) {
      add_reported(p, "oom-other-process", -1, "other processes hold the GPU's memory", line,
                   line_no);
    }
  }
  return true;
}

}  // namespace gd
