// The probe-child runner and the child output protocol, with /bin/sh as the
// child.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "probe/child.h"
#include "probe/hw_common.h"

namespace gd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

ChildSpec shell(const std::string& script) {
  ChildSpec spec;
  spec.exe = "/bin/sh";
  spec.args = {"-c", script};
  spec.env = {"PATH=/usr/bin:/bin"};
  return spec;
}

Clock::time_point in(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// True once `pid` is gone or a zombie waiting for init.
bool process_gone(int pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ChildRunner, CapturesOutputAndExitCode) {
  ChildRunner runner(in(10));
  size_t id = runner.start(shell("echo out; echo err >&2; exit 3"));
  const ChildResult& r = runner.wait(id);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.exited);
  EXPECT_TRUE(r.reaped);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err_tail, "err\n");
  EXPECT_GT(r.duration_ms, 0);
}

TEST(ChildRunner, PassesTheGivenEnvironmentOnly) {
  ChildSpec spec = shell("echo \"[$GD_X][$HOME]\"");
  spec.env.push_back("GD_X=42");
  ChildRunner runner(in(10));
  EXPECT_EQ(runner.wait(runner.start(spec)).out, "[42][]\n");
}

TEST(ChildRunner, KillsTheWholeProcessGroupAtTheDeadline) {
  auto start = Clock::now();
  ChildRunner runner(in(0.3));
  // The grandchild's pid comes out first; then both sleep past the deadline.
  size_t id = runner.start(shell("sleep 30 & echo $!; wait"));
  const ChildResult& r = runner.wait(id);
  double took = seconds_since(start);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.reaped);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_GE(took, 0.29);
  EXPECT_LT(took, 1.0);
  int grandchild = std::stoi(r.out);
  EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(ChildRunner, RunsSeveralChildrenConcurrentlyUnderOneDeadline) {
  auto start = Clock::now();
  ChildRunner runner(in(10));
  size_t a = runner.start(shell("sleep 0.5; echo a"));
  size_t b = runner.start(shell("sleep 0.5; echo b"));
  size_t c = runner.start(shell("sleep 30"));  // outlives the others: not waited for
  EXPECT_EQ(runner.wait(b).out, "b\n");
  EXPECT_EQ(runner.wait(a).out, "a\n");
  EXPECT_LT(seconds_since(start), 1.3);  // one after the other would take 1.0 s + c
  (void)c;
}

TEST(ChildRunner, WaitAllKillsOnlyWhatOutlivesTheDeadline) {
  ChildRunner runner(in(0.5));
  size_t fast = runner.start(shell("echo fast"));
  size_t slow = runner.start(shell("exec sleep 30"));
  runner.wait_all();
  EXPECT_FALSE(runner.result(fast).timed_out);
  EXPECT_EQ(runner.result(fast).out, "fast\n");
  EXPECT_TRUE(runner.result(slow).timed_out);
}

TEST(ChildRunner, RecordsACrashBySignal) {
  ChildRunner runner(in(10));
  const ChildResult& r = runner.wait(runner.start(shell("kill -SEGV $$")));
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(signal_name(r.signal), "SIGSEGV");
}

TEST(ChildRunner, RecordsAProgramThatCannotStart) {
  ChildSpec spec;
  spec.exe = "/nonexistent/gpudoctor";
  ChildRunner runner(in(10));
  const ChildResult& r = runner.wait(runner.start(spec));
  EXPECT_FALSE(r.started);
  EXPECT_THAT(r.start_error, HasSubstr("No such file"));
}

TEST(ChildRunner, BoundsStdout) {
  ChildSpec spec = shell("head -c 100000 /dev/zero");
  spec.max_stdout_bytes = 1000;
  ChildRunner runner(in(10));
  const ChildResult& r = runner.wait(runner.start(spec));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);  // read to the end, not blocked
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
}

// --- stdin: send() and wait_until() (the CUDA probe's gate) --------------------------

