# /metrics and what consumes it (docs/metrics.md). The unit tests of
# render_metrics (golden scrapes, docs, Xid rules) are in
# tests/unit/prometheus_test.cc, picked up with the other unit tests.

# promtool on the golden scrapes (clean: exit 0, no lint), the alert rules,
# their unit tests and the example scrape config. Skipped without promtool.
add_test(NAME metrics_promtool
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/prometheus/promtool_check.py)
set_tests_properties(metrics_promtool PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# The Grafana dashboard parses and its PromQL, like the rules', names only
# documented metrics.
add_test(NAME metrics_dashboard
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/prometheus/dashboard_test.py)

# A real Prometheus (Debian's) scrapes `gpudoctor serve` on the fake 8-GPU
# machine. Skipped in the sanitized build (no external daemons there) and
# without prometheus.
add_test(NAME metrics_prometheus_scrape
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/prometheus/scrape_test.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} ${GD_E2E_FLAGS})
set_tests_properties(metrics_prometheus_scrape PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
