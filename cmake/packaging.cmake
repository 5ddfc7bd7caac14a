# What `cmake --install` adds beyond the binaries and the library: man pages
# and shell completion generated from the command tree (scripts/cli_docs.py),
# the systemd unit, the Slurm scripts, the docs; and the `cpack` packages
# (docs/install.md, scripts/package.sh): one Debian and one RPM package per
# component,
#   gpudoctor       gpudoctor, gpudoctor-serve, man pages, completion, the
#                   systemd unit, the Slurm scripts, docs
#   libgpudoctor    the C library, its header and pkg-config file, the Python module
#   gpudoctor-diag  the CUDA load tests, component diag (only where nvcc built them)
# and a tarball gpudoctor-VERSION-linux-ARCH.tar.gz of the first two.

# The man pages and completions come from running the built gpudoctor, which
# a cross build cannot do: it takes them from a host build of the same
# source instead (both come from one command tree, whatever the CPU).
set(GD_HOST_CLI_DOCS "" CACHE PATH
  "Cross builds: the host build's cli-docs directory (man/, completion/), e.g. build/cli-docs")
if(CMAKE_CROSSCOMPILING)
  if(NOT GD_HOST_CLI_DOCS)
    message(FATAL_ERROR "A cross build cannot run its gpudoctor to write the man pages and "
      "completions: give a host build's with -DGD_HOST_CLI_DOCS=/path/to/build/cli-docs "
      "(built by `ninja cli_docs` there).")
  endif()
  get_filename_component(GD_CLI_DOCS "${GD_HOST_CLI_DOCS}" ABSOLUTE)
  # Checked when building, so the host build may be built after this is configured.
  add_custom_target(cli_docs ALL
    COMMAND ${CMAKE_COMMAND} -DDIR=${GD_CLI_DOCS} -P ${CMAKE_SOURCE_DIR}/cmake/check-cli-docs.cmake
    COMMENT "Man pages and shell completion from the host build (${GD_CLI_DOCS})")
else()
  set(GD_CLI_DOCS ${CMAKE_BINARY_DIR}/cli-docs)
  add_custom_command(OUTPUT ${GD_CLI_DOCS}/man/gpudoctor.1
    COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/scripts/cli_docs.py $<TARGET_FILE:gpudoctor>
      ${GD_CLI_DOCS}
    DEPENDS gpudoctor ${CMAKE_SOURCE_DIR}/scripts/cli_docs.py
    COMMENT "Man pages and shell completion from the command tree")
  add_custom_target(cli_docs ALL DEPENDS ${GD_CLI_DOCS}/man/gpudoctor.1)
endif()

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

# The systemd unit for `gpudoctor serve` (docs/systemd.md) where systemd
# looks for a package's units, not enabled. Its ExecStart names the binary
# where this install puts it (/usr/bin from a package); in the tarball it
# stays /usr/local/bin, where docs/install.md says to unpack it.
set(GD_UNIT_BINDIR "${CMAKE_INSTALL_BINDIR}")
if(NOT IS_ABSOLUTE "${GD_UNIT_BINDIR}")
  set(GD_UNIT_BINDIR "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}")
endif()
install(CODE "
  file(READ \"${CMAKE_SOURCE_DIR}/deploy/systemd/gpudoctor.service\" _gd_unit)
  if(NOT DEFINED ENV{GD_PACKAGE_ARCHIVE})
    string(REPLACE \"ExecStart=/usr/local/bin/gpudoctor \" \"ExecStart=${GD_UNIT_BINDIR}/gpudoctor \"
      _gd_unit \"\${_gd_unit}\")
  endif()
  file(WRITE \"${CMAKE_BINARY_DIR}/systemd/gpudoctor.service\" \"\${_gd_unit}\")
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\" TYPE FILE
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
    FILES \"${CMAKE_BINARY_DIR}/systemd/gpudoctor.service\")
" COMPONENT gpudoctor)
# The Slurm health check and epilog (docs/slurm.md), for slurm.conf to name.
install(PROGRAMS ${CMAKE_SOURCE_DIR}/deploy/slurm/gpudoctor-healthcheck.sh
  ${CMAKE_SOURCE_DIR}/deploy/slurm/gpudoctor-epilog.sh
  DESTINATION ${CMAKE_INSTALL_DATADIR}/gpudoctor/slurm COMPONENT gpudoctor)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/slurm/slurm.conf.example
  DESTINATION ${CMAKE_INSTALL_DATADIR}/gpudoctor/slurm COMPONENT gpudoctor)

# --- packages ------------------------------------------------------------------
# Architecture names: the CPU the binaries are built for (a cross build's
# CMAKE_SYSTEM_PROCESSOR), in each format's own spelling.
set(GD_PACKAGE_ARCH ${CMAKE_SYSTEM_PROCESSOR})
if(GD_PACKAGE_ARCH MATCHES "^(x86_64|AMD64|amd64)$")
  set(GD_PACKAGE_ARCH x86_64)
  set(GD_DEB_ARCH amd64)
elseif(GD_PACKAGE_ARCH MATCHES "^(aarch64|arm64|ARM64)$")
  set(GD_PACKAGE_ARCH aarch64)
  set(GD_DEB_ARCH arm64)
else()
  set(GD_DEB_ARCH ${GD_PACKAGE_ARCH})
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpudoctor)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpudoctor developers <gpudoctor@localhost>")
set(CPACK_PACKAGE_VENDOR gpudoctor)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "why CUDA will not start on this machine, and the fix")
set(CPACK_PACKAGE_INSTALL_DIRECTORY gpudoctor)
# The tarball's name and its top directory; the .deb and .rpm are named by
# their formats' conventions (DEB-DEFAULT, RPM-DEFAULT).
set(CPACK_PACKAGE_FILE_NAME gpudoctor-${PROJECT_VERSION}-linux-${GD_PACKAGE_ARCH})
set(CPACK_OUTPUT_FILE_PREFIX packages)
# `cmake --install --strip`: what a package installs carries no debug info
# (scripts/release.sh keeps it apart, in .debug files).
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL gpudoctor libgpudoctor)
# Per-generator settings (the tarball's single archive): cmake/cpack-project.cmake.
configure_file(${CMAKE_SOURCE_DIR}/cmake/cpack-project.cmake.in
  ${CMAKE_BINARY_DIR}/cpack-project.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/cpack-project.cmake)

