// Internal to the fake libnvidia-ml.so.1 (fake_nvml.cc, fake_nvml_health.cc):
// the handle type, the types both files use, and the per-call preamble.
// Types: docs/nvidia-facts.md §4.4 (CUDA 13.3 header, 2026-12).
#pragma once

#include <cstddef>
#include <vector>

#include "../../src/probe/nvidia_abi.h"
#include "scenario.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// Opaque to callers (nvmlDevice_t is a pointer to it).
struct nvmlDevice_st {
  const fake::Gpu* gpu = nullptr;
  const fake::MigInstance* mig = nullptr;
};
typedef nvmlDevice_st* nvmlDevice_t;
typedef int nvmlReturn_t;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
GD_ABI_NVML_PCI_INFO(nvmlPciInfo_t);

namespace fake::nvml {

// nvmlReturn_t values (§4.1).
enum : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNotFound = 6,
  kInsufficientSize = 7,
  kGpuIsLost = 15,
  kArgumentVersionMismatch = 25,
  kUnknown = 999,
};

// Common preamble of per-device calls: initialized, valid handle, injected
// errors, lost GPU. 0 when the call may go on.
int device_call(const char* fn, nvmlDevice_t dev, const void* out);

// A clock by nvmlClockType_t (0 GRAPHICS, 1 SM, 2 MEM, 3 VIDEO) from the
// SM and memory clocks, MHz: graphics follows SM, video runs at 3/4 of it.
// INVALID_ARGUMENT for another type.
int clock_by_type(int type, unsigned int sm_mhz, unsigned int mem_mhz, unsigned int* out);

// The scenario GPU's handle at an NVML index (nullptr past the end).
nvmlDevice_t handle_at(size_t index);

// The NVML index of a handle's GPU.
size_t index_of(nvmlDevice_t dev);

// Fills an nvmlPciInfo_t for a PCI address "0000:05:00.0" as NVML does.
void fill_pci_info(unsigned domain, unsigned bus, unsigned device, unsigned device_id,
                   unsigned subsystem_id, nvmlPciInfo_t* pci);

}  // namespace fake::nvml
