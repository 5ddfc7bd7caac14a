// The workload probe (src/probe/workload.cc) over trees written for each
// test: GPU processes in a running and an ended Slurm job, in pods with and
// without their kubelet directory, in a docker container, gone, with an odd
// comm and with an unreadable environ; its parsers on real line forms; the
// JSON round trip; and the fake NVML's graphics processes through the real
// probe child.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fake_probe.h"
#include "probe/probe.h"
#include "probe/workload.h"
#include "snapshot/snapshot_json.h"
#include "test_util.h"

namespace gd {
namespace {

using namespace std::string_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::TempDir;
namespace fs = std::filesystem;

const std::string kPodRunning = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d";
const std::string kPodGone = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
const std::string kDocker = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

void put(const TempDir& root, const std::string& rel, const std::string& text) {
  fs::path p = fs::path(root.path()) / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

long hz() { return ::sysconf(_SC_CLK_TCK); }

// A /proc/PID/stat line as the kernel prints it, started `age_s` before an
// uptime of 10000.5 s.
std::string stat_line(uint32_t pid, const std::string& comm, char state, double age_s) {
  auto ticks = static_cast<uint64_t>(std::llround((10000.5 - age_s) * static_cast<double>(hz())));
  return std::to_string(pid) + " (" + comm + ") " + state +
         " 1 812 812 0 -1 4194560 123456 0 12 0 5310 1024 0 0 20 0 9 0 " + std::to_string(ticks) +
         " 3133440 388 18446744073709551615 0 0\n";
}

struct Proc {
  uint32_t pid;
  std::string comm;
  uint32_t uid;
  std::string cgroup;
  std::string environ;  // NUL-separated
  double age_s = 60;
  char state = 'S';
};

void put_proc(const TempDir& root, const Proc& p) {
  std::string d = "proc/" + std::to_string(p.pid) + "/";
  put(root, d + "comm", p.comm + "\n");
  put(root, d + "status",
      "Name:\t" + p.comm + "\nState:\tS (sleeping)\nUid:\t" + std::to_string(p.uid) + "\t" +
          std::to_string(p.uid) + "\t" + std::to_string(p.uid) + "\t" + std::to_string(p.uid) +
          "\nGid:\t100\t100\t100\t100\n");
  put(root, d + "stat", stat_line(p.pid, p.comm, p.state, p.age_s));
  put(root, d + "cgroup", p.cgroup);
  put(root, d + "environ", p.environ);
  put(root, d + "cmdline", p.comm + std::string(1, '\0'));
}

// A node with Slurm and a kubelet: slurmd (90), the kubelet (95) and job
// 4711's slurmstepd (812). Job 4700 has ended: its process 200 lives on
// outside any job cgroup (proctrack/linuxproc), known by its environ.
void make_node(const TempDir& root) {
  put(root, "proc/uptime", "10000.50 20000.00\n");
  put(root, "etc/passwd",
      "root:x:0:0:root:/root:/bin/bash\n+nis::::::\nalice:x:1000:1000:Alice,,,:/home/alice:/bin/"
      "bash\nbob:x:1001:1001::/home/bob:/bin/sh\n");
  put_proc(root, {90, "slurmd", 0, "0::/system.slice/slurmd.service\n", ""});
  put_proc(root, {95, "kubelet", 0, "0::/system.slice/kubelet.service\n", ""});
  put_proc(root,
           {812, "slurmstepd", 0, "0::/system.slice/slurmstepd.scope/job_4711/step_batch\n", ""});
  put(root, "proc/812/cmdline", "slurmstepd: [4711.batch]\0\0\0\0"s);
  put_proc(root,
           {100, "python3", 1000, "0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0\n",
            "HOME=/home/alice\0SLURM_JOB_ID=4711\0"s, 3600});
  put_proc(root, {200, "python3", 1001, "0::/user.slice/user-1001.slice/session-4.scope\n",
                  "HOME=/home/bob\0SLURM_JOB_ID=4700\0SLURM_JOB_USER=bob\0"s, 7200});
  std::string pod_uid = kPodRunning;
  std::replace(pod_uid.begin(), pod_uid.end(), '-', '_');
  put_proc(root, {300, "torchrun", 1000,
                  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + pod_uid +
                      ".slice/cri-containerd-" + kDocker + ".scope\n",
                  ""});
  put(root, "var/lib/kubelet/pods/" + kPodRunning + "/volumes/.keep", "");
  put_proc(root,
           {310, "python", 0,
            "12:devices:/kubepods/burstable/pod" + kPodGone + "/" + kDocker +
                "\n11:memory:/kubepods/burstable/pod" + kPodGone + "/" + kDocker +
                "\n1:name=systemd:/kubepods/burstable/pod" + kPodGone + "/" + kDocker + "\n0::/\n",
            ""});
  put_proc(root, {400, "Xorg", 0, "0::/system.slice/docker-" + kDocker + ".scope\n", ""});
  put_proc(root, {600, "my (odd) job", 4242, "0::/user.slice\n", "", 12.25, 'D'});
}

NvmlInfo nvml_with(std::vector<std::vector<NvmlProcess>> compute,
                   std::vector<std::vector<NvmlProcess>> graphics) {
  NvmlInfo n;
  n.attempted = true;
  n.init_rc = 0;
  n.init_symbol = "nvmlInit_v2";
  const char* bus[] = {"0000:17:00.0", "0000:65:00.0"};
  for (size_t i = 0; i < compute.size(); ++i) {
    NvmlGpu g;
    g.index = static_cast<uint32_t>(i);
    g.pci_bus_id = {bus[i], 0};
    g.processes = {compute[i], 0};
    g.graphics_processes = {graphics[i], 0};
    n.gpus.push_back(g);
  }
  return n;
}

const GpuProcess* find(const Snapshot& s, uint32_t pid) {
  for (const auto& p : s.workload.processes) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

ProbeRecord run(const std::string& root, Snapshot* s) {
  ProbeOptions o;
  o.root = root;
  o.hardware = false;
  return probe_workload(o, s);
}

class WorkloadNode : public ::testing::Test {
 protected:
  void SetUp() override {
    make_node(root_);
    s_.nvml = nvml_with({{{100, 1ull << 30}, {200, 2ull << 30}, {300, std::nullopt}},
                         {{100, 3ull << 30}, {310, 4ull << 30}, {500, 5ull << 30}, {600, 1}}},
                        {{{400, 64ull << 20}}, {}});
    rec_ = run(root_.path(), &s_);
  }
  TempDir root_{"workload"};
  Snapshot s_;
  ProbeRecord rec_;
};

TEST_F(WorkloadNode, RecordAndNodeWideFacts) {
  EXPECT_EQ(rec_.name, "workload");
  EXPECT_EQ(rec_.status, ProbeStatus::kOk) << rec_.detail;
  EXPECT_EQ(rec_.detail, "");
  const WorkloadInfo& w = s_.workload;
  EXPECT_TRUE(w.attempted);
  EXPECT_THAT(w.managers, ElementsAre("kubelet", "slurmd"));
  EXPECT_THAT(w.slurm_jobs, ElementsAre("4711"));
  EXPECT_TRUE(w.kubelet_pods_known);
  EXPECT_EQ(w.error, "");
  std::vector<uint32_t> pids;
  for (const auto& p : w.processes) pids.push_back(p.pid);
  EXPECT_THAT(pids, ElementsAre(100, 200, 300, 310, 400, 500, 600));
}

TEST_F(WorkloadNode, ProcessOfARunningSlurmJobOnTwoGpus) {
  const GpuProcess* p = find(s_, 100);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_EQ(p->gpus[0].bus_id, "0000:17:00.0");
  EXPECT_EQ(p->gpus[0].kind, "compute");
  EXPECT_EQ(p->gpus[0].used_memory_bytes, 1ull << 30);
  EXPECT_EQ(p->gpus[1].bus_id, "0000:65:00.0");
  EXPECT_EQ(p->gpus[1].used_memory_bytes, 3ull << 30);
  EXPECT_TRUE(p->visible);
  EXPECT_EQ(p->comm, "python3");
  EXPECT_EQ(p->uid, 1000u);
  EXPECT_EQ(p->user, "alice");
  EXPECT_EQ(p->cgroup, "/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0");
  EXPECT_EQ(p->state, "S");
  ASSERT_TRUE(p->age_s.has_value());
  EXPECT_NEAR(*p->age_s, 3600, 0.02);
  EXPECT_EQ(p->job_kind, "slurm");
  EXPECT_EQ(p->job_id, "4711");
  EXPECT_EQ(p->job_source, "cgroup");
  EXPECT_EQ(p->job_state, "running");
  EXPECT_EQ(p->job_evidence, "slurmstepd [4711.batch] pid 812 runs");
  EXPECT_TRUE(p->errors.empty());
}

TEST_F(WorkloadNode, ProcessOfAnEndedJobFoundByItsEnviron) {
  const GpuProcess* p = find(s_, 200);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->user, "bob");
  EXPECT_EQ(p->cgroup, "/user.slice/user-1001.slice/session-4.scope");
  EXPECT_NEAR(*p->age_s, 7200, 0.02);
  EXPECT_EQ(p->job_kind, "slurm");
  EXPECT_EQ(p->job_id, "4700");
  EXPECT_EQ(p->job_source, "environ");
  EXPECT_EQ(p->job_state, "ended");
  EXPECT_EQ(p->job_evidence, "no slurmstepd for job 4700 on this node; slurmd pid 90 runs");
}

TEST_F(WorkloadNode, PodsWithAndWithoutTheirKubeletDirectory) {
  const GpuProcess* running = find(s_, 300);
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->job_kind, "kubernetes");
  EXPECT_EQ(running->job_id, kPodRunning);
  EXPECT_EQ(running->job_source, "cgroup");
  EXPECT_EQ(running->job_state, "running");
  EXPECT_EQ(running->job_evidence, "/var/lib/kubelet/pods/" + kPodRunning + " exists");
  EXPECT_FALSE(running->gpus.at(0).used_memory_bytes.has_value());

  const GpuProcess* gone = find(s_, 310);
  ASSERT_NE(gone, nullptr);
  // cgroup v1 (cgroupfs driver): the pod's line, not the bare "0::/".
  EXPECT_EQ(gone->cgroup, "/kubepods/burstable/pod" + kPodGone + "/" + kDocker);
  EXPECT_EQ(gone->job_kind, "kubernetes");
  EXPECT_EQ(gone->job_id, kPodGone);
  EXPECT_EQ(gone->job_state, "ended");
  EXPECT_THAT(gone->job_evidence, HasSubstr("no /var/lib/kubelet/pods/" + kPodGone));
  EXPECT_EQ(gone->user, "root");
}

TEST_F(WorkloadNode, DockerContainerGraphicsProcess) {
  const GpuProcess* p = find(s_, 400);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->gpus.size(), 1u);
  EXPECT_EQ(p->gpus[0].kind, "graphics");
  EXPECT_EQ(p->gpus[0].used_memory_bytes, 64ull << 20);
  EXPECT_EQ(p->comm, "Xorg");
  EXPECT_EQ(p->job_kind, "container");
  EXPECT_EQ(p->job_id, kDocker);
  EXPECT_EQ(p->job_source, "cgroup");
  EXPECT_EQ(p->job_state, "unknown");
  EXPECT_THAT(p->job_evidence, HasSubstr("container 3f4e5d6c7b8a"));
}

TEST_F(WorkloadNode, AProcessNotInThisNamespace) {
  const GpuProcess* p = find(s_, 500);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->visible);
  EXPECT_EQ(p->comm, "");
  EXPECT_FALSE(p->uid.has_value());
  EXPECT_FALSE(p->age_s.has_value());
  EXPECT_EQ(p->job_kind, "");
  EXPECT_EQ(p->job_state, "");
  EXPECT_EQ(p->gpus.at(0).used_memory_bytes, 5ull << 30);
}

