// The C ABI of libgpudoctor (include/gpudoctor/gpudoctor.h). This file is
// the boundary: every function catches everything, so no C++ exception
// (std::bad_alloc, a JSON error) ever unwinds into a C or Python caller, and
// every failure becomes a return code plus {"error": "..."}.
//
// Only the functions declared with GPUDOCTOR_API are exported: the library
// is built with -fvisibility=hidden, links the core with
// --exclude-libs,ALL and a version script (cmake/libgpudoctor.cmake).
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "checks/runner.h"
#include "config/config.h"
#include "gpudoctor/gpudoctor.h"
#include "lib/lib_internal.h"
#include "report/render.h"

namespace {

// Hands `text` to the caller as a malloc'd C string (gpudoctor_free
// releases it). Out of memory: the caller gets NULL and still the code.
void give(char** out, const std::string& text) noexcept {
  if (out == nullptr) return;
  *out = static_cast<char*>(std::malloc(text.size() + 1));
  if (*out != nullptr) std::memcpy(*out, text.c_str(), text.size() + 1);
}

// {"error": "<prefix><message>"}; never throws, so the catch handlers of
// guarded() may call it.
int fail(char** out, int code, const char* prefix, const char* message) noexcept {
  try {
    nlohmann::ordered_json j;
    j["error"] = std::string(prefix) + message;
    // "replace": a message quoting the caller's bytes may not be UTF-8.
    give(out, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } catch (...) {
    static const char kFallback[] = "{\"error\": \"out of memory\"}\n";
    if (out != nullptr && (*out = static_cast<char*>(std::malloc(sizeof kFallback))) != nullptr) {
      std::memcpy(*out, kFallback, sizeof kFallback);
    }
  }
  return code;
}

int fail(char** out, int code, const std::string& message) noexcept {
  return fail(out, code, "", message.c_str());
}

int preflight(const char* options_json, char** out) {
  auto opt = gd::lib::parse_preflight_options(options_json);
  if (!opt.ok()) return fail(out, GPUDOCTOR_USAGE, opt.error());
  auto checks = gd::select_checks(opt->only, opt->skip);
  if (!checks.ok()) return fail(out, GPUDOCTOR_USAGE, "options: " + checks.error());
  // config=, else $GPUDOCTOR_CONFIG, as for `gpudoctor check` (docs/config.md).
  auto config = gd::load_config(gd::config_path(opt->config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!config.ok()) return fail(out, GPUDOCTOR_USAGE, config.error());
  if (opt->log_window_s) config->kernel_log_window_s = *opt->log_window_s;
  auto exe = gd::lib::find_gpudoctor_exe();
  if (!exe.ok()) return fail(out, GPUDOCTOR_INTERNAL, exe.error());

  gd::ProbeOptions probe = opt->probe;
  probe.self_exe = *exe;
  gd::Snapshot snapshot = gd::collect_snapshot(probe);
  gd::Report report = gd::run_checks(snapshot, *config, *checks, opt->only, opt->skip);
  give(out, gd::render_json(report));  // while `snapshot` lives: the report points into it
  return gd::exit_code_for(report.verdict);
}

int cuda_available(const char* options_json, char** out) {
  auto opt = gd::lib::parse_cuda_options(options_json);
  if (!opt.ok()) return fail(out, GPUDOCTOR_USAGE, opt.error());
  auto exe = gd::lib::find_gpudoctor_exe();
  if (!exe.ok()) return fail(out, GPUDOCTOR_INTERNAL, exe.error());
  gd::CudaRun run = gd::lib::probe_cuda_only(*opt, *exe);
  nlohmann::ordered_json j = gd::lib::cuda_status_json(run);
  give(out, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return j["available"].get<bool>() ? GPUDOCTOR_OK : GPUDOCTOR_FAIL;
}

// The boundary: an exception is the library's own failure, code 3.
template <class F>
int guarded(char** out, F f) {
  if (out != nullptr) *out = nullptr;
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(out, GPUDOCTOR_INTERNAL, "", "out of memory");
  } catch (const std::exception& e) {
    return fail(out, GPUDOCTOR_INTERNAL, "internal error: ", e.what());
  } catch (...) {
    return fail(out, GPUDOCTOR_INTERNAL, "", "internal error");
  }
}

}  // namespace

extern "C" {

GPUDOCTOR_API int gpudoctor_abi_version(void) { return GPUDOCTOR_ABI_VERSION; }

GPUDOCTOR_API const char* gpudoctor_version(void) { return GD_VERSION; }

GPUDOCTOR_API int gpudoctor_preflight(const char* options_json, char** report_json_out) {
  return guarded(report_json_out, [&] { return preflight(options_json, report_json_out); });
}

GPUDOCTOR_API int gpudoctor_cuda_available(const char* options_json, char** result_json_out) {
  return guarded(result_json_out, [&] { return cuda_available(options_json, result_json_out); });
}

GPUDOCTOR_API void gpudoctor_free(char* p) { std::free(p); }

}  // extern "C"
