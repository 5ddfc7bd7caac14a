// Tests of the code catalogs: Xid (catalog/xid.h) and the CUDA/NVML error
// codes (catalog/cuda_errors.h). The expected code lists are written out
// from docs/nvidia-facts.md §1.3, §3 and §4.1, so a row dropped
// from (or invented in) a table fails here.
#include <gtest/gtest.h>

#include <climits>
#include <set>
#include <string>
#include <vector>

#include "catalog/cuda_errors.h"
#include "catalog/xid.h"

namespace gd {
namespace {

// Every Xid of facts §1.3, ranges (66/67, 144-150, 160/161, 162-165,
// 166-172, 173-176) spelled out.
const std::vector<int> kFactsXids = {
    8,   13,  31,  32,  38,  43,  44,  45,  46,  48,  54,  56,  57,  58,  61,  62,
    63,  64,  65,  66,  67,  68,  69,  73,  74,  78,  79,  80,  81,  92,  93,  94,
    95,  109, 110, 119, 120, 121, 122, 123, 124, 125, 136, 137, 140, 143, 144, 145,
    146, 147, 148, 149, 150, 151, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163,
    164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176};

TEST(XidCatalog, HasExactlyTheCodesOfTheFacts) {
  std::vector<int> codes;
  for (const XidInfo& x : xid_catalog()) codes.push_back(x.code);
  EXPECT_EQ(codes, kFactsXids);  // same codes, same (ascending) order
}

TEST(XidCatalog, SortedAndUnique) {
  const auto& cat = xid_catalog();
  for (size_t i = 1; i < cat.size(); ++i) {
    EXPECT_LT(cat[i - 1].code, cat[i].code) << "at " << cat[i].code;
  }
}

TEST(XidCatalog, EveryRowIsFilledIn) {
  for (const XidInfo& x : xid_catalog()) {
    SCOPED_TRACE(x.code);
    ASSERT_NE(x.mnemonic, nullptr);
    ASSERT_NE(x.meaning, nullptr);
    ASSERT_NE(x.advice, nullptr);
    EXPECT_NE(std::string(x.mnemonic), "");
    EXPECT_NE(std::string(x.meaning), "");
    EXPECT_NE(std::string(x.advice), "");
    EXPECT_NE(std::string(xid_fault_name(x.fault)), "unknown");
    EXPECT_NE(std::string(xid_action_name(x.action)), "unknown");
    // Mnemonics are nverror.h identifiers.
    for (char c : std::string(x.mnemonic)) {
      EXPECT_TRUE((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') << x.mnemonic;
    }
    // A reset advice gives the command.
    if (x.action == XidAction::kResetGpu) {
      EXPECT_NE(std::string(x.advice).find("nvidia-smi -r"), std::string::npos) << x.advice;
    }
  }
}

TEST(XidCatalog, FindXidFindsEveryCode) {
  for (int code : kFactsXids) {
    const XidInfo* x = find_xid(code);
    ASSERT_NE(x, nullptr) << code;
    EXPECT_EQ(x->code, code);
  }
}

TEST(XidCatalog, FindXidUnknownIsNull) {
  for (int code : {INT_MIN, -1, 0, 1, 7, 9, 14, 47, 96, 126, 177, 999, INT_MAX}) {
    EXPECT_EQ(find_xid(code), nullptr) << code;
  }
}

// DCGM's "devastating" set: always a failure, never "restart the job".
TEST(XidCatalog, DevastatingSetNeedsTheGpuOrNodeHandled) {
  for (int code : {48, 74, 79, 95, 119, 120, 140}) {
    const XidInfo* x = find_xid(code);
    ASSERT_NE(x, nullptr) << code;
    EXPECT_TRUE(x->action == XidAction::kResetGpu || x->action == XidAction::kReboot ||
                x->action == XidAction::kDrainInspect)
        << code << ": " << xid_action_name(x->action);
    EXPECT_NE(x->fault, XidFault::kApplication) << code;
    EXPECT_NE(x->fault, XidFault::kInformational) << code;
  }
}

TEST(XidCatalog, NotableRows) {
  const XidInfo* x79 = find_xid(79);
  ASSERT_NE(x79, nullptr);
  EXPECT_EQ(x79->action, XidAction::kReboot);
  EXPECT_EQ(x79->fault, XidFault::kHardware);
  EXPECT_EQ(std::string(x79->mnemonic), "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");

  EXPECT_EQ(find_xid(45)->action, XidAction::kFollowOther);
  EXPECT_EQ(find_xid(45)->fault, XidFault::kSecondary);
  EXPECT_EQ(find_xid(154)->action, XidAction::kFollowOther);

  const XidInfo* x63 = find_xid(63);
  EXPECT_EQ(x63->action, XidAction::kNone);
  EXPECT_EQ(x63->fault, XidFault::kInformational);
  EXPECT_NE(std::string(x63->advice).find("remap"), std::string::npos);

  EXPECT_EQ(find_xid(94)->action, XidAction::kRestartApp);
  EXPECT_EQ(find_xid(64)->fault, XidFault::kHardware);
  EXPECT_NE(find_xid(64)->action, XidAction::kNone);
  for (int code : {13, 31, 43}) EXPECT_EQ(find_xid(code)->fault, XidFault::kApplication) << code;
  EXPECT_EQ(find_xid(78)->action, XidAction::kUpdateSoftware);
  EXPECT_EQ(find_xid(54)->action, XidAction::kDrainInspect);
  for (int code : {173, 174, 175, 176}) {
    EXPECT_NE(std::string(find_xid(code)->meaning).find("not in NVIDIA"), std::string::npos);
  }
}

TEST(XidCatalog, NamesOfFaultsAndActions) {
  EXPECT_STREQ(xid_fault_name(XidFault::kApplication), "application");
  EXPECT_STREQ(xid_fault_name(XidFault::kHardware), "hardware");
  EXPECT_STREQ(xid_action_name(XidAction::kResetGpu), "reset the GPU");
  EXPECT_STREQ(xid_action_name(XidAction::kRestartApp), "restart the job");
  std::set<std::string> actions;
  for (XidAction a :
       {XidAction::kNone, XidAction::kRestartApp, XidAction::kUpdateSoftware, XidAction::kResetGpu,
        XidAction::kReboot, XidAction::kDrainInspect, XidAction::kFollowOther}) {
    actions.insert(xid_action_name(a));
  }
  EXPECT_EQ(actions.size(), 7u);  // distinct
}

// ---- CUDA error codes (facts §3) ----

const std::vector<int> kFactsCudaCodes = {0,   1,   2,   3,   4,   34,  35,  36,  46,  100, 101,
                                          102, 103, 127, 200, 201, 209, 214, 218, 220, 221, 222,
                                          226, 304, 500, 700, 719, 800, 801, 802, 803, 804, 805,
                                          806, 807, 808, 809, 810, 811, 812, 909, 999};

TEST(CudaErrors, EveryCodeOfTheFactsIsPresent) {
  for (int code : kFactsCudaCodes) {
    const CudaErrorInfo* e = find_cuda_error(code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_EQ(e->code, code);
    ASSERT_NE(e->runtime_name, nullptr) << code;
    ASSERT_NE(e->meaning, nullptr) << code;
    // Runtime-only codes (no CUresult) per the facts.
    bool runtime_only = code == 35 || code == 103 || code == 127;
    EXPECT_EQ(e->driver_name == nullptr, runtime_only) << code;
  }
  EXPECT_EQ(find_cuda_error(12345), nullptr);
  EXPECT_EQ(find_cuda_error(-1), nullptr);
}

TEST(CudaErrors, LookupByEitherName) {
  ASSERT_NE(find_cuda_error_by_name("CUDA_ERROR_OUT_OF_MEMORY"), nullptr);
  EXPECT_EQ(find_cuda_error_by_name("CUDA_ERROR_OUT_OF_MEMORY")->code, 2);
  EXPECT_EQ(find_cuda_error_by_name("cudaErrorMemoryAllocation")->code, 2);
  EXPECT_EQ(find_cuda_error_by_name("cudaErrorInsufficientDriver")->code, 35);
  EXPECT_EQ(find_cuda_error_by_name("CUDA_ERROR_SYSTEM_NOT_READY")->code, 802);
  EXPECT_EQ(find_cuda_error_by_name("cudaErrorContained")->code, 226);
  EXPECT_EQ(find_cuda_error_by_name(" cudaErrorNoDevice ")->code, 100);
  EXPECT_EQ(find_cuda_error_by_name("CUDA_ERROR_NOT_A_THING"), nullptr);
  EXPECT_EQ(find_cuda_error_by_name(""), nullptr);
  EXPECT_EQ(find_cuda_error_by_name(std::string_view("\0\xff", 2)), nullptr);
  for (int code : kFactsCudaCodes) {
    const CudaErrorInfo* e = find_cuda_error(code);
    EXPECT_EQ(find_cuda_error_by_name(e->runtime_name), e) << code;
    if (e->driver_name != nullptr) {
      EXPECT_EQ(find_cuda_error_by_name(e->driver_name), e) << code;
    }
  }
}

TEST(CudaErrors, LookupByRuntimeString) {
  ASSERT_NE(find_cuda_error_by_runtime_string("out of memory"), nullptr);
  EXPECT_EQ(find_cuda_error_by_runtime_string("out of memory")->code, 2);
  EXPECT_EQ(find_cuda_error_by_runtime_string("Out Of Memory")->code, 2);
  EXPECT_EQ(find_cuda_error_by_runtime_string("invalid device ordinal")->code, 101);
  EXPECT_EQ(find_cuda_error_by_runtime_string("system not yet initialized")->code, 802);
  EXPECT_EQ(find_cuda_error_by_runtime_string(
                "system has unsupported display driver / cuda driver combination")
                ->code,
            803);
  EXPECT_EQ(find_cuda_error_by_runtime_string("no CUDA-capable device is detected")->code, 100);
  // With or without the trailing period some strings carry.
  EXPECT_EQ(find_cuda_error_by_runtime_string(
                "the provided PTX was compiled with an unsupported toolchain")
                ->code,
            222);
  EXPECT_EQ(find_cuda_error_by_runtime_string("unknown error.")->code, 999);
  EXPECT_EQ(find_cuda_error_by_runtime_string("out of"), nullptr);
  EXPECT_EQ(find_cuda_error_by_runtime_string(""), nullptr);
  // Unique: every string leads back to its own row.
  for (int code : kFactsCudaCodes) {
    const CudaErrorInfo* e = find_cuda_error(code);
    if (e->runtime_string == nullptr) continue;
    EXPECT_EQ(find_cuda_error_by_runtime_string(e->runtime_string), e) << code;
  }
}

TEST(CudaErrors, Formatting) {
  EXPECT_EQ(cuda_driver_error(2), "CUDA_ERROR_OUT_OF_MEMORY (2)");
  EXPECT_EQ(cuda_driver_error(35), "CUresult 35");
  EXPECT_EQ(cuda_runtime_error(2), "cudaErrorMemoryAllocation (2): out of memory");
  // libcudart 13.0's own text (catalog_cuda_errors_test.cc holds the rest).
  EXPECT_EQ(cuda_runtime_error(226),
            "cudaErrorContained (226): Invalid access of peer GPU memory over nvlink or a "
            "hardware error");
  EXPECT_EQ(cuda_runtime_error(4242), "cudaError_t 4242");
}

// ---- NVML return codes (facts §4.1) ----

TEST(NvmlErrors, EveryCodeHasANameThatLeadsBack) {
  std::vector<int> codes;
  for (int rc = 0; rc <= 30; ++rc) codes.push_back(rc);
  codes.push_back(999);
  for (int rc : codes) {
    const char* name = nvml_error_name(rc);
    ASSERT_NE(name, nullptr) << rc;
    EXPECT_EQ(nvml_error_by_name(name), rc) << name;
  }
  EXPECT_EQ(nvml_error_name(31), nullptr);
  EXPECT_EQ(nvml_error_name(-1), nullptr);
}

TEST(NvmlErrors, LookupByName) {
  EXPECT_EQ(nvml_error_by_name("NVML_ERROR_LIB_RM_VERSION_MISMATCH"), 18);
  EXPECT_EQ(nvml_error_by_name("NVML_ERROR_DRIVER_NOT_LOADED"), 9);
  EXPECT_EQ(nvml_error_by_name("NVML_ERROR_GPU_IS_LOST"), 15);
  EXPECT_EQ(nvml_error_by_name("NVML_ERROR_UNKNOWN"), 999);
  EXPECT_EQ(nvml_error_by_name("NVML_SUCCESS"), 0);
  EXPECT_EQ(nvml_error_by_name("NVML_ERROR_NOPE"), -1);
  EXPECT_EQ(nvml_error_by_name(""), -1);
}

TEST(NvmlErrors, LookupByString) {
  EXPECT_EQ(nvml_error_by_string("Driver/library version mismatch"), 18);
  EXPECT_EQ(nvml_error_by_string("Unknown Error"), 999);
  EXPECT_EQ(nvml_error_by_string("Insufficient Permissions"), 4);
  EXPECT_EQ(nvml_error_by_string("Driver Not Loaded"), 9);
  EXPECT_EQ(nvml_error_by_string("GPU is lost"), 15);
  EXPECT_EQ(nvml_error_by_string("Not Supported"), 3);
  EXPECT_EQ(nvml_error_by_string("driver/library version mismatch "), 18);
  EXPECT_EQ(nvml_error_by_string("Driver/library"), -1);
  EXPECT_EQ(nvml_error_by_string(""), -1);
}

}  // namespace
}  // namespace gd
