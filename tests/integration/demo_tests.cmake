# The end-to-end demo as an integration test (scripts/demo.sh with a short load on this
# build's binaries). Included from tests/CMakeLists.txt.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-handler AND TARGET perfhat-lsp AND TARGET agile-service)
  perfhat_add_test(demo_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/demo_test.cc LABELS integration
                   TIMEOUT 1300)  # two demo runs (spans, aggregates)
  target_include_directories(demo_test PRIVATE ${PROJECT_SOURCE_DIR})  # tests/integration/*.h
  add_dependencies(demo_test perfhat-handler perfhat-lsp agile-service agile-userdir agile-workload)
endif()
