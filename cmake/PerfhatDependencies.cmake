# Third-party dependencies, all from Debian packages (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(tsl-hopscotch-map QUIET)

# cpp-httplib: Debian ships the compiled (split) library with a pkg-config file.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_library(perfhat_httplib INTERFACE)
target_link_libraries(perfhat_httplib INTERFACE PkgConfig::HTTPLIB Threads::Threads)
# libpq: the PostgreSQL backend of the feedback store (feedback-handler/store/postgres.cc).
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
# RE2: `function_regex` rules of .perfhat.json (linear-time matching of user patterns).
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# CLI11 (header-only): every binary's command line (common/cli.h). fmt: log lines.
find_package(CLI11 CONFIG REQUIRED)
find_package(fmt REQUIRED)

# libclang (C API). Prefer llvm-config-14's answer; fall back to Debian's fixed path.
find_program(PERFHAT_LLVM_CONFIG NAMES llvm-config-14 llvm-config)
if(PERFHAT_LLVM_CONFIG)
  execute_process(COMMAND ${PERFHAT_LLVM_CONFIG} --prefix OUTPUT_VARIABLE PERFHAT_LLVM_PREFIX
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
else()
  set(PERFHAT_LLVM_PREFIX /usr/lib/llvm-14)
endif()
find_path(LIBCLANG_INCLUDE_DIR clang-c/Index.h HINTS ${PERFHAT_LLVM_PREFIX}/include REQUIRED)
find_library(LIBCLANG_LIBRARY NAMES clang clang-14 HINTS ${PERFHAT_LLVM_PREFIX}/lib REQUIRED)
add_library(perfhat_libclang INTERFACE)
target_include_directories(perfhat_libclang SYSTEM INTERFACE ${LIBCLANG_INCLUDE_DIR})
target_link_libraries(perfhat_libclang INTERFACE ${LIBCLANG_LIBRARY})
# Resource dir so libclang finds its builtin headers (stddef.h, ...) whatever the binary's location.
execute_process(COMMAND ${PERFHAT_LLVM_PREFIX}/bin/clang -print-resource-dir
                OUTPUT_VARIABLE PERFHAT_CLANG_RESOURCE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
target_compile_definitions(perfhat_libclang INTERFACE
  PERFHAT_CLANG_RESOURCE_DIR="${PERFHAT_CLANG_RESOURCE_DIR}")

if(PERFHAT_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(PERFHAT_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