TEST_F(WorkloadNode, CommWithSpacesAndParentheses) {
  const GpuProcess* p = find(s_, 600);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->comm, "my (odd) job");
  EXPECT_EQ(p->state, "D");
  EXPECT_NEAR(*p->age_s, 12.25, 0.02);
  EXPECT_EQ(p->uid, 4242u);
  EXPECT_EQ(p->user, "");  // not in /etc/passwd
  EXPECT_EQ(p->cgroup, "/user.slice");
  EXPECT_EQ(p->job_kind, "");
  EXPECT_EQ(p->job_state, "");
  EXPECT_TRUE(p->errors.empty());
}

TEST_F(WorkloadNode, JsonRoundTripOfTheFilledWorkload) {
  std::string text = snapshot_to_string(s_);
  auto back = snapshot_from_string(text);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(snapshot_to_string(*back), text);
  const auto j = nlohmann::json::parse(text);
  const auto& p = j.at("workload").at("processes").at(0);
  EXPECT_EQ(p.at("job_evidence"), "slurmstepd [4711.batch] pid 812 runs");
  EXPECT_EQ(p.at("gpus").at(1).at("bus_id"), "0000:65:00.0");
  EXPECT_EQ(j.at("workload").at("slurm_jobs"), nlohmann::json::array({"4711"}));
  EXPECT_EQ(j.at("nvml").at("gpus").at(0).at("graphics_processes").at("value").at(0).at("pid"),
            400);
  EXPECT_FALSE(back->workload.processes.at(2).gpus.at(0).used_memory_bytes.has_value());
  EXPECT_FALSE(back->workload.processes.at(5).visible);
}

