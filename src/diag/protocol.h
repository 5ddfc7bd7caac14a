// Reading the GPU helper's answer (gpu/README.md, "gpudoctor.diag-helper/v1"):
// JSON lines, each parsed on its own, so a garbled or cut-off line costs that
// line only. Input example:
//   {"type":"hello","schema":"gpudoctor.diag-helper/v1","cuda_runtime":13000,...}
//   {"type":"device","gpu":"0000:17:00.0","cuda_index":0,"name":"NVIDIA H200",...}
//   {"type":"start","test":"gemm","gpu":"0000:17:00.0"}
//   {"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"pass",...}
//   {"type":"done"}
#pragma once

#include <string_view>

#include "diag/result.h"

namespace gd {

// Adds what `out` says to *run: versions, devices, results, error lines.
// A line that is not a JSON object of a known type, or whose fields have the
// wrong types, becomes a DiagError ("helper line 7: ...", printable, one
// line) and is otherwise ignored; unknown fields are ignored (newer helpers
// may add some). Bus ids are normalized; a result naming a GPU that no
// device line announced is kept. run->last_started is the last "start" line
// not followed by its result. Returns whether a "done" line was read.
bool parse_helper_output(std::string_view out, DiagRun* run);

}  // namespace gd
