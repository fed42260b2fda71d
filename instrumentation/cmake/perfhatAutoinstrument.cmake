# perfhat_autoinstrument(<target> [XRAY] [INSTRUCTION_THRESHOLD <n>]
#                        [EXCLUDE_FILES <path-substring>...] [EXCLUDE_FUNCTIONS <name-part>...])
#
# Instruments the functions of <target>'s own sources with no source change: compiles them with
# the compiler's function-entry/exit hooks and links the library that implements the hooks.
# Which of the instrumented functions are recorded is chosen at run time (PERFHAT_SCOPE,
# PERFHAT_FILTER); see docs/auto-instrumentation.md.
#   XRAY (Clang): LLVM XRay sleds, patched at start-up only when probes are on
#          (-fxray-instrument, perfhat::xray). Functions under INSTRUCTION_THRESHOLD machine
#          instructions (default 200, XRay's own default) and without loops get no sled: the
#          compile-time exclusion of trivial functions. Off (PERFHAT_ENABLED=0), the sleds are
#          no-ops. With GCC, XRAY is not available: the -finstrument-functions mode is used.
#   GCC:   -finstrument-functions (perfhat::autoinstrument), except functions of the system
#          headers (/usr/include/ and the compiler's implicit include directories), perfhat's own
#          headers and EXCLUDE_FILES
#          (-finstrument-functions-exclude-file-list: substrings of the path of the file that
#          defines the function) and EXCLUDE_FUNCTIONS
#          (-finstrument-functions-exclude-function-list: substrings of the function's name).
#          GCC also hooks the copies of functions inlined into others.
#   Clang: -finstrument-functions-after-inlining: hooks only in the functions left after
#          inlining (clang has no exclusion lists; EXCLUDE_* are ignored).
function(perfhat_autoinstrument target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "XRAY" "INSTRUCTION_THRESHOLD"
                        "EXCLUDE_FILES;EXCLUDE_FUNCTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "perfhat_autoinstrument: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "perfhat_autoinstrument: ${target} is not a target")
  endif()
  if(NOT ARG_INSTRUCTION_THRESHOLD)
    set(ARG_INSTRUCTION_THRESHOLD 200)
  endif()
  if(ARG_XRAY AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(xray_flags -fxray-instrument -fxray-instruction-threshold=${ARG_INSTRUCTION_THRESHOLD})
    target_compile_options(${target} PRIVATE ${xray_flags})
    # -fxray-modes=none: only the patching runtime. perfhat sets its own handler; the logging
    # modes' runtimes (basic, FDR, profiling) would otherwise register at every start-up
    # (about 2.3 M instructions per process, most of XRay's start-up cost when probes are off).
    target_link_options(${target} PRIVATE -fxray-instrument -fxray-modes=none)
    # Without a target_link_libraries signature (see below: googletest links the plain way).
    set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES perfhat::xray)
    return()
  endif()
  if(ARG_XRAY)
    message(STATUS "perfhat_autoinstrument(${target} XRAY): XRay needs Clang; "
                   "using -finstrument-functions")
  endif()
  # The compiler's own header directories (libstdc++, its intrinsics, /usr/local/include): a
  # toolchain outside /usr/include (/opt/gcc-13/include/c++/13, a toolset) would otherwise put
  # hooks into every inlined standard-library call (std::vector::operator[], iterators).
  set(system_dirs /usr/include/)
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES)
    # Not inside /usr/include/ (already matched); the option's list is comma-separated.
    if(NOT "${dir}/" MATCHES "^/usr/include/" AND NOT dir MATCHES ",")
      list(APPEND system_dirs "${dir}/")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES system_dirs)
  set(excludes ${system_dirs} include/perfhat/ ${ARG_EXCLUDE_FILES})
  list(JOIN excludes "$<COMMA>" excludes)
  set(gnu_flags -finstrument-functions -finstrument-functions-exclude-file-list=${excludes})
  if(ARG_EXCLUDE_FUNCTIONS)
    list(JOIN ARG_EXCLUDE_FUNCTIONS "$<COMMA>" functions)
    list(APPEND gnu_flags -finstrument-functions-exclude-function-list=${functions})
  endif()
  set(clang_flags -finstrument-functions-after-inlining)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU>:${gnu_flags}>" "$<$<COMPILE_LANG_AND_ID:C,GNU>:${gnu_flags}>"
    "$<$<COMPILE_LANG_AND_ID:CXX,Clang>:${clang_flags}>"
    "$<$<COMPILE_LANG_AND_ID:C,Clang>:${clang_flags}>")
  # What target_link_libraries(PRIVATE) records, without choosing a signature for the caller's
  # target: CMake refuses the keyword form on a target linked with the plain one before
  # (googletest's own CMake does that), and the plain form on one linked with keywords.
  set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES perfhat::autoinstrument)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "OBJECT_LIBRARY")
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
                 "$<LINK_ONLY:perfhat::autoinstrument>")
  endif()
endfunction()
