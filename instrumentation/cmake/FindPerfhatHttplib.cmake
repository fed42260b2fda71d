# perfhat::httplib: the compiled cpp-httplib that perfhat::otlp was built against. Debian ships
# it as a shared library with a pkg-config file and no CMake package, so it is looked up here on
# the consumer's machine (pkg-config first, then a plain library search) instead of recording the
# build machine's path in perfhatTargets.cmake. Upstream's header-only httplib::httplib does not
# fit: perfhat::otlp calls into the compiled library.
if(TARGET perfhat::httplib)
  set(PerfhatHttplib_FOUND TRUE)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_PERFHAT_HTTPLIB QUIET cpp-httplib)
endif()
find_library(PerfhatHttplib_LIBRARY NAMES cpp-httplib HINTS ${PC_PERFHAT_HTTPLIB_LIBRARY_DIRS})

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PerfhatHttplib REQUIRED_VARS PerfhatHttplib_LIBRARY
                                  VERSION_VAR PC_PERFHAT_HTTPLIB_VERSION)
if(PerfhatHttplib_FOUND)
  add_library(perfhat::httplib UNKNOWN IMPORTED)
  set_target_properties(perfhat::httplib PROPERTIES IMPORTED_LOCATION "${PerfhatHttplib_LIBRARY}")
endif()
mark_as_advanced(PerfhatHttplib_LIBRARY)
