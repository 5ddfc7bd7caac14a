// Shared by the NVML and CUDA probes (nvml.cc, cuda.cc, hardware.cc): the
// probe child's output protocol, library loading, identifier formatting.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "probe/child.h"
#include "probe/probe.h"

namespace gd {

// --- child side ------------------------------------------------------------

// The probe child's stdout, one item per line, written unbuffered so that a
// crash or a kill loses nothing already said:
//   @cuDevicePrimaryCtxRetain (device 2)   the call about to be made
//   #{"init_rc":0,...}                      the result so far (a checkpoint)
//   {"init_rc":0,...}                       the final result
// The last "@" line of a child that hung or crashed names the culprit call.
class ChildOutput {
 public:
  void call(const std::string& what);
  void checkpoint(const nlohmann::json& partial);
  void result(const nlohmann::json& final_result);
};

// A resolved library function and the name it was found under.
template <class F>
struct Sym {
  F* fn = nullptr;
  const char* name = "";
};

// The first of `names` the library exports (versioned names newest first);
// fn stays null if none.
template <class F>
Sym<F> resolve(void* lib, std::initializer_list<const char*> names);

// Announces the call on `out` (so a hang or crash is pinned on it), then
// makes it: call(s.fn). -1 when the library lacks the symbol.
template <class F, class Call>
int ask(ChildOutput& out, const Sym<F>& s, const std::string& where, Call call) {
  if (s.fn == nullptr) return -1;
  out.call(std::string(s.name) + where);
  return call(s.fn);
}

// A C string from a fixed buffer that may lack its NUL.
std::string buffer_string(const char* buf, size_t size);

// Core files of a crashing driver are no use to anyone and fill the disk.
void disable_core_dumps();

struct LoadedLibrary {
  void* handle = nullptr;
  std::string path;   // the file actually loaded, symlinks resolved
  std::string error;  // dlerror() when handle is null
};
// dlopen(RTLD_NOW | RTLD_LOCAL) by soname (so LD_LIBRARY_PATH and the
// linker cache act as for the user's program) or by path.
LoadedLibrary load_library(const std::string& name);

// The first of `names` the library exports (versioned names newest first);
// nullptr if none. `*used` gets the name found.
void* find_symbol(void* handle, std::initializer_list<const char*> names,
                  const char** used = nullptr);

template <class F>
Sym<F> resolve(void* lib, std::initializer_list<const char*> names) {
  Sym<F> s;
  s.fn = reinterpret_cast<F*>(find_symbol(lib, names, &s.name));
  return s;
}

// NVML "00000000:17:00.0" and CUDA "0000:17:00.0" / "0000:3B:00.0" both
// become the sysfs form "0000:17:00.0". Unparseable input comes back
// lower-cased as is.
std::string normalize_bus_id(const std::string& id);

// 16 raw UUID bytes as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string format_uuid(const unsigned char bytes[16]);

// --- parent side -------------------------------------------------------------

// nlohmann::json's move may throw only on allocation failure, which ends the
// process anyway.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ParsedChildOutput {
  bool has_result = false;
  nlohmann::json result;
  bool has_checkpoint = false;
  nlohmann::json checkpoint;  // the last one
  std::string last_call;      // after the final "@"
  std::string error;          // why a final line did not parse
};
ParsedChildOutput parse_child_output(const std::string& out);

// "" when the child answered; else one line for child_error:
// "timeout after 10.0 s in cuInit", "crashed: SIGSEGV in cuInit",
// "exited with code 3: <last stderr line>", "bad output: ...",
// "could not start: ...".
std::string child_failure(const ChildResult& r, const ParsedChildOutput& p);

// The CUDA probe child (`gpudoctor __probe-cuda`) as hardware.cc runs it,
// for the library's CUDA-only answer (src/lib/cuda_only.cc): the spec to
// start it with, and its result read back (the last checkpoint of a child
// that hung or crashed, with the outcome in child_error). A kGate child has
// a stdin stream and waits for its gate line (ChildRunner::send).
ChildSpec cuda_spec(const std::string& exe, const ProbeOptions& opt,
                    const std::vector<std::string>& env, const std::string& label,
                    CudaContexts contexts);
CudaRun cuda_from_child(const ChildResult& r, const ProbeOptions& opt, const std::string& label);

}  // namespace gd
