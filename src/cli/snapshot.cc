// gpudoctor snapshot: record this machine as gpudoctor.snapshot/v1 JSON.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "cli/commands.h"
#include "snapshot/snapshot_json.h"

namespace gd {

void setup_snapshot(CLI::App* app, SnapshotArgs* args) {
  app->add_option("-o,--output", args->output, "Write to FILE instead of standard output")
      ->option_text("FILE");
  add_probe_options(app, &args->probe);
}

int run_snapshot(const SnapshotArgs& args) {
  ProbeOptions opt = args.probe;
  opt.self_exe = self_exe_path();
  std::string text = snapshot_to_string(collect_snapshot(opt));
  if (args.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  // Write beside the target and rename, so a reader never sees half a file.
  std::string tmp = args.output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) {
      print_error("cannot write " + tmp + ": " + std::strerror(errno));
      return kExitInternal;
    }
  }
  if (std::rename(tmp.c_str(), args.output.c_str()) != 0) {
    print_error("cannot write " + args.output + ": " + std::strerror(errno));
    std::remove(tmp.c_str());
    return kExitInternal;
  }
  return 0;
}

}  // namespace gd