// --- Slurm's state where this namespace shows less ---------------------------------

TEST(Workload, SlurmJobWithNoSlurmVisibleIsUnknown) {
  TempDir root("workload");
  put(root, "proc/uptime", "10000.50 20000.00\n");
  put_proc(root, {100, "python3", 0, "0::/slurm/uid_0/job_77/step_0/task_0\n", ""});
  Snapshot s;
  s.nvml = nvml_with({{{100, 1}}}, {{}});
  run(root.path(), &s);
  const GpuProcess* p = find(s, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->job_id, "77");
  EXPECT_EQ(p->job_state, "unknown");
  EXPECT_EQ(p->job_evidence, "no slurmd or slurmstepd visible in this PID namespace");
  EXPECT_FALSE(s.workload.kubelet_pods_known);
  EXPECT_TRUE(s.workload.managers.empty());
}

TEST(Workload, AStepdThatNamesNoJobMakesAMissingJobUnknown) {
  TempDir root("workload");
  put(root, "proc/uptime", "10000.50 20000.00\n");
  put_proc(root, {90, "slurmd", 0, "0::/\n", ""});
  put_proc(root, {700, "slurmstepd", 0, "0::/\n", ""});  // cmdline "slurmstepd": just started
  put_proc(root, {100, "python3", 0, "0::/slurm/uid_0/job_77/step_0/task_0\n", ""});
  Snapshot s;
  s.nvml = nvml_with({{{100, 1}}}, {{}});
  run(root.path(), &s);
  EXPECT_EQ(find(s, 100)->job_state, "unknown");
  EXPECT_EQ(find(s, 100)->job_evidence,
            "slurmstepd pid 700 names no job in its cmdline: it may be job 77's");
  EXPECT_TRUE(s.workload.slurm_jobs.empty());
}

