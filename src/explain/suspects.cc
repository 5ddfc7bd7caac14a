// Error code -> candidate causes. Transcribed from docs/nvidia-facts.md
// §3 (CUDA codes at init, 2026-12), §4.1 (NVML codes), §6.3
// (container toolkit) and §10 (quick triage map); the order of each list is
// the order of likelihood those sections give. What the text cannot decide,
// `gpudoctor check` on the machine can: every candidate says which reading
// tells it apart.
#include "explain/suspects.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "catalog/cuda_errors.h"
#include "catalog/findings.h"
#include "checks/checks.h"
#include "checks/util.h"
#include "explain/parse.h"
#include "util/text.h"

namespace gd {
namespace {

struct Rule {
  const char* signal;
  std::vector<const char*> ids;
};

// clang-format off
const std::vector<Rule> kRules = {
  // §3 code 2 / §10 "CUDA 2 at init": host VA limits first, then a full GPU.
  {"cuda:2",   {"memory.address-space-limit", "memory.held-by-other-process"}},
  // §3 code 3: driver state, missing device nodes, fork after init.
  {"cuda:3",   {"devnodes.missing", "devnodes.permission", "driver.not-loaded", "cuda.fork-after-init"}},
  {"cuda:34",  {"cuda.stub-library"}},                                         // §3, §10
  {"cuda:35",  {"driver.too-old-for-cuda", "driver.not-loaded"}},              // §3, §10
  // §3 "Other points": PyTorch says "Found no NVIDIA driver" when the driver
  // version is 0: no driver at all, or none mounted into the container (§6.3).
  {"cuda:35-no-driver", {"driver.not-loaded", "container.no-gpus", "container.capabilities"}},
  {"cuda:no-libcuda",   {"driver.not-loaded", "container.capabilities"}},
  {"cuda:46",  {"compute-mode.exclusive"}},                                    // §3
  // §3 code 100: CUDA_VISIBLE_DEVICES empty or its first entry invalid, a
  // container given no GPU, every GPU failed. An invalid entry first: the
  // corpus's prior (docs/explain.md "Priors").
  {"cuda:100", {"visible-devices.invalid", "visible-devices.hides-all", "container.no-gpus", "mig.no-instances", "devnodes.missing"}},
  {"cuda:304", {"devnodes.permission", "cgroup.device-denied", "devnodes.rootless-denied", "devnodes.selinux-denied"}},  // §3, §7.6
  // §3, §10; the fabric chain behind 802 (docs/fabric.md), its usual breaks first.
  {"cuda:802", {"fabric-manager.not-running", "fabric-manager.version-mismatch", "fabric.ib-modules-missing"}},
  {"cuda:803", {"cuda.compat-mismatch", "driver.library-mismatch", "container.driver-mismatch"}},  // §3, §10
  {"cuda:804", {"cuda.compat-unsupported"}},                                   // §3, §10
  {"cuda:805", {"mps.unreachable"}}, {"cuda:806", {"mps.unreachable"}},        // §3 805-812
  {"cuda:807", {"mps.unreachable"}}, {"cuda:808", {"mps.unreachable"}},
  // §3 code 999 / §10: UVM broken after a suspend, UVM missing, a GPU in a
  // bad state. The suspend first: the corpus's prior (docs/explain.md "Priors").
  {"cuda:999", {"driver.after-suspend", "uvm.missing", "uvm.hmm", "gpu.fallen-off-bus"}},
  {"cuda-alloc", {"memory.held-by-other-process"}},
  // PyTorch's is_available() is cudaGetDeviceCount() > 0 (facts §3 "Other
  // points"): §10's rows for no driver, hidden GPUs and a driver too old.
  {"torch-not-available", {"driver.not-loaded", "visible-devices.hides-all", "container.no-gpus", "driver.too-old-for-cuda"}},
  // Codes after CUDA started that still name a cause (§3): an uncorrectable
  // ECC error (with Xid 48/94/95), PTX from a toolkit newer than the driver.
  {"cuda:214", {"ecc.uncorrectable", "gpu.reset-required"}},
  {"cuda:218", {"driver.too-old-for-cuda"}},
  {"cuda:222", {"driver.too-old-for-cuda"}},
  // §3 code 101 (invalid device ordinal): a device number past the visible
  // ones, from a launcher starting a process per GPU or a fixed cuda:N.
  {"cuda:101", {"visible-devices.ordinal-out-of-range", "visible-devices.invalid"}},
  // The phrase table (catalog/error_phrases.cc), each row from a thread.
  {"container:no-driver",   {"container.no-gpus", "container.capabilities", "driver.not-loaded"}},
  {"container:no-nvml",     {"container.runtime-not-configured", "container.no-gpus"}},
  {"container:no-nvidia-runtime", {"container.runtime-not-configured"}},        // §6.3
  {"driver:too-old",        {"driver.too-old-for-cuda"}},                      // §5.1
  {"container:rpc-timeout", {"persistence-mode.off"}},
  {"nccl:shm",              {"container.shm-too-small"}},                      // §12.1
  {"uvm-node-missing",      {"uvm.missing"}},                                  // §7.5
  // §10 row 1: a module that will not load: Secure Boot or another failure,
  // nouveau holding the GPU, a GPU this branch does not support.
  {"installer:load-failed", {"driver.module-load-failed", "driver.nouveau", "driver.gpu-unsupported"}},
  {"devnodes-missing",      {"devnodes.missing", "driver.not-loaded"}},        // §7.5
  {"mig-none",              {"mig.no-instances"}},                             // §4.3
  {"nouveau",               {"driver.nouveau"}},                               // §10 row 1
  {"driver-proc-missing",   {"driver.not-loaded", "container.no-gpus"}},       // §2
  // §13: WSL 1 has no GPU; under WSL 2 a CUDA or NVML failure is the
  // Windows driver's side: no GPU shared, its libraries missing or hidden.
  {"wsl1-kernel",           {"wsl.no-gpu-support"}},
  {"wsl",                   {"wsl.no-gpu-support", "wsl.libs-missing", "wsl.libs-shadowed"}},
  {"container:driver-libs-in-image", {"container.driver-mismatch"}},           // §6.3
  {"nccl:p2p-hang",         {"p2p.blocked"}},                                  // §12.2
  // NVLS buffers that fail to set up on an NVSwitch node (docs/fabric.md, link 4).
  {"nccl-nvls",             {"fabric-manager.restarted-without-reset"}},
  // A `docker run` that asked for no GPU (explain/parse_hints.cc).
  {"container-no-gpu-flag", {"container.no-gpus"}},
  // §10 row 1-2: no module: Secure Boot / probe failure, nouveau, unsupported GPU.
  {"nvml:9",   {"driver.not-loaded", "driver.nouveau", "driver.module-load-failed", "driver.gpu-unsupported"}},
  // §4.1, §7.6: the nodes' mode bits, a rootless container's lost group,
  // SELinux: each refuses the open NVML makes.
  {"nvml:4",   {"devnodes.permission", "devnodes.rootless-denied", "devnodes.selinux-denied"}},
  {"devnodes-permission", {"devnodes.permission", "devnodes.rootless-denied", "devnodes.selinux-denied"}},
  {"selinux-denial",      {"devnodes.selinux-denied"}},                        // §7.6
  // §7.6: a rootless runtime's hook may neither load modules nor make nodes.
  {"rootless-hook",       {"uvm.missing", "devnodes.missing"}},
  {"nvml:12",  {"driver.not-loaded"}},                                         // §4.1
  {"nvml:15",  {"gpu.fallen-off-bus"}},                                        // §4.1, §10
  {"nvml:16",  {"gpu.reset-required"}},                                        // §4.1
  {"nvml:17",  {"cgroup.device-denied"}},                                      // §4.1
  {"nvml:18",  {"driver.library-mismatch", "container.driver-mismatch"}},      // §4.1, §10
  // §4.1: the library is too old for the call; at init, a libnvidia-ml older
  // than the driver (stale links after an upgrade).
  {"nvml:13",  {"driver.library-mismatch"}},
  // NVML_ERROR_UNKNOWN at init: device nodes the process may not open (in a
  // container, the device cgroup), or a GPU in a bad state (§4.1 codes 4, 17).
  {"nvml:999", {"cgroup.device-denied", "devnodes.permission", "gpu.fallen-off-bus"}},
  {"nvml-handle:15",  {"gpu.fallen-off-bus"}},
  {"nvml-handle:999", {"gpu.fallen-off-bus", "gpu.reset-required"}},
  {"nvml:no-devices", {"driver.module-load-failed", "driver.gpu-unsupported", "container.no-gpus"}},
  {"nvml:crash", {"nvml.init-failed"}},
  {"nvidia-smi-missing", {"container.no-gpus", "container.capabilities", "driver.not-loaded"}},
  {"container:lib-missing", {"driver.not-loaded"}},                            // §6.3
  {"container:driver-error", {"driver.not-loaded"}},                           // §6.3
  {"container:requirement", {"driver.too-old-for-cuda"}},                      // §6.3 NVIDIA_REQUIRE_CUDA
  {"libcuda:missing-symbol", {"driver.too-old-for-cuda"}},                     // §5.2 entry points
  // §6.3: the device plugin advertises no GPU when the runtime it runs
  // under gives it no NVML (not the default runtime), or the node has no driver.
  {"k8s:no-gpus",           {"container.runtime-not-configured", "driver.not-loaded"}},
  // §2 / §10: kernel log lines.
  {"nvrm:api-mismatch",   {"driver.library-mismatch", "container.driver-mismatch"}},
  {"nvrm:gpu-unsupported",          {"driver.gpu-unsupported"}},
  {"nvrm:open-module-unsupported",  {"driver.gpu-unsupported"}},
  {"nvrm:rm-init-failed",           {"driver.module-load-failed"}},
  {"nvrm:gsp-init-failed",          {"driver.module-load-failed"}},
  {"nvrm:probe-failed",             {"driver.module-load-failed"}},
  {"nvrm:unknown-symbol",           {"driver.module-load-failed"}},
  {"nvrm:no-devices",               {"driver.module-load-failed", "driver.gpu-unsupported"}},
  {"nvrm:probe-not-called",         {"driver.nouveau", "driver.module-load-failed"}},
  {"module-signature:rejected",     {"driver.module-load-failed"}},
  {"kernel:nouveau",      {"driver.nouveau"}},
  // §2.2: the fabric manager's own lines when it does not start.
  {"fabric-manager:version-mismatch",  {"fabric-manager.version-mismatch"}},
  {"fabric-manager:topology-mismatch", {"fabric.switch-missing"}},
  // systemd's word that the unit failed (systemctl status, journalctl): why is elsewhere.
  {"fabric-manager:unit-failed",       {"fabric-manager.not-running", "fabric-manager.version-mismatch"}},
  // The NVLink5 start script and NVLSM on a missing ib_umad (docs/fabric.md).
  {"fabric-manager:ib-umad-missing",   {"fabric.ib-modules-missing"}},
  {"fabric-manager:umad-init-failed",  {"fabric.ib-modules-missing"}},
};

struct Help {
  const char* id;
  std::vector<const char*> fix;
  const char* decide;  // what to run on the machine to tell this cause from the others
};

const std::vector<Help> kHelp = {
  {"memory.address-space-limit", {"ulimit -v unlimited   # before starting the program (job script, shell)"},
   "run `gpudoctor check` on that machine: it reads ulimit -v and every GPU's memory and tells an address-space limit from a full GPU"},
  {"memory.held-by-other-process", {"nvidia-smi   # which processes hold the GPU's memory; stop them or use another GPU"},
   "run `gpudoctor check` (or nvidia-smi) on that machine: it lists the memory other processes hold"},
  {"devnodes.missing", {"sudo nvidia-modprobe -c 0 -u   # creates /dev/nvidiactl, /dev/nvidia0 and /dev/nvidia-uvm"},
   "ls -l /dev/nvidia*   # or `gpudoctor check`, which also reads the driver's GPU list"},
  {"devnodes.permission", {"sudo usermod -aG video $USER   # if the nodes belong to group video; log in again"},
   "ls -l /dev/nvidia*; id   # or `gpudoctor check`, which tests opening each node"},
  {"driver.not-loaded", {"sudo modprobe nvidia   # and install the driver if modprobe cannot find it"},
   "lsmod | grep nvidia; cat /proc/driver/nvidia/version   # or `gpudoctor check`"},
  {"cuda.fork-after-init", {"torch.multiprocessing.set_start_method('spawn')   # or DataLoader(multiprocessing_context='spawn')"},
   "look for a CUDA call (torch.cuda.is_available(), .cuda()) before the fork; PYTORCH_NVML_BASED_CUDA_CHECK=1 makes is_available() fork-safe (facts §6.2)"},
  {"cuda.stub-library", {"remove .../lib64/stubs from LD_LIBRARY_PATH and /etc/ld.so.conf.d/, then sudo ldconfig"},
   "echo $LD_LIBRARY_PATH; ldconfig -p | grep libcuda   # or `gpudoctor check`, which names the libcuda loaded"},
  {"driver.too-old-for-cuda", {"install a driver that supports this CUDA version, or use a CUDA/framework build for the installed driver"},
   "nvidia-smi   # 'CUDA Version' is the newest CUDA the driver supports; `gpudoctor check` compares it with the runtime"},
  {"container.no-gpus", {"docker run --gpus all ...   # or --runtime=nvidia / a CDI device (--device nvidia.com/gpu=all)"},
   "run `gpudoctor check` inside the container: it sees whether GPUs were passed in"},
  {"container.capabilities", {"docker run -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ..."},
   "echo $NVIDIA_DRIVER_CAPABILITIES inside the container   # compute is needed for CUDA, utility for nvidia-smi"},
  {"compute-mode.exclusive", {"sudo nvidia-smi -i <N> -c DEFAULT   # or use another GPU"},
   "nvidia-smi --query-gpu=index,compute_mode --format=csv; nvidia-smi   # which process holds it"},
  {"visible-devices.hides-all", {"unset CUDA_VISIBLE_DEVICES   # or set it to GPUs that exist"},
   "echo \"CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]\" in the job's environment"},
  {"visible-devices.invalid", {"export CUDA_VISIBLE_DEVICES=0   # indices below the GPU count (nvidia-smi -L), or GPU UUIDs"},
   "echo \"CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]\"; nvidia-smi -L   # an index past the last GPU stops CUDA there"},
  {"visible-devices.ordinal-out-of-range", {"start one process per visible GPU (torchrun --nproc_per_node=<visible GPUs>), or use cuda:0 .. cuda:<visible GPUs - 1>"},
   "nvidia-smi -L; echo \"CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES]\"   # the GPUs the job sees; `gpudoctor run -- <launcher> ...` compares them with its request"},
  {"p2p.blocked", {"disable ACS on the PCIe switches' downstream ports (BIOS: IO virtualization/VT-d/AMD-Vi off, or setpci ... ECAP_ACS+0x6.w=0000 per bridge), or boot with iommu=pt"},
   "sudo lspci -vvv | grep ACSCtl   # 'ReqRedir+' on a bridge between two GPUs; or `gpudoctor check`, which reads every bridge's ACS"},
  {"container.shm-too-small", {"docker run --shm-size=1g --ulimit memlock=-1 ...   # or --ipc=host; Kubernetes: an emptyDir with medium: Memory at /dev/shm"},
   "df -h /dev/shm   # inside the container; 64M is Docker's and Kubernetes' default; or `gpudoctor check`"},
  {"mig.no-instances", {"sudo nvidia-smi mig -cgi <profile> -C   # create GPU and compute instances"},
   "nvidia-smi -L   # lists MIG devices; `gpudoctor check` too"},
  {"cgroup.device-denied", {"docker run --gpus all ... (not a bare --device); with cgroup v2 and systemd, configure the toolkit's CDI mode or restart the container"},
   "run `gpudoctor check` inside the container: it reads the device cgroup"},
  {"fabric-manager.not-running", {"sudo systemctl enable --now nvidia-fabricmanager   # same version as the driver"},
   "systemctl status nvidia-fabricmanager; nvidia-smi -q | grep -A2 Fabric   # or `gpudoctor check`"},
  {"fabric-manager.version-mismatch", {"install the fabric manager package of exactly the driver's version (apt-cache policy nvidia-fabricmanager-<branch>), then sudo systemctl restart nvidia-fabricmanager"},
   "cat /proc/driver/nvidia/version; nv-fabricmanager --version   # or `gpudoctor check`, which compares package, binary and driver"},
  {"fabric-manager.restarted-without-reset", {"stop the CUDA programs and GPU services, sudo systemctl stop nvidia-fabricmanager, sudo nvidia-smi -r, sudo systemctl start nvidia-fabricmanager"},
   "journalctl -u nvidia-fabricmanager -b   # more than one start in this boot; `gpudoctor check` reads it"},
  {"fabric.switch-missing", {"lspci -d 10de: | grep -i bridge   # every NVSwitch of the baseboard must be there; a missing one needs a power cycle or service"},
   "run `gpudoctor check` on that machine: it lists the NVSwitches on the bus and their driver"},
  {"fabric.ib-modules-missing", {"sudo modprobe -a mlx5_ib ib_umad, list both in /etc/modules-load.d/, then sudo systemctl restart nvidia-fabricmanager"},
   "lsmod | grep -E 'mlx5_ib|ib_umad'; ls /sys/class/infiniband   # or `gpudoctor check` on the NVLink5 node"},
  {"cuda.compat-mismatch", {"remove the cuda-compat directory from LD_LIBRARY_PATH, or install the driver it was made for"},
   "echo $LD_LIBRARY_PATH; cat /proc/driver/nvidia/version   # or `gpudoctor check`, which names the libcuda loaded"},
  {"cuda.compat-unsupported", {"remove the cuda-compat directory from LD_LIBRARY_PATH (GeForce GPUs do not support it), or upgrade the driver"},
   "echo $LD_LIBRARY_PATH   # or `gpudoctor check`"},
  {"driver.library-mismatch", {"sudo reboot   # loads the kernel module matching the installed libraries"},
   "cat /proc/driver/nvidia/version; nvidia-smi   # or `gpudoctor check`, which compares module and libraries"},
  {"container.driver-mismatch", {"remove the driver libraries baked into the image; let the NVIDIA runtime mount the host's"},
   "ls /usr/lib/x86_64-linux-gnu/libcuda.so.* inside the container vs cat /proc/driver/nvidia/version"},
  {"mps.unreachable", {"nvidia-cuda-mps-control -d   # start the daemon, or unset CUDA_MPS_PIPE_DIRECTORY"},
   "echo $CUDA_MPS_PIPE_DIRECTORY; pgrep -a nvidia-cuda-mps   # or `gpudoctor check`"},
  {"uvm.missing", {"sudo nvidia-modprobe -c 0 -u   # loads nvidia_uvm and creates /dev/nvidia-uvm"},
   "lsmod | grep nvidia_uvm; ls -l /dev/nvidia-uvm   # or `gpudoctor check`"},
  {"uvm.hmm", {"echo 'options nvidia_uvm uvm_disable_hmm=1' | sudo tee /etc/modprobe.d/nvidia-uvm-hmm.conf, then reload nvidia_uvm"},
   "cat /sys/module/nvidia_uvm/parameters/uvm_disable_hmm; sudo dmesg | grep -i uvm   # or `gpudoctor check`"},
  {"driver.after-suspend", {"sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm   # or reboot"},
   "journalctl -k | grep -i 'PM: suspend'   # a resume before the failure; `gpudoctor check` reads it"},
  {"gpu.fallen-off-bus", {"reboot (or power-cycle) the machine; if it repeats, reseat the GPU and check power"},
   "sudo dmesg | grep -i -e xid -e 'fallen off'   # Xid 79 names the GPU; or `gpudoctor check`"},
  {"gpu.reset-required", {"sudo nvidia-smi -r -i <N>   # with nothing running on it, or reboot"},
   "sudo dmesg | grep -i xid; nvidia-smi -q -d ROW_REMAPPER   # or `gpudoctor check`"},
  {"driver.nouveau", {"blacklist nouveau (echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf), sudo update-initramfs -u, reboot"},
   "lsmod | grep -e nouveau -e nvidia   # or `gpudoctor check`"},
  {"driver.module-load-failed", {"sudo dmesg | grep -i nvrm   # the reason: Secure Boot (sign the module or use the signed one), probe failure, unsupported GPU"},
   "sudo dmesg | grep -i -e nvrm -e nvidia; mokutil --sb-state   # or `gpudoctor check`"},
  {"driver.gpu-unsupported", {"install a driver branch that supports the GPU (legacy branch for old GPUs, newer for new ones)"},
   "lspci -nn | grep -i nvidia; cat /proc/driver/nvidia/version   # or `gpudoctor check`"},
  {"ecc.uncorrectable", {"sudo nvidia-smi -r -i <N>   # reset the GPU (or reboot) so pending row remaps apply; replace it if errors return"},
   "nvidia-smi -q -d ECC,ROW_REMAPPER; sudo dmesg | grep -i xid   # Xid 48/63/94/95; or `gpudoctor check`"},
  {"persistence-mode.off", {"sudo systemctl enable --now nvidia-persistenced   # keeps the driver initialized between jobs"},
   "nvidia-smi -q | grep -i persistence; systemctl status nvidia-persistenced   # or `gpudoctor check`"},
  {"container.runtime-not-configured", {"sudo nvidia-ctk runtime configure --runtime=docker (or containerd --set-as-default), then restart the runtime"},
   "docker info | grep -i runtime; cat /etc/docker/daemon.json   # or `gpudoctor check` on the node"},
  {"wsl.no-gpu-support", {"use WSL 2 (wsl --set-version <distribution> 2) on Windows 11 or Windows 10 21H2+, with the NVIDIA Windows driver; install no Linux driver inside WSL"},
   "uname -r; ls -l /dev/dxg   # WSL 1's kernel is 4.4.0-<build>-Microsoft; WSL 2 has /dev/dxg; or `gpudoctor check`"},
  {"wsl.libs-missing", {"install or update the NVIDIA driver on Windows, then wsl --shutdown; the loader must search /usr/lib/wsl/lib (/etc/ld.so.conf.d/ld.wsl.conf, sudo ldconfig)"},
   "ls /usr/lib/wsl/lib; ldconfig -p | grep libcuda   # or `gpudoctor check`"},
  {"wsl.libs-shadowed", {"remove the Linux NVIDIA driver packages inside WSL (libnvidia-compute-*, nvidia-driver-*), then sudo ldconfig"},
   "ldconfig -p | grep libcuda   # every entry outside /usr/lib/wsl/lib comes from a Linux driver; or `gpudoctor check`"},
  {"devnodes.rootless-denied", {"podman run --group-add keep-groups --device nvidia.com/gpu=all ...   # keeps your host groups (video) in the container; needs crun"},
   "ls -l /dev/nvidia* inside the container   # nodes owned by nobody/nogroup (65534) and not world-usable; or `gpudoctor check` inside it"},
  {"devnodes.selinux-denied", {"sudo setsebool -P container_use_devices on   # lets containers use the device nodes they are given; or run with --security-opt label=disable"},
   "sudo ausearch -m avc -ts recent | grep nvidia; getenforce   # or `gpudoctor check`, which asks the kernel for each node"},
  {"nvml.init-failed", {"reinstall the driver's user-space part (nvidia-utils / libnvidia-compute of the loaded branch)"},
   "sudo dmesg | grep -i nvrm; `gpudoctor check`, which runs NVML in a child it can watch"},
};
// clang-format on

const Help* help_for(const std::string& id) {
  for (const auto& h : kHelp) {
    if (id == h.id) return &h;
  }
  return nullptr;
}

bool has_reported(const Snapshot& s, const std::string& kind) {
  return std::any_of(s.reported.begin(), s.reported.end(),
                     [&](const ReportedError& r) { return r.kind == kind; });
}

// A signal and the pasted lines that show it.
struct Signal {
  std::string key;
  std::vector<std::string> lines;
};

void add_signal(std::vector<Signal>* out, const std::string& key, std::vector<std::string> lines) {
  for (auto& sig : *out) {
    if (sig.key == key) return;
  }
  out->push_back({key, std::move(lines)});
}

std::vector<std::string> reported_lines(const Snapshot& s, std::initializer_list<const char*> kinds,
                                        int code) {
  // The first few lines say it; a log that repeats it a thousand times
  // only needs the count.
  constexpr size_t kMaxLines = 3;
  std::vector<std::string> out;
  size_t more = 0;
  for (const auto& r : s.reported) {
    for (const char* k : kinds) {
      if (r.kind != k || (code >= 0 && r.code != code)) continue;
      if (out.size() < kMaxLines) {
        out.push_back(line_ref(r));
      } else {
        ++more;
      }
    }
  }
  if (more > 0) out.push_back("(and " + std::to_string(more) + " more lines like these)");
  return out;
}

std::vector<Signal> signals(const Snapshot& s) {
  std::vector<Signal> out;
  for (const auto& run : s.cuda.runs) {
    if (run.label != "user") continue;
    if (run.child_error.rfind("crashed", 0) == 0) continue;
    if (run.library_loaded.empty()) {
      add_signal(&out, "cuda:no-libcuda", reported_lines(s, {"cuda-driver"}, -1));
    }
    for (int code : {run.cudart_rc, run.init_rc}) {
      if (code <= 0) continue;
      std::string key = "cuda:" + std::to_string(code);
      if (code == 35 && run.driver_version_rc == 0 && run.driver_version == 0) {
        key = "cuda:35-no-driver";
      }
      add_signal(&out, key, reported_lines(s, {"cuda-runtime", "cuda-driver", "nccl"}, code));
    }
  }
  const NvmlInfo& n = s.nvml;
  if (n.child_error.rfind("crashed", 0) == 0) {
    add_signal(&out, "nvml:crash", reported_lines(s, {"crash"}, -1));
  } else if (n.init_rc > 0) {
    add_signal(&out, "nvml:" + std::to_string(n.init_rc), reported_lines(s, {"nvml"}, n.init_rc));
  }
  for (const auto& g : n.gpus) {
    if (g.handle_rc > 0) {
      add_signal(&out, "nvml-handle:" + std::to_string(g.handle_rc),
                 reported_lines(s, {"nvml"}, g.handle_rc));
    }
  }
  if (has_reported(s, "nvml-no-devices")) {
    add_signal(&out, "nvml:no-devices", reported_lines(s, {"nvml-no-devices"}, -1));
  }
  // A hang over PCIe-only GPUs, or one NCCL_P2P_DISABLE=1 is said to cure:
  // peer-to-peer traffic stopped on the way (NCCL guide, facts §12.2).
  if (has_reported(s, "hang") && (has_reported(s, "topo-pcie") || has_reported(s, "p2p-disable"))) {
    add_signal(&out, "nccl:p2p-hang", reported_lines(s, {"hang", "topo-pcie", "p2p-disable"}, -1));
  }
  // A missing device node is itself a cause CUDA names only by 999 or 100
  // (facts §7.5: without /dev/nvidia-uvm, CUDA error 999).
  for (const char* kind : {"nvidia-smi-missing", "cuda-alloc", "container-no-gpu-flag", "nccl-nvls",
                           "uvm-node-missing", "devnodes-missing", "driver-proc-missing",
                           "devnodes-permission", "selinux-denial", "mig-none", "nouveau"}) {
    if (has_reported(s, kind)) add_signal(&out, kind, reported_lines(s, {kind}, -1));
  }
  for (const auto& r : s.reported) {
    if (r.kind.starts_with(kPhraseKindPrefix)) {
      add_signal(&out, r.kind.substr(kPhraseKindPrefix.size()), {line_ref(r)});
    }
    const bool cuda_kind = r.kind == "cuda-runtime" || r.kind == "cuda-driver" || r.kind == "nccl";
    if (cuda_kind && (r.code == 101 || r.code == 214 || r.code == 218 || r.code == 222)) {
      add_signal(&out, "cuda:" + std::to_string(r.code), {line_ref(r)});
    }
  }
  for (const auto& r : s.reported) {
    if (r.kind == "libcuda-missing-symbol")
      add_signal(&out, "libcuda:missing-symbol", {line_ref(r)});
    if (r.kind == "k8s-no-gpus") add_signal(&out, "k8s:no-gpus", {line_ref(r)});
    if (r.kind == "ngc-banner") {
      add_signal(&out, r.text.empty() ? "container:no-driver" : "container:requirement",
                 {line_ref(r)});
    }
    if (r.kind != "container-runtime") continue;
    if (r.text.rfind("load library failed", 0) == 0) {
      add_signal(&out, "container:lib-missing", {line_ref(r)});
    } else if (r.text.rfind("driver error: failed to process request", 0) == 0) {
      add_signal(&out, "container:driver-error", {line_ref(r)});
    } else if (r.text.rfind("unsatisfied condition", 0) == 0 ||
               r.text.rfind("unsupported CUDA version", 0) == 0) {
      add_signal(&out, "container:requirement", {line_ref(r)});
    } else if (r.text.rfind("nvml error", 0) == 0 && r.code > 0) {
      add_signal(&out, "nvml:" + std::to_string(r.code), {line_ref(r)});
    }
  }
  // A container runtime's hook that failed in a rootless runtime.
  if (has_reported(s, "rootless-hint") && has_reported(s, "container-runtime")) {
    add_signal(&out, "rootless-hook",
               reported_lines(s, {"container-runtime", "rootless-hint"}, -1));
  }
  // A fabric manager that found no NVSwitch exits, and its unit fails:
  // harmless on a PCIe machine, so the unit's failure alone names nothing then.
  const bool no_nvswitch = std::any_of(
      s.kernel_log.events.begin(), s.kernel_log.events.end(),
      [](const KernelEvent& e) { return e.kind == "fabric-manager" && e.type == "no-nvswitch"; });
  for (const auto& e : s.kernel_log.events) {
    if (e.kind == "fabric-manager" && e.type == "unit-failed" && no_nvswitch) continue;
    if (e.kind == "nvrm") add_signal(&out, "nvrm:" + e.type, {e.line});
    if (e.kind == "nouveau") add_signal(&out, "kernel:nouveau", {e.line});
    if (e.kind == "module-signature") add_signal(&out, "module-signature:" + e.type, {e.line});
    if (e.kind == "fabric-manager") add_signal(&out, "fabric-manager:" + e.type, {e.line});
  }
  if (has_reported(s, "wsl1-kernel")) {
    add_signal(&out, "wsl1-kernel", reported_lines(s, {"wsl1-kernel"}, -1));
  }
  // WSL 2 named beside a failure to start: the Windows driver's side. An
  // error after CUDA started (out of memory, NCCL, ECC) is not about it.
  static const std::set<std::string> kAfterStart = {
      "cuda-alloc", "nccl:shm", "nccl:p2p-hang", "cuda:101", "cuda:214", "cuda:218", "cuda:222"};
  bool start_failed = std::any_of(
      out.begin(), out.end(), [](const Signal& sig) { return kAfterStart.count(sig.key) == 0; });
  if (start_failed && has_reported(s, "wsl-hint")) {
    add_signal(&out, "wsl", reported_lines(s, {"wsl-hint"}, -1));
  }
  // A bare "not available" and nothing else: the causes of a CUDA that did
  // not start, as far as the text can tell (any other signal in the text,
  // an error code or a missing node, brings its own).
  if (out.empty() && has_reported(s, "torch-not-available")) {
    add_signal(&out, "torch-not-available", reported_lines(s, {"torch-not-available"}, -1));
  }
  return out;
}

// The ids of the checks that read the Linux driver's own traces.
const std::set<std::string>& linux_driver_ids() {
  static const std::set<std::string> kIds = [] {
    std::set<std::string> ids;
    for (const CheckEntry& c : all_checks()) {
      if (c.linux_driver) ids.insert(c.ids.begin(), c.ids.end());
    }
    return ids;
  }();
  return kIds;
}

// What else in the text speaks for (+) or against (-) a candidate.
int weigh(const Snapshot& s, const std::string& id, std::vector<std::string>* lines) {
  auto cite = [&](const char* kind) {
    for (auto& l : reported_lines(s, {kind}, -1)) lines->push_back(std::move(l));
  };
  bool container = has_reported(s, "container-hint");
  bool smi_works = s.nvml.attempted && s.nvml.init_rc == 0 && !s.nvml.gpus.empty();
  auto env = s.env.vars.find("NVIDIA_DRIVER_CAPABILITIES");
  int w = 0;
  if (id == "container.capabilities" && env != s.env.vars.end()) {
    const std::string& v = env->second;
    bool compute = v.find("compute") != std::string::npos || v.find("all") != std::string::npos;
    lines->push_back("NVIDIA_DRIVER_CAPABILITIES=" + v +
                     (compute ? " includes compute" : " lacks compute, which CUDA needs"));
    w += compute ? -1 : 2;
  }
  if (id == "container.no-gpus" || id == "container.driver-mismatch" ||
      id == "cgroup.device-denied") {
    if (container) {
      cite("container-hint");
      ++w;
    }
    if (id == "container.no-gpus" && smi_works) w -= 2;
    if (id == "container.no-gpus" && has_reported(s, "container-no-gpu-flag")) {
      cite("container-no-gpu-flag");
      w += 2;
    }
  }
  if ((id == "driver.not-loaded" || id == "devnodes.missing") && smi_works) {
    lines->push_back("nvidia-smi lists GPUs, so the driver and its device nodes are there");
    w -= 2;
  } else if (id == "driver.not-loaded" && s.nvml.driver_version.ok() &&
             !s.nvml.driver_version.value.empty()) {
    // nvidia-smi's header names the driver only when NVML talked to it.
    lines->push_back("nvidia-smi shows driver " + s.nvml.driver_version.value +
                     ", so a driver is loaded");
    w -= 2;
  }
  // The NGC banner says the module is older than the image needs; an 804
  // beside it is only why forward compatibility could not bridge that.
  if (id == "driver.too-old-for-cuda" && has_reported(s, "ngc-banner")) {
    cite("ngc-banner");
    w += 2;
  }
  if (id == "driver.after-suspend" && has_reported(s, "resume")) {
    cite("resume");
    w += 2;
  }
  if (id == "uvm.missing") {
    if (has_reported(s, "uvm-loaded")) {
      cite("uvm-loaded");
      w -= 2;
    }
    if (has_reported(s, "uvm-node-missing")) {
      cite("uvm-node-missing");
      w += 2;
    }
  }
  // Under WSL no Linux module, /dev/nvidia* or nvidia_uvm is meant to exist:
  // the causes of the checks that read them (registry.cc's kLinuxDriver).
  if ((has_reported(s, "wsl1-kernel") || has_reported(s, "wsl-hint")) &&
      linux_driver_ids().count(id) != 0) {
    lines->push_back("WSL: the Windows driver serves the GPU; no Linux kernel module runs there");
    w -= 2;
  }
  // No /proc/driver/nvidia: no module here, so nothing that needs one
  // loaded (UVM, a suspend) comes first; in a container, none was passed in.
  if (has_reported(s, "driver-proc-missing") &&
      ((id == "driver.not-loaded" && !container) || (id == "container.no-gpus" && container))) {
    cite("driver-proc-missing");
    w += 2;
  }
  if (id == "devnodes.missing" && has_reported(s, "devnodes-missing")) {
    cite("devnodes-missing");
    w += 2;
  }
  if (id == "devnodes.permission" && has_reported(s, "devnodes-permission")) {
    cite("devnodes-permission");
    w += 2;
  }
  // In a user namespace the nodes' owner is unmapped: their group no longer
  // admits the user, whatever ls showed on the host (§7.6).
  if (id == "devnodes.rootless-denied" && has_reported(s, "rootless-hint")) {
    cite("rootless-hint");
    w += 3;
  }
  if (id == "driver.nouveau" && has_reported(s, "nouveau")) {
    cite("nouveau");
    w += 2;
  }
  if (id == "mig.no-instances" && has_reported(s, "mig-none")) {
    cite("mig-none");
    w += 2;
  }
  for (const auto& g : s.nvml.gpus) {
    std::string who = "nvidia-smi GPU " + std::to_string(g.index) +
                      (g.pci_bus_id.ok() ? " (" + g.pci_bus_id.value + ")" : "");
    if (id == "mig.no-instances" && g.mig_mode_current.ok() && g.mig_mode_current.value == 1) {
      lines->push_back(who + ": MIG mode Enabled");
      w += 1;
    }
    if (id == "compute-mode.exclusive" && g.compute_mode.ok() && g.compute_mode.value == 3) {
      lines->push_back(who + ": compute mode E. Process");
      w += 2;
    }
    if (id == "memory.held-by-other-process" && g.memory_total_bytes.ok() &&
        g.memory_used_bytes.ok() && g.memory_total_bytes.value > 0) {
      double share = static_cast<double>(g.memory_used_bytes.value) /
                     static_cast<double>(g.memory_total_bytes.value);
      if (share >= 0.9) {
        lines->push_back(who + ": " + std::to_string(g.memory_used_bytes.value >> 20) + " of " +
                         std::to_string(g.memory_total_bytes.value >> 20) + " MiB in use");
        w += 2;
      }
    }
  }
  return w;
}

// A signal key in words, for ranked_by: "cuda:999" -> "CUDA error 999".
std::string signal_words(const std::string& key) {
  auto after = [&](std::string_view prefix) { return key.substr(prefix.size()); };
  if (key == "cuda:35-no-driver") return "CUDA error 35 with no driver version";
  if (key == "cuda:no-libcuda") return "libcuda.so.1 not found";
  if (key == "nvml:no-devices") return "nvidia-smi's \"No devices were found\"";
  if (key == "nvml:crash") return "nvidia-smi crashing";
  if (key == "uvm-node-missing") return "/dev/nvidia-uvm or nvidia_uvm missing";
  if (key == "devnodes-missing") return "/dev/nvidia* missing";
  if (key == "driver-proc-missing") return "/proc/driver/nvidia missing";
  if (key == "wsl1-kernel") return "a WSL 1 kernel";
  if (key == "wsl") return "a failure under WSL 2";
  if (key == "libcuda:missing-symbol") return "a driver entry point missing from libcuda";
  if (key == "k8s:no-gpus") return "a node advertising nvidia.com/gpu: 0";
  if (key == "mig-none") return "\"No MIG devices found\"";
  if (key == "nouveau") return "nouveau named";
  if (key == "selinux-denial") return "an SELinux denial of an NVIDIA node";
  if (key == "devnodes-permission") return "permission denied on /dev/nvidia*";
  if (key == "rootless-hook") return "a rootless runtime's hook failing";
  if (key.starts_with("cuda:") && std::isdigit(static_cast<unsigned char>(key[5]))) {
    return "CUDA error " + after("cuda:");
  }
  if (key.starts_with("nvml-handle:")) return "NVML error " + after("nvml-handle:") + " for a GPU";
  if (key.starts_with("nvml:") && std::isdigit(static_cast<unsigned char>(key[5]))) {
    return "NVML error " + after("nvml:");
  }
  for (std::string_view log : {"nvrm:", "kernel:", "module-signature:", "fabric-manager:"}) {
    if (key.starts_with(log)) return "the kernel log (" + after(log) + ")";
  }
  return key;
}

struct Suspect {
  std::string id;
  std::vector<std::string> evidence;
  std::vector<std::string> signals;  // the keys that pointed at it ("cuda:999")
  int weight = 0;
  int signal_count = 0;
  size_t best_pos = 99;
  size_t first_seen = 0;
};

}  // namespace

std::vector<Finding> suspect_findings(const Snapshot& s, const std::set<std::string>& decided) {
  std::vector<Suspect> suspects;
  for (const Signal& sig : signals(s)) {
    auto rule = std::find_if(kRules.begin(), kRules.end(),
                             [&](const Rule& r) { return sig.key == r.signal; });
    if (rule == kRules.end()) continue;
    for (size_t pos = 0; pos < rule->ids.size(); ++pos) {
      std::string id = rule->ids[pos];
      if (decided.count(id) != 0) continue;
      auto it = std::find_if(suspects.begin(), suspects.end(),
                             [&](const Suspect& x) { return x.id == id; });
      if (it == suspects.end()) {
        suspects.push_back({id, {}, {}, 0, 0, pos, suspects.size()});
        it = suspects.end() - 1;
      }
      ++it->signal_count;
      it->signals.push_back(sig.key);
      it->best_pos = std::min(it->best_pos, pos);
      for (const auto& l : sig.lines) {
        if (std::find(it->evidence.begin(), it->evidence.end(), l) == it->evidence.end()) {
          it->evidence.push_back(l);
        }
      }
    }
  }
  for (auto& sus : suspects) {
    std::vector<std::string> more;
    sus.weight = weigh(s, sus.id, &more);
    for (auto& l : more) {
      if (std::find(sus.evidence.begin(), sus.evidence.end(), l) == sus.evidence.end()) {
        sus.evidence.push_back(std::move(l));
      }
    }
  }
  std::stable_sort(suspects.begin(), suspects.end(), [](const Suspect& a, const Suspect& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    if (a.signal_count != b.signal_count) return a.signal_count > b.signal_count;
    if (a.best_pos != b.best_pos) return a.best_pos < b.best_pos;
    return a.first_seen < b.first_seen;
  });
  std::vector<Finding> out;
  for (const auto& sus : suspects) {
    const CatalogEntry* e = find_catalog_entry(sus.id);
    Finding f;
    f.id = sus.id;
    f.severity = Severity::kWarn;
    f.summary = std::string("Possible cause: ") + (e != nullptr ? e->title : sus.id);
    f.evidence = sus.evidence;
    f.check = "explain";
    // Why here: the sort keys above, in their order.
    std::vector<std::string> shown;
    for (const auto& key : sus.signals) shown.push_back(signal_words(key));
    std::string why = "possible cause: the text shows " + join(shown, ", ");
    if (sus.weight != 0) {
      why += "; other lines weigh " + std::string(sus.weight > 0 ? "for it (+" : "against it (") +
             std::to_string(sus.weight) + ")";
    }
    why += "; candidate " + std::to_string(sus.best_pos + 1) + " in the facts' order for it";
    f.ranked_by = std::move(why);
    if (const Help* h = help_for(sus.id)) {
      for (const char* fix : h->fix) f.remedy.push_back(fix);
      f.remedy.push_back(std::string("To decide: ") + h->decide);
    } else {
      f.remedy.push_back("To decide: run `gpudoctor check` on that machine");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gd
