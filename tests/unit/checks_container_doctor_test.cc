// The container doctor's host and pod checks (docs/containers.md): CDI specs
// against the driver and GPUs, the toolkit's no-cgroups beside the engines
// that run, a preloaded GPU-sharing layer; and the CDI spec reader they
// rest on (probe/cdi.h), YAML as nvidia-ctk writes it, JSON, and garbage.
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "probe/cdi.h"
#include "snapshot_builders.h"

namespace gd {
namespace {

using namespace gd::fixtures;

const Config kConfig;

constexpr const char* kYaml = R"(---
cdiVersion: 0.5.0
containerEdits:
  deviceNodes:
  - path: /dev/nvidiactl
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  hooks:
  - args:
    - nvidia-ctk
    - hook
    hookName: createContainer
    path: /usr/bin/nvidia-ctk
  mounts:
  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.161.07
    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.161.07
    options:
    - ro
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- name: 'GPU-1b9a0c7e'
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia1
kind: nvidia.com/gpu
)";

TEST(CdiSpec, ReadsTheYamlNvidiaCtkWrites) {
  auto s = parse_cdi_spec(kYaml);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(s->kind, "nvidia.com/gpu");
  EXPECT_EQ(s->devices, (std::vector<std::string>{"0", "GPU-1b9a0c7e"}));
  // The hook's "path" is no device node; the devices' and common ones are.
  EXPECT_EQ(s->device_nodes,
            (std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1"}));
  EXPECT_EQ(s->host_paths,
            std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libcuda.so.535.161.07"});
}

TEST(CdiSpec, ReadsJsonAndRefusesWhatIsNeither) {
  auto j =
      parse_cdi_spec(R"({"kind":"nvidia.com/gpu","devices":[{"name":"all","containerEdits":)"
                     R"({"deviceNodes":[{"path":"/dev/nvidia0"}]}}],"containerEdits":{"mounts":)"
                     R"([{"hostPath":"/usr/lib/libnvidia-ml.so.550.54.14"}]}})");
  ASSERT_TRUE(j.ok()) << j.error();
  EXPECT_EQ(j->devices, std::vector<std::string>{"all"});
  EXPECT_EQ(j->device_nodes, std::vector<std::string>{"/dev/nvidia0"});
  EXPECT_EQ(j->host_paths, std::vector<std::string>{"/usr/lib/libnvidia-ml.so.550.54.14"});
  for (const char* bad : {"", "   \n", "{not json", "[1,2]", "devices:\n- name: 0\n",
                          "\x01\x02\xff", "kind:\n  nested: x\n"}) {
    auto r = parse_cdi_spec(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().find('\n'), std::string::npos);
    }
  }
}

CdiSpec spec_for(const std::string& driver, std::vector<std::string> nodes) {
  CdiSpec c;
  c.path = "/etc/cdi/nvidia.yaml";
  c.kind = "nvidia.com/gpu";
  c.devices = {"0", "all"};
  c.device_nodes = std::move(nodes);
  c.host_paths = {"/usr/lib/x86_64-linux-gnu/libcuda.so." + driver};
  return c;
}

TEST(ContainerDoctor, CdiSpecStaleAfterAnUpgradeOrWithGpusLeftOut) {
  constexpr const char* kId = "container.cdi-stale";
  Snapshot s = ws_4x4090();  // driver 550.54.14, /dev/nvidia0-3
  EXPECT_EQ(only(check_cdi_specs(s, kConfig), kId).severity, Severity::kNotApplicable);
  std::vector<std::string> all = {"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"};
  s.container.cdi_specs = {spec_for("550.54.14", all)};
  EXPECT_EQ(only(check_cdi_specs(s, kConfig), kId).severity, Severity::kOk);

  s.container.cdi_specs = {spec_for("535.161.07", all)};
  s.container.cdi_specs[0].missing = {"/usr/lib/x86_64-linux-gnu/libcuda.so.535.161.07"};
  Finding f = only(check_cdi_specs(s, kConfig), kId);
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f, "generated for driver 535.161.07; the running driver is 550.54.14"));
  EXPECT_TRUE(evidence_has(f, "1 of the paths it names do not exist"));
  EXPECT_TRUE(remedy_has(f, "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"));

  s.container.cdi_specs = {spec_for("550.54.14", {"/dev/nvidia0", "/dev/nvidia1"})};
  f = only(check_cdi_specs(s, kConfig), kId);
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f,
                           "gives containers 2 GPU nodes; this machine also has /dev/nvidia2, "
                           "/dev/nvidia3"));

  // Another vendor's spec, or one that did not parse, is not judged.
  s.container.cdi_specs[0].kind = "amd.com/gpu";
  EXPECT_EQ(only(check_cdi_specs(s, kConfig), kId).severity, Severity::kNotApplicable);
}

TEST(ContainerDoctor, NoCgroupsOnlyHurtsBesideARootfulEngine) {
  constexpr const char* kId = "container.no-cgroups";
  Snapshot s = ws_4x4090();
  EXPECT_EQ(only(check_container_toolkit(s, kConfig), kId).severity, Severity::kNotApplicable);
  s.container.toolkit_no_cgroups = "false";
  EXPECT_EQ(only(check_container_toolkit(s, kConfig), kId).severity, Severity::kOk);
  s.container.toolkit_no_cgroups = "true";
  EXPECT_EQ(only(check_container_toolkit(s, kConfig), kId).severity, Severity::kOk);  // rootless
  s.processes.push_back({1187, "dockerd"});
  Finding f = only(check_container_toolkit(s, kConfig), kId);
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_NE(f.summary.find("while dockerd starts containers as root"), std::string::npos);
  EXPECT_TRUE(remedy_has(f, "no-cgroups = false"));
  s.processes.push_back({1300, "rootlesskit"});  // a rootless dockerd
  EXPECT_EQ(only(check_container_toolkit(s, kConfig), kId).severity, Severity::kOk);
}

TEST(ContainerDoctor, HamiCoreLoadedOrMissing) {
  Snapshot s = ws_4x4090();
  EXPECT_EQ(only(check_gpu_interposer(s, kConfig), "container.gpu-interposer").severity,
            Severity::kNotApplicable);
  s.container.preloads = {{"/usr/lib/libjemalloc.so.2", "LD_PRELOAD", true}};
  EXPECT_EQ(only(check_gpu_interposer(s, kConfig), "container.gpu-interposer").severity,
            Severity::kOk);
  s.container.preloads.push_back({"/usr/local/vgpu/libvgpu.so", "/etc/ld.so.preload", true});
  s.env.vars["CUDA_DEVICE_MEMORY_LIMIT_0"] = "10240m";
  Finding f = only(check_gpu_interposer(s, kConfig), "container.gpu-interposer");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_TRUE(evidence_has(f, "/usr/local/vgpu/libvgpu.so (/etc/ld.so.preload)"));
  EXPECT_TRUE(evidence_has(f, "CUDA_DEVICE_MEMORY_LIMIT_0=10240m"));
  s.container.preloads.back().loadable = false;
  f = only(check_gpu_interposer(s, kConfig), "container.gpu-interposer-missing");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_TRUE(evidence_has(f, "missing, empty or unreadable"));
}

}  // namespace
}  // namespace gd
