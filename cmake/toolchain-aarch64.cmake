# Cross-compiling the release binaries for aarch64 (Grace: GH200, GB200)
# on an x86_64 Debian 12 (CMakePresets.json "release-aarch64",
# scripts/release.sh --arch aarch64): Debian's gcc 12 cross compiler
# (g++-aarch64-linux-gnu), the arm64 third-party packages unpacked by
# scripts/cross-deps.sh, and Debian 11's arm64 glibc to link against
# (scripts/sysroot.sh aarch64, through GD_GLIBC_SYSROOT).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

get_filename_component(GD_CROSS_DEPS ${CMAKE_CURRENT_LIST_DIR}/../build-sysroot/deps-aarch64 ABSOLUTE)
if(NOT EXISTS ${GD_CROSS_DEPS}/.ready)
  message(FATAL_ERROR "no arm64 libraries at ${GD_CROSS_DEPS}: run bash scripts/cross-deps.sh")
endif()
# Libraries, headers and CMake packages from the arm64 folder only; programs
# (python3, which writes the man pages) from this machine.
set(CMAKE_FIND_ROOT_PATH ${GD_CROSS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Debian's multiarch headers (openssl/opensslconf.h) sit in
# usr/include/aarch64-linux-gnu, where the cross compiler does not look.
set(CMAKE_C_FLAGS_INIT "-isystem ${GD_CROSS_DEPS}/usr/include/aarch64-linux-gnu")
set(CMAKE_CXX_FLAGS_INIT "-isystem ${GD_CROSS_DEPS}/usr/include/aarch64-linux-gnu")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${GD_CROSS_DEPS})
set(ENV{PKG_CONFIG_LIBDIR}
  ${GD_CROSS_DEPS}/usr/lib/aarch64-linux-gnu/pkgconfig:${GD_CROSS_DEPS}/usr/share/pkgconfig)
