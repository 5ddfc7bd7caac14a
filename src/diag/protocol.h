// Reading the GPU helper's answer (gpu/README.md, "gpudoctor.diag-helper/v1"):
// JSON lines, each parsed on its own, so a garbled or cut-off line costs that
// line only. Input example:
//   {"type":"hello","schema":"gpudoctor.diag-helper/v1","cuda_runtime":13000,...}
//   {"type":"device","gpu":"0000:17:00.0","cuda_index":0,"name":"NVIDIA H200",...}
//   {"type":"start","test":"gemm","gpu":"0000:17:00.0"}
//   {"type":"result","test":"gemm","gpu":"0000:17:00.0","dtype":"bf16","status":"pass",...}
//   {"type":"done"}
#pragma once

#include <cstddef>
#include <string_view>

#include "diag/result.h"

namespace gd {

// Ceilings on what one helper answer can make the parent keep: a broken or
// hostile helper costs at most this much, whatever it writes.
inline constexpr size_t kDiagMaxLineBytes = 1u << 20;  // a longer line is an error line
inline constexpr int kDiagMaxJsonDepth = 8;            // nesting; helper lines use 3
inline constexpr size_t kDiagMaxDevices = 64;          // device lines; GPUs in a gpus list
inline constexpr size_t kDiagMaxResults = 100000;      // result lines of all tests together
inline constexpr size_t kDiagMaxFailures = 16;         // memtest failures kept (errors counts all)
inline constexpr size_t kDiagMaxPatterns = 16;
inline constexpr size_t kDiagMaxNcclPoints = 64;
inline constexpr size_t kDiagMaxErrors = 1000;   // then one "N more helper errors not kept"
inline constexpr size_t kDiagMaxName = 256;      // bytes of a name, test, dtype (printable)
inline constexpr size_t kDiagMaxMessage = 1024;  // bytes of a message (printable)

// Adds what `out` says to *run: versions, devices, results, error lines.
// A line that is not a JSON object of a known type, or whose fields have the
// wrong types, becomes a DiagError ("helper line 7: ...", printable, one
// line) and is otherwise ignored; unknown fields are ignored (newer helpers
// may add some). Bus ids are normalized; a result naming a GPU that no
// device line announced is kept. run->last_started is the last "start" line
// not followed by its result. Returns whether a "done" line was read.
bool parse_helper_output(std::string_view out, DiagRun* run);

}  // namespace gd
