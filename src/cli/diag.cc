// gpudoctor diag: the active tests (docs/diag.md). Probe (or load a
// snapshot), pick the GPUs, run the CUDA helper gpudoctor-diag as a child
// with a deadline while NVML is sampled, judge its answer, print the report,
// keep the run in the history, exit with the verdict's code.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "checks/runner.h"
#include "cli/commands.h"
#include "diag/evaluate.h"
#include "diag/json.h"
#include "diag/progress.h"
#include "diag/run_helper.h"
#include "diag/tests.h"
#include "diag/text.h"
#include "history/store.h"
#include "probe/child.h"
#include "probe/rootfs.h"
#include "probe/sampler.h"
#include "report/render.h"
#include "util/time.h"

namespace gd {
namespace {

constexpr const char* kLevels =
    "Levels:\n"
    "  1  seconds: a context on every GPU, a small kernel, host<->device copies, verified\n"
    "  2  about 3 x --duration a GPU (1 min at the default 20 s): level 1, a memory test over "
    "most\n"
    "     of the free memory, a sustained GEMM per data type checked against a reference\n"
    "     (TFLOP/s), device and PCIe bandwidth; temperature, power, clocks sampled\n"
    "  3  level 2, then peer-to-peer bandwidth and latency of every pair, NCCL all-reduce\n"
    "     bus bandwidth and the scaling of all GPUs against one\n"
    "--duration is the length of each sustained test (levels 2, 3): the memory test, the\n"
    "three copies together, the GEMMs of all data types together. Results\n"
    "are compared with the GPU model's datasheet figure and with the node's other GPUs.\n"
    "Exit 0 ok, 1 warn, 2 fail, 3 the helper could not run, 64 usage (docs/diag.md).";

// About how long the tests take, seconds: the helper runs the GPUs one
// after the other; at level 2 each spends duration_s on the memory test,
// on the three copies together and on the GEMMs of all dtypes together
// (gpu/README.md).
double estimate_s(const DiagArgs& args, const std::vector<std::string>& gpus) {
  double total = 2;  // the helper's start: driver, cuBLAS
  for (size_t i = 0; i < gpus.size(); ++i) {
    total += 1;  // context, kernel, level-1 copies
    if (args.level >= 2) total += 3 * args.duration_s;
  }
  if (args.level >= 3 && gpus.size() > 1) {
    double pairs = static_cast<double>(gpus.size() * (gpus.size() - 1));
    total += pairs * 0.5 + 2 * args.duration_s;  // p2p pairs; NCCL sizes and scaling
  }
  return total;
}

std::string about(double s) {
  if (s < 90) return fmt::format("{:.0f} s", std::max(1.0, std::round(s)));
  return fmt::format("{:.0f} min", std::round(s / 60));
}

// The helper said nothing a report can stand on: it did not start, or ended
// before its hello line with no result or error line.
bool no_answer(const DiagRun& run) {
  bool said_something = run.cuda_runtime_version != 0 || !run.devices.empty() ||
                        !run.tests.empty() || !run.copies.empty() || !run.memtests.empty() ||
                        !run.gemms.empty() || !run.p2p.empty() || run.nccl || run.scaling ||
                        !run.errors.empty();
  return !run.incomplete.empty() && !said_something;
}

// The history keeps the run apart from check reports; a history that cannot
// be written is a note, never the run's failure.
void record_history(const DiagArgs& args, const Report& report, const std::string& diag_json) {
  std::string path = args.history.empty() ? default_history_path() : args.history;
  auto store = open_history(path, true, boot_id_or_btime(RootFs(args.probe.root)));
  if (!store.ok()) {
    print_error("diag: not kept in the history " + path + ": " + store.error());
    return;
  }
  auto added = (*store)->add_diag(now_unix_ms(), report, diag_json);
  if (!added.ok()) print_error("diag: not kept in the history " + path + ": " + added.error());
}

}  // namespace

void setup_diag(CLI::App* app, DiagArgs* args) {
  app->description(
      "Test the GPUs under load with the CUDA helper gpudoctor-diag: compute (GEMM, "
      "verified), memory (a pattern test, bandwidth), PCIe, peer-to-peer and NCCL. Each "
      "figure is compared with what the GPU model reaches and with the node's other GPUs.");
  app->footer(kLevels);
  app->add_option("--level", args->level,
                  "1 (seconds), 2 (minutes a GPU) or 3 (level 2, then across GPUs)")
      ->option_text("1|2|3")
      ->check(CLI::Range(1, 3));
  app->add_option("--gpus", args->gpus,
                  "The GPUs to test: nvidia-smi indices, PCI bus ids or UUIDs, comma-separated "
                  "(default: all)")
      ->option_text("LIST");
  app->add_option("--duration", args->duration_s,
                  "Seconds each sustained test runs, levels 2 and 3 (default 20, 1 to 3600)")
      ->option_text("S")
      ->check(finite_range(1.0, 3600.0));
  app->add_option("--seed", args->seed, "Seed of the random memory pattern and GEMM inputs")
      ->option_text("N")
      ->check(unsigned_64());
  app->add_flag("--json", args->json,
                "Print the gpudoctor.report/v1 JSON report with a \"diag\" object (run, figures)");
  app->add_flag("-v,--verbose", args->verbose,
                "Also list the findings that are ok or not applicable, and each floor's basis");
  app->add_option(
         "--history", args->history,
         "Keep the run in this history database (SQLite; default " + default_history_path() + ")")
      ->option_text("FILE");
  app->add_flag("--no-history", args->no_history, "Do not keep the run in the history");
  app->add_flag(
      "--list-tests", args->list_tests,
      "List the tests of each level and the finding ids they give (with --json: as JSON)");
  add_probe_options(app, &args->probe);
  // Hidden (empty group): tests and bench/diag_gpu.sh.
  app->add_option("--helper", args->helper, "The gpudoctor-diag to run")->group("");
  app->add_option("--plant-fault", args->plant_fault, "Plant a fault the run must catch")
      ->check(CLI::IsMember({"gemm", "memory"}))
      ->group("");
  app->add_option("--from", args->from, "Take the machine from a recorded snapshot")->group("");
  app->add_option("--helper-deadline", args->helper_deadline_s,
                  "Seconds before the helper counts as hung (default: from level, duration, GPUs)")
      ->check(finite_range(0.1, 86400.0))
      ->group("");
}

int run_diag(const DiagArgs& args) {
  if (args.list_tests) {
    std::vector<ListedTest> rows;
    for (const auto& t : diag_tests()) rows.push_back({t.name, t.description, t.ids, t.level});
    return print_listing(rows, args.json, "tests");
  }
  if (args.no_history && !args.history.empty()) {
    print_error("diag: --history and --no-history exclude each other");
    return kExitUsage;
  }
  std::string helper = args.helper;
#ifndef GD_WITH_CUDA
  if (helper.empty()) {
    print_error(
        "diag: this gpudoctor was built without CUDA; rebuild it on a machine where nvcc, cuBLAS "
        "and NCCL are installed (cmake finds /usr/local/cuda) to get its helper gpudoctor-diag");
    return kExitInternal;
  }
#endif
  if (helper.empty()) helper = find_diag_helper();
  if (helper.empty()) {
    print_error("diag: its helper gpudoctor-diag is not beside " + self_exe_path() +
                "; install gpudoctor-diag with gpudoctor (cmake --install)");
    return kExitInternal;
  }
  auto loaded = load_or_probe(args.from, args.probe);
  if (!loaded.ok()) {
    print_error(loaded.error());
    return kExitInternal;
  }
  const Snapshot& snapshot = *loaded;
  // No GPU at all: nothing could be tested, which is no usage error (exit 3).
  if (auto any = resolve_diag_gpus(snapshot, ""); !any.ok()) {
    print_error("diag: " + any.error());
    return kExitInternal;
  }
  auto gpus = resolve_diag_gpus(snapshot, args.gpus);
  if (!gpus.ok()) {
    print_error("diag: " + gpus.error());
    return kExitUsage;
  }

  DiagOptions opt;
  opt.level = args.level;
  opt.bus_ids = *gpus;
  opt.gpu_cpus = diag_gpu_cpus(snapshot, opt.bus_ids);
  opt.duration_s = args.duration_s;
  opt.seed = args.seed;
  opt.plant_fault = args.plant_fault;
  opt.helper = helper;
  opt.env = diag_environment(current_environment());
  opt.deadline_s = args.helper_deadline_s;
  // NVML is sampled during the load only on the machine itself, and only
  // where the probe found it working.
  if (args.from.empty() && nvml_sample_problem(snapshot.nvml).empty()) {
    opt.sampler_exe = self_exe_path();
    opt.nvml_lib = args.probe.nvml_lib;
  }
  if (!args.json) {
    const double deadline = diag_deadline_s(opt);
    const double estimate = std::min(estimate_s(args, opt.bus_ids), deadline);
    std::fprintf(stderr, "%s\n",
                 fmt::format("gpudoctor diag: level {} on {} GPU{}, about {} (deadline {})",
                             opt.level, opt.bus_ids.size(), opt.bus_ids.size() == 1 ? "" : "s",
                             about(estimate), about(deadline))
                     .c_str());
  }

  // Progress on stderr: a line per finished test; on a terminal also the
  // test now running, on a line that the next one overwrites.
  const bool tty = isatty(STDERR_FILENO) == 1;
  bool transient = false;
  if (!args.json) {
    opt.on_helper_line = [&](std::string_view line) {
      std::string done = diag_progress_line(line);
      std::string running = tty ? diag_started_test(line) : "";
      if (done.empty() && running.empty()) return;
      if (transient) std::fputs("\r\033[K", stderr);
      transient = !running.empty();
      std::fputs(transient ? ("  ...   " + running).c_str() : (done + "\n").c_str(), stderr);
      std::fflush(stderr);
    };
  }
  DiagRun run = run_diag_helper(opt);
  if (transient) std::fputs("\r\033[K", stderr);
  std::vector<DiagFigure> figures = diag_figures(run, snapshot);
  Report report;
  report.findings = evaluate_diag(run, snapshot, figures);
  rank_findings(&report.findings);
  report.verdict = verdict_of(report.findings);
  report.snapshot = &snapshot;
  const std::string diag_json =
      nlohmann::json{{"run", diag_run_to_json(run)}, {"figures", diag_figures_to_json(figures)}}
          .dump();

  std::string out;
  if (args.json) {
    nlohmann::ordered_json doc = report_to_json(report);
    doc["diag"] = nlohmann::ordered_json::parse(diag_json);
    out = doc.dump(2) + "\n";
  } else {
    out = render_diag_text(report, run, figures, opt.bus_ids, {args.verbose});
  }
  std::fwrite(out.data(), 1, out.size(), stdout);

  if (no_answer(run)) {
    print_error("diag: the helper " + helper + " gave no answer: " + run.incomplete);
    return kExitInternal;
  }
  if (!args.no_history) record_history(args, report, diag_json);
  return exit_code_for(report.verdict);
}

}  // namespace gd
