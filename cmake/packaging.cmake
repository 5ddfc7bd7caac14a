# What `cmake --install` adds beyond the binaries and the library: man pages
# and shell completion generated from the command tree (scripts/cli_docs.py),
# the docs; and `cpack` Debian packages (docs/install.md):
#   gpudoctor       gpudoctor, gpudoctor-serve, man pages, completion, docs
#   libgpudoctor    the C library, its header and pkg-config file, the Python module
#   gpudoctor-diag  the CUDA load tests, component diag (only where nvcc built them)

set(GD_CLI_DOCS ${CMAKE_BINARY_DIR}/cli-docs)
add_custom_command(OUTPUT ${GD_CLI_DOCS}/man/gpudoctor.1
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/scripts/cli_docs.py $<TARGET_FILE:gpudoctor>
    ${GD_CLI_DOCS}
  DEPENDS gpudoctor ${CMAKE_SOURCE_DIR}/scripts/cli_docs.py
  COMMENT "Man pages and shell completion from the command tree")
add_custom_target(cli_docs ALL DEPENDS ${GD_CLI_DOCS}/man/gpudoctor.1)

install(DIRECTORY ${GD_CLI_DOCS}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  COMPONENT gpudoctor)
install(FILES ${GD_CLI_DOCS}/completion/gpudoctor.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gpudoctor
  COMPONENT gpudoctor)
install(FILES ${GD_CLI_DOCS}/completion/_gpudoctor
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT gpudoctor)
install(FILES ${GD_CLI_DOCS}/completion/gpudoctor.fish
  DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT gpudoctor)
file(GLOB GD_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${GD_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT gpudoctor)
# The demo snapshot the README's first command uses, so an installed
# gpudoctor can show a report on a machine without a GPU.
install(FILES ${CMAKE_SOURCE_DIR}/tests/snapshots/ws-4x4090-ulimit.json
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT gpudoctor)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpudoctor)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpudoctor developers <gpudoctor@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "why CUDA will not start on this machine, and the fix")
set(CPACK_PACKAGE_INSTALL_DIRECTORY gpudoctor)
set(CPACK_OUTPUT_FILE_PREFIX packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL gpudoctor libgpudoctor)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Dependencies from the binaries' own shared libraries (dpkg-shlibdeps); none
# on the NVIDIA driver, which may be the very thing that is broken.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_NAME gpudoctor)
set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_SECTION utils)
# Loaded with dlopen only when asked (the exporter's TLS, the journal), so
# dpkg-shlibdeps cannot see them; Debian installs Recommends by default.
set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_RECOMMENDS "libssl3, libsystemd0")
set(CPACK_COMPONENT_GPUDOCTOR_DESCRIPTION
  "gpudoctor names the root cause when CUDA will not start on a Linux machine with NVIDIA GPUs,\n with its evidence and the exact fix; exports GPU health to Prometheus (gpudoctor serve).")
set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_NAME libgpudoctor)
set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_DEPENDS "gpudoctor (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_LIBGPUDOCTOR_DESCRIPTION
  "gpudoctor's C library (gpudoctor.h, pkg-config gpudoctor) and Python module:\n a training script asks whether this machine can run CUDA before it starts.")
if(TARGET gpudoctor-diag)
  # cuBLAS and NCCL come from NVIDIA's CUDA toolkit, not from a Debian
  # package dpkg-shlibdeps could name: the package says so instead.
  list(APPEND CPACK_COMPONENTS_ALL diag)
  set(CPACK_DEBIAN_DIAG_PACKAGE_NAME gpudoctor-diag)
  set(CPACK_DEBIAN_DIAG_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_DIAG_PACKAGE_DEPENDS "gpudoctor (= ${PROJECT_VERSION})")
  set(CPACK_COMPONENT_DIAG_DESCRIPTION
    "gpudoctor diag's CUDA helper: compute, memory, peer-to-peer and NCCL tests.\n Needs the CUDA toolkit's cuBLAS and NCCL libraries on the library path.")
endif()
include(CPack)
