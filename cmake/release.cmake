# The release build (GD_RELEASE, CMakePresets.json "release",
# scripts/release.sh): every third-party library inside the binary, so it
# needs nothing but glibc on the machine it runs on (docs/install.md).
#  - fmt compiled once (util/fmt_library.cc), toml++ header-only;
#  - vectorscan, SQLite, yaml-cpp and libcrypt from their static archives
#    (Debian's -dev packages ship each .a);
#  - libstdc++ and libgcc linked statically.
# OpenSSL and libsystemd stay dlopened at run time, as in every build.

# An INTERFACE target for a static archive with the include directories of
# the shared library it replaces.
function(gd_static_library target archive)
  find_library(GD_${target}_ARCHIVE NAMES ${archive} REQUIRED NO_CACHE)
  add_library(${target} INTERFACE)
  target_link_libraries(${target} INTERFACE ${GD_${target}_ARCHIVE} ${ARGN})
endfunction()

# fmt: its headers, and its compiled part built once (util/fmt_library.cc)
# rather than in every file, as header-only mode would.
get_target_property(GD_FMT_INCLUDE fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
add_library(gd_fmt STATIC src/util/fmt_library.cc)
target_include_directories(gd_fmt SYSTEM PUBLIC ${GD_FMT_INCLUDE})
set_target_properties(gd_fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)  # into libgpudoctor.so too
set(GD_LIB_FMT gd_fmt)

add_library(gd_toml_header_only INTERFACE)
target_include_directories(gd_toml_header_only INTERFACE ${TOMLPP_INCLUDE_DIRS})
target_compile_definitions(gd_toml_header_only INTERFACE TOML_HEADER_ONLY=1)
set(GD_LIB_TOML gd_toml_header_only)

gd_static_library(gd_hs_static libhs.a)
target_include_directories(gd_hs_static INTERFACE ${HS_INCLUDE_DIRS})
set(GD_LIB_HS gd_hs_static)

gd_static_library(gd_sqlite_static libsqlite3.a m ${CMAKE_DL_LIBS} Threads::Threads)
target_include_directories(gd_sqlite_static INTERFACE ${SQLite3_INCLUDE_DIRS})
set(GD_LIB_SQLITE gd_sqlite_static)

gd_static_library(gd_yaml_static libyaml-cpp.a)
get_target_property(GD_YAML_INCLUDE yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
if(GD_YAML_INCLUDE)
  target_include_directories(gd_yaml_static INTERFACE ${GD_YAML_INCLUDE})
endif()
set(GD_LIB_YAML gd_yaml_static)

find_library(GD_CRYPT_ARCHIVE NAMES libcrypt.a REQUIRED NO_CACHE)
set(GD_LIB_CRYPT ${GD_CRYPT_ARCHIVE})

add_link_options(-static-libstdc++ -static-libgcc)

# The glibc floor (scripts/sysroot.sh, docs/install.md). With a sysroot,
# the shipped binaries and library are linked against its glibc (Debian
# 11's, 2.31) instead of the build machine's: only the link, so every object
# is the one the tests ran. The symbols of a newer glibc that the static
# libstdc++ and libgcc call come from util/glibc_floor_symbols.cc, linked
# into those targets alone. Without one, the floor is the build machine's
# glibc.
set(GD_GLIBC_SYSROOT "" CACHE PATH
  "Debian 11's glibc to link the shipped binaries against (bash scripts/sysroot.sh)")
if(GD_GLIBC_SYSROOT)
  if(NOT EXISTS ${GD_GLIBC_SYSROOT}/.ready)
    message(FATAL_ERROR "no glibc sysroot at ${GD_GLIBC_SYSROOT}: run bash scripts/sysroot.sh ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  set(GD_GLIBC_FLOOR 2.31)
  add_library(gd_glibc_floor OBJECT src/util/glibc_floor_symbols.cc)
  target_link_libraries(gd_glibc_floor PRIVATE gd_util)
  set_target_properties(gd_glibc_floor PROPERTIES POSITION_INDEPENDENT_CODE ON)
else()
  execute_process(COMMAND getconf GNU_LIBC_VERSION OUTPUT_VARIABLE GD_GLIBC_FLOOR
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX REPLACE "^glibc " "" GD_GLIBC_FLOOR "${GD_GLIBC_FLOOR}")
endif()

# For scripts/release.sh, which holds the binaries to it.
file(WRITE ${CMAKE_BINARY_DIR}/glibc-floor "${GD_GLIBC_FLOOR}\n")

# Called on each shipped target once it exists (CMakeLists.txt).
function(gd_glibc_floor target)
  if(NOT GD_GLIBC_SYSROOT)
    return()
  endif()
  set(lib ${GD_GLIBC_SYSROOT}/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:gd_glibc_floor>)
  # -B: its crt*.o; -L first: its libc, libm, libdl and libpthread before the
  # build machine's; -pthread: glibc 2.31 still has a separate libpthread.
  target_link_options(${target} PRIVATE --sysroot=${GD_GLIBC_SYSROOT} -B${lib}/ -L${lib}
    -L${GD_GLIBC_SYSROOT}/lib/${CMAKE_LIBRARY_ARCHITECTURE} -pthread)
endfunction()
