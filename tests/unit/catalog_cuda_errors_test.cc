// The CUDA and NVML error catalog (src/catalog/cuda_errors.cc) against
// NVIDIA's own texts: cudaGetErrorString of the CUDA 13.0 toolkit's
// libcudart.so.13, and what nvidia-smi prints from nvmlErrorString. Where
// the toolkit is installed, tests/abi/cuda_abi_test.cc compares every entry
// with the library itself; these pin the texts that were wrong or missing.
#include <gtest/gtest.h>

#include <string>

#include "catalog/cuda_errors.h"

namespace gd {
namespace {

const char* runtime_string(int code) {
  const CudaErrorInfo* e = find_cuda_error(code);
  return e == nullptr ? nullptr : e->runtime_string;
}

TEST(CatalogCudaErrors, CallRequiresNewerDriverIsLibcudartsText) {
  ASSERT_NE(runtime_string(36), nullptr);
  EXPECT_STREQ(runtime_string(36), "API call is not supported in the installed CUDA driver");
  EXPECT_EQ(cuda_runtime_error(36),
            "cudaErrorCallRequiresNewerDriver (36): API call is not supported in the installed "
            "CUDA driver");
  const CudaErrorInfo* e =
      find_cuda_error_by_runtime_string("API call is not supported in the installed CUDA driver.");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, 36);
  // The old, invented text is no runtime's.
  EXPECT_EQ(find_cuda_error_by_runtime_string("API call requires a newer CUDA driver"), nullptr);
}

TEST(CatalogCudaErrors, ContainedHasLibcudartsText) {
  ASSERT_NE(runtime_string(226), nullptr);
  EXPECT_STREQ(runtime_string(226),
               "Invalid access of peer GPU memory over nvlink or a hardware error");
  EXPECT_EQ(find_cuda_error_by_runtime_string(
                "invalid access of peer GPU memory over nvlink or a hardware error")
                ->code,
            226);
}

TEST(CatalogCudaErrors, CdpNotSupportedHasLibcudartsText) {
  ASSERT_NE(runtime_string(811), nullptr);
  EXPECT_STREQ(runtime_string(811),
               "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does "
               "not support it");
  EXPECT_EQ(cuda_driver_error(811), "CUDA_ERROR_CDP_NOT_SUPPORTED (811)");
}

TEST(CatalogCudaErrors, CdpVersionMismatchHasLibcudartsText) {
  ASSERT_NE(runtime_string(812), nullptr);
  EXPECT_STREQ(runtime_string(812),
               "unsupported interaction between different versions of CUDA Dynamic Parallelism");
  EXPECT_EQ(find_cuda_error_by_name("cudaErrorCdpVersionMismatch")->code, 812);
}

// Every entry with a runtime name has the runtime's text: nothing left that
// explain could not match.
TEST(CatalogCudaErrors, EveryRuntimeEntryHasItsText) {
  int entries = 0;
  for (int code = 0; code < 1000; ++code) {
    const CudaErrorInfo* e = find_cuda_error(code);
    if (e == nullptr || e->runtime_name == nullptr) continue;
    ++entries;
    EXPECT_NE(e->runtime_string, nullptr) << code << " " << e->runtime_name;
  }
  EXPECT_GT(entries, 40);
}

// nvidia-smi: "Failed to initialize NVML: GPU access blocked by the operating
// system" (cgroups, a container runtime or WSL deny /dev/nvidia*).
TEST(CatalogNvmlErrors, OperatingSystemIsGpuAccessBlocked) {
  EXPECT_EQ(nvml_error_by_string("GPU access blocked by the operating system"), 17);
  EXPECT_EQ(nvml_error_by_string("  gpu access blocked by the operating system. "), 17);
  EXPECT_STREQ(nvml_error_name(17), "NVML_ERROR_OPERATING_SYSTEM");
}

// pynvml's texts, blanks and case that differ, and words after a long text.
TEST(CatalogNvmlErrors, TextsInTheirPrintedForms) {
  EXPECT_EQ(nvml_error_by_string("RM has detected an NVML/RM version mismatch."), 18);
  EXPECT_EQ(nvml_error_by_string("Driver / library version mismatch. A message has occurred."), 18);
  EXPECT_EQ(nvml_error_by_string("GPU requires restart"), 16);
  EXPECT_EQ(nvml_error_by_string("not found"), 6);
  EXPECT_EQ(nvml_error_by_string("Not Found in the cache"), -1);  // short: the whole text only
  EXPECT_EQ(nvml_error_by_string(""), -1);
}

TEST(CatalogNvmlErrors, NamesFollowNvmlHeaderValues) {
  // nvml.h (NVML API 13): the last before UNKNOWN and UNKNOWN itself.
  EXPECT_STREQ(nvml_error_name(25), "NVML_ERROR_ARGUMENT_VERSION_MISMATCH");
  EXPECT_STREQ(nvml_error_name(30), "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED");
  EXPECT_EQ(nvml_error_name(31), nullptr);
  EXPECT_EQ(nvml_error_by_name("NVML_ERROR_UNKNOWN"), 999);
}

}  // namespace
}  // namespace gd