# Debian
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${GD_DEB_ARCH})
if(GD_RELEASE)
  # The release binaries need glibc and nothing else (cmake/release.cmake,
  # tests/packages/release_check.sh), from the floor they were linked
  # against. dpkg-shlibdeps would name the build machine's newer glibc, and
  # cannot read another architecture's binaries at all.
  if(NOT GD_GLIBC_FLOOR)
    set(GD_GLIBC_FLOOR 2.31)
  endif()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  # For the package tests (tests/packages/rpm_test.sh), in CPackConfig.cmake.
  set(CPACK_GD_GLIBC_FLOOR ${GD_GLIBC_FLOOR})
  set(GD_DEB_LIBC "libc6 (>= ${GD_GLIBC_FLOOR})")
  set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_DEPENDS "${GD_DEB_LIBC}")
  set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_DEPENDS "gpudoctor (= ${PROJECT_VERSION}), ${GD_DEB_LIBC}")
else()
  # Dependencies from the binaries' own shared libraries (dpkg-shlibdeps); none
  # on the NVIDIA driver, which may be the very thing that is broken.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_DEPENDS "gpudoctor (= ${PROJECT_VERSION})")
endif()
set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_NAME gpudoctor)
set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_SECTION utils)
# Loaded with dlopen only when asked (the exporter's TLS, the journal), so
# dpkg-shlibdeps cannot see them; Debian installs Recommends by default.
set(CPACK_DEBIAN_GPUDOCTOR_PACKAGE_RECOMMENDS "libssl3 | libssl1.1, libsystemd0")
set(CPACK_COMPONENT_GPUDOCTOR_DESCRIPTION
  "gpudoctor names the root cause when CUDA will not start on a Linux machine with NVIDIA GPUs,\n with its evidence and the exact fix; exports GPU health to Prometheus (gpudoctor serve).")
set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_NAME libgpudoctor)
set(CPACK_DEBIAN_LIBGPUDOCTOR_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_LIBGPUDOCTOR_DESCRIPTION
  "gpudoctor's C library (gpudoctor.h, pkg-config gpudoctor) and Python module:\n a training script asks whether this machine can run CUDA before it starts.")

# RPM (rpmbuild: Debian's package rpm). rpm's own dependency generator reads
# the ELF files, for any architecture: in a release build it finds glibc's
# sonames only (tests/packages/rpm_test.sh holds that).
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_ARCHITECTURE ${GD_PACKAGE_ARCH})
set(CPACK_RPM_PACKAGE_RELEASE 1)
set(CPACK_RPM_PACKAGE_LICENSE "unknown")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_GPUDOCTOR_PACKAGE_NAME gpudoctor)
set(CPACK_RPM_LIBGPUDOCTOR_PACKAGE_NAME libgpudoctor)
set(CPACK_RPM_LIBGPUDOCTOR_PACKAGE_REQUIRES "gpudoctor = ${PROJECT_VERSION}")
# Directories the distribution's own packages (filesystem, systemd,
# bash-completion, zsh, fish, python3) own: listed as this package's, rpm
# would report a conflict on install.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
  /usr/lib/systemd /usr/lib/systemd/system /usr/share/bash-completion
  /usr/share/bash-completion/completions /usr/share/zsh /usr/share/zsh/vendor-completions
  /usr/share/fish /usr/share/fish/vendor_completions.d /usr/share/doc /usr/lib/pkgconfig
  /usr/lib/python3 /usr/lib/python3/dist-packages)

if(TARGET gpudoctor-diag)
  # cuBLAS and NCCL come from NVIDIA's CUDA toolkit, not from a Debian
  # package dpkg-shlibdeps could name: the package says so instead.
  list(APPEND CPACK_COMPONENTS_ALL diag)
  set(CPACK_DEBIAN_DIAG_PACKAGE_NAME gpudoctor-diag)
  set(CPACK_DEBIAN_DIAG_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_DIAG_PACKAGE_DEPENDS "gpudoctor (= ${PROJECT_VERSION})")
  # Likewise rpm's generator would require cuBLAS and NCCL sonames that the
  # CUDA toolkit's runfile install provides to no rpm.
  set(CPACK_RPM_DIAG_PACKAGE_NAME gpudoctor-diag)
  set(CPACK_RPM_DIAG_PACKAGE_AUTOREQ OFF)
  set(CPACK_RPM_DIAG_PACKAGE_REQUIRES "gpudoctor = ${PROJECT_VERSION}")
  set(CPACK_COMPONENT_DIAG_DESCRIPTION
    "gpudoctor diag's CUDA helper: compute, memory, peer-to-peer and NCCL tests.\n Needs the CUDA toolkit's cuBLAS and NCCL libraries on the library path.")
endif()
include(CPack)
