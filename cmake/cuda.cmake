# gpudoctor-diag: the active tests' CUDA helper (gpu/README.md), built only
# where a CUDA compiler is found. It alone links the CUDA runtime (static),
# cuBLAS and NCCL; gpudoctor itself never does, so it still starts on a
# machine whose CUDA libraries are broken. Without nvcc the rest builds and
# tests as before and `gpudoctor diag` says it was built without CUDA.
include(GNUInstallDirs)
option(GD_CUDA "Build the CUDA helper (gpudoctor-diag) when nvcc is found" ON)
if(GD_SANITIZE)
  # nvcc's objects cannot be instrumented, and the helper cannot run here.
  set(GD_CUDA OFF)
endif()
set(GD_HAVE_CUDA OFF)
if(GD_CUDA)
  include(CheckLanguage)
  check_language(CUDA)  # never fails; CMAKE_CUDA_COMPILER stays NOTFOUND without nvcc
endif()
if(GD_CUDA AND CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Native code for Volta (where the toolkit still has it) through
    # Hopper and Blackwell, plus PTX of the newest for GPUs after it. "native"
    # would fail on a build machine without a GPU.
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch
      OUTPUT_VARIABLE gd_nvcc_archs ERROR_QUIET)
    set(gd_archs "")
    set(gd_newest "")
    foreach(arch 70 75 80 86 89 90 100 120)
      if(gd_nvcc_archs MATCHES "compute_${arch}\n")
        list(APPEND gd_archs ${arch}-real)
        set(gd_newest ${arch})
      endif()
    endforeach()
    if(gd_newest STREQUAL "")
      message(FATAL_ERROR "nvcc at ${CMAKE_CUDA_COMPILER} lists none of the architectures gpudoctor builds for")
    endif()
    list(APPEND gd_archs ${gd_newest}-virtual)
    set(CMAKE_CUDA_ARCHITECTURES ${gd_archs})
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # NCCL ships no CMake package.
  find_library(GD_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(GD_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(NOT GD_NCCL_LIBRARY OR NOT GD_NCCL_INCLUDE_DIR)
    message(FATAL_ERROR "nvcc found but not NCCL (libnccl, nccl.h); configure with -DGD_CUDA=OFF to build without the CUDA helper")
  endif()
  if(GD_CCACHE)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${GD_CCACHE})
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  file(GLOB GD_GPU_SOURCES CONFIGURE_DEPENDS gpu/*.cu gpu/*.cc)
  add_executable(gpudoctor-diag ${GD_GPU_SOURCES})
  target_include_directories(gpudoctor-diag PRIVATE gpu ${GD_NCCL_INCLUDE_DIR})
  target_compile_options(gpudoctor-diag PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra;--Werror=all-warnings>")
  target_link_libraries(gpudoctor-diag PRIVATE CUDA::cudart_static CUDA::cublas ${GD_NCCL_LIBRARY}
    nlohmann_json::nlohmann_json Threads::Threads)
  set(GD_HAVE_CUDA ON)
  add_dependencies(gpudoctor gpudoctor-diag)
  install(TARGETS gpudoctor-diag RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT diag)
  message(STATUS "gpudoctor-diag: CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "gpudoctor-diag: not built (no CUDA compiler, or GD_CUDA=OFF)")
endif()
# `gpudoctor diag` says whether it was built with its CUDA helper.
if(GD_HAVE_CUDA)
  target_compile_definitions(gd_cli PRIVATE GD_WITH_CUDA=1)
endif()
