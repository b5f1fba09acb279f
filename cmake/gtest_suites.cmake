# Run after a test binary is built (framelift_test): one CTest entry per gtest suite, running that
# suite's cases in one process (--gtest_filter=SUITE.*). A process per case loaded libtorch (about
# 1 s on 2 cores) some 900 times a test run: a quarter of its time.
# Suites in PER_CASE (","-separated) keep a process per case: their cases measure the process
# (a child's peak memory through getrusage, which keeps the largest of every child before).
#   cmake -D TEST_EXECUTABLE=... -D CTEST_FILE=... -D LABEL=... -D SERIAL=TRUE|FALSE
#         -D FIXTURE=name|"" -D TIMEOUT=seconds [-D PER_CASE=suites] -P gtest_suites.cmake
cmake_minimum_required(VERSION 3.20)  # if(IN_LIST) in script mode
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${rc}):\n${listing}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
string(REPLACE "," ";" PER_CASE "${PER_CASE}")
set(props "LABELS [=[${LABEL}]=] TIMEOUT ${TIMEOUT} RUN_SERIAL ${SERIAL}")
if(FIXTURE)
  string(APPEND props " FIXTURES_REQUIRED ${FIXTURE}")
endif()
set(script "")
set(suite "")
foreach(line IN LISTS lines)
  # Suite lines start in the first column and end with "." (and maybe "  # TypeParam = ...");
  # case lines are indented (and maybe end with "  # GetParam() = ...").
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    if(suite MATCHES "^DISABLED_" OR suite IN_LIST PER_CASE)
      continue()
    endif()
    string(APPEND script "add_test([=[${suite}]=] \"${TEST_EXECUTABLE}\" [=[--gtest_filter=${suite}.*]=])\n")
    string(APPEND script "set_tests_properties([=[${suite}]=] PROPERTIES ${props})\n")
  elseif(suite IN_LIST PER_CASE AND line MATCHES "^  ([^ ]+)")
    set(case "${suite}.${CMAKE_MATCH_1}")
    if(NOT CMAKE_MATCH_1 MATCHES "^DISABLED_")
      string(APPEND script "add_test([=[${case}]=] \"${TEST_EXECUTABLE}\" [=[--gtest_filter=${case}]=])\n")
      string(APPEND script "set_tests_properties([=[${case}]=] PROPERTIES ${props})\n")
    endif()
  endif()
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
