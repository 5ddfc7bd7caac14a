// The Slurm sink's decision and scontrol's node line (see slurm.h).
#include "report/slurm.h"

#include <fmt/format.h>

#include <set>

#include "snapshot/snapshot.h"
#include "util/text.h"

namespace gd {
namespace {

// Text shown here goes through printable_unquoted_or_underscore (printable
// ASCII only, no quotes or backslashes): it goes into slurm.conf-style
// "key=value" tokens, sinfo columns and log lines.

// Where key ("State=") starts a token: at the line start or after a space.
size_t find_key(std::string_view line, std::string_view key) {
  for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at == 0 || line[at - 1] == ' ') return at;
  }
  return std::string_view::npos;
}

// A plain value: from after "key=" up to the next space.
std::string_view token_value(std::string_view line, std::string_view key) {
  size_t at = find_key(line, key);
  if (at == std::string_view::npos) return {};
  std::string_view v = line.substr(at + key.size());
  return v.substr(0, v.find(' '));
}

// Reason= runs to the end of the line and contains spaces. scontrol appends
// " [user@time]"; Comment= and Extra= may follow it. The reason ends at the
// first " [x@y]" token, else at " Comment=" / " Extra=", else at the end.
std::string reason_value(std::string_view line, size_t key_at) {
  std::string_view v = line.substr(key_at + std::string_view("Reason=").size());
  for (size_t open = v.find(" ["); open != std::string_view::npos; open = v.find(" [", open + 1)) {
    size_t close = v.find(']', open);
    if (close == std::string_view::npos) break;
    std::string_view inside = v.substr(open + 2, close - open - 2);
    bool stamp =
        inside.find('@') != std::string_view::npos && inside.find(' ') == std::string_view::npos;
    if (stamp && (close + 1 == v.size() || v[close + 1] == ' ')) {
      v = v.substr(0, open);
      break;
    }
  }
  for (std::string_view next : {" Comment=", " Extra="}) {
    size_t at = v.find(next);
    if (at != std::string_view::npos) v = v.substr(0, at);
  }
  v = trim_spaces_tabs_trailing_cr(v);
  return v == "(null)" || v == "none" ? std::string() : std::string(v);
}

std::vector<std::string> state_words(const SlurmNode& n) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= n.state.size()) {
    size_t plus = n.state.find('+', start);
    if (plus == std::string::npos) plus = n.state.size();
    std::string w = n.state.substr(start, plus - start);
    // sinfo-style suffixes ("DOWN*", "IDLE~") where a tool prints them.
    while (!w.empty() && std::string_view("*~#!%$@^-").find(w.back()) != std::string_view::npos) {
      w.pop_back();
    }
    if (!w.empty()) words.push_back(w);
    start = plus + 1;
  }
  return words;
}

bool has_word(const SlurmNode& n, std::initializer_list<std::string_view> any) {
  for (const auto& w : state_words(n)) {
    for (auto a : any) {
      if (w == a) return true;
    }
  }
  return false;
}

std::string quoted(const std::string& s) {
  return "\"" + printable_unquoted_or_underscore(s, 200) + "\"";
}

// Why the report cannot be trusted to show health: a probe that failed or
// hung saw nothing. "" when every probe answered.
std::string unanswered_probe(const Report& r) {
  if (r.snapshot == nullptr) return "";
  for (const auto& p : r.snapshot->probes) {
    if (p.status == ProbeStatus::kFailed || p.status == ProbeStatus::kTimedOut) {
      return fmt::format("the {} probe {}", p.name,
                         p.status == ProbeStatus::kFailed ? "failed" : "timed out");
    }
  }
  return "";
}

// No NVIDIA GPU on a readable PCI bus and no NVIDIA driver: a CPU node that
// shares the cluster's HealthCheckProgram.
bool not_a_gpu_node(const Report& r) {
  if (r.snapshot == nullptr) return false;
  const Snapshot& s = *r.snapshot;
  bool pci_read = false;
  for (const auto& p : s.probes) {
    if (p.name == "pci") pci_read = p.status == ProbeStatus::kOk;
  }
  if (!pci_read || s.driver.proc_driver_nvidia) return false;
  for (const auto& d : s.pci) {
    if (d.kind == PciKind::kGpu) return false;
  }
  return true;
}

