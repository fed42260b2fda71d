# The reliability suite (issue #19, docs/reliability.md): the real perfhat-handler (SQLite and a
# real PostgreSQL) and perfhat-lsp under faults, hostile input and load. Label `reliability`;
# CTest runs the short mode, scripts/reliability.sh the long one and writes the table.
# Included from tests/CMakeLists.txt.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-handler)
  perfhat_add_test(reliability_handler_test
                   SOURCES ${CMAKE_CURRENT_LIST_DIR}/durability_test.cc
                           ${CMAKE_CURRENT_LIST_DIR}/hostile_test.cc
                           ${CMAKE_CURRENT_LIST_DIR}/load_test.cc
                           ${CMAKE_CURRENT_LIST_DIR}/outcome_listener.cc
                   LIBS perfhat_handler_otlp perfhat_handler_core perfhat_common perfhat_httplib
                        perfhat_test_postgres nlohmann_json::nlohmann_json ZLIB::ZLIB
                   LABELS reliability TIMEOUT 300)
  perfhat_test_programs(reliability_handler_test PERFHAT_HANDLER_BIN perfhat-handler)

  add_executable(reliability_report ${CMAKE_CURRENT_LIST_DIR}/report_main.cc)
  target_link_libraries(reliability_report PRIVATE nlohmann_json::nlohmann_json perfhat_warnings)
endif()
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-handler AND TARGET perfhat-lsp)
  perfhat_add_test(reliability_lsp_test
                   SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_faults_test.cc
                           ${CMAKE_CURRENT_LIST_DIR}/outcome_listener.cc
                   LIBS perfhat_lsp_testing perfhat_handler_otlp perfhat_common perfhat_httplib
                   LABELS reliability TIMEOUT 300)
  perfhat_test_programs(reliability_lsp_test PERFHAT_LSP_BIN perfhat-lsp
                                             PERFHAT_HANDLER_BIN perfhat-handler)
endif()
