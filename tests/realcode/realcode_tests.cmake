# The real-code suite (issue #18, tests/realcode/run.sh): googletest's sources built with automatic
# instrumentation against this tree's installed libperfhat, its samples run against a real
# perfhat-handler, perfhat-lsp --check over the samples' files; fails below 98 % of measured
# functions matched to a definition or on any regression warning. Label `realcode`, short mode;
# scripts/realcode.sh runs the long mode. Release trees only: a sanitizer or fuzz tree installs
# instrumented libraries that a plain consumer cannot link (as instr_install_consumer).
# Included from tests/CMakeLists.txt.
if(PERFHAT_BUILD_TESTS AND PERFHAT_RELEASE_ARTEFACTS AND TARGET perfhat-handler
   AND TARGET perfhat-lsp AND EXISTS /usr/src/googletest/googletest/src/gtest.cc)
  add_test(NAME realcode_googletest
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run.sh --build ${PROJECT_BINARY_DIR}
                   --work ${PROJECT_BINARY_DIR}/realcode-short --mode short --min-share 98)
  set_tests_properties(realcode_googletest PROPERTIES LABELS realcode TIMEOUT 900
                       SKIP_RETURN_CODE 77 RUN_SERIAL ON)
endif()
