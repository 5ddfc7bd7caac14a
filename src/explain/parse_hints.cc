// Lines that are not errors themselves but decide between causes: the shell
// around the error, a container prompt, lsmod/ls output, the kernel's resume
// line. Real lines this file reads:
//
//   root@3f2a1b9c0d4e:/workspace# nvidia-smi        (Docker names hosts by 12 hex digits)
//   $ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi
//   $ docker run -it --rm ghcr.io/leejet/stable-diffusion.cpp:master-cuda   (no GPU asked for)
//   Creating vqgan-clip-docker_generate_run ... done                     (docker-compose)
//   bash: nvidia-smi: command not found
//   Segmentation fault (core dumped)
//   [ 5402.118133] PM: suspend exit
//   nvidia_uvm           4956160  0
//   ls: cannot access '/dev/nvidia*': No such file or directory
//   crw-rw---- 1 root video 195, 0 Mar  1 10:00 /dev/nvidia0
//   |  No MIG devices found                                                              |
//   nouveau 0000:01:00.0: DRM: GPU lockup - switching to software fbcon
//   GPU0	 X 	PXB	SYS	SYS	0-27,56-83	0          (nvidia-smi topo -m)
//   ... causes both GPUs to spin at 100% SM utilization ... no forward progress.
//   Setting NCCL_P2P_DISABLE=1 did workaround but got really low speed.
//   >>> torch.cuda.is_available()
//   False
//   $ podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L   (rootless unless sudo)
//   type=AVC msg=audit(...): avc:  denied  { read write } ... path="/dev/nvidia0" ...
//   Target Context                system_u:object_r:xserver_misc_device_t:s0
#include <algorithm>
#include <cctype>
#include <vector>

#include "explain/parse.h"
#include "util/ascii.h"
#include "util/substring_index.h"
#include "util/text.h"

