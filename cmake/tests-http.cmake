# The exporter's HTTP layer (src/serve/http.cc, web_config.cc, status_page.cc).

# The status page as Chromium renders it, served by `gpudoctor serve --from`
# (tests/serve_http/chromium_test.py). Skipped in sanitized builds (Chromium
# is not ours to instrument, and the ASan binary is slow to serve) and where
# chromium is not installed (the test says so and exits 77).
if(NOT GD_SANITIZE)
  add_test(NAME serve_http_chromium
    COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/serve_http/chromium_test.py
      $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR})
  set_tests_properties(serve_http_chromium PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
endif()
