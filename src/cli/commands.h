// Subcommands. Each has an options struct, a setup function that declares its
// flags on a CLI11 subcommand, and a run function returning the exit code.
// main.cc holds the one table of them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "checks/finding.h"
#include "checks/runner.h"
#include "job/check.h"
#include "probe/probe.h"
#include "util/exe.h"
#include "util/result.h"

namespace gd {

// Exit codes (shared/DESIGN.md "Stable interfaces").
inline constexpr int kExitUsage = 64;    // bad command line
inline constexpr int kExitInternal = 3;  // the tool could not decide

// "gpudoctor: <message>" on stderr, one line.
void print_error(std::string_view message);
// Colour on a terminal unless NO_COLOR is set (no-color.org) or TERM=dumb.
bool color_wanted(int fd);

// One row of `check --list-checks` or `diag --list-tests`: a name, what it
// verifies, the finding ids it may give and, for diag, the lowest level that
// runs it (0: none).
struct ListedTest {
  std::string name;
  std::string description;
  std::vector<std::string> ids;
  int level = 0;
};
// Prints the rows as text or (json) as {"schema": "gpudoctor.KIND/v1", KIND: [...]}
// (kind "checks" or "tests"); returns exit code 0.
int print_listing(const std::vector<ListedTest>& rows, bool json, const std::string& kind);

// --root, --nvml-lib, --cuda-lib, --cudart-lib, --deadline.
void add_probe_options(CLI::App* app, ProbeOptions* opt);
// CLI::Range for numbers that must also be finite: CLI::Range lets nan
// through (every comparison with it is false). The message names the range.
CLI::Validator finite_range(double lo, double hi);
// A whole number that fits 64 bits: CLI11 alone clamps 1e30 and wraps -1.
CLI::Validator unsigned_64();
// --config FILE (health thresholds) and --log-window DURATION, as every
// command that runs the checks takes them.
void add_config_option(CLI::App* app, std::string* path);
// --from SNAPSHOT: `what` starts the help ("Analyse", "Map", ...).
void add_from_option(CLI::App* app, std::string* path, const std::string& what);
void add_log_window_option(CLI::App* app, std::string* window);
// Writes `text` to `path` (created or truncated). A symbolic link there is
// refused, never followed. Error: the reason (strerror, or "is a symbolic
// link; ..."), for the caller to frame with its flag and the path.
Result<Done> write_text_file(const std::string& path, const std::string& text);
// --diag-helper PATH|none: the gpudoctor-diag a re-probe runs before a GPU
// or node is called healthy again (diag/reprobe.h).
void add_diag_helper_option(CLI::App* app, std::string* path);
// That flag's helper: PATH as given, "" for "none", else gpudoctor-diag
// beside this binary ("" when not installed).
std::string reprobe_diag_helper(const std::string& flag);
// --only / --skip IDS (check names, finding ids, areas, globs), as every
// command that judges takes them.
void add_selection_options(CLI::App* app, std::vector<std::string>* only,
                           std::vector<std::string>* skip);
// check_for_job (job/check.h) for `command` ("env", "run"): 0, or the exit
// code after printing its one-line error (kExitUsage for a bad --config or
// selection, kExitInternal for an unreadable --from snapshot).
int job_check_or_exit(const std::string& command, const ProbeOptions& probe,
                      const std::string& from, const std::string& config,
                      const std::vector<std::string>& only, const std::vector<std::string>& skip,
                      const std::vector<std::string>& job, JobCheck* out);

struct CheckArgs {
  ProbeOptions probe;
  std::string from;  // --from FILE: analyse a recorded snapshot
  bool json = false;
  bool list_checks = false;
  bool verbose = false;
  bool quiet = false;  // -q: the verdict line only
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::string log_window = "2h";  // --log-window: kernel-log events older than this are history
  std::string config;             // --config FILE: health thresholds (docs/config.md)
  std::string format;             // --format text|json|npd ("" = text, or json with --json)
  bool slurm = false;             // --slurm: act as Slurm's HealthCheckProgram
  // With --slurm (docs/slurm.md):
  std::string slurm_drain_on = "fail";  // --slurm-drain-on fail|warn: least severity that drains
  std::string slurm_node;      // --slurm-node NAME ("" = $SLURMD_NODENAME, else short hostname)
  std::string slurm_scontrol;  // --scontrol PATH ("" = scontrol found on $PATH)
  bool slurm_dry_run = false;  // --slurm-dry-run: say what would be done, change nothing
  // --slurm-recheck D: a verdict that would drain only because GPUs went
  // missing or NVML/CUDA did not start is probed again after D first ("0": never).
  std::string slurm_recheck = "20s";
  std::string diag_helper;  // --diag-helper: the re-probe before a resume
};
void setup_check(CLI::App* app, CheckArgs* args);
int run_check(const CheckArgs& args);

// `check --slurm` (src/cli/slurm_health.cc): drains this node on a failing
// verdict, resumes a node it drained itself; returns the exit code.
// `note`: a line said first ("re-checked after 20s: ..."); "" none.
int slurm_health(const Report& report, const CheckArgs& args, const std::string& note = "");

struct SnapshotArgs {
  ProbeOptions probe;
  std::string output;  // -o FILE; "" = stdout
};
void setup_snapshot(CLI::App* app, SnapshotArgs* args);
int run_snapshot(const SnapshotArgs& args);

struct LogsArgs {
  std::string root = "/";  // --root
  std::string file;        // --file FILE ("-" = stdin)
  std::string since;       // --since DURATION ("2h", "30m", "1d"); "" = everything
  bool follow = false;
  bool json = false;
};
void setup_logs(CLI::App* app, LogsArgs* args);
int run_logs(const LogsArgs& args);

struct ExplainArgs {
  std::string input = "-";  // FILE or "-" (stdin)
  bool json = false;
  bool verbose = false;
};
void setup_explain(CLI::App* app, ExplainArgs* args);
int run_explain(const ExplainArgs& args);

struct TopoArgs {
  ProbeOptions probe;
  std::string from;  // --from FILE: a recorded snapshot
  bool json = false;
  bool verify = false;  // --verify: observe CUDA's order in a CUDA run
};
void setup_topo(CLI::App* app, TopoArgs* args);
int run_topo(const TopoArgs& args);

struct EnvArgs {
  ProbeOptions probe;
  std::string from;           // --from FILE: a recorded snapshot
  std::string config;         // --config FILE
  std::string format = "sh";  // sh | fish | docker | k8s
};
void setup_env(CLI::App* app, EnvArgs* args);
int run_env(const EnvArgs& args);

struct RunArgs {
  ProbeOptions probe;
  std::string config;  // --config FILE
  int require = 0;     // --require N: refuse with fewer healthy GPUs
  bool exclude_unhealthy = false;
  bool bind_cpus = false;
  std::string json_report;            // --json-report FILE
  std::vector<std::string> only;      // --only IDS
  std::vector<std::string> skip;      // --skip IDS
  std::vector<std::string> command;   // after --
  bool watch = false;                 // --watch: stay, watch the job, summarize it
  std::string watch_interval = "5s";  // --watch-interval: NVML sampling period
  bool stop_on_fatal = false;         // --stop-on-fatal: signal the job at a fatal event
  std::string summary_file;           // --summary-file: the summary as text, for a Slurm epilog
};
void setup_run(CLI::App* app, RunArgs* args);
int run_run(const RunArgs& args);
// `run --watch` (cli/run_watch.cc): runs the command as a watched child;
// returns its exit code (128 + N when killed by signal N).
int run_watched(const RunArgs& args, double interval_s);
// Replaces this process with the command (execvp); on failure exits 127
// (not found) or 126, as a shell does.
[[noreturn]] void exec_command(const std::vector<std::string>& command);

struct ServeArgs {
  ProbeOptions probe;
  std::string listen = "127.0.0.1:9835";  // --listen HOST:PORT
  std::string interval = "15s";           // --interval: NVML sampling period
  std::string check_interval = "60s";     // --check-interval: full check period
  std::string history;                    // --history FILE ("" = default state path)
  bool no_history = false;                // --no-history
  std::string retention = "30d";          // --retention
  std::string diag_max_age = "7d";        // --diag-max-age: a diag run's findings count this long
  std::string web_config;                 // --web-config FILE (TLS, basic auth)
  std::string config;                     // --config FILE: health thresholds
  std::string log_window = "2h";          // --log-window, as for check
  std::string from;                       // --from SNAPSHOT: serve a recorded machine (demo)
  std::string diag_helper;                // --diag-helper PATH|none: the recovery re-probe's
  int flap_returns = 3;                   // --flap-returns: returns within --flap-window ...
  std::string flap_window = "10m";        // --flap-window
  std::string flap_hold = "5m";           // --flap-hold: ... hold a flapping GPU this long
  std::vector<std::string> only;          // --only IDS
  std::vector<std::string> skip;          // --skip IDS
};
void setup_serve(CLI::App* app, ServeArgs* args);
int run_serve(const ServeArgs& args);  // in gpudoctor-serve only
// `gpudoctor serve ...` becomes gpudoctor-serve (beside this binary, else on
// PATH) with the same arguments; returns only when that fails (exit 3).
int exec_serve_binary(char** argv);

struct HistoryArgs {
  std::string db;     // --db FILE ("" = default state path)
  std::string since;  // --since DURATION or date
  std::string gpu;    // --gpu BUS|INDEX|UUID
  bool json = false;
  std::string now;  // --now TIME (hidden, tests only): answer as if it were then
};
void setup_history(CLI::App* app, HistoryArgs* args);
int run_history(const HistoryArgs& args);

struct LabelsArgs {
  ProbeOptions probe;
  std::string from;               // --from SNAPSHOT
  std::string nfd_dir;            // --nfd-dir DIR: write the NFD feature file there
  bool json = false;              // --json: print the labels as gpudoctor.labels/v1
  std::string config;             // --config FILE
  std::string log_window = "2h";  // --log-window, as for check
  std::string expiry;             // --expiry DURATION: NFD drops the labels after it; "" never
  std::vector<std::string> only;  // --only IDS
  std::vector<std::string> skip;  // --skip IDS
};
void setup_labels(CLI::App* app, LabelsArgs* args);
int run_labels(const LabelsArgs& args);

struct DiffArgs {
  std::vector<std::string> snapshots;  // SNAPSHOT...
  bool json = false;
  bool verbose = false;  // -v: also the fields every node agrees on
  std::string config;    // --config FILE: thresholds for the checks run on each snapshot
};
void setup_diff(CLI::App* app, DiffArgs* args);
int run_diff(const DiffArgs& args);

struct DiagArgs {
  ProbeOptions probe;
  int level = 1;                 // --level 1|2|3
  std::string gpus;              // --gpus LIST: indices, bus ids or UUIDs ("" = all)
  double duration_s = 20;        // --duration S: each sustained test (levels 2, 3)
  uint64_t seed = 1;             // --seed N
  bool json = false;             // --json: gpudoctor.report/v1 with a "diag" object
  std::string history;           // --history FILE ("" = default state path)
  bool no_history = false;       // --no-history
  std::string helper;            // --helper PATH (hidden): the gpudoctor-diag to run
  std::string plant_fault;       // --plant-fault gemm|memory (hidden): prove a fault is caught
  std::string from;              // --from SNAPSHOT (hidden, tests): the machine as recorded
  bool verbose = false;          // -v: also ok/n/a findings and each floor's basis
  bool list_tests = false;       // --list-tests: the tests of each level and their ids
  double helper_deadline_s = 0;  // --helper-deadline S (hidden, tests): 0 = diag_deadline_s()
};
void setup_diag(CLI::App* app, DiagArgs* args);
int run_diag(const DiagArgs& args);

// The hidden probe-child mode: `gpudoctor __probe-nvml|__probe-cuda ...`.
bool is_probe_child(int argc, char** argv);
int run_probe_child(int argc, char** argv);

}  // namespace gd
