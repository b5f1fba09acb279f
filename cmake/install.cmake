# `cmake --install build --prefix P`: the CLI, libframelift.so (versioned, with its SONAME), the
# public headers, a CMake package (find_package(framelift) -> framelift::framelift),
# framelift.pc and the data read at run time (share/framelift). examples/ build against exactly
# this (tests/examples/check-examples.sh); the .deb holds it too (cmake/package.cmake).
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

# The catalogs (models.json, gpus.json, offers.json): an installed framelift reads them from
# here, found beside its own binary (src/library/data_dir.h), wherever the prefix is.
install(DIRECTORY data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/framelift FILES_MATCHING PATTERN "*.json")