const Finding* drain_cause(const Report& r, Severity drain_on) {
  for (const auto& f : r.findings) {
    if (f.severity != Severity::kNotApplicable &&
        severity_weight(f.severity) >= severity_weight(drain_on)) {
      return &f;
    }
  }
  return nullptr;
}

}  // namespace

// `scontrol show node -o vm` on Slurm 22.05.8 (the CI machine), one line per
// node, drained by gpudoctor (a healthy node has State=IDLE and no Reason=):
//
// NodeName=vm Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=2.09
// AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=vm
// Version=22.05.8 OS=Linux 6.18.44-fc-v1147 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1 AllocMem=0
// FreeMem=20309 Sockets=2 Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1
// Owner=N/A MCS_label=N/A Partitions=debug  BootTime=2026-12-03T07:44:57 [...]
// ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=gpudoctor: xid.79 GPU 0000:41:00.0
// [root@2026-12-03T10:57:09]
//
// (wrapped here; one line in the output). Other states seen: IDLE, MIXED+DRAIN
// (draining), DOWN+NOT_RESPONDING, DOWN+DRAIN+NOT_RESPONDING. An unknown node
// prints "Node nosuch not found" and exits 1.
Result<SlurmNode> parse_scontrol_node(std::string_view text, std::string_view name) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = trim_spaces_tabs_trailing_cr(text.substr(start, nl - start));
    start = nl + 1;
    std::string_view node = token_value(line, "NodeName=");
    if (node.empty() || (!name.empty() && node != name)) continue;
    SlurmNode n;
    n.name = std::string(node);
    // State= comes before Reason=, so a reason that mentions "State=" is
    // never mistaken for it.
    size_t reason_at = find_key(line, "Reason=");
    std::string_view head = line.substr(0, reason_at);
    n.state = std::string(token_value(head, "State="));
    if (n.state.empty()) {
      return Error{fmt::format("scontrol shows node {} without a State=",
                               printable_unquoted_or_underscore(node, 64))};
    }
    if (reason_at != std::string_view::npos) n.reason = reason_value(line, reason_at);
    return n;
  }
  std::string_view first = trim_spaces_tabs_trailing_cr(text.substr(0, text.find('\n')));
  if (!name.empty()) {
    return Error{fmt::format(
        "scontrol does not show node {}: {}", printable_unquoted_or_underscore(name, 64),
        first.empty() ? "no output" : quoted(std::string(first.substr(0, 80))))};
  }
  return Error{fmt::format("scontrol shows no node: {}",
                           first.empty() ? "no output" : quoted(std::string(first.substr(0, 80))))};
}

bool slurm_node_drained(const SlurmNode& n) {
  return has_word(n, {"DRAIN", "DRAINED", "DRAINING"});
}

bool slurm_node_out_of_service(const SlurmNode& n) {
  return slurm_node_drained(n) || has_word(n, {"DOWN", "FAIL", "FAILING"});
}

bool drained_by_gpudoctor(const SlurmNode& n) {
  return n.reason.compare(0, kSlurmReasonPrefix.size(), kSlurmReasonPrefix) == 0;
}

const char* slurm_action_name(SlurmAction a) {
  switch (a) {
    case SlurmAction::kNone:
      return "none";
    case SlurmAction::kDrain:
      return "drain";
    case SlurmAction::kUpdateReason:
      return "update-reason";
    case SlurmAction::kResume:
      return "resume";
  }
  return "none";
}

std::string slurm_drain_reason(const Finding& f) {
  std::string reason =
      std::string(kSlurmReasonPrefix) + " " + printable_unquoted_or_underscore(f.id, 60);
  if (!f.brief.empty()) {
    reason += " " + f.brief;
  } else if (!f.gpus.empty()) {
    reason += f.gpus.size() == 1 ? " GPU " : " GPUs ";
    // Bus ids while they fit, then how many more: " +3" fits in 8.
    for (size_t i = 0; i < f.gpus.size(); ++i) {
      std::string bdf = printable_unquoted_or_underscore(f.gpus[i], 20);
      size_t left = f.gpus.size() - i - 1;
      if (reason.size() + bdf.size() + 1 + (left > 0 ? 8 : 0) > kSlurmReasonMax) {
        reason += fmt::format("+{}", f.gpus.size() - i);
        break;
      }
      reason += bdf + (left > 0 ? "," : "");
    }
  }
  return printable_unquoted_or_underscore(reason, kSlurmReasonMax);
}

