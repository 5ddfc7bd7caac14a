// gpudoctor explain [FILE|-]: read pasted error output, nvidia-smi output,
// dmesg lines or an env dump, and name the likely causes with the lines that
// support each, the fix, and what to run next when the text cannot decide.
#include "explain/explain.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/commands.h"
#include "report/render.h"
#include "util/ascii.h"
#include "util/read_file.h"
#include "util/result.h"
#include "util/text.h"

namespace gd {
namespace {

// Pasted text is small; a runaway pipe (`yes |`, /dev/zero) is refused at
// the cap while reading, not after (util/read_file.h).
Result<std::string> read_input(const std::string& path) {
  // On a terminal a silent wait reads as a hang: say what is expected.
  if (path == "-" && isatty(STDIN_FILENO)) {
    std::fprintf(stderr,
                 "gpudoctor explain: paste the error output or log, then press Ctrl-D on an "
                 "empty line (or give a file: gpudoctor explain FILE)\n");
  }
  auto r = path == "-" ? read_fd_capped(STDIN_FILENO, kExplainCapBytes)
                       : read_file_capped(path, kExplainCapBytes);
  if (r.ok()) return r;
  return Error{"cannot read " + (path == "-" ? std::string("stdin") : path) + ": " + r.error()};
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// "CUDA error (cuda), nvidia-smi (nvml), ..." for the header.
std::string sources_line(const Snapshot& s) {
  std::vector<std::string> seen, unseen;
  for (const auto& p : s.probes) {
    (p.status == ProbeStatus::kOk ? seen : unseen).push_back(p.name);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string out = join_skip_leading_empty(v, ", ");
    return out.empty() ? std::string("nothing") : out;
  };
  return fmt::format("Read from the text: {} · not in the text: {}", list(seen), list(unseen));
}

}  // namespace

void setup_explain(CLI::App* app, ExplainArgs* args) {
  app->add_option("input", args->input,
                  "File with the pasted error output, nvidia-smi output, dmesg lines or env "
                  "dump; - (the default) reads stdin")
      ->option_text("FILE|-");
  app->add_flag("--json", args->json, "Print the gpudoctor.report/v1 JSON report");
  app->add_flag("-v,--verbose", args->verbose, "Also list the checks that passed");
}

int run_explain(const ExplainArgs& args) {
  auto text = read_input(args.input);
  if (!text.ok()) {
    print_error(text.error());
    return kExitInternal;
  }
  if (blank(*text)) {
    print_error(
        "nothing to explain: the input is empty. Paste the error output (traceback, nvidia-smi, "
        "dmesg lines) into a file or pipe it: gpudoctor explain error.txt");
    return kExitUsage;
  }
  Snapshot snapshot = snapshot_from_text(*text);
  Report report = explain_snapshot(snapshot, Config{});
  // Something was read when at least one source was observed.
  bool understood = snapshot.unobserved.size() < snapshot.probes.size();
  // Nothing read is no health either: the verdict is unknown, not ok.
  if (!understood) report.undecided = true;
  if (args.json) {
    std::string out = render_json(report);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    // The machine line of `check` describes a probed machine; the text
    // only shows part of one, so the header says what was read instead.
    Report shown = report;
    shown.snapshot = nullptr;
    std::string out =
        "explain · " + sources_line(snapshot) + "\n" + render_text(shown, {args.verbose});
    if (!understood) {
      out +=
          "\nNothing in the text is an error gpudoctor knows. Paste the whole error output "
          "(traceback, nvidia-smi, dmesg), or run `gpudoctor check` on that machine.\n";
    }
    out = escape_controls(out);  // the pasted lines are quoted as evidence
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (!understood || report.undecided) return kExitInternal;
  return exit_code_for(report.verdict);
}

}  // namespace gd