namespace gd {
namespace {

bool is_hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// "root@3f2a1b9c0d4e:" at the start of the line: Docker's default hostname.
bool docker_prompt(std::string_view line) {
  size_t at = line.find('@');
  if (at == std::string_view::npos || at > 32) return false;
  std::string_view host = line.substr(at + 1);
  if (host.size() < 13 || host[12] != ':') return false;
  for (size_t i = 0; i < 12; ++i) {
    if (!is_hex_lower(host[i])) return false;
  }
  return true;
}

// The command of a prompt line, or "" when the line is no prompt.
std::string_view command_of(std::string_view t) {
  for (std::string_view pre : {"$ ", ">>> ", "# ", "% "}) {
    if (t.starts_with(pre)) return t.substr(pre.size());
  }
  // "user@host:~/dir$ cmd", "root@abc:/w# cmd"
  size_t at = t.find('@');
  if (at != std::string_view::npos && at < 32) {
    for (std::string_view end : {"$ ", "# "}) {
      size_t e = t.find(end, at);
      if (e != std::string_view::npos && e < 200) return t.substr(e + 2);
    }
  }
  return "";
}

// A `docker run` / `podman run` that asks for no GPU: no --gpus, no NVIDIA
// runtime, no CDI or device-node flag.
bool runs_without_gpus(std::string_view lowered) {
  if (!icontains(lowered, "docker run") && !icontains(lowered, "podman run")) return false;
  // Docker's own "See 'docker run --help'." under an error is no run.
  if (icontains(lowered, "run --help")) return false;
  // nvidia-docker (1.x and 2.x's wrapper) runs with the NVIDIA runtime itself.
  for (std::string_view asks : {"--gpus", "--runtime=nvidia", "--runtime nvidia", "nvidia.com/gpu",
                                "/dev/nvidia", "nvidia_visible_devices", "nvidia-docker"}) {
    if (icontains(lowered, asks)) return false;
  }
  return true;
}

// docker-compose (v1) creating a one-off container: "Creating x_y_run ... done".
bool compose_line(std::string_view t) {
  return t.starts_with("Creating ") && t.ends_with(" ... done");
}

// A row of `nvidia-smi topo -m`: "GPU1  PXB  X  SYS ..." -> its links to the
// other GPUs ("X" is itself). Empty when the line is no such row.
std::vector<std::string_view> topo_links(std::string_view t) {
  if (t.size() < 4 || !t.starts_with("GPU") || t[3] < '0' || t[3] > '9') return {};
  std::vector<std::string_view> tokens = split_ws(t);
  std::vector<std::string_view> links;
  bool self = false;
  for (size_t i = 1; i < tokens.size(); ++i) {
    std::string_view tok = tokens[i];
    bool nvlink = tok.size() > 2 && tok.starts_with("NV") && tok[2] >= '0' && tok[2] <= '9';
    if (tok == "X") {
      self = true;
    } else if (nvlink || tok == "PIX" || tok == "PXB" || tok == "PHB" || tok == "NODE" ||
               tok == "SYS" || tok == "SOC") {
      links.push_back(tok);
    }
  }
  return self ? links : std::vector<std::string_view>{};
}

// Words that say a collective never finished (NCCL hangs rather than fails
// when peer-to-peer traffic is dropped on the way).
constexpr const char* kHangWords[] = {
    " hang", "hangs", "hanging", "deadlock", "no forward progress", "collective operation timeout",
    " stuck"};

bool says_it_hangs(std::string_view lowered) {
  static const SubstringIndex kWords({std::begin(kHangWords), std::end(kHangWords)});
  return kWords.first_in(lowered) >= 0;
}

// Every word the checks below look for, the hang words too: a line with none
// of them (most of a long log) skips those checks after one pass over it.
constexpr const char* kHintWords[] = {"cuda.is_available()",
                                      "nccl_p2p_disable=1",
                                      "docker run",
                                      "podman run",
                                      "/.dockerenv",
                                      "kubectl ",
                                      "nvidia-smi: command not found",
                                      "nvidia-smi: not found",
                                      "segmentation fault",
                                      "core dumped",
                                      "pm: suspend exit",
                                      "pm: resume",
                                      "pm: hibernation exit",
                                      "/dev/nvidia",
                                      "/proc/driver/nvidia",
                                      "microsoft",
                                      "/usr/lib/wsl/",
                                      "@desktop-",
                                      "modprobe",
                                      "no mig devices",
                                      "nouveau",
                                      "rootless",
                                      "--userns",
                                      "docker.sock",
                                      "avc:",
                                      "xserver_misc_device_t",
                                      "devices.allow",
                                      "device rules",
                                      "device filters"};

bool says_absent(std::string_view lowered) {
  for (std::string_view w : {"no such file", "not found", "cannot open", "could not open",
                             "failed to open", "does not exist"}) {
    if (icontains(lowered, w)) return true;
  }
  return false;
}

// "4.4.0-19041-microsoft" anywhere in the line: WSL 1 reports that kernel.
bool is_wsl1_kernel(std::string_view lowered) {
  for (size_t at = lowered.find("4.4.0-"); at != std::string_view::npos;
       at = lowered.find("4.4.0-", at + 1)) {
    size_t i = at + 6;
    size_t digits = 0;
    while (i < lowered.size() && lowered[i] >= '0' && lowered[i] <= '9') ++i, ++digits;
    if (digits > 0 && lowered.substr(i).starts_with("-microsoft")) return true;
  }
  return false;
}

// "user@DESKTOP-930EG0A:~$": Windows names a computer DESKTOP- and seven
// letters or digits unless told otherwise, and WSL takes the Windows name.
bool has_windows_host_prompt(std::string_view lowered) {
  size_t at = lowered.find("@desktop-");
  if (at == std::string_view::npos) return false;
  size_t i = at + 9;
  size_t n = 0;
  while (i + n < lowered.size() && std::isalnum(static_cast<unsigned char>(lowered[i + n]))) ++n;
  return n == 7 && i + n < lowered.size() && lowered[i + n] == ':';
}

// Podman run by a user without sudo is rootless (a user namespace); so is
// a Docker daemon on the user's own socket (/run/user/<uid>/docker.sock,
// $XDG_RUNTIME_DIR/docker.sock in Docker's rootless guide).
bool says_rootless(std::string_view lowered) {
  if (icontains(lowered, "rootless") || icontains(lowered, "--userns")) return true;
  if ((icontains(lowered, "/run/user/") || icontains(lowered, "$xdg_runtime_dir")) &&
      icontains(lowered, "docker.sock")) {
    return true;
  }
  size_t at = lowered.find("podman run");
  return at != std::string_view::npos &&
         lowered.substr(0, at).find("sudo") == std::string_view::npos &&
         !lowered.starts_with("#") && lowered.find("root@") == std::string_view::npos;
}

// SELinux refusing a device node: an AVC denial naming /dev/nvidia*, or the
// type Fedora's and RHEL's policy give the nodes (xserver_misc_device_t),
// which setroubleshoot's report shows as the target.
bool says_selinux_denied(std::string_view lowered) {
  if (icontains(lowered, "xserver_misc_device_t")) return true;
  return icontains(lowered, "avc:") && icontains(lowered, "denied") && icontains(lowered, "nvidia");
}

// "NVidia driver 535.54.03", "driver version 331.38", "driver: 560.35.03":
// a driver version named in prose, which nvidia-smi's header would give.
// The number must look like one (a 3-digit branch, then 2-3 digits).
std::string prose_driver_version(std::string_view lowered) {
  size_t at = lowered.find("driver");
  // nvidia-smi's own "Driver Version: ..." is parse_nvml.cc's.
  if (at == std::string_view::npos || lowered.substr(at).starts_with("driver version:")) {
    return "";
  }
  std::string_view rest = lowered.substr(at + 6);
  if (rest.starts_with("s")) rest.remove_prefix(1);
  for (std::string_view skip : {" version", " ver.", " ver"}) {
    if (rest.starts_with(skip)) {
      rest.remove_prefix(skip.size());
      break;
    }
  }
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':' || rest.front() == '=')) {
    rest.remove_prefix(1);
  }
  size_t n = 0;
  auto digits = [&](size_t min, size_t max) {
    size_t start = n;
    while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n])) && n - start < max)
      ++n;
    return n - start >= min &&
           (n >= rest.size() || !std::isdigit(static_cast<unsigned char>(rest[n])));
  };
  if (!digits(3, 3) || n >= rest.size() || rest[n] != '.') return "";
  ++n;
  if (!digits(2, 3)) return "";
  if (n + 1 < rest.size() && rest[n] == '.' &&
      std::isdigit(static_cast<unsigned char>(rest[n + 1]))) {
    ++n;
    if (!digits(1, 3)) return "";
  }
  return std::string(rest.substr(0, n));
}

