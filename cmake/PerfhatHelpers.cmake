# Project-wide compile options and the helpers every folder uses to declare tests, fuzzers and
# benchmarks, so a new component needs one line per artefact.

add_library(perfhat_warnings INTERFACE)
target_compile_options(perfhat_warnings INTERFACE -Wall -Wextra -Wno-missing-field-initializers
                       $<$<BOOL:${PERFHAT_WERROR}>:-Werror>)
if(PERFHAT_TSAN AND (PERFHAT_SANITIZE OR PERFHAT_FUZZ))
  message(FATAL_ERROR "PERFHAT_TSAN cannot be combined with PERFHAT_SANITIZE or PERFHAT_FUZZ "
                      "(ThreadSanitizer and AddressSanitizer exclude each other): use one tree each")
endif()
if(PERFHAT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(PERFHAT_TSAN)
  # Only this tree is instrumented: races inside uninstrumented system libraries are invisible,
  # and their synchronisation is seen through the intercepted pthread calls.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
# Sanitizer runtime options, attached to every test so a plain `ctest` in the tree uses them.
# (ASan's leak check is on by default on Linux; UBSan already stops at the first finding.)
set(PERFHAT_TEST_ENVIRONMENT "")
if(PERFHAT_SANITIZE OR PERFHAT_FUZZ)
  set(PERFHAT_TEST_ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1")
elseif(PERFHAT_TSAN)
  set(PERFHAT_TEST_ENVIRONMENT
      "TSAN_OPTIONS=second_deadlock_stack=1:suppressions=${PROJECT_SOURCE_DIR}/cmake/tsan.supp")
endif()
if(PERFHAT_FUZZ)
  # Every library, not only each fuzz target's own file, is coverage-instrumented and sanitized:
  # libFuzzer is guided by the edges of the code under test.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)  # UB is a finding, not a log line
  add_link_options(-fsanitize=address,undefined)
endif()

# Install and packaging tests check what a release build ships; sanitizer and fuzz trees build
# instrumented libraries that no plain consumer can link.
if(PERFHAT_SANITIZE OR PERFHAT_TSAN OR PERFHAT_FUZZ)
  set(PERFHAT_RELEASE_ARTEFACTS OFF)
else()
  set(PERFHAT_RELEASE_ARTEFACTS ON)
endif()

# The executable of a test or fuzzer. ELSEWHERE (ON/OFF): its cases run in another tree (the
# ASan+UBSan one), so the target exists (other folders may refer to it) but is not built by default.
function(_perfhat_test_executable name elsewhere)
  if(elsewhere)
    add_executable(${name} EXCLUDE_FROM_ALL ${ARGN})
  else()
    add_executable(${name} ${ARGN})
  endif()
endfunction()

# perfhat_add_test(NAME SOURCES a.cc b.cc LIBS lib... [LABELS unit|integration|editor] [TIMEOUT s]
#                  [OPTIMIZED])
# A GoogleTest executable whose cases are each registered with CTest.
# OPTIMIZED: a unit test whose checks mean most in an optimized build (timings, probe costs, the
# compensation of measured overhead); built and run even where PERFHAT_UNIT_TESTS is OFF.
function(perfhat_add_test name)
  cmake_parse_arguments(T "OPTIMIZED" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT PERFHAT_BUILD_TESTS)
    return()
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # Left to the ASan+UBSan tree: the target exists (other folders may refer to it) but is not
  # built by default, and its cases are not registered here.
  set(elsewhere OFF)
  if(NOT PERFHAT_UNIT_TESTS AND T_LABELS STREQUAL "unit" AND NOT T_OPTIMIZED)
    set(elsewhere ON)
  endif()
  _perfhat_test_executable(${name} ${elsewhere} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main perfhat_warnings)
  target_compile_definitions(${name} PRIVATE
    PERFHAT_SOURCE_DIR="${PROJECT_SOURCE_DIR}" PERFHAT_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(elsewhere)
    return()
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
                       ENVIRONMENT "${PERFHAT_TEST_ENVIRONMENT}" DISCOVERY_TIMEOUT 60)
  foreach(label IN LISTS T_LABELS)
    set_property(GLOBAL APPEND PROPERTY PERFHAT_TESTS_${label} ${name})
  endforeach()
endfunction()

# perfhat_test_programs(TEST DEFINITION TARGET [DEFINITION TARGET]...): TEST runs the programs
# TARGET...: each one's path is TEST's compile definition DEFINITION (a string), and each is built
# before TEST. Nothing where TEST is not a target here.
function(perfhat_test_programs test)
  if(NOT TARGET ${test})
    return()
  endif()
  set(pairs ${ARGN})
  while(pairs)
    list(POP_FRONT pairs definition program)
    target_compile_definitions(${test} PRIVATE ${definition}="$<TARGET_FILE:${program}>")
    add_dependencies(${test} ${program})
  endwhile()
endfunction()

# perfhat_add_fuzzer(NAME SOURCES fuzz.cc LIBS lib... CORPUS dir)
# With PERFHAT_FUZZ (clang): a libFuzzer binary. Otherwise the same LLVMFuzzerTestOneInput is
# linked with a replay driver and CTest runs it over the seed corpus, so every build exercises it.
function(perfhat_add_fuzzer name)
  cmake_parse_arguments(F "" "CORPUS" "SOURCES;LIBS" ${ARGN})
  # Without PERFHAT_UNIT_TESTS the corpus replay runs in the ASan+UBSan tree (see perfhat_add_test).
  set(elsewhere OFF)
  if(NOT PERFHAT_UNIT_TESTS AND NOT PERFHAT_FUZZ)
    set(elsewhere ON)
  endif()
  _perfhat_test_executable(${name} ${elsewhere} ${F_SOURCES})
  target_link_libraries(${name} PRIVATE ${F_LIBS} perfhat_warnings)
  if(PERFHAT_FUZZ)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  else()
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cc)
  endif()
  if(PERFHAT_BUILD_TESTS AND F_CORPUS AND NOT elsewhere)
    add_test(NAME fuzz_replay.${name} COMMAND ${name} ${F_CORPUS})
    set_tests_properties(fuzz_replay.${name} PROPERTIES LABELS fuzz TIMEOUT 120
                         ENVIRONMENT "${PERFHAT_TEST_ENVIRONMENT}")
    set_property(GLOBAL APPEND PROPERTY PERFHAT_TESTS_fuzz ${name})
  endif()
endfunction()

# perfhat_add_benchmark(NAME SOURCES a.cc LIBS lib...): a Google Benchmark executable (not a test).
function(perfhat_add_benchmark name)
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT PERFHAT_BUILD_BENCHMARKS)
    return()
  endif()
  add_executable(${name} ${B_SOURCES})
  target_link_libraries(${name} PRIVATE ${B_LIBS} benchmark::benchmark benchmark::benchmark_main perfhat_warnings)
endfunction()

# perfhat_add_test_groups(): after every folder is added, one target per test label that builds
# only that label's executables: `cmake --build B --target unit_tests fuzz_replayers` then
# `ctest --test-dir B -L 'unit|fuzz'` (the sanitizer builds of scripts/test.sh).
function(perfhat_add_test_groups)
  foreach(label unit fuzz)
    get_property(targets GLOBAL PROPERTY PERFHAT_TESTS_${label})
    if(label STREQUAL "fuzz")
      set(group fuzz_replayers)
    else()
      set(group ${label}_tests)
    endif()
    add_custom_target(${group})
    if(targets)
      add_dependencies(${group} ${targets})
    endif()
  endforeach()
endfunction()