TEST(Workload, StepdsAloneTellAnEndedJob) {
  TempDir root("workload");
  put(root, "proc/uptime", "10000.50 20000.00\n");
  for (uint32_t pid : {812u, 820u, 830u}) {
    put_proc(root, {pid, "slurmstepd", 0, "0::/\n", ""});
  }
  put(root, "proc/812/cmdline", "slurmstepd: [4711.extern]\0"s);
  put(root, "proc/820/cmdline", "slurmstepd: [99.interactive]\0"s);
  put(root, "proc/830/cmdline", "slurmstepd: [4711.0]\0"s);
  put_proc(root, {100, "python3", 0, "0::/slurm/uid_0/job_77/step_0/task_0\n", ""});
  Snapshot s;
  s.nvml = nvml_with({{{100, 1}}}, {{}});
  run(root.path(), &s);
  EXPECT_THAT(s.workload.slurm_jobs, ElementsAre("99", "4711"));
  EXPECT_EQ(find(s, 100)->job_state, "ended");
  EXPECT_EQ(find(s, 100)->job_evidence,
            "no slurmstepd for job 77 on this node; 3 slurmstepd of other jobs run");

  // Job 4711's lowest pid stands for it, though "1200" sorts before "812".
  put_proc(root, {1200, "slurmstepd", 0, "0::/\n", ""});
  put(root, "proc/1200/cmdline", "slurmstepd: [4711.batch]\0"s);
  put_proc(root, {1300, "python3", 0, "0::/slurm/uid_0/job_4711/step_0/task_0\n", ""});
  s.nvml = nvml_with({{{1300, 1}}}, {{}});
  run(root.path(), &s);
  EXPECT_EQ(find(s, 1300)->job_evidence, "slurmstepd [4711.extern] pid 812 runs");
}

