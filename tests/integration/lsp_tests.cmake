# perfhat-lsp end-to-end tests (the real binary over pipes) and the LSP-side fuzz targets.
# Included from tests/CMakeLists.txt.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-lsp)
  add_library(perfhat_lsp_testing STATIC ${CMAKE_CURRENT_LIST_DIR}/lsp_client.cc)
  target_link_libraries(perfhat_lsp_testing PUBLIC perfhat_lsp_protocol nlohmann_json::nlohmann_json
                        Threads::Threads PRIVATE perfhat_warnings)
  perfhat_add_test(lsp_e2e_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_e2e_test.cc
                   LIBS perfhat_lsp_testing perfhat_features LABELS integration)
  perfhat_test_programs(lsp_e2e_test PERFHAT_LSP_BIN perfhat-lsp)

  # Hostile input and load (issue #19): deep JSON-RPC, deep C++, a misbehaving handler.
  perfhat_add_test(lsp_hostile_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_hostile_test.cc
                   LIBS perfhat_lsp_testing perfhat_features perfhat_httplib ZLIB::ZLIB
                   LABELS integration TIMEOUT 600)
  perfhat_test_programs(lsp_hostile_test PERFHAT_LSP_BIN perfhat-lsp)
endif()

# Push path: real handlers + the real LSP; new spans must trigger workspace/inlayHint/refresh.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-lsp AND TARGET perfhat-handler)
  perfhat_add_test(lsp_push_refresh_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_push_refresh_test.cc
                   LIBS perfhat_lsp_testing perfhat_handler_otlp perfhat_common perfhat_httplib
                   LABELS integration TIMEOUT 240)
  perfhat_test_programs(lsp_push_refresh_test PERFHAT_LSP_BIN perfhat-lsp
                                              PERFHAT_HANDLER_BIN perfhat-handler)
endif()

if(TARGET perfhat_lsp_server)
  perfhat_add_fuzzer(jsonrpc_framing_fuzz SOURCES ${PROJECT_SOURCE_DIR}/tests/fuzz/jsonrpc_framing_fuzz.cc
                     LIBS perfhat_lsp_protocol CORPUS ${PROJECT_SOURCE_DIR}/tests/fuzz/jsonrpc_framing_corpus)
  perfhat_add_fuzzer(feedback_json_fuzz SOURCES ${PROJECT_SOURCE_DIR}/tests/fuzz/feedback_json_fuzz.cc
                     LIBS perfhat_lsp_server CORPUS ${PROJECT_SOURCE_DIR}/tests/fuzz/feedback_json_corpus)
endif()

# Production's call graph in the editor (issue #24): real handler + real LSP.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-lsp AND TARGET perfhat-handler)
  perfhat_add_test(lsp_dynamic_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_dynamic_test.cc
                   LIBS perfhat_lsp_testing perfhat_handler_otlp perfhat_common perfhat_httplib
                   LABELS integration TIMEOUT 240)
  perfhat_test_programs(lsp_dynamic_test PERFHAT_LSP_BIN perfhat-lsp
                                         PERFHAT_HANDLER_BIN perfhat-handler)
endif()

# The workspace index (issue #25): cross-file prediction, refresh on edit, callers, restart.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-lsp)
  perfhat_add_test(lsp_index_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_index_test.cc
                   LIBS perfhat_lsp_testing LABELS integration TIMEOUT 240)
  perfhat_test_programs(lsp_index_test PERFHAT_LSP_BIN perfhat-lsp)
endif()

# The collection-budget view and lens read the handler's /v1/budget (issue #22): real handler + LSP.
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-lsp AND TARGET perfhat-handler)
  perfhat_add_test(lsp_budget_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_budget_test.cc
                   LIBS perfhat_lsp_testing perfhat_handler_otlp perfhat_common perfhat_httplib
                   LABELS integration TIMEOUT 240)
  perfhat_test_programs(lsp_budget_test PERFHAT_LSP_BIN perfhat-lsp
                                        PERFHAT_HANDLER_BIN perfhat-handler)
endif()

# Calls through function pointers resolved from a real handler's call-site data (issue #18).
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-lsp AND TARGET perfhat-handler)
  perfhat_add_test(lsp_indirect_calls_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lsp_indirect_calls_test.cc
                   LIBS perfhat_lsp_testing perfhat_handler_otlp perfhat_common perfhat_httplib
                   LABELS integration TIMEOUT 240)
  perfhat_test_programs(lsp_indirect_calls_test PERFHAT_LSP_BIN perfhat-lsp
                                                PERFHAT_HANDLER_BIN perfhat-handler)
endif()