TEST(ChildRunner, SendWritesTheLineAndClosesStdin) {
  ChildSpec spec = shell("read line; echo \"got:$line\"; cat; echo eof");
  spec.stdin_pipe = true;
  ChildRunner runner(in(10));
  size_t id = runner.start(spec);
  EXPECT_TRUE(runner.send(id, "{\"allow\": []}\nrest"));
  // cat reaches EOF only because send closed the stream.
  const ChildResult& r = runner.wait(id);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "got:{\"allow\": []}\nresteof\n");
  EXPECT_FALSE(runner.send(id, "again"));  // once only
}

TEST(ChildRunner, WithoutStdinPipeStdinIsDevNullAndSendRefuses) {
  ChildRunner runner(in(10));
  size_t id = runner.start(shell("cat; echo done"));
  EXPECT_FALSE(runner.send(id, "x\n"));
  EXPECT_EQ(runner.wait(id).out, "done\n");
}

// A child that closed its stdin: send() reports it and this process lives on
// with SIGPIPE at its default action (which would end it).
TEST(ChildRunner, SendToAChildThatClosedStdinIsFalseAndNoSigpipe) {
  struct sigaction old {};
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, &old);
  bool closed = false;
  ChildSpec spec = shell("exec 0<&-; echo closed; sleep 2");
  spec.stdin_pipe = true;
  spec.on_stdout_line = [&](std::string_view line) { closed = closed || line == "closed"; };
  ChildRunner runner(in(10));
  size_t id = runner.start(spec);
  auto until = in(5);
  while (!closed && Clock::now() < until) runner.wait_until(id, in(0.01));
  ASSERT_TRUE(closed);
  EXPECT_FALSE(runner.send(id, "{}\n"));
  sigaction(SIGPIPE, &old, nullptr);
}

TEST(ChildRunner, SendToAChildThatExitedIsFalse) {
  ChildSpec spec = shell("exit 0");
  spec.stdin_pipe = true;
  ChildRunner runner(in(10));
  size_t id = runner.start(spec);
  runner.wait(id);
  EXPECT_FALSE(runner.send(id, "{}\n"));
}

// More than the stream holds, to a child that never reads: send gives up
// after its short limit instead of blocking the runner.
TEST(ChildRunner, SendNeverBlocksLongOnAChildThatDoesNotRead) {
  ChildSpec spec = shell("exec sleep 5");
  spec.stdin_pipe = true;
  ChildRunner runner(in(10));
  size_t id = runner.start(spec);
  auto start = Clock::now();
  EXPECT_FALSE(runner.send(id, std::string(16u << 20, 'x')));
  EXPECT_LT(seconds_since(start), 1.0);
}

TEST(ChildRunner, WaitUntilReturnsAtTheTimeAndServicesTheOthers) {
  ChildRunner runner(in(10));
  size_t slow = runner.start(shell("exec sleep 5"));
  size_t fast = runner.start(shell("echo fast"));
  auto start = Clock::now();
  EXPECT_FALSE(runner.wait_until(slow, in(0.3)));
  double took = seconds_since(start);
  EXPECT_GE(took, 0.29);
  EXPECT_LT(took, 1.5);
  // The other child finished meanwhile, its output read.
  EXPECT_TRUE(runner.wait_until(fast, Clock::now()));
  EXPECT_EQ(runner.result(fast).out, "fast\n");
  EXPECT_FALSE(runner.result(slow).timed_out);
}

TEST(ChildRunner, WaitUntilReturnsOnceTheChildFinished) {
  ChildRunner runner(in(10));
  size_t id = runner.start(shell("sleep 0.1; echo hi"));
  auto start = Clock::now();
  EXPECT_TRUE(runner.wait_until(id, in(5)));
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_EQ(runner.result(id).out, "hi\n");
}

TEST(ChildRunner, AChildWaitingOnStdinIsKilledAtTheDeadline) {
  ChildSpec spec = shell("read line; echo never");
  spec.stdin_pipe = true;
  ChildRunner runner(in(0.3));
  const ChildResult& r = runner.wait(runner.start(spec));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.out, "");
}

