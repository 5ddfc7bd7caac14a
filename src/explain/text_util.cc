// Small helpers shared by the explain parsers.
#include <algorithm>

#include "explain/parse.h"

namespace gd {

void add_reported(TextParse* p, std::string kind, int code, std::string text, std::string_view line,
                  int line_no) {
  // Bounded: a huge log repeating one line must not grow the snapshot
  // without limit; the first lines of each kind are what evidence quotes.
  constexpr size_t kMaxReported = 2000;
  if (p->s->reported.size() >= kMaxReported) return;
  ReportedError r;
  r.kind = std::move(kind);
  r.code = code;
  r.text = std::move(text);
  r.line = std::string(trim(line));
  r.line_no = line_no;
  p->s->reported.push_back(std::move(r));
  p->observed.insert("reported");
}

bool icontains(std::string_view lowered_haystack, std::string_view lowered_needle) {
  return lowered_haystack.find(lowered_needle) != std::string_view::npos;
}

CudaRun& text_cuda_run(TextParse* p) {
  Snapshot& s = *p->s;
  p->observed.insert("cuda");
  s.cuda.attempted = true;
  if (s.cuda.runs.empty()) {
    CudaRun r;
    r.label = "user";
    r.library_requested = "libcuda.so.1";
    // Not empty: an empty library_loaded means dlopen failed, which the text
    // has not said.
    r.library_loaded = "as reported";
    s.cuda.runs.push_back(std::move(r));
  }
  return s.cuda.runs.front();
}

NvmlInfo& text_nvml(TextParse* p) {
  p->observed.insert("nvml");
  NvmlInfo& n = p->s->nvml;
  if (!n.attempted) {
    n.attempted = true;
    n.library_requested = "libnvidia-ml.so.1";
    n.library_loaded = "as reported";
  }
  return n;
}

}  // namespace gd
