// gpudoctor diff: compare snapshots of nodes that should be identical and
// name the odd one out (src/fleet/diff.h, docs/diff.md).
#include "fleet/diff.h"

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "config/config.h"
#include "report/report.h"
#include "snapshot/snapshot_json.h"

namespace gd {

void setup_diff(CLI::App* app, DiffArgs* args) {
  app->description(
      "Compare snapshots (`gpudoctor snapshot -o FILE`) of nodes that should be identical: "
      "driver, CUDA, GPU models and VBIOS, fabric manager, module parameters, environment, "
      "and each node's check verdict. Names what differs and which node is the odd one out. "
      "Exit 0 all identical, 1 drift found, 3 an unreadable snapshot, 64 usage.");
  app->add_option("snapshots", args->snapshots, "Snapshot files, two or more")
      ->option_text("SNAPSHOT...");
  app->add_flag("--json", args->json, "Print gpudoctor.diff/v1 JSON");
  app->add_flag("-v,--verbose", args->verbose, "Also list the fields every node agrees on");
  app->add_option("--config", args->config,
                  "Health thresholds for the checks run on each snapshot (docs/config.md); "
                  "default $GPUDOCTOR_CONFIG, else built-in")
      ->option_text("FILE");
}

int run_diff(const DiffArgs& args) {
  if (args.snapshots.size() < 2) {
    print_error("diff needs at least two snapshots (gpudoctor diff A.json B.json ...)");
    return kExitUsage;
  }
  auto config = load_config(config_path(args.config, std::getenv("GPUDOCTOR_CONFIG")));
  if (!config.ok()) {
    print_error(config.error());
    return kExitUsage;
  }
  std::vector<Snapshot> snapshots;
  snapshots.reserve(args.snapshots.size());
  for (const auto& file : args.snapshots) {
    auto s = snapshot_from_file(file);
    if (!s.ok()) {
      print_error(s.error());
      return kExitInternal;
    }
    snapshots.push_back(std::move(*s));
  }
  std::vector<const Snapshot*> ptrs;
  for (const auto& s : snapshots) ptrs.push_back(&s);
  auto checks = select_checks({}, {});
  DiffResult d = diff_snapshots(ptrs, args.snapshots, *config, *checks);
  std::string out = args.json ? render_diff_json(d) : render_diff_text(d, {args.verbose});
  std::fwrite(out.data(), 1, out.size(), stdout);
  return d.drift() ? 1 : 0;
}

}  // namespace gd
