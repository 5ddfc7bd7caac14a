# `gpudoctor diag` end to end (tests/diag/run.py): the real binary on a
# recorded 8 x H100 node (--from) with tests/fakes/fake_diag_helper.py
# standing in for the CUDA helper (--helper): exit codes, findings, the text's
# figures, P2P matrix and NCCL table (goldens in tests/diag/golden/, `run.py
# GPUDOCTOR --update` rewrites them), --json, the history row, the helper's
# command line and environment, usage errors; and once live on a recorded
# tree with the fake NVML (GD_FAKES_DIR), so the NVML sampler runs beside the
# helper. No GPU and no CUDA needed, so it runs in the ASan build too (which
# is built without CUDA: there the one-line refusal without --helper is
# tested as well).
set(GD_DIAG_FLAGS "")
if(GD_SANITIZE)
  list(APPEND GD_DIAG_FLAGS "--sanitized")
endif()
if(NOT GD_HAVE_CUDA)
  list(APPEND GD_DIAG_FLAGS "--no-cuda")
endif()
add_test(NAME diag_e2e
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/diag/run.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} ${GD_DIAG_FLAGS})
set_tests_properties(diag_e2e PROPERTIES TIMEOUT 300)

# bench/diag_overhead.py once (RUNS=1): the benchmark still runs and its
# answer check holds. Exit 1 (a wrong answer) fails; 2 (the time goal
# missed, as under ASan) does not: tests check behaviour, not time.
add_test(NAME bench_diag_overhead_smoke
  COMMAND sh -c "\"$0\" \"$1\" \"$2\" 1; test $? -ne 1"
    ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/diag_overhead.py ${CMAKE_BINARY_DIR})
set_tests_properties(bench_diag_overhead_smoke PROPERTIES TIMEOUT 120)