SlurmDecision decide_slurm(const Report& r, const SlurmNode& node, const SlurmPolicy& policy) {
  SlurmDecision d;
  const std::string& name = node.name;
  bool ours = drained_by_gpudoctor(node);
  bool out = slurm_node_out_of_service(node);
  std::string state = printable_unquoted_or_underscore(node.state, 64);
  if (not_a_gpu_node(r)) {
    d.message = fmt::format(
        "node {}: no NVIDIA GPU on the PCI bus and no NVIDIA driver, nothing "
        "to judge; left {}",
        name, state);
    return d;
  }
  const Finding* cause = drain_cause(r, policy.drain_on);
  if (cause != nullptr) {
    std::string reason = slurm_drain_reason(*cause);
    if (out && !ours) {
      d.message = fmt::format(
          "node {}: {} ({}) but already {} by someone else (reason {}); left "
          "as it is",
          name, reason, severity_name(cause->severity), state, quoted(node.reason));
      return d;
    }
    if (out && ours && node.reason == reason) {
      d.message = fmt::format("node {}: still drained: {}", name, reason);
      return d;
    }
    d.reason = reason;
    if (out && ours) {
      d.action = SlurmAction::kUpdateReason;
      d.message = fmt::format("node {}: drain reason updated: {} (was {})", name, reason,
                              quoted(node.reason));
      return d;
    }
    d.action = SlurmAction::kDrain;
    d.message = fmt::format("node {}: drained: {}", name, reason);
    return d;
  }
  std::string unanswered = unanswered_probe(r);
  if (!unanswered.empty()) {
    d.message = fmt::format("node {}: could not decide ({}, no finding at {}); left {}", name,
                            unanswered, severity_name(policy.drain_on), state);
    return d;
  }
  if (out && ours) {
    d.action = SlurmAction::kResume;
    d.message = fmt::format("node {}: resumed: healthy again (verdict {}), was drained with {}",
                            name, severity_name(r.verdict), quoted(node.reason));
    return d;
  }
  if (out) {
    d.message = fmt::format(
        "node {}: healthy (verdict {}) but {} by someone else (reason {}); "
        "left as it is",
        name, severity_name(r.verdict), state, quoted(node.reason));
    return d;
  }
  d.message = fmt::format("node {}: healthy, no {} finding (verdict {})", name,
                          severity_name(policy.drain_on), severity_name(r.verdict));
  return d;
}

SlurmDecision after_reprobe(const SlurmDecision& resume, const SlurmNode& node,
                            const std::string& failed, const std::string& proof) {
  SlurmDecision d = resume;
  if (failed.empty()) {
    d.message += "; " + proof;
    return d;
  }
  d.action = SlurmAction::kNone;
  d.message = fmt::format("node {}: healthy by the check, but {}; left drained with {}", node.name,
                          failed, quoted(node.reason));
  return d;
}

std::vector<std::string> scontrol_update_args(const std::string& node, const SlurmDecision& d) {
  switch (d.action) {
    case SlurmAction::kNone:
      return {};
    case SlurmAction::kDrain:
    case SlurmAction::kUpdateReason:
      return {"update", "nodename=" + node, "state=drain", "reason=" + d.reason};
    case SlurmAction::kResume:
      return {"update", "nodename=" + node, "state=resume"};
  }
  return {};
}

bool only_count_symptoms(const Report& r) {
  static const std::set<std::string_view> kCounts = {
      "gpu.missing", "nvml.init-failed", "nvml.init-hang", "cuda.init-failed", "cuda.init-hang"};
  bool any = false;
  for (const Finding& f : r.findings) {
    if (f.severity != Severity::kFail) continue;
    if (kCounts.count(f.id) == 0) return false;
    any = true;
  }
  return any;
}

std::string recheck_note(const Report& first, const Report& second, const std::string& after) {
  std::string was = first.findings.empty() ? std::string("the failure") : first.findings[0].id;
  if (second.verdict == Severity::kFail) {
    return "re-checked after " + after + ": " + was + " held";
  }
  return "re-checked after " + after + ": " + was + " did not hold (a transient drop)";
}

}  // namespace gd
