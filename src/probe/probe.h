// Probes: the only code that touches the machine. Each reads one source and
// records what it saw and how the reading went (a ProbeRecord); a probe
// failure is data in the snapshot, never an abort.
#pragma once

#include <string>
#include <vector>

#include "probe/context_policy.h"
#include "snapshot/snapshot.h"
#include "util/result.h"

namespace gd {

struct ProbeOptions {
  std::string root = "/";  // every file read goes through this root
  std::string nvml_lib = "libnvidia-ml.so.1";
  std::string cuda_lib = "libcuda.so.1";
  std::string cudart_lib;  // "" = search the usual places for libcudart.so*
  double deadline_s = 10;  // for the NVML and CUDA children together
  std::string self_exe;    // the gpudoctor binary, re-executed as probe child
  bool hardware = true;    // false: skip NVML and CUDA (tests of file probes)
  // false: NVML alone. topo predicts CUDA's order from NVML and runs CUDA only
  // to verify it (probe_cuda_order), so a hung cuInit cannot hold it.
  bool cuda = true;
};

// Runs every probe and returns the snapshot. Never fails: each probe's
// outcome is in snapshot.probes.
Snapshot collect_snapshot(const ProbeOptions& opt);
// collect_snapshot in a child process (`gpudoctor snapshot`, opt.self_exe)
// with environment `env`: for the exporter, which probes once a minute and
// should not keep the probes' code and buffers resident in between
// (bench/serve_scrape.txt). Never fails: when the child fails, the snapshot
// holds one failed "snapshot" probe record saying why, and nothing observed.
// Options without a command-line form (hardware or cuda off: tests) probe in
// this process.
Snapshot collect_snapshot_in_child(const ProbeOptions& opt, const std::vector<std::string>& env);
// The snapshot in `from` when given (--from FILE), else this machine probed
// with `probe`. Error: the file could not be read or is no snapshot.
Result<Snapshot> load_or_probe(const std::string& from, const ProbeOptions& probe);

// File probes (src/probe/<name>.cc). Each fills its part of the snapshot and
// returns how it went; collect_snapshot() times them.
ProbeRecord probe_env(const ProbeOptions& opt, Snapshot* s);
ProbeRecord probe_limits(const ProbeOptions& opt, Snapshot* s);
ProbeRecord probe_driver(const ProbeOptions& opt, Snapshot* s);  // version, params, modules
ProbeRecord probe_pci(const ProbeOptions& opt, Snapshot* s);     // sysfs_pci
ProbeRecord probe_devnodes(const ProbeOptions& opt, Snapshot* s);
ProbeRecord probe_container(const ProbeOptions& opt, Snapshot* s);
ProbeRecord probe_services(const ProbeOptions& opt, Snapshot* s);  // + s->processes
ProbeRecord probe_fabric(const ProbeOptions& opt, Snapshot* s);    // after services
// s->kernel_log: every event of the current boot (no age filter; checks
// apply their window), from /dev/kmsg, the journal or kern.log (kernel_log.cc).
ProbeRecord probe_kernel_log(const ProbeOptions& opt, Snapshot* s);
// s->workload: the processes s->nvml lists on its GPUs, read in /proc (owner,
// cgroup, age, the Slurm job, pod or container they belong to and whether
// that still runs), so it runs after NVML (workload.cc).
ProbeRecord probe_workload(const ProbeOptions& opt, Snapshot* s);

// Hardware probes: run NVML and CUDA in child processes (src/probe/nvml.cc,
// cuda.cc, child.cc) concurrently under one deadline; fill s->nvml, s->cuda
// and s->workload (probe_workload, once NVML answered) and append the
// records of all three. CUDA opens a context only on the GPUs NVML shows
// idle (context_policy.h); NVML gets at most kNvmlShareOfDeadline of the
// deadline to say which, then every GPU is left alone.
// With opt.cuda false: NVML alone (no workload).
void probe_hardware(const ProbeOptions& opt, Snapshot* s);
// One CUDA run in the user's environment, under opt.deadline_s: enough to
// observe CUDA's device order. Appends to s->cuda.runs and a "cuda" record.
// No context anywhere (ctx_skipped kNoContextAsked).
void probe_cuda_order(const ProbeOptions& opt, Snapshot* s);
// The two above with `env` as the children's whole environment instead of
// this process's (the re-probe of one GPU, diag/reprobe.h); `gate` (null:
// none at all) names the GPUs the run may open a context on.
void probe_hardware(const ProbeOptions& opt, const std::vector<std::string>& env, Snapshot* s);
void probe_cuda_order(const ProbeOptions& opt, const std::vector<std::string>& env,
                      const ContextGate* gate, Snapshot* s);

// The share of the deadline probe_hardware waits for NVML before it tells
// CUDA to open no context at all: a hung NVML must not starve CUDA.
inline constexpr double kNvmlShareOfDeadline = 0.6;

// Whether the CUDA probe child opens contexts: kNone, none (the device
// order is all it is for); kGate, on the GPUs its parent names on stdin
// (a ContextGate line) after the context-free reads.
enum class CudaContexts { kNone, kGate };

// Entry points of the hidden probe-child mode (`gpudoctor __probe-nvml ...`,
// `gpudoctor __probe-cuda ...`): they load the library, call it, and print
// one JSON object (NvmlInfo / CudaRun) on stdout. Return the exit code.
int nvml_child_main(const std::string& lib);
int cuda_child_main(const std::string& cuda_lib, const std::string& cudart_lib,
                    const std::string& label, CudaContexts contexts);

}  // namespace gd
