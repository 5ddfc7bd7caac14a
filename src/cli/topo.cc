// gpudoctor topo: which GPU is which (CUDA's two orders, nvidia-smi, bus id),
// where it sits (NUMA node, CPUs, link) and the GPU-to-GPU paths in
// nvidia-smi topo -m's terms. Exit 0 whenever it could print a map, also
// "no NVIDIA GPU found"; 3 when a --from snapshot cannot be read.
#include <cstdio>

#include "cli/commands.h"
#include "snapshot/snapshot_json.h"
#include "topo/render.h"
#include "topo/topology.h"

namespace gd {

void setup_topo(CLI::App* app, TopoArgs* args) {
  add_from_option(app, &args->from, "Map");
  app->add_flag("--json", args->json, "Print gpudoctor.topo/v2 JSON (docs/topo.md)");
  add_probe_options(app, &args->probe);
  app->footer(
      "One row per GPU: CUDA's index in its default order (FASTEST_FIRST) and with\n"
      "CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi's index, bus id, UUID, model, NUMA node,\n"
      "local CPUs and PCIe link; then the GPU-to-GPU matrix as nvidia-smi topo -m prints it\n"
      "(X, NV#, PIX, PXB, PHB, NODE, SYS), from sysfs and NVML.\n\n"
      "Examples:\n"
      "  gpudoctor topo\n"
      "  gpudoctor topo --json | jq '.gpus[] | {bus_id, cuda_index, numa_node}'\n"
      "  gpudoctor snapshot -o node.json && gpudoctor topo --from node.json");
}

int run_topo(const TopoArgs& args) {
  auto loaded = load_or_probe(args.from, args.probe);
  if (!loaded.ok()) {
    print_error(loaded.error());
    return kExitInternal;
  }
  const Snapshot& snapshot = *loaded;
  Topology t = build_topology(snapshot);
  std::string out = args.json ? render_topology_json(t) : render_topology_text(t);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gd
