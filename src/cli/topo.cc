// gpudoctor topo: which GPU is which (CUDA's two orders, nvidia-smi, bus id),
// where it sits (NUMA node, CPUs, link) and the GPU-to-GPU paths in
// nvidia-smi topo -m's terms. Exit 0 whenever it could print a map, also
// "no NVIDIA GPU found"; 3 when a --from snapshot cannot be read.
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "facts/cuda_visible.h"
#include "probe/probe.h"
#include "snapshot/snapshot_json.h"
#include "topo/render.h"
#include "topo/topology.h"
#include "util/exe.h"

namespace gd {

void setup_topo(CLI::App* app, TopoArgs* args) {
  add_from_option(app, &args->from, "Map");
  app->add_flag("--json", args->json, "Print gpudoctor.topo/v2 JSON (docs/topo.md)");
  app->add_flag("--verify", args->verify,
                "Observe CUDA's default order in a CUDA run (cuInit) instead of predicting it");
  add_probe_options(app, &args->probe);
  app->footer(
      "One row per GPU: CUDA's index in its default order (FASTEST_FIRST) and with\n"
      "CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi's index, bus id, UUID, model, NUMA node,\n"
      "local CPUs and PCIe link; then the GPU-to-GPU matrix as nvidia-smi topo -m prints it\n"
      "(X, NV#, PIX, PXB, PHB, NODE, SYS), from sysfs and NVML.\n\n"
      "CUDA's default order is predicted from NVML (compute capability, clocks, bus id)\n"
      "without starting CUDA, so a hung driver cannot hold topo. Where GPUs differ and\n"
      "the prediction could be wrong, one CUDA run verifies it within 1 s; --verify\n"
      "always runs CUDA, under --deadline.\n\n"
      "Examples:\n"
      "  gpudoctor topo\n"
      "  gpudoctor topo --json | jq '.gpus[] | {bus_id, cuda_index, numa_node}'\n"
      "  gpudoctor snapshot -o node.json && gpudoctor topo --from node.json");
}

namespace {

// How long topo lets CUDA verify an ambiguous prediction unasked: its answer
// stays under 2 s when cuInit hangs (issue 18), and the CUDA probe took 328 ms
// on the H200 (tests/device/recorded/h200-vm-580.159.04/device-check/check.json).
constexpr double kAutoVerifyDeadlineS = 1.0;

}  // namespace

int run_topo(const TopoArgs& args) {
  ProbeOptions probe = args.probe;
  probe.cuda = false;
  auto loaded = load_or_probe(args.from, probe);
  if (!loaded.ok()) {
    print_error(loaded.error());
    return kExitInternal;
  }
  Snapshot& snapshot = *loaded;
  // Unasked, CUDA runs only where its run can show the default order.
  if (args.from.empty() && probe.hardware &&
      (args.verify || (environment_shows_default_order(snapshot) &&
                       fastest_first_ambiguous(gpu_inventory(snapshot).gpus)))) {
    probe.cuda = true;
    probe.self_exe = self_exe_path();
    if (!args.verify) probe.deadline_s = std::min(probe.deadline_s, kAutoVerifyDeadlineS);
    probe_cuda_order(probe, &snapshot);
  }
  Topology t = build_topology(snapshot);
  std::string out = args.json ? render_topology_json(t) : render_topology_text(t);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gd
