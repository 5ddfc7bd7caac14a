// The processes of a watched job (job/processes.h) over a made-up /proc:
// descendants through every thread's children file, zombies and vanished
// pids left out, a cycle (a reused pid) walked once; and over the real
// /proc, a child and grandchild of this test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "job/processes.h"
#include "test_util.h"

namespace gd {
namespace {

void put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// PROC/PID/stat and PROC/PID/task/TID/children for each thread.
void process(const std::string& proc, int pid, const std::string& name, char state,
             const std::vector<std::pair<int, std::string>>& threads) {
  std::string dir = proc + "/" + std::to_string(pid);
  // The tail as the kernel writes it: RLIM_INFINITY and addresses are
  // 20-digit numbers, which once overflowed the pid parser (UBSan).
  put(dir + "/stat", std::to_string(pid) + " (" + name + ") " + state +
                         " 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 40 8192 100 "
                         "18446744073709551615 94813247651840 94813247654000\n");
  for (const auto& [tid, children] : threads) {
    put(dir + "/task/" + std::to_string(tid) + "/children", children);
  }
}

std::vector<int> pids(const std::vector<JobProcess>& ps) {
  std::vector<int> out;
  for (const auto& p : ps) out.push_back(p.pid);
  return out;
}

TEST(JobProcesses, DescendantsThroughEveryThread) {
  testing_util::TempDir tmp("procs");
  std::string proc = tmp.path();
  process(proc, 10, "gpudoctor", 'S', {{10, "20 "}, {11, "99 "}});  // 99: the sampler thread's
  process(proc, 20, "torchrun", 'S', {{20, "30 "}, {21, "31 32"}});
  process(proc, 30, "python3 (rank 0)", 'R', {{30, ""}});
  process(proc, 31, "python3", 'Z', {{31, ""}});              // ended, not yet reaped
  process(proc, 32, "pt_data_worker", 'S', {{32, "20 40"}});  // 20: a reused pid, seen already
  // 40 is gone: no directory.
  auto main_children = thread_children(proc, 10, 10);
  ASSERT_TRUE(main_children.ok()) << main_children.error();
  EXPECT_EQ(*main_children, (std::vector<pid_t>{20}));
  auto live = live_processes(proc, *main_children);
  EXPECT_EQ(pids(live), (std::vector<int>{20, 30, 32}));
  EXPECT_EQ(live[1].name, "python3 (rank 0)");
  auto none = thread_children(proc, 10, 12);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("/10/task/12/children"), std::string::npos);
}

TEST(JobProcesses, TheRealProcOfThisTest) {
  if (!thread_children("/proc", getpid(), getpid()).ok()) {
    GTEST_SKIP() << "no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)";
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A grandchild in a session of its own, as a daemon makes itself.
    pid_t grand = fork();
    if (grand == 0) {
      setsid();
      (void)!write(ready[1], "g", 1);
      pause();
      _exit(0);
    }
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  auto mine = thread_children("/proc", getpid(), getpid());
  ASSERT_TRUE(mine.ok());
  ASSERT_NE(std::find(mine->begin(), mine->end(), child), mine->end());
  auto live = live_processes("/proc", {child});
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].pid, child);
  pid_t grand = live[1].pid;
  kill(grand, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);  // the grandchild is init's (or a subreaper's) to reap
}

}  // namespace
}  // namespace gd