// --- what NVML did not give -----------------------------------------------------

TEST(Workload, NoProcessListStillScansTheNode) {
  TempDir root("workload");
  make_node(root);
  Snapshot s;  // NVML never ran
  ProbeRecord r = run(root.path(), &s);
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_EQ(r.detail, "NVML was not probed");
  EXPECT_TRUE(s.workload.attempted);
  EXPECT_TRUE(s.workload.processes.empty());
  EXPECT_THAT(s.workload.managers, ElementsAre("kubelet", "slurmd"));
  EXPECT_THAT(s.workload.slurm_jobs, ElementsAre("4711"));

  s.nvml = nvml_with({{}}, {{}});
  s.nvml.gpus[0].processes.rc = 15;  // GPU_IS_LOST
  s.nvml.gpus[0].graphics_processes.rc = 15;
  r = run(root.path(), &s);
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_EQ(r.detail, "NVML gave no process list for any GPU");
}

TEST(Workload, OneGpuWithoutAListIsANote) {
  TempDir root("workload");
  make_node(root);
  Snapshot s;
  s.nvml = nvml_with({{{100, 1}}, {}}, {{}, {}});
  s.nvml.gpus[1].processes.rc = 15;
  ProbeRecord r = run(root.path(), &s);
  EXPECT_EQ(r.status, ProbeStatus::kOk);
  EXPECT_EQ(r.detail, "GPU 1: no compute process list from NVML (rc 15)");
  EXPECT_EQ(s.workload.processes.size(), 1u);
}

TEST(Workload, BoundedAt4096Processes) {
  TempDir root("workload");
  put(root, "proc/uptime", "1.0 1.0\n");
  std::vector<NvmlProcess> many;
  for (uint32_t pid = 5000; pid > 0; --pid) many.push_back({pid, std::nullopt});
  Snapshot s;
  s.nvml = nvml_with({many}, {{}});
  ProbeRecord r = run(root.path(), &s);
  ASSERT_EQ(s.workload.processes.size(), kWorkloadMaxProcesses);
  EXPECT_EQ(s.workload.processes.front().pid, 1u);
  EXPECT_EQ(s.workload.processes.back().pid, 4096u);
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  ASSERT_EQ(r.gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].field, "workload.processes");
  EXPECT_EQ(r.gaps[0].reason, "NVML lists 5000 processes; the 4096 lowest pids were read");
}

TEST(Workload, NoProcAtAll) {
  TempDir root("workload");
  Snapshot s;
  s.nvml = nvml_with({{{100, 1}}}, {{}});
  ProbeRecord r = run(root.path(), &s);
  EXPECT_EQ(s.workload.error, "no /proc");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_EQ(r.detail, "no /proc; no /etc/passwd: user names unknown");
  ASSERT_EQ(s.workload.processes.size(), 1u);
  EXPECT_FALSE(s.workload.processes[0].visible);
}

