# Man pages and the bash completion, written from the built CLI's --help (scripts/cli-docs.sh) so
# that they cannot drift from its options. Opt-in: `cmake --build build --target cli_docs` (the
# deb target builds it); the default build does not run the CLI. Installed when present.
set(FRAMELIFT_CLI_DOCS ${CMAKE_BINARY_DIR}/cli-docs)
add_custom_command(OUTPUT ${FRAMELIFT_CLI_DOCS}/completion/framelift
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/cli-docs.sh $<TARGET_FILE:framelift_cli> ${FRAMELIFT_CLI_DOCS}
  DEPENDS framelift_cli ${PROJECT_SOURCE_DIR}/scripts/cli-docs.sh ${PROJECT_SOURCE_DIR}/scripts/cli-docs.awk
  COMMENT "Man pages and bash completion from framelift --help" VERBATIM)
add_custom_target(cli_docs DEPENDS ${FRAMELIFT_CLI_DOCS}/completion/framelift)

install(DIRECTORY ${FRAMELIFT_CLI_DOCS}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 OPTIONAL)
install(FILES ${FRAMELIFT_CLI_DOCS}/completion/framelift
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions OPTIONAL)
