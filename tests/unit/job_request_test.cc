// The GPUs a launcher asks for (probe/job_request.h) and the check that
// compares them with the GPUs the job sees (checks/device_ordinal.cc), on
// the machines of tests/unit/snapshot_builders.h.
#include "probe/job_request.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checks/checks.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

int asked(std::string_view line) {
  auto r = job_gpu_request(line);
  return r ? r->gpus : 0;
}

TEST(JobRequest, LaunchersAndTheirSpellings) {
  EXPECT_EQ(asked("torchrun --nproc_per_node=8 train.py"), 8);
  EXPECT_EQ(asked("torchrun --nnodes 1 --nproc-per-node 4 train.py --lr 3"), 4);
  EXPECT_EQ(asked("python -m torch.distributed.launch --nproc_per_node=2 --use_env main.py"), 2);
  EXPECT_EQ(asked("python3 -m torch.distributed.run --nproc_per_node 3 x.py"), 3);
  EXPECT_EQ(asked("/opt/venv/bin/torchrun --nproc_per_node=2 x.py"), 2);
  EXPECT_EQ(asked("srun --gpus-per-node=4 torchrun --nproc_per_node=4 x.py"), 4);
  EXPECT_EQ(asked("deepspeed --num_gpus 2 train.py --deepspeed ds.json"), 2);
  EXPECT_EQ(asked("accelerate launch --multi_gpu --num_processes 4 train.py"), 4);
  EXPECT_EQ(asked("user@host:~/x$ torchrun --nproc_per_node=8 train.py"), 8);
  auto r = job_gpu_request("torchrun --standalone --nproc_per_node=8 train.py");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->request, "torchrun --nproc_per_node=8");  // the asking words only
}

TEST(JobRequest, NoCountIsNoRequest) {
  EXPECT_EQ(asked("torchrun --nproc_per_node=gpu train.py"), 0);  // as many as visible
  EXPECT_EQ(asked("torchrun --nproc_per_node=auto train.py"), 0);
  EXPECT_EQ(asked("torchrun --nproc_per_node=0 train.py"), 0);
  EXPECT_EQ(asked("torchrun --nproc_per_node=99999999 train.py"), 0);
  EXPECT_EQ(asked("torchrun --nproc_per_node"), 0);  // no value
  EXPECT_EQ(asked("torchrun train.py"), 0);
  EXPECT_EQ(asked("python train.py --nproc_per_node=8"), 0);  // no launcher
  EXPECT_EQ(asked("accelerate config --num_processes 8"), 0);
  // accelerate counts every machine's processes.
  EXPECT_EQ(asked("accelerate launch --num_machines 2 --num_processes 16 t.py"), 0);
  EXPECT_EQ(asked("accelerate launch --num_machines 1 --num_processes 4 t.py"), 4);
  EXPECT_EQ(asked(""), 0);
}

Finding ordinal_check(const Snapshot& s) {
  return only(check_device_ordinal(s, kConfig), "visible-devices.ordinal-out-of-range");
}

void ask(Snapshot* s, int gpus) {
  s->env.job_gpus = gpus;
  s->env.job_request = "torchrun --nproc_per_node=" + std::to_string(gpus);
}

TEST(DeviceOrdinal, NoLauncherIsNotApplicable) {
  EXPECT_EQ(ordinal_check(ws_4x4090()).severity, Severity::kNotApplicable);
}

TEST(DeviceOrdinal, MoreProcessesThanGpusFails) {
  Snapshot s = ws_4x4090();
  ask(&s, 8);
  Finding f = ordinal_check(s);
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_NE(f.summary.find("local ranks 4-7 fail"), std::string::npos) << f.summary;
  EXPECT_TRUE(remedy_has(f, "--nproc_per_node=4")) << describe(f);
  ask(&s, 4);
  EXPECT_EQ(ordinal_check(s).severity, Severity::kOk);
}

TEST(DeviceOrdinal, TheUsersSelectionCounts) {
  Snapshot s = ws_4x4090();
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "0,1";
  user_run(s).device_count = 2;
  ask(&s, 4);
  Finding f = ordinal_check(s);
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA counts 2 devices")) << describe(f);
  // Without CUDA's own count, the selection decides.
  fail_cuda(s, 999);
  f = ordinal_check(s);
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "CUDA_VISIBLE_DEVICES=0,1 leaves 2 of the 4 GPUs")) << describe(f);
  EXPECT_NE(f.summary.find("local ranks 2-3 fail"), std::string::npos) << f.summary;
}

TEST(DeviceOrdinal, UnknownGpusStillBoundedBySelection) {
  // Pasted text: no GPU list, only the selection and the launcher.
  Snapshot s;
  s.env.vars["CUDA_VISIBLE_DEVICES"] = "2,3";
  ask(&s, 8);
  Finding f = ordinal_check(s);
  EXPECT_EQ(f.severity, Severity::kFail) << describe(f);
  EXPECT_TRUE(evidence_has(f, "names 2 GPUs at most")) << describe(f);
  ask(&s, 2);  // may fit, may not: not known
  EXPECT_EQ(ordinal_check(s).severity, Severity::kNotApplicable);
  s.env.vars.clear();
  EXPECT_EQ(ordinal_check(s).severity, Severity::kNotApplicable);
}

}  // namespace
}  // namespace gd
