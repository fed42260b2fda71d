# Integration tests of perfhat-handler (real processes, loopback HTTP, real SQLite).
# Included from tests/CMakeLists.txt.
if(PERFHAT_BUILD_TESTS)
  set(_handler_it_libs perfhat_handler_otlp perfhat_common perfhat_httplib)
  foreach(_t handler_ingest_test handler_durability_test handler_sync_test handler_otel_js_test
             handler_changes_test handler_hostile_process_test handler_sampled_test)
    if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${_t}.cc)
      perfhat_add_test(${_t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${_t}.cc LIBS ${_handler_it_libs}
                       ZLIB::ZLIB LABELS integration)
      perfhat_test_programs(${_t} PERFHAT_HANDLER_BIN perfhat-handler)
    endif()
  endforeach()
  # Two handler replicas on one real PostgreSQL server.
  perfhat_add_test(handler_postgres_it_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/handler_postgres_test.cc
                   LIBS ${_handler_it_libs} perfhat_test_postgres LABELS integration)
  perfhat_test_programs(handler_postgres_it_test PERFHAT_HANDLER_BIN perfhat-handler)
endif()
if(PERFHAT_BUILD_TESTS AND TARGET perfhat-fetch)
  perfhat_add_test(handler_fetch_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/handler_fetch_test.cc
                   LIBS perfhat_handler_otlp perfhat_common perfhat_httplib LABELS integration)
  perfhat_test_programs(handler_fetch_test PERFHAT_HANDLER_BIN perfhat-handler
                                           PERFHAT_FETCH_BIN perfhat-fetch)
endif()
# Counts from our traces equal gprof's for one run of a program built with -pg and
# -finstrument-functions (issue #24). GCC only: clang's -pg output differs.
if(PERFHAT_BUILD_TESTS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND TARGET perfhat_autoinstrument)
  add_executable(dynamic_gprof_app ${CMAKE_CURRENT_LIST_DIR}/gprof/callcount_app.cc)
  target_link_libraries(dynamic_gprof_app PRIVATE perfhat_otlp perfhat_autoinstrument)
  target_compile_options(dynamic_gprof_app PRIVATE -O1 -pg -finstrument-functions)
  target_link_options(dynamic_gprof_app PRIVATE -pg)
  perfhat_add_test(dynamic_gprof_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/dynamic_gprof_test.cc
                   LIBS perfhat_httplib nlohmann_json::nlohmann_json LABELS integration)
  target_include_directories(dynamic_gprof_test PRIVATE ${PROJECT_SOURCE_DIR})
  perfhat_test_programs(dynamic_gprof_test PERFHAT_HANDLER_BIN perfhat-handler
                                           PERFHAT_GPROF_APP dynamic_gprof_app)
endif()
# The sample service's never-called functions over a window that skips two endpoints (issue #24):
# real handler, service and user directory; waits for one minute boundary (~1 min).
if(PERFHAT_BUILD_TESTS AND TARGET agile-service AND TARGET agile-userdir)
  add_test(NAME dynamic_sample_test
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/dynamic_sample_test.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(dynamic_sample_test PROPERTIES LABELS integration TIMEOUT 300)
endif()
# libperfhat's collection-budget status reaches a real handler (issue #22, POST/GET /v1/budget).
if(PERFHAT_BUILD_TESTS)
  perfhat_add_test(budget_publish_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/budget_publish_test.cc
                   LIBS perfhat perfhat_otlp perfhat_httplib nlohmann_json::nlohmann_json
                   LABELS integration)
  target_include_directories(budget_publish_test PRIVATE ${PROJECT_SOURCE_DIR})
  perfhat_test_programs(budget_publish_test PERFHAT_HANDLER_BIN perfhat-handler)
endif()
