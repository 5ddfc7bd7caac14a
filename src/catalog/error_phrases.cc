// Each row comes from a public thread whose cause was confirmed; `seen_in`
// names its record in tests/cases/, which keeps the URL and the verbatim text.
// Rows are taken only from the corpus's "tune" half (tests/cases/eval.py):
// the "measure" half shows whether they generalize.
#include "catalog/error_phrases.h"

#include <algorithm>
#include <string>
#include <vector>

#include "util/substring_index.h"

namespace gd {

const std::vector<ErrorPhrase>& error_phrases() {
  // clang-format off
  static const std::vector<ErrorPhrase> kPhrases = {
    // JAX/XLA: the loaded kernel module and the user-space driver differ.
    {{"does not match dso version"}, "nvml:18",
     "the kernel module's version differs from the user-space driver's (DSO)",
     "a-mismatch-jax-kernel-vs-dso-515-510"},
    // NGC images' banner when no driver was mounted into the container.
    {{"the nvidia driver was not detected"}, "container:no-driver",
     "the container sees no NVIDIA driver", "a-container-no-gpus-ngc-driver-not-detected"},
    // The Kubernetes device plugin in a pod the NVIDIA runtime did not set up.
    {{"could not load nvml library"}, "container:no-nvml",
     "NVML is not in the container (the NVIDIA runtime did not set it up)",
     "b-k8s-dp-23-nvml-default-runtime"},
    // The device plugin's pod restarting: it exits without NVML, which a pod
    // gets only from the NVIDIA runtime (§6.3: not the default runtime).
    {{"nvidia-device-plugin", "crashloopbackoff"}, "k8s:no-gpus",
     "the NVIDIA device plugin's pod keeps crashing",
     "d-k8s-dp13-crashloop-docker-default-runtime"},
    // nvidia-container-cli waiting on a driver that is not kept initialized.
    {{"driver rpc error: timed out"}, "container:rpc-timeout",
     "the driver did not answer the container runtime in time", "c-nvctk-202-rpc-timeout-persistence"},
    {{"nvidia-container-cli", "driver error: timed out"}, "container:rpc-timeout",
     "the driver did not answer the container runtime in time",
     "c-nvdocker-628-p2-16xlarge-persistence"},
    // NVML's version-mismatch text as other tools print it.
    {{"driver / library version mismatch"}, "nvml:18", "Driver/library version mismatch",
     "b-nvdocker-737-old-containers-old-driver"},
    {{"nvml: driver/library version mismatch"}, "nvml:18", "Driver/library version mismatch",
     "b-nvdocker-584-stale-nvml-symlinks"},
    // NCCL could not create or extend a shared-memory segment in /dev/shm
    // (NCCL user guide, facts §12.1: "failed to extend /dev/shm/nccl-...").
    {{"error while creating shared memory segment"}, "nccl:shm",
     "NCCL could not create a shared-memory segment", "c-nccl-342-docker-shm-64mb"},
    {{"failed to extend /dev/shm"}, "nccl:shm", "NCCL could not extend a segment in /dev/shm",
     "c-pytorchci-490-k8s-pod-shm"},
    // nvidia-container-cli cannot mount the host's driver library over one
    // the image already has: driver libraries installed in the image.
    {{"nvidia-container-cli: mount error", "file exists"}, "container:driver-libs-in-image",
     "the image already holds NVIDIA driver libraries", "b-biop-desktop-2-driver-libs-in-image"},
    // nvidia-installer (the .run file, driver containers) could not load the
    // module it built; its own sentence lists the usual reasons.
    {{"unable to load the kernel module 'nvidia.ko'"}, "installer:load-failed",
     "the driver installer could not load nvidia.ko", "b-gpu-driver-container-44-secure-boot-sign"},
    // Docker asked for --runtime=nvidia by a daemon that has no such runtime
    // (nvidia-ctk runtime configure never ran for it, e.g. the Docker snap).
    {{"unknown or invalid runtime name: nvidia"}, "container:no-nvidia-runtime",
     "the Docker daemon knows no runtime named nvidia", "d-gen-docker-snap-nvidia-runtime"},
    // Ollama's GPU discovery dropping GPUs whose driver is older than its CUDA build needs.
    {{"nvidia driver too old"}, "driver:too-old", "the NVIDIA driver is older than the program needs",
     "d-gen-ollama-p40-driver-535"},
    // The toolkit's stub libcuda on the library path.
    {{"/stubs/libcuda.so"}, "cuda:34", "libcuda.so from a toolkit's stubs/ folder",
     "a-stub-numba-ld-library-path"},
    // A framework build without CUDA, or without CUDA for this machine's
    // version: PyTorch's own assertion (torch/cuda/__init__.py), libtorch's
    // device guard, R torch's installer.
    {{"torch not compiled with cuda enabled"}, "framework:no-cuda",
     "the framework was built without CUDA", "f-fwcuda-detectron2-460-cpu-torch"},
    {{"not linked with support for cuda devices"}, "framework:no-cuda",
     "the framework was built without CUDA", "e-new2-rtorch-1082-cuda118-cpu-libtorch"},
    {{"detected but torch only supports"}, "framework:no-cuda",
     "the framework has no build for this CUDA version", "e-new2-rtorch-285-cuda110-falls-back-cpu"},
    {{"unsupported cuda version \""}, "framework:no-cuda",
     "the framework has no build for this CUDA version", "e-new2-rtorch-1165-unsupported-cuda-116"},
    // A CUDA library the program loads (cudart, cuDNN, cuBLAS) missing or of
    // another version than it was built for: TensorFlow's loader, XLA's checks.
    {{"could not load dynamic library 'libcu"}, "library:cuda-mismatch",
     "a CUDA library the program needs cannot be loaded", "d-rnd2-deepchem-libcudart-2467"},
    {{"loaded runtime cudnn library", "but source was compiled with"}, "library:cuda-mismatch",
     "the cuDNN loaded is older than the one the program was built with",
     "e-new1-jax-15268-cudnn-85-vs-86"},
    {{"but jax was built against version"}, "library:cuda-mismatch",
     "the CUDA libraries installed are older than JAX was built against",
     "d-rnd2-rfdiffusion-jax-208"},
  };
  // clang-format on
  return kPhrases;
}

const ErrorPhrase* find_error_phrase(std::string_view lowered) {
  // Most lines hold no row's first words: one pass over the line rules them out.
  static const SubstringIndex kFirstWords = [] {
    std::vector<std::string> first;
    for (const ErrorPhrase& p : error_phrases()) first.emplace_back(p.all_of.front());
    return SubstringIndex(std::move(first));
  }();
  if (kFirstWords.first_in(lowered) < 0) return nullptr;
  for (const ErrorPhrase& p : error_phrases()) {
    if (std::all_of(p.all_of.begin(), p.all_of.end(),
                    [&](const char* s) { return lowered.find(s) != std::string_view::npos; })) {
      return &p;
    }
  }
  return nullptr;
}

}  // namespace gd