// --- an environ this process may not read ------------------------------------------

// The probe over `root` as uid `as` (root passes every access check, so a
// test run as root reads as nobody in a child); the errors of pid 100.
std::vector<std::string> errors_as(const std::string& root, uid_t as) {
  Snapshot s;
  s.nvml = nvml_with({{{100, 1}}}, {{}});
  if (::geteuid() != 0) {
    run(root, &s);
    return find(s, 100)->errors;
  }
  int fds[2];
  if (::pipe(fds) != 0) return {"pipe failed"};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgid(as) != 0 || ::setuid(as) != 0) ::_exit(2);
    run(root, &s);
    std::string out = nlohmann::json(find(s, 100)->errors).dump();
    ssize_t n = ::write(fds[1], out.data(), out.size());
    ::_exit(n == static_cast<ssize_t>(out.size()) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {"child failed"};
  return nlohmann::json::parse(got).get<std::vector<std::string>>();
}

TEST(Workload, UnreadableEnvironIsAnErrorOfThatProcess) {
  TempDir root("workload");
  put(root, "proc/uptime", "10000.50 20000.00\n");
  put_proc(root, {100, "python3", 1000, "0::/user.slice\n", "SLURM_JOB_ID=1"});
  // Root's own file, read as nobody; a test not run as root denies itself.
  ::chmod((root.path() + "/proc/100/environ").c_str(), ::geteuid() == 0 ? 0400 : 0);
  for (const auto& e : fs::recursive_directory_iterator(root.path())) {
    if (e.is_directory()) ::chmod(e.path().c_str(), 0755);
  }
  ::chmod(root.path().c_str(), 0755);
  EXPECT_THAT(errors_as(root.path(), 65534), ElementsAre("environ: Permission denied"));
}

// --- parsers ------------------------------------------------------------------------

