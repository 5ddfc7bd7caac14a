# Kubernetes integration (docs/kubernetes.md), no cluster needed:
#  - k8s_golden: `check --format npd` and `labels` through the real binary on
#    the recorded snapshots and on live fake scenarios, against
#    tests/k8s/golden (tests/k8s/run.py GPUDOCTOR FAKES_DIR --update rewrites
#    them); `labels --nfd-dir` writing atomically.
#  - k8s_manifests: deploy/kubernetes/ parses, keeps its documented
#    privileges, and its gpudoctor command lines are ones the binary accepts
#    (python3-yaml; `kubectl kustomize` where kubectl is installed).
add_test(NAME k8s_golden
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/k8s/run.py $<TARGET_FILE:gpudoctor>
    ${GD_FAKES_DIR})
set_tests_properties(k8s_golden PROPERTIES TIMEOUT 300)
add_test(NAME k8s_manifests
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/k8s/check_manifests.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(k8s_manifests PROPERTIES TIMEOUT 300)
