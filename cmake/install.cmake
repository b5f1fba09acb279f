# `cmake --install build --prefix P`: the CLI, libframelift.so (versioned, with its SONAME), the
# public headers, a CMake package (find_package(framelift) -> framelift::framelift) and
# framelift.pc. examples/ build against exactly this (tests/examples/check-examples.sh).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS framelift_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS framelift_shared EXPORT framelift-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/framelift DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT framelift-targets NAMESPACE framelift:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/framelift)

configure_package_config_file(cmake/framelift-config.cmake.in ${CMAKE_BINARY_DIR}/framelift-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/framelift)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/framelift-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/framelift-config.cmake ${CMAKE_BINARY_DIR}/framelift-config-version.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/framelift)

# Relocatable: the prefix is found from the .pc file's own place (cmake --install --prefix P).
string(REGEX REPLACE "[^/]+" ".." FRAMELIFT_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(cmake/framelift.pc.in ${CMAKE_BINARY_DIR}/framelift.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/framelift.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
