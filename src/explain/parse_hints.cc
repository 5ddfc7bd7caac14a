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
#include "explain/parse.h"
#include "util/ascii.h"

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
  for (std::string_view asks : {"--gpus", "--runtime=nvidia", "--runtime nvidia", "nvidia.com/gpu",
                                "/dev/nvidia", "nvidia_visible_devices"}) {
    if (icontains(lowered, asks)) return false;
  }
  return true;
}

// docker-compose (v1) creating a one-off container: "Creating x_y_run ... done".
bool compose_line(std::string_view t) {
  return t.starts_with("Creating ") && t.ends_with(" ... done");
}

}  // namespace

bool parse_hint_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p) {
  std::string_view t = trim(line);
  bool hit = false;
  if (docker_prompt(t) || icontains(lowered, "docker run") || icontains(lowered, "podman run") ||
      icontains(lowered, "/.dockerenv") || icontains(lowered, "kubectl ") || compose_line(t)) {
    add_reported(p, "container-hint", -1, std::string(t.substr(0, 120)), line, line_no);
    hit = true;
  }
  if (runs_without_gpus(lowered)) {
    add_reported(p, "container-no-gpu-flag", -1, "the container was started without --gpus", line,
                 line_no);
    hit = true;
  }
  if (std::string_view cmd = command_of(t); !cmd.empty()) {
    p->last_command = ascii_lower(cmd.substr(0, 200));
    return hit;
  }
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
  if (icontains(lowered, "pm: suspend exit") || icontains(lowered, "pm: resume") ||
      icontains(lowered, "pm: hibernation exit")) {
    add_reported(p, "resume", -1, "the system resumed from suspend", line, line_no);
    return true;
  }
  if (t.starts_with("nvidia_uvm ") || t.starts_with("nvidia_uvm\t")) {
    add_reported(p, "uvm-loaded", -1, "lsmod: nvidia_uvm is loaded", line, line_no);
    return true;
  }
  if (icontains(lowered, "cannot access") && icontains(lowered, "/dev/nvidia") &&
      icontains(lowered, "no such file")) {
    bool uvm = icontains(lowered, "/dev/nvidia-uvm");
    add_reported(p, uvm ? "uvm-node-missing" : "devnodes-missing", -1,
                 uvm ? "/dev/nvidia-uvm does not exist" : "/dev/nvidia* do not exist", line,
                 line_no);
    return true;
  }
  if (icontains(lowered, "/dev/nvidia") && icontains(lowered, "permission denied")) {
    add_reported(p, "devnodes-permission", -1, "permission denied on /dev/nvidia*", line, line_no);
    return true;
  }
  if (icontains(lowered, "no mig devices found")) {
    add_reported(p, "mig-none", -1, "No MIG devices found", line, line_no);
    return true;
  }
  if (icontains(lowered, "nouveau")) {
    add_reported(p, "nouveau", -1, "nouveau is mentioned", line, line_no);
    return true;
  }
  return hit;
}

}  // namespace gd
