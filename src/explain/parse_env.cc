// Environment dumps: `env`, `export -p`, `docker inspect` Env lists, job
// script lines. Real lines this file reads:
//
//   CUDA_VISIBLE_DEVICES=1,x,0
//   export LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:/usr/lib
//   declare -x NVIDIA_DRIVER_CAPABILITIES="utility"
//   "NVIDIA_VISIBLE_DEVICES=all",
//   (py35) ~/pytorch/examples/mnist$ CUDA_VISIBLE_DEVICES=2 python main.py
//   $ torchrun --nproc_per_node=8 train.py   (the GPUs a launcher asks for)
//
// Only what the env probe keeps is kept: its allow-list, its credential
// names denied, values not of their variable's kind as their shape
// (probe/env.cc), so a pasted dump never carries secrets into a report.
#include <algorithm>
#include <utility>
#include <vector>

#include "explain/parse.h"
#include "probe/file_probes.h"
#include "probe/job_request.h"

namespace gd {
namespace {

bool name_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// "NAME=" at the start of t: the name's length, 0 when t does not start so.
size_t assignment_name(std::string_view t) {
  size_t eq = 0;
  while (eq < t.size() && name_char(t[eq])) ++eq;
  return eq > 0 && eq < t.size() && t[eq] == '=' ? eq : 0;
}

// What a command line runs after its assignments: a program, not the rest
// of a sentence ("CUDA_HOME=/usr/local/cuda is set" is no command).
bool runs_a_program(std::string_view rest) {
  for (std::string_view cmd :
       {"python", "torchrun", "accelerate ", "deepspeed ", "bash ", "sh ", "srun ", "mpirun ", "./",
        "nvidia-smi", "ollama ", "jupyter ", "docker ", "uv ", "conda "}) {
    if (rest.starts_with(cmd)) return true;
  }
  return false;
}

void keep(std::string_view name, std::string_view value, TextParse* p) {
  p->s->env.vars[std::string(name)] = env_value_kept(name, value);
  p->observed.insert("env");
}

// "[prompt$ ]A=1 B='x y' python main.py": the assignments a shell command
// line makes for the program it runs. False when the line is not one.
bool parse_command_assignments(std::string_view t, TextParse* p) {
  // A prompt ("user@host:~/dir$ ", "(env) ~/x$ ", "root@pod:/w# ") before the command.
  for (std::string_view prompt : {"$ ", "# "}) {
    size_t at = t.find(prompt);
    if (at != std::string_view::npos && assignment_name(t) == 0) t = trim(t.substr(at + 2));
  }
  std::vector<std::pair<std::string_view, std::string_view>> found;
  while (size_t eq = assignment_name(t)) {
    std::string_view name = t.substr(0, eq);
    t = t.substr(eq + 1);
    size_t end = 0;
    std::string_view value;
    if (!t.empty() && (t.front() == '"' || t.front() == '\'')) {
      end = t.find(t.front(), 1);
      if (end == std::string_view::npos) return false;
      value = t.substr(1, end - 1);
      ++end;
    } else {
      end = std::min(t.find(' '), t.size());
      value = t.substr(0, end);
    }
    found.emplace_back(name, value);
    t = trim(t.substr(end));
  }
  if (found.empty() || !runs_a_program(t)) return false;
  bool any = false;
  for (const auto& [name, value] : found) {
    if (!env_name_allowed(name)) continue;
    keep(name, value, p);
    any = true;
  }
  return any;
}

// "$ torchrun --nproc_per_node=8 train.py": how many GPUs the job asks for.
// Only the asking words are kept (EnvInfo::job_request).
bool parse_job_request(std::string_view t, TextParse* p) {
  if (t.find("--n") == std::string_view::npos) return false;
  auto r = job_gpu_request(t);
  if (!r) return false;
  p->s->env.job_gpus = r->gpus;
  p->s->env.job_request = r->request;
  p->observed.insert("env");
  return true;
}

}  // namespace

bool parse_env_line(std::string_view line, int line_no, TextParse* p) {
  (void)line_no;
  std::string_view t = trim(line);
  bool job = parse_job_request(t, p);  // its assignments are read too
  if (parse_command_assignments(t, p)) return true;
  if (job) return true;
  for (std::string_view pre : {"export ", "declare -x ", "setenv "}) {
    if (t.starts_with(pre)) t = trim(t.substr(pre.size()));
  }
  if (!t.empty() && t.front() == '"') {
    t.remove_prefix(1);
    while (!t.empty() && (t.back() == ',' || t.back() == '"')) t.remove_suffix(1);
  }
  size_t eq = assignment_name(t);
  if (eq == 0) return false;
  std::string_view name = t.substr(0, eq);
  if (!env_name_allowed(name)) return false;
  std::string_view value = t.substr(eq + 1);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  // A value with blanks is a sentence, not an assignment ("CUDA_HOME=... is set").
  if (value.find(' ') != std::string_view::npos && name != "NVIDIA_REQUIRE_CUDA") return false;
  keep(name, value, p);
  return true;
}

}  // namespace gd
