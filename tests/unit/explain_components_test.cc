// explain: a component of the stack named in prose beside a failure word
// (catalog/components.h, explain/parse_components.cc) gives its signal, and
// the component's first candidate comes first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "catalog/components.h"
#include "catalog/findings.h"
#include "explain/explain.h"
#include "explain/parse.h"

namespace gd {
namespace {

// The component keys the text's reported lines name, in order.
std::vector<std::string> component_kinds(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& r : s.reported) {
    if (r.kind.starts_with(kComponentKindPrefix)) {
      out.push_back(r.kind.substr(kComponentKindPrefix.size()));
    }
  }
  return out;
}

struct Named {
  const char* text;
  const char* key;       // the component the line names
  const char* first_id;  // what explain ranks first
};

const Named kNamed[] = {
    // The one-line report: the fabric manager missing and CUDA's 802.
    {"nvidia-fabricmanager is not installed, and torch.cuda.is_available() fails with error 802: "
     "system not yet initialized",
     "fabric-manager", "fabric-manager.not-running"},
    {"The fabric manager service keeps failing on our HGX H100 node since the upgrade.",
     "fabric-manager", "fabric-manager.not-running"},
    {"After the driver update nvidia_uvm isn't loaded any more and my CUDA programs won't start.",
     "uvm", "uvm.missing"},
    {"The nvidia module fails to load because nouveau is still bound to the card.", "nouveau",
     "driver.nouveau"},
    {"With Secure Boot enabled the freshly built nvidia module cannot be loaded.", "secure-boot",
     "driver.module-load-failed"},
    {"MOK enrollment was rejected after installing the 550 driver.", "secure-boot",
     "driver.module-load-failed"},
    {"MIG is enabled on the A100 but CUDA can't find any device.", "mig", "mig.no-instances"},
    {"Our cluster sets ulimit -v 8000000 and now every CUDA program fails at startup.",
     "address-space", "memory.address-space-limit"},
    {"Access to /dev/nvidia0 is denied by the device cgroup after systemctl daemon-reload.",
     "cgroup", "cgroup.device-denied"},
    {"podman run --device nvidia.com/gpu=all fails: the CDI spec still lists the old driver's "
     "libraries.",
     "cdi", "container.cdi-stale"},
    {"The NVIDIA device plugin pod is running but the node still isn't showing any GPUs.",
     "device-plugin", "container.runtime-not-configured"},
    {"The P2P bandwidth test fails between the two GPUs behind the PLX switch; ACS is on.", "iommu",
     "p2p.blocked"},
    {"NCCL all_reduce never finishes and then times out with the IOMMU on; errors in dmesg too.",
     "iommu", "p2p.blocked"},
    {"After a suspend of the laptop CUDA fails until I reboot.", "suspend", "driver.after-suspend"},
    {"The GPU stopped working after the machine resumed from sleep.", "suspend",
     "driver.after-suspend"},
    {"DKMS failed to build the nvidia module for the new 6.8 kernel.", "dkms",
     "driver.module-missing-for-kernel"},
};

TEST(ExplainComponents, EachNamedComponentGivesItsSignalAndFirstCause) {
  for (const Named& n : kNamed) {
    SCOPED_TRACE(n.text);
    Snapshot s = snapshot_from_text(n.text);
    std::vector<std::string> kinds = component_kinds(s);
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), n.key), kinds.end());
    Report r = explain_snapshot(s, Config{});
    ASSERT_FALSE(r.findings.empty());
    EXPECT_EQ(r.findings[0].id, n.first_id);
    const Component* c = find_component(n.key);
    ASSERT_NE(c, nullptr);
    // ranked_by says which words pointed at it.
    bool said = false;
    for (const auto& f : r.findings) {
      said = said || f.ranked_by.find(std::string(c->name) + " named beside a failure") !=
                         std::string::npos;
    }
    EXPECT_TRUE(said);
  }
}

