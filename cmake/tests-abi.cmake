# NVIDIA's ABI checked against NVIDIA's own headers (tests/abi/): the probe's
# declarations of the CUDA driver API and NVML compiled against the real
# cuda.h and nvml.h. gpudoctor never needs those headers to build, so each
# test exists only where its header is found; the layouts are asserted
# everywhere anyway, from transcribed numbers (src/probe/nvidia_abi.h).
#
# cuda.h comes with the CUDA toolkit; nvml.h with the driver's development
# files (or NVIDIA/go-nvml's gen/nvml/nvml.h: -DGD_NVML_INCLUDE_DIR=DIR).

find_path(GD_CUDA_INCLUDE_DIR cuda.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{CUDA_HOME}/include /usr/local/cuda/include
  DOC "Directory of the CUDA toolkit's cuda.h, for the ABI test (tests/abi/)")
find_path(GD_NVML_INCLUDE_DIR nvml.h
  HINTS ${GD_CUDA_INCLUDE_DIR} /usr/local/cuda/include
  DOC "Directory of a real nvml.h, for the ABI test (tests/abi/)")

# An ABI test: the checks are static_asserts, so building it is the test;
# running it checks the error catalog against the header's enums. A second
# test compiles the same file with a planted wrong signature
# (-DGD_ABI_PLANT_MISMATCH) and passes only if the compiler rejects it with
# the planted message: the check can fail.
function(gd_abi_test name source header_dir planted)
  # ARGN: NAME=VALUE string macros for the test, as "VALUE" literals.
  set(defs "")
  set(flags "")
  foreach(def ${ARGN})
    string(REGEX REPLACE "^([^=]+)=(.*)$" "\\1=\"\\2\"" quoted "${def}")
    list(APPEND defs "${quoted}")
    list(APPEND flags "-D${quoted}")
  endforeach()
  add_executable(${name} ${source})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests/abi)
  target_include_directories(${name} SYSTEM PRIVATE ${header_dir})
  target_link_libraries(${name} PRIVATE gpudoctor_core GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE ${defs})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
  add_test(NAME ${name}_rejects_mismatch
    COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/abi/expect_compile_error.py
      "${planted}" ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -DGD_ABI_PLANT_MISMATCH
      ${flags} -I${CMAKE_SOURCE_DIR}/src -I${CMAKE_SOURCE_DIR}/tests/abi
      -isystem ${header_dir} ${CMAKE_SOURCE_DIR}/${source})
endfunction()

if(GD_CUDA_INCLUDE_DIR)
  # The toolkit's own CUDA runtime, whose cudaGetErrorString the catalog's
  # texts must equal (skipped where it is absent).
  find_library(GD_CUDART_LIBRARY NAMES libcudart.so.13 libcudart.so.12 cudart
    HINTS ${GD_CUDA_INCLUDE_DIR}/../lib64 ${GD_CUDA_INCLUDE_DIR}/../lib NO_DEFAULT_PATH)
  if(NOT GD_CUDART_LIBRARY)
    set(GD_CUDART_LIBRARY "libcudart-not-found")
  endif()
  message(STATUS "ABI test against ${GD_CUDA_INCLUDE_DIR}/cuda.h")
  gd_abi_test(abi_cuda tests/abi/cuda_abi_test.cc ${GD_CUDA_INCLUDE_DIR}
    "planted mismatch: cuDeviceTotalMem through size_t*"
    GD_CUDA_INCLUDE_DIR=${GD_CUDA_INCLUDE_DIR} GD_CUDART_LIBRARY=${GD_CUDART_LIBRARY})
else()
  message(STATUS "ABI test against cuda.h: skipped, no cuda.h found")
endif()

if(GD_NVML_INCLUDE_DIR)
  message(STATUS "ABI test against ${GD_NVML_INCLUDE_DIR}/nvml.h")
  gd_abi_test(abi_nvml tests/abi/nvml_abi_test.cc ${GD_NVML_INCLUDE_DIR}
    "planted mismatch: nvmlDeviceGetGpuFabricInfoV with the v2 struct"
    GD_NVML_INCLUDE_DIR=${GD_NVML_INCLUDE_DIR})
else()
  message(STATUS "ABI test against nvml.h: skipped, no nvml.h found")
endif()

# libcuda-legacy.so.1: the fake libcuda (tests/fakes/fake_cuda.cc) without
# cuDeviceTotalMem_v2 and cuMemGetInfo_v2, so the probe's fallback to the
# unversioned symbols and their unsigned int counts runs in the unit tests
# (tests/unit/probe_cuda_legacy_test.cc).
add_library(fake_cuda_legacy SHARED tests/fakes/fake_cuda.cc tests/fakes/scenario.cc)
set_target_properties(fake_cuda_legacy PROPERTIES OUTPUT_NAME cuda-legacy SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${GD_FAKES_DIR} CXX_VISIBILITY_PRESET hidden)
gd_fake_options(fake_cuda_legacy)
target_compile_definitions(fake_cuda_legacy PRIVATE GD_FAKE_CUDA_LEGACY)
add_dependencies(gpudoctor_tests fake_cuda_legacy)
