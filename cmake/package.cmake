# `cmake --build build --target deb`: build/framelift_VERSION_ARCH.deb, everything install.cmake
# and cli-docs.cmake install under /usr: the CLI, libframelift.so, headers, the CMake package,
# framelift.pc, share/framelift (the catalogs), man pages and bash completion. Depends is
# computed by dpkg-shlibdeps (dpkg-dev) from the libraries the binaries link: libtorch, FFmpeg's
# libav*, libcurl, libarchive, ... Opt-in: the default build never packages.
set(CPACK_PACKAGE_NAME framelift)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "framelift")
set(CPACK_PACKAGE_CONTACT "framelift maintainers <framelift@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "AI video enhancement: upscale, interpolate, restore (CLI and library)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "AI video enhancement on libtorch and FFmpeg\n\
framelift upscales (Real-ESRGAN, Real-CUGAN, SwinIR, ...), interpolates frame\n\
rates (RIFE) and restores video, on CPUs and CUDA GPUs, resumable in segments\n\
and shardable over Slurm or Kubernetes. The package holds the framelift\n\
command, libframelift.so with its C++ headers, CMake and pkg-config files, man\n\
pages and bash completion. Models are installed with `framelift models`.")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libframelift.so.0 gets a shlibs file (and so an ldconfig trigger) like any Debian library.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# libtorch's BLAS goes through libblas.so.3; OpenBLAS is 4-6x faster than the reference BLAS there.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-pthread")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "ffmpeg")
include(CPack)

add_custom_target(deb
  COMMAND ${CMAKE_CPACK_COMMAND} -G DEB --config ${CMAKE_BINARY_DIR}/CPackConfig.cmake
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
  COMMENT "Packaging framelift_${PROJECT_VERSION} (.deb)" USES_TERMINAL VERBATIM)
add_dependencies(deb framelift_cli framelift_shared cli_docs)