TEST(ExplainComponents, TheFabricManagerSentenceCitesItsLine) {
  Snapshot s = snapshot_from_text(kNamed[0].text);
  Report r = explain_snapshot(s, Config{});
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.id, "fabric-manager.not-running");
  // The 802 and the words both point at it.
  EXPECT_NE(f.ranked_by.find("CUDA error 802"), std::string::npos) << f.ranked_by;
  EXPECT_NE(f.ranked_by.find("the fabric manager named beside a failure"), std::string::npos)
      << f.ranked_by;
  ASSERT_FALSE(f.evidence.empty());
  EXPECT_EQ(f.evidence[0].rfind("line 1: nvidia-fabricmanager is not installed", 0), 0u)
      << f.evidence[0];
}

// Lines that must not give a component signal.
const char* const kNotNamed[] = {
    // "mig", "acs", "cdi", "uvm" inside other words.
    "We tried to migrate the job to the new cluster but it failed.",
    "It might fail again tomorrow, the error is intermittent.",
    "the mig_mode field shows an error",
    "error: the lilacs folder cannot be read",
    "The mcdi firmware reported an error.",
    "error in uvmlite.py line 4",
    // A component without a failure word.
    "nvidia-fabricmanager is active (running) since Mon",
    "$ dkms status",
    "MIG mode is enabled on GPU 0",
    // Named as an example of something else.
    "another driver, such as nouveau, is present and the module failed to load",
    "the module failed to load, e.g. the fabric manager",
    // A state that rules the component out.
    "Secure Boot is disabled, yet the module fails to load.",
    "IOMMU disabled in the BIOS and the test still fails",
    // Another limit, another cgroup, another resume.
    "ulimit -l unlimited failed: operation not permitted",
    "Memory cgroup out of memory: Killed process 1234 (python), error",
    "Failed to resume training from checkpoint epoch_3.pt",
    // A compiler out of address space is the build machine's problem.
    "cc1plus: out of memory: virtual memory exhausted: Cannot allocate memory (error)",
};

TEST(ExplainComponents, WordsThatNameNoComponentFailing) {
  for (const char* text : kNotNamed) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(component_kinds(snapshot_from_text(text)).empty());
  }
}

TEST(ExplainComponents, OnlyTheLineThatSaysItFailed) {
  // The component on one line, the failure on the next: no signal.
  Snapshot s = snapshot_from_text("$ systemctl status nvidia-fabricmanager\nError: 802\n");
  EXPECT_TRUE(component_kinds(s).empty());
  // One line naming two components gives both.
  s = snapshot_from_text("nvidia_uvm fails to load since the last suspend");
  std::vector<std::string> kinds = component_kinds(s);
  EXPECT_EQ(kinds, (std::vector<std::string>{"uvm", "suspend"}));
  // A short word inside a longer one, on a line that names another component.
  s = snapshot_from_text("the fabric manager failed while we might migrate the racks");
  EXPECT_EQ(component_kinds(s), std::vector<std::string>{"fabric-manager"});
  s = snapshot_from_text("DKMS error, see the lilacs and mcdi notes in uvmlite");
  EXPECT_EQ(component_kinds(s), std::vector<std::string>{"dkms"});
}

TEST(ExplainComponents, TableIdsExistAndWordsAreLowerCase) {
  ASSERT_FALSE(components().empty());
  for (const Component& c : components()) {
    SCOPED_TRACE(c.key);
    EXPECT_EQ(find_component(c.key), &c);
    EXPECT_NE(std::string(c.source).find("docs/"), std::string::npos);
    ASSERT_FALSE(c.words.empty());
    ASSERT_FALSE(c.ids.empty());
    for (const char* id : c.ids) EXPECT_NE(find_catalog_entry(id), nullptr) << id;
    for (std::string_view w : c.words) {
      EXPECT_TRUE(std::none_of(w.begin(), w.end(), [](char ch) { return std::isupper(ch); })) << w;
    }
  }
  EXPECT_EQ(find_component("no-such-component"), nullptr);
}

}  // namespace
}  // namespace gd
