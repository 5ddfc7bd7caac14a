# The release build (GD_RELEASE, CMakePresets.json "release",
# scripts/release.sh): every third-party library inside the binary, so it
# needs nothing but glibc on the machine it runs on (docs/install.md).
#  - fmt and toml++ in their header-only forms;
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

set(GD_LIB_FMT fmt::fmt-header-only)

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
