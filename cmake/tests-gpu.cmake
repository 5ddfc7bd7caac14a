# The CUDA helper (gpudoctor-diag, gpu/README.md) on this machine: compiled
# by nvcc, run without a GPU. Its kernels cannot run here; what can is its
# answer without a driver, with the toolkit's stub libcuda, and on usage
# errors (tests/gpu/helper_test.py). The memory test's patterns have CPU
# tests in gpudoctor_tests (tests/unit/gpu_patterns_test.cc).

# CpuPin needs no CUDA: its own small test binary, built everywhere.
add_executable(gpu_cpu_pin_tests tests/gpu/cpu_pin_test.cc gpu/cpu_pin.cc)
target_include_directories(gpu_cpu_pin_tests PRIVATE gpu)
target_link_libraries(gpu_cpu_pin_tests PRIVATE GTest::gtest_main)
gtest_discover_tests(gpu_cpu_pin_tests TEST_PREFIX gpu_ DISCOVERY_TIMEOUT 60)

if(TARGET gpudoctor-diag)
  foreach(case no_driver stub_driver usage_errors help valid_forms)
    add_test(NAME gpu_helper_${case}
      COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/gpu/helper_test.py
        $<TARGET_FILE:gpudoctor-diag> -k ${case})
    set_tests_properties(gpu_helper_${case} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
      ENVIRONMENT "CUDA_HOME=${CUDAToolkit_LIBRARY_ROOT}")
  endforeach()
endif()
