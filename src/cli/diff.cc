// gpudoctor diff: compare snapshots of nodes that should be identical and
// name the odd one out (src/fleet/diff.h, docs/diff.md).
#include "fleet/diff.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "checks/runner.h"
#include "cli/commands.h"
#include "config/config.h"
#include "fleet/report_input.h"
#include "snapshot/snapshot_json.h"
#include "util/read_file.h"

namespace gd {

void setup_diff(CLI::App* app, DiffArgs* args) {
  app->description(
      "Compare snapshots (`gpudoctor snapshot -o FILE`) of nodes that should be identical: "
      "driver, CUDA, GPU models and VBIOS, fabric manager, module parameters, environment, "
      "and each node's check verdict. Names what differs and which node is the odd one out. "
      "Exit 0 all identical, 1 drift found, 3 an unreadable snapshot, 64 usage.");
  app->add_option("snapshots", args->snapshots,
                  "Snapshot files, two or more; or reports (a node's /report.json, check --json), "
                  "whose verdicts, findings and GPU models are compared")
      ->option_text("SNAPSHOT...");
  app->add_flag("--json", args->json, "Print gpudoctor.diff/v1 JSON");
  app->add_flag("-v,--verbose", args->verbose, "Also list the fields every node agrees on");
  app->add_option("--config", args->config,
                  "Health thresholds for the checks run on each snapshot (docs/config.md); "
                  "default $GPUDOCTOR_CONFIG, else built-in")
      ->option_text("FILE");
}

namespace {

// A snapshot (second: false) or a report read back (second: true).
Result<std::pair<ReportInput, bool>> load_diff_input(const std::string& file) {
  auto text = read_file_capped(file, kSnapshotCapBytes);
  if (!text.ok()) return Error{"cannot read " + file + ": " + text.error()};
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("schema", nlohmann::json()) == kReportSchema) {
    auto r = report_input_from_json(j);
    if (!r.ok()) return Error{file + ": " + r.error()};
    return std::pair{std::move(*r), true};
  }
  // Not JSON: snapshot_from_string says so in the words snapshot_from_file uses.
  auto s = j.is_discarded() ? snapshot_from_string(*text) : snapshot_from_json(j);
  if (!s.ok()) return Error{file + ": " + s.error()};
  ReportInput in;
  in.snapshot = std::move(*s);
  return std::pair{std::move(in), false};
}

}  // namespace

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
  // Snapshots, or reports (/report.json, check --json): one kind or the
  // other, since a report carries none of the machine fields a snapshot
  // has and would differ from it in all of them.
  std::vector<ReportInput> inputs(args.snapshots.size());
  std::vector<const Report*> reports;
  for (size_t i = 0; i < args.snapshots.size(); ++i) {
    auto in = load_diff_input(args.snapshots[i]);
    if (!in.ok()) {
      print_error(in.error());
      return kExitInternal;
    }
    inputs[i] = std::move(in->first);
    reports.push_back(in->second ? &inputs[i].report : nullptr);
  }
  const size_t n_reports = static_cast<size_t>(
      std::count_if(reports.begin(), reports.end(), [](const Report* r) { return r != nullptr; }));
  if (n_reports != 0 && n_reports != reports.size()) {
    print_error("diff: compare snapshots with snapshots and reports with reports (" +
                std::to_string(n_reports) + " of " + std::to_string(reports.size()) +
                " files are reports, which carry no driver, module or VBIOS fields)");
    return kExitUsage;
  }
  std::vector<const Snapshot*> ptrs;
  for (const auto& in : inputs) ptrs.push_back(&in.snapshot);
  auto checks = select_checks({}, {});
  DiffResult d = diff_snapshots(ptrs, args.snapshots, *config, *checks, reports);
  std::string out = args.json ? render_diff_json(d) : render_diff_text(d, {args.verbose});
  std::fwrite(out.data(), 1, out.size(), stdout);
  return d.drift() ? 1 : 0;
}

}  // namespace gd
