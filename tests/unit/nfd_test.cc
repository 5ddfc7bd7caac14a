// `gpudoctor labels`: Node Feature Discovery labels (src/report/nfd.h). Every
// label name and value must pass Kubernetes' validation whatever a snapshot
// holds, and the feature file must stay one `name=value` per line.
#include "report/nfd.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <sstream>

#include "checks/runner.h"
#include "config/config.h"
#include "snapshot_builders.h"
#include "test_util.h"

namespace gd {
namespace {

using fixtures::hgx_8xh100;
using fixtures::nv_ok;
using fixtures::nv_rc;
using fixtures::unload_driver;
using fixtures::ws_4x4090;

// Kubernetes' own expressions (k8s.io/apimachinery validation), as an
// independent check of the hand-written validators and the sanitizer.
const std::regex kValueRe("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$");
const std::regex kPrefixRe("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");

bool k8s_valid_value(const std::string& v) {
  return v.size() <= 63 && std::regex_match(v, kValueRe);
}

bool k8s_valid_name(const std::string& n) {
  size_t slash = n.find('/');
  std::string name = slash == std::string::npos ? n : n.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string prefix = n.substr(0, slash);
    if (prefix.size() > 253 || !std::regex_match(prefix, kPrefixRe)) return false;
  }
  return !name.empty() && k8s_valid_value(name);
}

using testing_util::checked;

std::map<std::string, std::string> as_map(const std::vector<NfdLabel>& labels) {
  std::map<std::string, std::string> out;
  for (const auto& l : labels) {
    EXPECT_TRUE(out.emplace(l.name, l.value).second) << "repeated label " << l.name;
  }
  return out;
}

void expect_all_valid(const std::vector<NfdLabel>& labels) {
  for (const auto& l : labels) {
    EXPECT_TRUE(k8s_valid_name(l.name)) << l.name;
    EXPECT_TRUE(k8s_valid_value(l.value)) << l.name << "=" << l.value;
    EXPECT_FALSE(l.value.empty()) << l.name;
    EXPECT_EQ(l.name.rfind("gpudoctor.io/", 0), 0u) << l.name;
  }
}

TEST(NfdValue, SanitizesToTheLabelRules) {
  EXPECT_EQ(nfd_label_value("NVIDIA H100 80GB HBM3"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(nfd_label_value("NVIDIA GeForce RTX\xe2\x84\xa2 4090"), "NVIDIA-GeForce-RTX-4090");
  EXPECT_EQ(nfd_label_value("550.54.15"), "550.54.15");
  EXPECT_EQ(nfd_label_value("xid.79"), "xid.79");
  EXPECT_EQ(nfd_label_value("  --Tesla (V100)--  "), "Tesla-V100");
  EXPECT_EQ(nfd_label_value("a__b..c"), "a__b..c");  // allowed characters stay
  EXPECT_EQ(nfd_label_value(""), "");
  EXPECT_EQ(nfd_label_value("!!! ???"), "");
  EXPECT_EQ(nfd_label_value("-_."), "");
  EXPECT_EQ(nfd_label_value(std::string(100, 'a')), std::string(63, 'a'));
  // Cut at 63 right after a separator: the separator goes too.
  EXPECT_EQ(nfd_label_value(std::string(62, 'a') + " bcd"), std::string(62, 'a'));
  // No newline, "=" or "#" survives, so a value cannot add a line, a label or a directive.
  std::string hostile = nfd_label_value("A100\ngpudoctor.io/health=ok\n# +expiry-time=2000-01-01");
  EXPECT_TRUE(k8s_valid_value(hostile)) << hostile;
  EXPECT_EQ(hostile.find_first_of("\n=# +"), std::string::npos) << hostile;
}

TEST(NfdValue, AnyInputGivesAValidValue) {
  std::mt19937 rng(20240501);  // fixed seed: the same strings every run
  std::uniform_int_distribution<int> byte(0, 255), len(0, 120);
  for (int i = 0; i < 5000; ++i) {
    std::string raw;
    int n = len(rng);
    for (int j = 0; j < n; ++j) raw += static_cast<char>(byte(rng));
    std::string v = nfd_label_value(raw);
    ASSERT_TRUE(k8s_valid_value(v)) << "from " << i << ": " << v;
    ASSERT_EQ(valid_label_value(v), true) << v;
  }
}

TEST(NfdValue, ValidatorsAgreeWithKubernetes) {
  for (const char* v : {"", "a", "A-1", "1.2.3", "a_b",
                        "x"
                        "y",
                        "NVIDIA-H100-80GB-HBM3"}) {
    EXPECT_TRUE(valid_label_value(v)) << v;
    EXPECT_EQ(valid_label_value(v), k8s_valid_value(v)) << v;
  }
  for (const char* v : {"-a", "a-", ".a", "a b", "a/b", "a=b", "é", "a\n"}) {
    EXPECT_FALSE(valid_label_value(v)) << v;
    EXPECT_EQ(valid_label_value(v), k8s_valid_value(v)) << v;
  }
  EXPECT_FALSE(valid_label_value(std::string(64, 'a')));
  for (const char* n : {"gpudoctor.io/gpu.count", "health", "feature.node.kubernetes.io/x-y"}) {
    EXPECT_TRUE(valid_label_name(n)) << n;
    EXPECT_EQ(valid_label_name(n), k8s_valid_name(n)) << n;
  }
  for (const char* n : {"", "/x", "Gpudoctor.io/x", "gpudoctor.io/", "a..b/x", "-a.io/x",
                        "gpudoctor.io/-x", "a/b/c"}) {
    EXPECT_FALSE(valid_label_name(n)) << n;
    EXPECT_EQ(valid_label_name(n), k8s_valid_name(n)) << n;
  }
}

TEST(NfdLabels, HealthyHgxNode) {
  Snapshot s = hgx_8xh100();
  Report r = checked(s);
  auto labels = nfd_labels(s, r);
  expect_all_valid(labels);
  auto m = as_map(labels);
  EXPECT_EQ(m["gpudoctor.io/gpu.count"], "8");
  EXPECT_EQ(m["gpudoctor.io/gpu.healthy-count"], "8");
  EXPECT_EQ(m["gpudoctor.io/gpu.model"], "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(m["gpudoctor.io/gpu.family"], "hopper");
  EXPECT_EQ(m["gpudoctor.io/gpu.memory-mib"], "81559");  // 85520809984 bytes
  EXPECT_EQ(m["gpudoctor.io/gpu.compute.major"], "9");
  EXPECT_EQ(m["gpudoctor.io/gpu.compute.minor"], "0");
  EXPECT_EQ(m["gpudoctor.io/driver.version"], "550.54.15");
  EXPECT_EQ(m["gpudoctor.io/driver.major"], "550");
  EXPECT_EQ(m["gpudoctor.io/driver.minor"], "54");
  EXPECT_EQ(m["gpudoctor.io/driver.rev"], "15");
  EXPECT_EQ(m["gpudoctor.io/cuda.driver.major"], "12");
  EXPECT_EQ(m["gpudoctor.io/cuda.driver.minor"], "4");
  EXPECT_EQ(m["gpudoctor.io/health"], severity_name(r.verdict));
  EXPECT_TRUE(r.verdict == Severity::kOk || r.verdict == Severity::kInfo);
  EXPECT_EQ(m.count("gpudoctor.io/health.finding"), 0u);
}

TEST(NfdLabels, FailingNodeCarriesTheFindingAndLosesUnknownValues) {
  Snapshot s = hgx_8xh100();
  unload_driver(s);
  Report r = checked(s);
  ASSERT_EQ(r.verdict, Severity::kFail);
  auto labels = nfd_labels(s, r);
  expect_all_valid(labels);
  auto m = as_map(labels);
  EXPECT_EQ(m["gpudoctor.io/health"], "fail");
  EXPECT_EQ(m["gpudoctor.io/health.finding"], r.findings.front().id);
  EXPECT_EQ(m["gpudoctor.io/gpu.count"], "8");  // still on the bus
  EXPECT_EQ(m["gpudoctor.io/gpu.healthy-count"], "0");
  // NVML did not answer: no value rather than a wrong one.
  EXPECT_EQ(m.count("gpudoctor.io/driver.version"), 0u);
  EXPECT_EQ(m.count("gpudoctor.io/gpu.memory-mib"), 0u);
  EXPECT_EQ(m.count("gpudoctor.io/cuda.driver.major"), 0u);
  // The catalog still knows the PCI device's compute capability.
  EXPECT_EQ(m["gpudoctor.io/gpu.compute.major"], "9");
}

TEST(NfdLabels, MixedModelsAndLowestCapability) {
  Snapshot s = ws_4x4090();
  s.nvml.gpus[1].name = nv_ok(std::string("NVIDIA RTX A6000"));
  s.nvml.gpus[1].cc_major = nv_ok(8);
  s.nvml.gpus[1].cc_minor = nv_ok(6);
  s.nvml.gpus[1].architecture = nv_ok(7);  // Ampere
  s.nvml.gpus[2].memory_total_bytes = nv_rc<uint64_t>(3);
  auto m = as_map(nfd_labels(s, checked(s)));
  EXPECT_EQ(m["gpudoctor.io/gpu.model"], "mixed");
  EXPECT_EQ(m.count("gpudoctor.io/gpu.family"), 0u);
  EXPECT_EQ(m["gpudoctor.io/gpu.compute.major"], "8");
  EXPECT_EQ(m["gpudoctor.io/gpu.compute.minor"], "6");
  EXPECT_FALSE(m["gpudoctor.io/gpu.memory-mib"].empty());
}

TEST(NfdLabels, HostileSnapshotStillGivesAWellFormedFile) {
  Snapshot s = ws_4x4090();
  std::string evil = "RTX\n# +expiry-time=2000-01-01T00:00:00Z\ngpudoctor.io/health=ok\r\n" +
                     std::string(300, '\xff');
  for (auto& g : s.nvml.gpus) g.name = nv_ok(evil);
  s.nvml.driver_version = nv_ok(std::string("550.54.14 \n=x"));
  s.driver.version = "550.54.14\nhealth=ok";
  s.hostname = "node\n# +expiry-time=2000-01-01T00:00:00Z";
  Report r = checked(s);
  auto labels = nfd_labels(s, r);
  expect_all_valid(labels);
  std::string file = render_nfd(s, labels, {});
  std::istringstream in(file);
  std::string line;
  size_t label_lines = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      EXPECT_NE(line.rfind("# +", 0), 0u) << "a directive we did not ask for: " << line;
      continue;
    }
    size_t eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    EXPECT_TRUE(k8s_valid_name(line.substr(0, eq))) << line;
    EXPECT_TRUE(k8s_valid_value(line.substr(eq + 1))) << line;
    ++label_lines;
  }
  EXPECT_EQ(label_lines, labels.size());
  EXPECT_EQ(as_map(labels)["gpudoctor.io/driver.major"], "550");
}

TEST(NfdFile, FormatAndExpiry) {
  Snapshot s = hgx_8xh100();
  std::vector<NfdLabel> labels = {{"gpudoctor.io/gpu.count", "8"}, {"gpudoctor.io/health", "ok"}};
  EXPECT_EQ(render_nfd(s, labels, {}),
            "# gpudoctor labels for Node Feature Discovery (docs/kubernetes.md)\n"
            "# host hgx-8xh100\n"
            "gpudoctor.io/gpu.count=8\n"
            "gpudoctor.io/health=ok\n");
  // The directive comes before every label: NFD applies it to the lines after it.
  EXPECT_EQ(render_nfd(s, labels, {"2026-12-01T10:10:00Z"}),
            "# gpudoctor labels for Node Feature Discovery (docs/kubernetes.md)\n"
            "# host hgx-8xh100\n"
            "# +expiry-time=2026-12-01T10:10:00Z\n"
            "gpudoctor.io/gpu.count=8\n"
            "gpudoctor.io/health=ok\n");
}

}  // namespace
}  // namespace gd
