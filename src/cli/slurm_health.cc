// `gpudoctor check --slurm`: Slurm's HealthCheckProgram (docs/slurm.md).
// Reads this node's state with scontrol, lets decide_slurm() choose, and
// runs `scontrol update` when it says so. scontrol runs through the
// probe-child runner (no shell, a deadline): slurmd kills a health check
// that runs past 60 s, and a hung slurmctld must not hang gpudoctor.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "diag/reprobe.h"
#include "probe/child.h"
#include "report/slurm.h"

namespace gd {
namespace {

// Each scontrol call; slurmctld answers in milliseconds when it is up.
constexpr std::chrono::seconds kScontrolTimeout{10};

// The re-probe's diag helper before a resume, at most (a hung helper is
// killed): inside slurmd's 60 s beside the check's probes.
constexpr double kReprobeDiagDeadlineS = 30;

// slurmd starts the HealthCheckProgram with no PATH at all (only
// SLURMD_NODENAME): search where Debian and source installs put scontrol.
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

std::string path_env() {
  const char* p = std::getenv("PATH");
  return p != nullptr && *p != '\0' ? p : kDefaultPath;
}

std::string node_name(const CheckArgs& args) {
  if (!args.slurm_node.empty()) return args.slurm_node;
  const char* env = std::getenv("SLURMD_NODENAME");
  if (env != nullptr && *env != '\0') return env;
  // NodeName in slurm.conf is the short host name.
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  std::string host = buf;
  return host.substr(0, host.find('.'));
}

// The last non-empty line of text, trimmed.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, end - begin + 1);
}

// Runs scontrol with `args`; its stdout, or an error naming what failed.
Result<std::string> run_scontrol(const std::string& scontrol,
                                 const std::vector<std::string>& args) {
  ChildSpec spec;
  spec.exe = scontrol;
  spec.args = args;
  // Only what scontrol needs: where it is and where slurm.conf is.
  spec.env = {"PATH=" + path_env(), "LC_ALL=C"};
  if (const char* conf = std::getenv("SLURM_CONF"); conf != nullptr && *conf != '\0') {
    spec.env.push_back(std::string("SLURM_CONF=") + conf);
  }
  spec.max_stdout_bytes = 64u << 10;
  ChildRunner runner(ChildRunner::Clock::now() + kScontrolTimeout);
  const ChildResult& res = runner.wait(runner.start(spec));
  std::string what = "scontrol";
  for (const auto& a : args) what += " " + a;
  if (!res.started) return Error{fmt::format("{}: {}", what, res.start_error)};
  if (res.timed_out) {
    return Error{fmt::format("{}: no answer within {} s (is slurmctld up?)", what,
                             kScontrolTimeout.count())};
  }
  if (!res.exited) return Error{fmt::format("{}: killed by {}", what, signal_name(res.signal))};
  if (res.exit_code != 0) {
    // "Node nosuch not found" comes on stdout; configuration errors on stderr.
    std::string said = last_line(res.err_tail);
    if (said.empty()) said = last_line(res.out);
    if (said.empty()) said = "no message";
    return Error{fmt::format("{}: exit {}: {}", what, res.exit_code, said)};
  }
  return res.out;
}

// A node gpudoctor drained is resumed only once its GPUs prove themselves in
// fresh children (diag/reprobe.h): one passing check may have caught a GPU
// between two faults. "" when every GPU passed, with what was run in
// *proof; else the first failure.
std::string reprobe_before_resume(const Report& report, const CheckArgs& args, std::string* proof) {
  std::vector<std::string> bus_ids;
  for (const NvmlGpu& g : report.snapshot->nvml.gpus) {
    if (g.pci_bus_id.ok()) bus_ids.push_back(g.pci_bus_id.value);
  }
  ReprobeOptions ro;
  ro.probe = args.probe;
  ro.env = current_environment();
  ro.diag_helper = reprobe_diag_helper(args.diag_helper);
  // slurmd kills a health check after 60 s; the check's own probes took
  // their share already.
  ro.diag_deadline_s = kReprobeDiagDeadlineS;
  for (const ReprobeResult& r : reprobe_gpus(ro, bus_ids)) {
    if (!r.ok) return reprobe_line(r);
  }
  *proof =
      fmt::format("proven by a re-probe of {} GPU{} (NVML, a CUDA context{})", bus_ids.size(),
                  bus_ids.size() == 1 ? "" : "s",
                  ro.diag_helper.empty() ? "; gpudoctor-diag not installed" : ", diag level 1");
  return "";
}

}  // namespace

int slurm_health(const Report& report, const CheckArgs& args, const std::string& note) {
  if (!note.empty()) std::printf("gpudoctor: %s\n", note.c_str());
  SlurmPolicy policy;
  if (args.slurm_drain_on == "warn") {
    policy.drain_on = Severity::kWarn;
  } else if (args.slurm_drain_on != "fail") {
    print_error("--slurm-drain-on must be fail or warn, not \"" + args.slurm_drain_on + "\"");
    return kExitUsage;
  }
  std::string name = node_name(args);
  if (name.empty()) {
    print_error("--slurm: no node name (set SLURMD_NODENAME or pass --slurm-node NAME)");
    return kExitInternal;
  }
  std::string scontrol = args.slurm_scontrol;
  if (scontrol.empty()) {
    scontrol = find_on_path("scontrol", path_env());
    if (scontrol.empty()) {
      print_error("--slurm: scontrol not found on PATH (" + path_env() + "); pass --scontrol PATH");
      return kExitInternal;
    }
  }
  auto shown = run_scontrol(scontrol, {"show", "node", "-o", name});
  if (!shown.ok()) {
    print_error(shown.error());
    return kExitInternal;
  }
  auto node = parse_scontrol_node(*shown, name);
  if (!node.ok()) {
    print_error(node.error());
    return kExitInternal;
  }
  SlurmDecision decision = decide_slurm(report, *node, policy);
  // A recorded snapshot has no GPUs to re-probe: its verdict alone decides.
  if (decision.action == SlurmAction::kResume && args.from.empty() && report.snapshot != nullptr) {
    std::string proof;
    std::string failed = reprobe_before_resume(report, args, &proof);
    decision = after_reprobe(decision, *node, failed, proof);
  }
  if (decision.action != SlurmAction::kNone) {
    if (args.slurm_dry_run) {
      std::printf("gpudoctor: dry run, nothing changed (would %s): %s\n",
                  slurm_action_name(decision.action), decision.message.c_str());
      return 0;
    }
    auto done = run_scontrol(scontrol, scontrol_update_args(node->name, decision));
    if (!done.ok()) {
      print_error(done.error());
      return kExitInternal;
    }
  }
  std::printf("gpudoctor: %s\n", decision.message.c_str());
  return 0;
}

}  // namespace gd