bool has_hint_word(std::string_view lowered) {
  static const SubstringIndex kWords = [] {
    std::vector<std::string> words(std::begin(kHintWords), std::end(kHintWords));
    words.insert(words.end(), std::begin(kHangWords), std::end(kHangWords));
    return SubstringIndex(std::move(words));
  }();
  return kWords.first_in(lowered) >= 0;
}

}  // namespace

bool parse_hint_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  std::string_view t = trim(line);
  bool hit = false;
  const bool words = has_hint_word(lowered);
  // torch.cuda.is_available() answering False, on its line ("... returns
  // False") or on the next (a REPL's ">>> torch.cuda.is_available()" then
  // "False"): CUDA did not start, for a reason the text may not say.
  bool asked = words && icontains(lowered, "cuda.is_available()");
  if ((asked && icontains(lowered, "false")) || (p->asked_is_available && t == "False")) {
    const std::string shown = asked ? std::string(t) : "torch.cuda.is_available() -> False";
    add_reported(p, "torch-not-available", -1, "torch.cuda.is_available() is False", shown,
                 line_no);
    hit = true;
  }
  p->asked_is_available = asked && !hit;
  if (auto links = topo_links(t); !links.empty()) {
    // GPUs that talk over PCIe only (no NVLink in the row): P2P goes through
    // switches and root ports, where ACS and the IOMMU can stop it.
    bool nvlink = std::any_of(links.begin(), links.end(),
                              [](std::string_view l) { return l.starts_with("NV"); });
    bool pcie = std::any_of(links.begin(), links.end(), [](std::string_view l) {
      return l == "PIX" || l == "PXB" || l == "PHB" || l == "NODE";
    });
    if (pcie && !nvlink) {
      add_reported(p, "topo-pcie", -1, "the GPUs talk over PCIe only (nvidia-smi topo -m)", line,
                   line_no);
      hit = true;
    }
  }
  if (words && says_it_hangs(lowered)) {
    add_reported(p, "hang", -1, "the job hangs", line, line_no);
    hit = true;
  }
  if (words && icontains(lowered, "nccl_p2p_disable=1")) {
    add_reported(p, "p2p-disable", -1, "NCCL_P2P_DISABLE=1 is mentioned", line, line_no);
    hit = true;
  }
  if (docker_prompt(t) || compose_line(t) ||
      (words && (icontains(lowered, "docker run") || icontains(lowered, "podman run") ||
                 icontains(lowered, "/.dockerenv") || icontains(lowered, "kubectl ")))) {
    add_reported(p, "container-hint", -1, std::string(t.substr(0, 120)), line, line_no);
    hit = true;
  }
  // A prompt on a Windows-named host, before any command on its line.
  if (words && has_windows_host_prompt(lowered)) {
    add_reported(p, "wsl-hint", -1, "a prompt on a Windows host name (WSL)", line, line_no);
    hit = true;
  }
  if (std::string v = prose_driver_version(lowered); !v.empty()) {
    // Where nvidia-smi's header would put it: NVML's driver version.
    NvmlInfo& n = text_nvml(p);
    if (!n.driver_version.ok()) n.driver_version = {v, 0};
    hit = true;
  }
  if (words && says_rootless(lowered)) {
    add_reported(p, "rootless-hint", -1, "a rootless container (a user namespace)", line, line_no);
    hit = true;
  }
  // nvidia-container-cli could not write the device cgroup (v1's
  // devices.allow) or attach its eBPF filter (v2).
  if (words && (icontains(lowered, "devices.allow") || icontains(lowered, "device rules") ||
                icontains(lowered, "device filters"))) {
    add_reported(p, "cgroup-rules-failed", -1, "the runtime could not set the device cgroup", line,
                 line_no);
    hit = true;
  }
  if (words && says_selinux_denied(lowered)) {
    add_reported(p, "selinux-denial", -1, "SELinux denies an NVIDIA device node", line, line_no);
    hit = true;
  }
  if (words && runs_without_gpus(lowered)) {
    add_reported(p, "container-no-gpu-flag", -1, "the container was started without --gpus", line,
                 line_no);
    hit = true;
  }
  if (std::string_view cmd = command_of(t); !cmd.empty()) {
    p->last_command = ascii_lower(cmd.substr(0, 200));
    return hit;
  }
  if (!words && !t.starts_with("nvidia_uvm")) return hit;
  if (icontains(lowered, "nvidia-smi: command not found") ||
      icontains(lowered, "nvidia-smi: not found")) {
    add_reported(p, "nvidia-smi-missing", -1, "nvidia-smi: command not found", line, line_no);
    return true;
  }
  if (icontains(lowered, "segmentation fault") || icontains(lowered, "core dumped")) {
    if (icontains(p->last_command, "nvidia-smi")) {
      NvmlInfo& n = text_nvml(p);
      n.child_error = "crashed: SIGSEGV";
      add_reported(p, "crash", 11, "nvidia-smi crashed (Segmentation fault)", line, line_no);
      return true;
    }
    if (icontains(p->last_command, "python") || icontains(p->last_command, "torch") ||
        icontains(p->last_command, "cuda")) {
      CudaRun& r = text_cuda_run(p);
      r.child_error = "crashed: SIGSEGV";
      add_reported(p, "crash", 11, "the CUDA program crashed (Segmentation fault)", line, line_no);
      return true;
    }
  }
  // WSL (facts §13): WSL 1's fixed kernel string, "4.4.0-19041-Microsoft",
  // and WSL 2's marks ("5.15.153.1-microsoft-standard-WSL2", the Windows
  // driver's /usr/lib/wsl/lib).
  if (is_wsl1_kernel(lowered)) {
    add_reported(p, "wsl1-kernel", -1, "a WSL 1 kernel", line, line_no);
    return true;
  }
  if (icontains(lowered, "microsoft-standard") || icontains(lowered, "/usr/lib/wsl/")) {
    add_reported(p, "wsl-hint", -1, "WSL 2", line, line_no);
    return true;
  }
  if (icontains(lowered, "pm: suspend exit") || icontains(lowered, "pm: resume") ||
      icontains(lowered, "pm: hibernation exit")) {
    add_reported(p, "resume", -1, "the system resumed from suspend", line, line_no);
    return true;
  }
  if (t.starts_with("nvidia_uvm ") || t.starts_with("nvidia_uvm\t")) {
    add_reported(p, "uvm-loaded", -1, "lsmod: nvidia_uvm is loaded", line, line_no);
    return true;
  }
  // nvidia.ko makes /proc/driver/nvidia (facts §2, its load line): without it no
  // NVIDIA module is loaded here, or the container was given no GPU.
  // TensorFlow's diagnostics say it: "kernel driver does not appear to be
  // running on this host (h): /proc/driver/nvidia/version does not exist".
  if (icontains(lowered, "/proc/driver/nvidia") && says_absent(lowered)) {
    add_reported(p, "driver-proc-missing", -1, "/proc/driver/nvidia does not exist", line, line_no);
    return true;
  }
  // A device node that is not there, in the words of ls, open(2) or a
  // library: "No such file or directory", "not found", "cannot open".
  if (icontains(lowered, "/dev/nvidia") && says_absent(lowered)) {
    bool uvm = icontains(lowered, "/dev/nvidia-uvm");
    add_reported(p, uvm ? "uvm-node-missing" : "devnodes-missing", -1,
                 uvm ? "/dev/nvidia-uvm does not exist" : "/dev/nvidia* do not exist", line,
                 line_no);
    return true;
  }
  // modprobe: FATAL: Module nvidia-uvm not found in directory ...; could not insert 'nvidia_uvm'
  // modprobe: ERROR: could not insert 'nvidia_331_uvm': Function not implemented
  // Ubuntu's older packages named it by branch: "nvidia_331_uvm".
  if (icontains(lowered, "modprobe") && icontains(lowered, "nvidia") && icontains(lowered, "uvm") &&
      (says_absent(lowered) || icontains(lowered, "could not insert"))) {
    add_reported(p, "uvm-node-missing", -1, "nvidia_uvm cannot be loaded", line, line_no);
    return true;
  }
  if (icontains(lowered, "/dev/nvidia") && icontains(lowered, "permission denied")) {
    add_reported(p, "devnodes-permission", -1, "permission denied on /dev/nvidia*", line, line_no);
    return true;
  }
  // nvidia-smi -L's "No MIG devices found", slurmd's "no MIG devices were found".
  if (icontains(lowered, "no mig devices found") ||
      icontains(lowered, "no mig devices were found")) {
    add_reported(p, "mig-none", -1, "No MIG devices found", line, line_no);
    return true;
  }
  // "another driver, such as nouveau, is present" (nvidia-installer's list of
  // reasons) names nouveau as an example, not as present.
  if (icontains(lowered, "nouveau") && !icontains(lowered, "such as nouveau")) {
    add_reported(p, "nouveau", -1, "nouveau is mentioned", line, line_no);
    return true;
  }
  return hit;
}

}  // namespace gd
