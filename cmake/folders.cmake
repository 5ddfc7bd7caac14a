# One static library per folder of src/, each linking only the folders below
# it in the order of DESIGN.md ("Layout"). tests/layering/check.py holds the
# same order and checks both every #include and the DEPS below against it, so
# a helper that reaches upwards fails there with its file and line, and at
# link time here (a static library cannot use one that links after it).
#
# gd_folder(NAME [DEPS folder...] [LIBS target...] [EXCLUDE file.cc...])

function(gd_folder name)
  cmake_parse_arguments(ARG "" "" "DEPS;LIBS;EXCLUDE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${name}/*.cc)
  foreach(file IN LISTS ARG_EXCLUDE)
    list(REMOVE_ITEM sources ${CMAKE_SOURCE_DIR}/src/${name}/${file})
  endforeach()
  add_library(gd_${name} STATIC ${sources})
  target_include_directories(gd_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  list(TRANSFORM ARG_DEPS PREPEND gd_)
  target_link_libraries(gd_${name} PUBLIC ${ARG_DEPS} ${ARG_LIBS})
  if(GD_FUZZ)
    # Coverage for libFuzzer, in src/ only: the tests and fakes need none.
    target_compile_options(gd_${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# The version every report and snapshot carries.
add_compile_definitions(GD_VERSION="${PROJECT_VERSION}")

gd_folder(util LIBS nlohmann_json::nlohmann_json ${GD_LIB_FMT} Threads::Threads ${CMAKE_DL_LIBS}
  EXCLUDE glibc_floor_symbols.cc fmt_library.cc)  # the release build's own (cmake/release.cmake)
gd_folder(snapshot DEPS util)
gd_folder(catalog DEPS util)
gd_folder(config DEPS util LIBS ${GD_LIB_TOML})
gd_folder(kernlog DEPS util snapshot catalog LIBS ${GD_LIB_HS})
# libsystemd: headers only; probe/kernel_log_journal.cc loads it when a journal is read.
gd_folder(probe DEPS util snapshot catalog kernlog LIBS ${CMAKE_DL_LIBS})
target_include_directories(gd_probe PRIVATE ${SYSTEMD_INCLUDE_DIRS})
gd_folder(facts DEPS util snapshot catalog)
gd_folder(checks DEPS util snapshot catalog config kernlog facts)
gd_folder(explain DEPS util snapshot catalog kernlog probe checks)
gd_folder(topo DEPS util snapshot facts)
gd_folder(history DEPS util kernlog checks LIBS ${GD_LIB_SQLITE})
gd_folder(fleet DEPS util snapshot facts checks)
gd_folder(job DEPS util snapshot config probe facts checks)
gd_folder(report DEPS util snapshot catalog facts checks job)
gd_folder(diag DEPS util snapshot catalog kernlog probe facts checks report)
# OpenSSL: headers only; serve/tls.cc loads libssl with dlopen when TLS is asked for.
gd_folder(serve DEPS util snapshot catalog probe facts checks history report diag
  LIBS ${GD_LIB_YAML} ${GD_LIB_CRYPT} ${CMAKE_DL_LIBS})
target_include_directories(gd_serve PRIVATE ${OPENSSL_INCLUDE_DIR})
# cli's serve.cc goes into the gpudoctor-serve binary only (CMakeLists.txt).
gd_folder(cli DEPS util snapshot config probe checks explain topo history fleet job report diag
  LIBS CLI11::CLI11 EXCLUDE main.cc serve.cc)
# Everything but main and the exporter: what the gpudoctor binary, the C
# library and the unit tests link.
add_library(gpudoctor_core INTERFACE)
target_link_libraries(gpudoctor_core INTERFACE gd_cli)