TEST(WorkloadParsers, Stat) {
  auto st = parse_proc_stat(
      "17129 (cat) R 17127 17127 11375 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 1104767 3133440 "
      "388 18446744073709551615\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, "R");
  EXPECT_EQ(st->starttime_ticks, 1104767u);
  st = parse_proc_stat("5 (a) b) (c) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, "Z");
  EXPECT_EQ(st->starttime_ticks, 999u);
  EXPECT_FALSE(parse_proc_stat("17129 (cat) R 1 2 3"));
  EXPECT_FALSE(parse_proc_stat("no parenthesis here at all"));
  EXPECT_FALSE(parse_proc_stat(""));
}

TEST(WorkloadParsers, StatusUid) {
  EXPECT_EQ(parse_status_real_uid("Name:\tx\nUid:\t1000\t0\t0\t0\n"), 1000u);
  EXPECT_FALSE(parse_status_real_uid("Name:\tx\n"));
  EXPECT_FALSE(parse_status_real_uid("Uid:\tx\n"));
}

TEST(WorkloadParsers, CgroupLineSelection) {
  EXPECT_EQ(select_cgroup_path("0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0\n"),
            "/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0");
  // v1 Slurm: the job's hierarchy over systemd's and the bare unified line.
  EXPECT_EQ(select_cgroup_path("12:devices:/slurm/uid_1000/job_4711/step_0/task_0\n"
                               "4:memory:/slurm/uid_1000/job_4711/step_0/task_0\n"
                               "1:name=systemd:/system.slice/slurmd.service\n0::/\n"),
            "/slurm/uid_1000/job_4711/step_0/task_0");
  // Hybrid, no job: systemd's line.
  EXPECT_EQ(select_cgroup_path("9:name=systemd:/user.slice/session-3.scope\n8:pids:/\n"
                               "4:memory:/process_api/ea222e37\n0::/\n"),
            "/user.slice/session-3.scope");
  // Hybrid whose unified line says more than "/".
  EXPECT_EQ(select_cgroup_path("1:name=systemd:/user.slice\n0::/user.slice/session-3.scope\n"),
            "/user.slice/session-3.scope");
  EXPECT_EQ(select_cgroup_path("4:memory:/a\n3:cpu:/b\n"), "/a");
  EXPECT_EQ(select_cgroup_path("0::/\n"), "/");
  EXPECT_FALSE(select_cgroup_path("garbage\n"));
  EXPECT_FALSE(select_cgroup_path(""));
}

TEST(WorkloadParsers, JobsFromCgroupPaths) {
  auto job = [](std::string_view p) {
    JobRef j = job_from_cgroup(p);
    return j.kind + " " + j.id;
  };
  EXPECT_EQ(job("/slurm/uid_1000/job_4711/step_0/task_0"), "slurm 4711");
  EXPECT_EQ(job("/system.slice/slurmstepd.scope/job_4711/step_batch/user/task_0"), "slurm 4711");
  EXPECT_EQ(job("/slurm_node7/uid_1000/job_12/step_extern"), "slurm 12");
  EXPECT_EQ(job("/system.slice/slurmstepd.scope/system"), " ");
  EXPECT_EQ(job("/job_x/y"), " ");
  EXPECT_EQ(job("/kubepods.slice/kubepods-burstable.slice/"
                "kubepods-burstable-pod1b2c3d4e_5f60_4a7b_8c9d_0e1f2a3b4c5d.slice/"
                "cri-containerd-" +
                kDocker + ".scope"),
            "kubernetes 1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(job("/kubepods.slice/kubepods-pod1b2c3d4e_5f60_4a7b_8c9d_0e1f2a3b4c5d.slice/crio-" +
                kDocker + ".scope"),
            "kubernetes 1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(job("/kubepods/burstable/pod1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d/" + kDocker),
            "kubernetes 1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(job("/kubepods/pod1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d/" + kDocker),
            "kubernetes 1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d");
  EXPECT_EQ(job("/kubepods.slice/kubepods-besteffort.slice"), " ");
  EXPECT_EQ(job("/kubepods/burstable/pod../../etc"), " ");  // not a uid
  EXPECT_EQ(job("/system.slice/docker-" + kDocker + ".scope"), "container " + kDocker);
  EXPECT_EQ(job("/docker/" + kDocker), "container " + kDocker);
  EXPECT_EQ(job("/machine.slice/libpod-" + kDocker + ".scope/container"), "container " + kDocker);
  EXPECT_EQ(job("/machine.slice/libpod-conmon-" + kDocker + ".scope"), " ");
  EXPECT_EQ(job("/system.slice/crio-" + kDocker + ".scope"), "container " + kDocker);
  EXPECT_EQ(job("/system.slice/cri-containerd-" + kDocker + ".scope"), "container " + kDocker);
  EXPECT_EQ(job("/docker/aaaaaaaaaaaa/docker/" + kDocker), "container " + kDocker);
  EXPECT_EQ(job("/system.slice/docker.service"), " ");
  EXPECT_EQ(job("/user.slice/user-1000.slice/session-3.scope"), " ");
  EXPECT_EQ(job("/"), " ");
}

TEST(WorkloadParsers, Environ) {
  EXPECT_EQ(slurm_job_from_environ("A=1\0SLURM_JOB_ID=4711\0B=2\0"s), "4711");
  EXPECT_EQ(slurm_job_from_environ("SLURM_JOB_ID=4711"s), "4711");
  EXPECT_EQ(slurm_job_from_environ("SLURM_JOB_IDX=4711\0"s), "");
  EXPECT_EQ(slurm_job_from_environ("XSLURM_JOB_ID=4711\0"s), "");
  EXPECT_EQ(slurm_job_from_environ("SLURM_JOB_ID=../x\0"s), "");
  EXPECT_EQ(slurm_job_from_environ(""), "");
}

TEST(WorkloadParsers, SlurmstepdCmdline) {
  auto step = [](std::string_view c) {
    auto s = parse_slurmstepd_cmdline(c);
    return s ? s->job + "/" + s->step : "none";
  };
  EXPECT_EQ(step("slurmstepd: [4711.batch]\0\0\0"s), "4711/batch");
  EXPECT_EQ(step("slurmstepd: [4711.0]"s), "4711/0");
  EXPECT_EQ(step("slurmstepd: [4711.extern]\0"s), "4711/extern");
  EXPECT_EQ(step("slurmstepd: [4711.interactive]                 "s), "4711/interactive");
  EXPECT_EQ(step("slurmstepd: [4711]"s), "4711/");
  EXPECT_EQ(step("/usr/sbin/slurmstepd\0"s), "none");
  EXPECT_EQ(step("slurmstepd: [x.batch]"s), "none");
  EXPECT_EQ(step("slurmstepd: [4711.batch"s), "none");
  EXPECT_EQ(step(""), "none");
}

TEST(WorkloadParsers, Passwd) {
  auto users = parse_passwd(
      "root:x:0:0:root:/root:/bin/bash\n#comment:x:5:5\n+nis::::::\nalice:x:1000:1000::/:/bin/sh\n"
      "alias:x:1000:1000::/:/bin/sh\nbad:x:notanumber:0::/:/bin/sh\nshort\n");
  EXPECT_EQ(users.size(), 2u);
  EXPECT_EQ(users[0], "root");
  EXPECT_EQ(users[1000], "alice");
}

// --- NVML's graphics processes through the real probe child ------------------------

TEST(WorkloadNvml, FakeGraphicsProcessesReachTheSnapshot) {
  testing_fakes::TempScenario sc(R"({
    "driver_version": "550.54.14",
    "cuda_driver_version": 12040,
    "gpus": [
      {"bus_id": "0000:01:00.0", "name": "NVIDIA GeForce RTX 4090",
       "processes": [{"pid": 100, "used_memory_bytes": 1073741824}],
       "graphics_processes": [{"pid": 400, "used_memory_bytes": 67108864},
                              {"pid": 100, "used_memory_bytes": null}]},
      {"bus_id": "0000:21:00.0", "name": "NVIDIA GeForce RTX 4090"}
    ]
  })");
  testing_fakes::ScopedEnv env("GPUDOCTOR_FAKE_SCENARIO", sc.path());
  ProbeOptions opt = testing_fakes::fake_options();
  opt.cuda = false;
  Snapshot s;
  probe_hardware(opt, &s);
  ASSERT_EQ(s.nvml.gpus.size(), 2u) << s.nvml.child_error;
  const NvmlGpu& g = s.nvml.gpus[0];
  EXPECT_EQ(g.graphics_processes.rc, 0);
  ASSERT_EQ(g.graphics_processes.value.size(), 2u);
  EXPECT_EQ(g.graphics_processes.value[0].pid, 400u);
  EXPECT_EQ(g.graphics_processes.value[0].used_memory_bytes, 64ull << 20);
  EXPECT_EQ(g.graphics_processes.value[1].pid, 100u);
  EXPECT_FALSE(g.graphics_processes.value[1].used_memory_bytes.has_value());
  EXPECT_EQ(s.nvml.gpus[1].graphics_processes.rc, 0);  // default: none
  EXPECT_TRUE(s.nvml.gpus[1].graphics_processes.value.empty());

  // And on into the workload: pid 100 uses GPU 0 twice, as compute and graphics.
  TempDir root("workload");
  make_node(root);
  opt.root = root.path();
  ProbeRecord r = probe_workload(opt, &s);
  EXPECT_EQ(r.status, ProbeStatus::kOk) << r.detail;
  const GpuProcess* p = find(s, 100);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_EQ(p->gpus[0].bus_id, "0000:01:00.0");
  EXPECT_EQ(p->gpus[0].kind, "compute");
  EXPECT_EQ(p->gpus[1].kind, "graphics");
  EXPECT_EQ(p->job_state, "running");
  EXPECT_EQ(find(s, 400)->gpus.at(0).kind, "graphics");
}

}  // namespace
}  // namespace gd
