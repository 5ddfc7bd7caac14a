# cmake -DDIR=... -P check-cli-docs.cmake: a cross build's man pages and
# completions (GD_HOST_CLI_DOCS, cmake/packaging.cmake) are there.
foreach(f man/gpudoctor.1 completion/gpudoctor.bash completion/_gpudoctor completion/gpudoctor.fish)
  if(NOT EXISTS "${DIR}/${f}")
    message(FATAL_ERROR "GD_HOST_CLI_DOCS=${DIR} has no ${f}: build the host build's "
      "cli_docs target first (ninja -C build cli_docs), or point GD_HOST_CLI_DOCS at its cli-docs.")
  endif()
endforeach()
