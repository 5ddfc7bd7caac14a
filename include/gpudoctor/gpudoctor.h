/*
 * libgpudoctor: gpudoctor's checks for programs that would rather ask than
 * shell out (training scripts, launchers, schedulers). A plain C ABI: no C++
 * types, no structs, no callbacks. Options go in and results come out as
 * JSON text, so the ABI stays the same while the report grows.
 *
 * NVML and CUDA are never loaded into the calling process. The library
 * re-executes the installed `gpudoctor` binary as a short-lived probe child
 * (as `gpudoctor check` does) and kills it at the deadline, so a hanging
 * driver cannot hang the caller and the caller's CUDA state stays untouched:
 * it is safe to call before fork(). The binary is found by
 * $GPUDOCTOR_EXE, else next to the library (<libdir>/../bin/gpudoctor as
 * installed, or the build tree), else the install prefix compiled in,
 * else $PATH. See docs/library.md.
 *
 * Thread safety: every function may be called from any thread, concurrently;
 * the library keeps no mutable global state. It reads the process
 * environment (the probe child inherits it), so do not setenv() in another
 * thread during a call.
 *
 * Memory: strings returned through an out parameter are allocated by the
 * library and released with gpudoctor_free().
 */
#ifndef GPUDOCTOR_GPUDOCTOR_H_
#define GPUDOCTOR_GPUDOCTOR_H_

/* Bumped on any incompatible change of the functions below; equal to the
 * shared library's SOVERSION (libgpudoctor.so.<ABI>). Compare it with
 * gpudoctor_abi_version() to detect a header/library mismatch. */
#define GPUDOCTOR_ABI_VERSION 0

#if defined(__GNUC__)
#define GPUDOCTOR_API __attribute__((visibility("default")))
#else
#define GPUDOCTOR_API
#endif

/* Return codes. 0..3 are `gpudoctor check`'s exit codes (monitoring-plugin
 * convention); 64 is its usage error. */
#define GPUDOCTOR_OK 0       /* all checks ok (or info) / CUDA available */
#define GPUDOCTOR_WARN 1     /* the worst finding is a warning */
#define GPUDOCTOR_FAIL 2     /* the worst finding is a failure / CUDA not available */
#define GPUDOCTOR_INTERNAL 3 /* could not decide (no gpudoctor binary, ...) */
#define GPUDOCTOR_USAGE 64   /* bad options: unknown key, wrong type, bad value */

#ifdef __cplusplus
extern "C" {
#endif

/* GPUDOCTOR_ABI_VERSION of the library actually loaded. */
GPUDOCTOR_API int gpudoctor_abi_version(void);

/* The library's version, "0.1.0". Static storage: do not free. */
GPUDOCTOR_API const char* gpudoctor_version(void);

/* Runs every probe and every check, as `gpudoctor check --json` does.
 *
 * options_json: NULL, "" or a JSON object with any of
 *   "root"        string  read /proc, /sys, /dev, /run under this directory ("/")
 *   "nvml_lib"    string  NVML library to load ("libnvidia-ml.so.1")
 *   "cuda_lib"    string  CUDA driver library to load ("libcuda.so.1")
 *   "cudart_lib"  string  CUDA runtime for cudaGetDeviceCount ("": search)
 *   "deadline_s"  number  seconds NVML and CUDA may take, 0.1..600 (10)
 *   "config"      string  health-threshold config file (docs/config.md)
 *   "only"        array of strings, or one comma-separated string: checks,
 *   "skip"                finding ids or areas to run / to leave out
 *   "log_window"  string or number: kernel-log events older than this
 *                         ("2h", "30m", seconds) no longer fail the node ("2h")
 * Any other key is an error.
 *
 * Returns GPUDOCTOR_OK, _WARN or _FAIL with the gpudoctor.report/v1 JSON in
 * *report_json_out (findings in rank order: most likely root cause first);
 * GPUDOCTOR_USAGE or GPUDOCTOR_INTERNAL with {"error": "<one line>"}.
 * report_json_out may be NULL when only the code matters. */
GPUDOCTOR_API int gpudoctor_preflight(const char* options_json, char** report_json_out);

/* Whether CUDA would start in a process with this environment: cuInit,
 * cuDeviceGetCount and, where a libcudart is found, cudaGetDeviceCount (what
 * torch.cuda.is_available() asks) run in a probe child, never here.
 *
 * options_json: NULL, "" or a JSON object with any of "cuda_lib",
 * "cudart_lib", "deadline_s" (as above); any other key is an error.
 *
 * Returns GPUDOCTOR_OK (available: at least one device, no error) or
 * GPUDOCTOR_FAIL (not available), with in *result_json_out
 *   {"available": true, "device_count": 4, "init_rc": 0, "init_error": "",
 *    "device_count_rc": 0, "driver_version": 12040, "library": "/usr/lib/...",
 *    "cudart": "/usr/lib/...", "cudart_rc": 0, "cudart_error": "",
 *    "cudart_device_count": 4, "error": "", "duration_ms": 41.2}
 * ("error": why it is not available, one line: a hang, a crash, a library
 * that did not load, the failing call and its error name); or
 * GPUDOCTOR_USAGE / GPUDOCTOR_INTERNAL with {"error": "<one line>"}. */
GPUDOCTOR_API int gpudoctor_cuda_available(const char* options_json, char** result_json_out);

/* Releases a string the library returned. NULL is fine. */
GPUDOCTOR_API void gpudoctor_free(char* p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUDOCTOR_GPUDOCTOR_H_ */
