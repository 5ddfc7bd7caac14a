// The processes of a watched job, from /proc (processes.h).
#include "job/processes.h"

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <utility>

#include "util/read_file.h"
#include "util/text.h"

namespace gd {
namespace {

// A children file or stat line is a few KiB even for a launcher with
// hundreds of workers; this only bounds a broken one.
constexpr size_t kProcFileCapBytes = size_t{1} << 20;
// A fork bomb must not make the walk endless: past this many processes the
// rest is not looked at (and so not signalled by this walk; the process
// group still is).
constexpr size_t kMaxProcesses = 100000;
// PID_MAX_LIMIT on 64-bit Linux.
constexpr uint64_t kMaxPid = 4194304;

// "4242 4250 " (a children file) or "4242" (a task directory's name): the
// pids, each a word of digits; any other word is skipped.
std::vector<pid_t> parse_pids(std::string_view text) {
  std::vector<pid_t> out;
  for (std::string_view line : split_lines(text)) {
    for (std::string_view word : split_ws(line)) {
      auto v = parse_u64(word);
      if (v && *v > 0 && *v <= kMaxPid) out.push_back(static_cast<pid_t>(*v));
    }
  }
  return out;
}

// The name, state and process group of PROC/PID/stat, whose name is in
// parentheses and may itself hold spaces and parentheses:
//   4242 (python3 (rank 0)) S 4240 4240 4240 ...   (state, ppid, pgrp, ...)
// false when the process is gone or the line is not of that form.
bool read_stat(const std::string& proc, pid_t pid, JobProcess* p, char* state) {
  auto text = read_file_capped(proc + "/" + std::to_string(pid) + "/stat", kProcFileCapBytes);
  if (!text.ok()) return false;
  size_t open = text->find('(');
  size_t close = text->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open ||
      close + 2 >= text->size())
    return false;
  p->pid = pid;
  p->name = text->substr(open + 1, close - open - 1);
  *state = (*text)[close + 2];
  std::vector<pid_t> rest = parse_pids(std::string_view(*text).substr(close + 3));
  p->pgid = rest.size() >= 2 ? rest[1] : 0;  // ppid, pgrp
  return true;
}

// The children of every thread of pid (a child belongs to the thread that
// started it); none when the process is gone.
std::vector<pid_t> process_children(const std::string& proc, pid_t pid) {
  std::vector<pid_t> tids;
  std::string task = proc + "/" + std::to_string(pid) + "/task";
  DIR* d = opendir(task.c_str());
  if (d == nullptr) return {};
  while (dirent* e = readdir(d)) {
    std::vector<pid_t> tid = parse_pids(e->d_name);
    if (tid.size() == 1) tids.push_back(tid[0]);
  }
  closedir(d);
  std::sort(tids.begin(), tids.end());  // the main thread first, as /proc lists them
  std::vector<pid_t> out;
  for (pid_t tid : tids) {
    if (auto c = thread_children(proc, pid, tid); c.ok())
      out.insert(out.end(), c->begin(), c->end());
  }
  return out;
}

}  // namespace

Result<std::vector<pid_t>> thread_children(const std::string& proc, pid_t pid, pid_t tid) {
  std::string path =
      proc + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/children";
  auto text = read_file_capped(path, kProcFileCapBytes);
  if (!text.ok()) return Error{path + ": " + text.error()};
  return parse_pids(*text);
}

std::vector<JobProcess> live_processes(const std::string& proc, const std::vector<pid_t>& roots) {
  std::vector<JobProcess> out;
  std::set<pid_t> seen;
  std::vector<pid_t> todo(roots.begin(), roots.end());
  // Breadth first: parents before their children, so that a SIGTERM in
  // this order reaches a launcher before its workers.
  for (size_t i = 0; i < todo.size() && seen.size() < kMaxProcesses; ++i) {
    pid_t pid = todo[i];
    if (!seen.insert(pid).second) continue;  // a pid reused under us: no cycle
    JobProcess p;
    char state = 0;
    if (!read_stat(proc, pid, &p, &state)) continue;
    // A zombie has ended; its pid is only waiting for its parent's wait().
    // Its children, if any, have been re-parented already.
    if (state == 'Z' || state == 'X') continue;
    out.push_back(std::move(p));
    for (pid_t c : process_children(proc, pid)) todo.push_back(c);
  }
  return out;
}

}  // namespace gd
