# What `cmake --install` puts beside the targets (whose own install() rules sit with them), and
# the Debian packages `cpack -G DEB` builds from the same rules. Two components:
#   tools  -> package perfhat:        perfhat-lsp, perfhat-handler, perfhat-fetch, perfhat-plan,
#                                     perfhat-experiment, editor plugins
#   dev    -> package libperfhat-dev: static libperfhat, headers, CMake package (find_package),
#             and the OTLP/HTTP transport module that perfhat::otlp loads at run time
# The libraries are static and the module is loaded only by programs built with them, so there
# is no runtime library package to split off.

# ---- Editor plugins -------------------------------------------------------------------------
# Neovim: a "start" package under $XDG_DATA_DIRS/nvim/site (in Neovim's default 'packpath' for
# the prefixes /usr and /usr/local), so require('perfhat').setup{} works with no plugin manager.
install(DIRECTORY editors/neovim/lua editors/neovim/doc
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nvim/site/pack/perfhat/start/perfhat
        COMPONENT tools)
# VS Code: the .vsix, if it has been built by install time (editors/vscode/scripts/package.sh
# needs Node and npm, which the C++ build does not): `code --install-extension
# PREFIX/share/perfhat/vscode/perfhat-VERSION.vsix`.
set(_perfhat_vsix ${PROJECT_SOURCE_DIR}/editors/vscode/dist/perfhat-${PROJECT_VERSION}.vsix)
install(CODE "
  if(EXISTS \"${_perfhat_vsix}\")
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/perfhat/vscode\"
         TYPE FILE FILES \"${_perfhat_vsix}\")
  endif()" COMPONENT tools)

# ---- Documentation --------------------------------------------------------------------------
install(FILES README.md docs/configuration.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/perfhat
        COMPONENT tools)
install(FILES editors/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/perfhat
        RENAME editors.md COMPONENT tools)
install(FILES instrumentation/README.md docs/auto-instrumentation.md docs/aggregate-export.md
              docs/collection-budget.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/libperfhat-dev COMPONENT dev)

# ---- CPack: cpack -G DEB (run in the build folder after building everything) ----------------
set(CPACK_PACKAGE_NAME perfhat)
set(CPACK_PACKAGE_VENDOR perfhat)
set(CPACK_PACKAGE_CONTACT "perfhat maintainers <perfhat@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL tools dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # perfhat_0.1.0-1_amd64.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
# Runtime libraries of the tools (libclang, libpq, cpp-httplib, SQLite, ...) from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The tools without their debug information (RelWithDebInfo: 95 MB installed with it, 3.4 MB
# without); CMake never strips static libraries, which would lose the symbols a consumer links.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME perfhat)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
# First line: the synopsis (no CPACK_PACKAGE_DESCRIPTION_SUMMARY, which CPack would put first).
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "performance feedback from production in the C/C++ editor
perfhat-lsp is a language server that shows the production latency of the functions, calls
and loops of the code being edited, and predicts what an edit will cost. perfhat-handler
receives OpenTelemetry traces and serves the aggregates (deployed and local modes),
perfhat-fetch warms the local cache, perfhat-plan plans what to collect under an overhead
budget (trace/sample split, probe distribution across variants), perfhat-experiment runs and
analyses the controlled experiment of the PerformanceHat paper. Includes the Neovim plugin.")
# libclang's builtin headers (stddef.h, ...) at the resource directory compiled into perfhat-lsp.
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libclang-common-14-dev")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libperfhat-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION "perfhat instrumentation library (static) and headers
libperfhat records the latency of C/C++ functions in production for perfhat: probe macros or
-finstrument-functions, Tigris relevance filtering, adaptive sampling, OTLP/HTTP export.
Static libraries, C++17 headers and the CMake package: find_package(perfhat).")
# Nothing for perfhatConfig.cmake to find beyond threads and libdl: the OTLP transport module
# (usr/lib/perfhat/libperfhat_otlp_http.so) gets its runtime dependencies (cpp-httplib, zlib)
# from dpkg-shlibdeps like the tools.
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "cmake (>= 3.20), pkg-config")

include(CPack)
cpack_add_component(tools DISPLAY_NAME "perfhat tools")
cpack_add_component(dev DISPLAY_NAME "libperfhat development files")

if(PERFHAT_BUILD_TESTS AND PERFHAT_RELEASE_ARTEFACTS)
  # cpack -G DEB from this build, checked with dpkg-deb (nothing is installed on the machine).
  add_test(NAME packaging_deb
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/packaging/deb_packages_test.sh ${CMAKE_COMMAND}
                   ${CMAKE_CPACK_COMMAND} ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                   ${PROJECT_BINARY_DIR}/packaging_deb)
  set_tests_properties(packaging_deb PROPERTIES LABELS integration TIMEOUT 300)
endif()
