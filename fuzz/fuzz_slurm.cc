// libFuzzer target: `scontrol show node -o NAME` output as `check --slurm`
// reads it (report/slurm.h), and the drain reason made from a finding. Any
// text either yields a node with a state or is refused with one line; a
// reason is always printable ASCII without quotes, at most
// kSlurmReasonMax characters.
//
//   NodeName=gpu-07 Arch=x86_64 CoresPerSocket=32 ... State=IDLE+DRAIN ...
//   Reason=gpudoctor: xid.79 GPU 0000:17:00.0 [root@2026-12-03T10:00:01]
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/invariants.h"
#include "report/slurm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto node = gd::parse_scontrol_node(text, "");
  if (!node.ok()) {
    GD_REQUIRE(!node.error().empty());
    GD_REQUIRE(node.error().find('\n') == std::string::npos);
  } else {
    GD_REQUIRE(!node->state.empty());
  }
  // The same bytes as a finding's id and GPUs: the reason stays safe to
  // hand to scontrol and to show in sinfo's column.
  gd::Finding f;
  f.id = std::string(text.substr(0, size / 2));
  f.gpus.emplace_back(text.substr(size / 2));
  std::string reason = gd::slurm_drain_reason(f);
  GD_REQUIRE(reason.size() <= gd::kSlurmReasonMax);
  for (char c : reason) {
    GD_REQUIRE(c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\');
  }
  return 0;
}
