# perfhat_autoinstrument(<target> [EXCLUDE_FILES <path-substring>...])
#
# Instruments every function of <target>'s own sources with no source change: compiles them with
# the compiler's function-entry/exit hooks and links perfhat::autoinstrument, which implements
# the hooks. Which of the instrumented functions are recorded is chosen at run time
# (PERFHAT_SCOPE, PERFHAT_FILTER); see docs/auto-instrumentation.md.
#   GCC:   -finstrument-functions, except functions inlined from the system headers, perfhat's
#          own headers and EXCLUDE_FILES (-finstrument-functions-exclude-file-list: substrings of
#          the path of the file that defines the function).
#   Clang: -finstrument-functions-after-inlining: hooks only in the functions left after
#          inlining (clang has no file exclusion list; EXCLUDE_FILES is ignored).
function(perfhat_autoinstrument target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "EXCLUDE_FILES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "perfhat_autoinstrument: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "perfhat_autoinstrument: ${target} is not a target")
  endif()
  set(excludes /usr/include/ include/perfhat/ ${ARG_EXCLUDE_FILES})
  list(JOIN excludes "$<COMMA>" excludes)
  set(gnu_flags -finstrument-functions -finstrument-functions-exclude-file-list=${excludes})
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
