// container.shm-too-small: /dev/shm smaller than NCCL asks for. NCCL keeps
// its shared-memory transport between a node's GPUs (and its proxy buffers)
// in /dev/shm and fails to initialize when it cannot extend a segment; the
// NCCL user guide asks containers for --shm-size=1g (docs/nvidia-facts.md
// §12.1). Docker and Kubernetes give 64 MiB by default. PyTorch's DataLoader
// workers pass batches through the same place.
#include <fmt/format.h>

#include <algorithm>

#include "checks/checks.h"
#include "checks/driver_helpers.h"
#include "checks/util.h"
#include "util/bytes.h"

namespace gd {
namespace {

// NCCL user guide, Troubleshooting, "Shared memory": --shm-size=1g (§12.1).
constexpr int64_t kNcclShmBytes = int64_t{1} << 30;

}  // namespace

std::vector<Finding> check_shm_size(const Snapshot& s, const Config&) {
  constexpr const char* kId = "container.shm-too-small";
  const ContainerInfo& c = s.container;
  if (c.shm_mount.empty()) return not_applicable(kId, "/dev/shm is not a mount of its own here");
  if (c.shm_bytes < 0) {
    return all_ok(kId, "/dev/shm has no size limit of its own (tmpfs: half of memory)");
  }
  size_t gpus = std::max(s.nvml.gpus.size(), pci_gpus(s).size());
  std::string size = format_bytes(static_cast<uint64_t>(c.shm_bytes));
  if (c.shm_bytes >= kNcclShmBytes) {
    Finding f = make_finding(kId, Severity::kOk, "/dev/shm holds " + size);
    f.evidence.push_back(c.shm_mount);
    return {f};
  }
  // One GPU: NCCL has no peer on this node; only DataLoader workers may run short.
  Severity sev = gpus >= 2 ? Severity::kWarn : Severity::kInfo;
  Finding f = make_finding(
      kId, sev,
      fmt::format("/dev/shm holds only {}{}: NCCL between this node's GPUs fails to start when "
                  "it cannot create its shared-memory segments (it asks for 1 GiB)",
                  size,
                  c.in_container && c.shm_bytes == 64 << 20 ? ", the container default" : ""));
  f.evidence.push_back("/proc/self/mounts: " + c.shm_mount);
  if (gpus > 0)
    f.evidence.push_back(fmt::format("{} GPU{} on this node", gpus, gpus == 1 ? "" : "s"));
  f.remedy = {"docker run --shm-size=1g --ulimit memlock=-1 ...   # or --ipc=host",
              "Kubernetes: mount an emptyDir with medium: Memory at /dev/shm",
              "On a host: sudo mount -o remount,size=1G /dev/shm (and in /etc/fstab)"};
  return {f};
}

}  // namespace gd