TEST(ChildOutputProtocol, KeepsTheFinalResultAndIgnoresLibraryChatter) {
  std::string out =
      "\n@nvmlInit_v2\n\n#{\"init_rc\":0}\nsome library printed this\n"
      "\n@nvmlDeviceGetCount_v2\n\n{\"init_rc\":0,\"x\":1}\n";
  ParsedChildOutput p = parse_child_output(out);
  ASSERT_TRUE(p.has_result);
  EXPECT_EQ(p.result["x"], 1);
  EXPECT_TRUE(p.has_checkpoint);
  EXPECT_EQ(p.last_call, "nvmlDeviceGetCount_v2");
  ChildResult r;
  r.started = r.exited = r.reaped = true;
  r.exit_code = 0;
  EXPECT_EQ(child_failure(r, p), "");
}

TEST(ChildOutputProtocol, NamesTheCallInFlightOnTimeoutAndCrash) {
  ParsedChildOutput p = parse_child_output("\n@cuInit\n#{\"init_rc\":-1}\n\n@cuDeviceGet (devi");
  EXPECT_FALSE(p.has_result);
  EXPECT_TRUE(p.has_checkpoint);
  EXPECT_EQ(p.last_call, "cuDeviceGet (devi");
  ChildResult hung;
  hung.started = hung.timed_out = hung.reaped = true;
  hung.duration_ms = 10000;
  EXPECT_EQ(child_failure(hung, parse_child_output("\n@cuInit\n")),
            "timeout after 10.0 s in cuInit");
  ChildResult crashed;
  crashed.started = crashed.reaped = true;
  crashed.signal = SIGSEGV;
  EXPECT_EQ(child_failure(crashed, parse_child_output("\n@cuInit\n")),
            "crashed: SIGSEGV in cuInit");
}

TEST(ChildOutputProtocol, ReportsBadOutput) {
  ChildResult r;
  r.started = r.exited = r.reaped = true;
  r.exit_code = 0;
  EXPECT_EQ(child_failure(r, parse_child_output("")), "bad output: no result");
  EXPECT_THAT(child_failure(r, parse_child_output("\n{\"init_rc\": 0,\n")),
              StartsWith("bad output: result line is not complete JSON"));
  r.exit_code = 64;
  r.err_tail = "gpudoctor: unknown flag --x\n";
  EXPECT_EQ(child_failure(r, parse_child_output("")),
            "exited with code 64: gpudoctor: unknown flag --x");
}

TEST(HardwareIds, NormalizesBusIdsToTheSysfsForm) {
  EXPECT_EQ(normalize_bus_id("00000000:17:00.0"), "0000:17:00.0");   // NVML
  EXPECT_EQ(normalize_bus_id("0000:3B:00.0"), "0000:3b:00.0");       // CUDA
  EXPECT_EQ(normalize_bus_id("00010000:AB:1F.7"), "10000:ab:1f.7");  // 5+ digit domains exist
  EXPECT_EQ(normalize_bus_id("GARBAGE"), "garbage");
  EXPECT_EQ(normalize_bus_id("0000:17:00.0 "), "0000:17:00.0 ");
  EXPECT_EQ(normalize_bus_id(""), "");
}

TEST(HardwareIds, FormatsUuidBytes) {
  const unsigned char b[16] = {0x1b, 0x9a, 0x0c, 0x7e, 0x0d, 0x3f, 0x4c, 0x1e,
                               0x9a, 0x52, 0x00, 0x00, 0x00, 0x00, 0x00, 0x41};
  EXPECT_EQ(format_uuid(b), "GPU-1b9a0c7e-0d3f-4c1e-9a52-000000000041");
}

TEST(SignalName, NamesEachSignalByItsMacroAndANumberOtherwise) {
  // Our own table since the release binaries run on glibc 2.31, which
  // lacks sigabbrev_np.
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGSTKFLT), "SIGSTKFLT");
  EXPECT_EQ(signal_name(SIGSYS), "SIGSYS");
  EXPECT_EQ(signal_name(SIGRTMIN + 3), "signal " + std::to_string(SIGRTMIN + 3));
  EXPECT_EQ(signal_name(0), "signal 0");
}

}  // namespace
}  // namespace gd
