# Helpers that keep the top-level CMakeLists short.

# SYSTEM: libtorch's own warnings are not ours to show (or fix); ours stay on.
function(framelift_torch_flags target)
  target_include_directories(${target} SYSTEM PUBLIC ${TORCH_INCLUDE_DIRS})
  target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  framelift_use_aten_pch(${target})
  # PyTorch's CUDA libtorch sets TORCH_CUDA_LIBRARIES; Debian's CPU build does not. The few calls
  # that need CUDA headers are compiled only then; everything else checks for CUDA at run time.
  if(TORCH_CUDA_LIBRARIES)
    target_compile_definitions(${target} PRIVATE FRAMELIFT_WITH_CUDA=1)
  endif()
endfunction()

# Whether `file` includes a libtorch header itself or through one of the project's headers it
# includes (one level deep: the project's headers include ATen directly where they need it).
function(framelift_reads_aten file out)
  set(${out} FALSE PARENT_SCOPE)
  file(STRINGS ${file} lines REGEX "^#include [<\"]")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#include <(ATen|torch)/")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    if(line MATCHES "^#include \"([^\"]+)\"")
      set(name ${CMAKE_MATCH_1})
      cmake_path(GET file PARENT_PATH folder)
      set(header "")
      foreach(base ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests ${folder})
        if(NOT header AND EXISTS ${base}/${name})
          set(header ${base}/${name})
        endif()
      endforeach()
      if(header)
        file(STRINGS ${header} hits REGEX "^#include <(ATen|torch)/" LIMIT_COUNT 1)
        if(hits)
          set(${out} TRUE PARENT_SCOPE)
          return()
        endif()
      endif()
    endif()
  endforeach()
endfunction()

# One precompiled <ATen/ATen.h> (fl_aten_pch and its -fPIE twin, CMakeLists.txt) for the sources
# that read libtorch's headers: they skip most of a 3-9 s parse for a load of about 1 s. A file
# that reads none would only pay the load (docs/build.md has the measurements), so it compiles
# without.
function(framelift_use_aten_pch target)
  if(NOT TARGET fl_aten_pch_pie OR target MATCHES "^fl_aten_pch")
    return()
  endif()
  get_target_property(type ${target} TYPE)
  set(pch fl_aten_pch)
  if(type STREQUAL "EXECUTABLE")
    set(pch fl_aten_pch_pie)
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(any FALSE)
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir})
    set(uses FALSE)
    if(source MATCHES "\\.cpp$" AND EXISTS ${source})
      framelift_reads_aten(${source} uses)
    endif()
    if(uses)
      set(any TRUE)
    else()
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  if(any)
    target_precompile_headers(${target} REUSE_FROM ${pch})
  endif()
endfunction()

# Code that parses, plans, serves and calls the rest (the CLI, the server, the API's glue, jobs,
# the planner) spends its time in the libraries it calls, not in its own loops, and at -O3 GCC
# spends most of its compile time generating its templates (CLI11, nlohmann::json, httplib):
# -O1 compiles it in two thirds of the time (docs/build.md). Pixel and tensor code stays at -O3.
function(framelift_glue_flags target)
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${target} PRIVATE -O1)
  endif()
endfunction()

# framelift_component(NAME [TORCH] [GLUE]): a static library fl_NAME from src/NAME/*.cpp.
function(framelift_component name)
  cmake_parse_arguments(ARG "TORCH;GLUE" "" "" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(NOT sources)
    set(sources ${PROJECT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(fl_${name} STATIC ${sources})
  target_include_directories(fl_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  if(ARG_TORCH)
    framelift_torch_flags(fl_${name})
  else()
    target_compile_options(fl_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  endif()
  if(ARG_GLUE)
    framelift_glue_flags(fl_${name})
  endif()
endfunction()

# A test case that hangs fails alone after this many seconds, naming itself, instead of holding a
# -j2 slot (and every RUN_SERIAL test queued behind it) until CI's own limit ends the whole run.
# The slowest case takes about 60 s on 2 cores; scripts with their own TIMEOUT keep theirs.
set(FRAMELIFT_TEST_TIMEOUT 300)

# A suite runs all its cases in one process (cmake/gtest_suites.cmake says why), so its limit is
# the sum of theirs: the longest suite takes about 3 minutes on 2 cores.
set(FRAMELIFT_SUITE_TIMEOUT 900)

# One CTest entry per gtest suite of test_NAME, written when the binary is built.
# Optional 4th argument: suites that keep a process per case (cmake/gtest_suites.cmake).
function(framelift_test_suites name serial fixture)
  string(REPLACE ";" "," per_case "${ARGN}")  # one argument through add_custom_command
  set(ctest_file ${CMAKE_CURRENT_BINARY_DIR}/test_${name}_suites.cmake)
  set(ctest_include ${CMAKE_CURRENT_BINARY_DIR}/test_${name}_include.cmake)
  add_custom_command(TARGET test_${name} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D TEST_EXECUTABLE=$<TARGET_FILE:test_${name}> -D CTEST_FILE=${ctest_file} -D LABEL=${name}
            -D SERIAL=${serial} -D FIXTURE=${fixture} -D TIMEOUT=${FRAMELIFT_SUITE_TIMEOUT} "-DPER_CASE=${per_case}"
            -P ${PROJECT_SOURCE_DIR}/cmake/gtest_suites.cmake
    VERBATIM)
  file(WRITE ${ctest_include}
       "if(EXISTS \"${ctest_file}\")\n  include(\"${ctest_file}\")\nelse()\n  add_test(test_${name}_NOT_BUILT test_${name}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${ctest_include})
endfunction()

# framelift_test(NAME [NO_TORCH] LIBS...): one gtest binary per tests/NAME folder, each gtest suite
# a CTest entry. NO_TORCH: for code that needs neither libtorch nor the generated media; it links
# only the path helpers, so it builds in seconds and its tests run without the media fixture.
function(framelift_test name)
  # RUN_SERIAL: tests that time things run alone (another test would slow one measurement).
  # PER_CASE suites: a process per case (their cases measure the process).
  cmake_parse_arguments(ARG "NO_TORCH;RUN_SERIAL" "" "PER_CASE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  if(NOT sources)
    return()
  endif()
  add_executable(test_${name} ${sources})
  if(ARG_NO_TORCH)
    target_compile_options(test_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
    target_link_libraries(test_${name} PRIVATE ${ARG_UNPARSED_ARGUMENTS} test_paths GTest::gtest GTest::gtest_main)
    framelift_test_suites(${name} FALSE "")
    return()
  endif()
  framelift_torch_flags(test_${name})
  target_link_libraries(test_${name} PRIVATE ${ARG_UNPARSED_ARGUMENTS} test_support GTest::gtest GTest::gtest_main)
  set(serial FALSE)
  if(ARG_RUN_SERIAL)
    set(serial TRUE)
  endif()
  framelift_test_suites(${name} ${serial} media_fixtures ${ARG_PER_CASE})
endfunction()
