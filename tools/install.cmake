# Installing tinytrace like a C++ tool on Debian, included from the top-level CMakeLists.txt:
#
#   cmake --install build [--prefix P]    (default prefix /usr/local)
#       P/bin/tinytrace
#       the Python package tools/python/tinytrace, where /usr/bin/python3 imports from:
#         P/lib/python3/dist-packages/tinytrace   when P is /usr (Debian's place; the .deb)
#         P/lib/python3.X/dist-packages/tinytrace otherwise (/usr/local/lib/python3.13/... is on
#                                                 Debian's sys.path; elsewhere use PYTHONPATH)
#         (TT_PYTHON_INSTALL_DIR, relative to the prefix, overrides the choice)
#       P/share/man/man1/tinytrace.1.gz, P/share/bash-completion/completions/tinytrace
#   cpack -G DEB --config build/CPackConfig.cmake
#       tinytrace_VERSION_ARCH.deb: the same files under /usr, depending on Debian's runtime
#       packages (TT_DEB_DEPENDS)
#
# The man page and the completion are generated from the CLI's --help at build time
# (scripts/gen_manpage.py; target tinytrace_doc, which scripts/build.sh builds). The installed
# package finds the installed binary through _installed.py (its path relative to the package
# directory), written here.

include(GNUInstallDirs)
if(NOT DEFINED TT_PYTHON)
  set(TT_PYTHON /usr/bin/python3)
endif()

install(TARGETS tinytrace RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# --- man page and bash completion ----------------------------------------------------------
set(TT_DOC_DIR ${CMAKE_BINARY_DIR}/doc)
add_custom_command(
  OUTPUT ${TT_DOC_DIR}/tinytrace.1.gz ${TT_DOC_DIR}/tinytrace.bash
  COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/gen_manpage.py $<TARGET_FILE:tinytrace>
          ${TT_DOC_DIR}
  DEPENDS tinytrace ${CMAKE_SOURCE_DIR}/scripts/gen_manpage.py
  COMMENT "Generating the man page and bash completion from tinytrace --help")
add_custom_target(tinytrace_doc ALL DEPENDS ${TT_DOC_DIR}/tinytrace.1.gz ${TT_DOC_DIR}/tinytrace.bash)
install(FILES ${TT_DOC_DIR}/tinytrace.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${TT_DOC_DIR}/tinytrace.bash
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions RENAME tinytrace)

# --- the Python package ----------------------------------------------------------------------
execute_process(COMMAND ${TT_PYTHON} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                OUTPUT_VARIABLE TT_PYTHON_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
set(TT_PYTHON_INSTALL_DIR "" CACHE STRING
    "Where the Python package goes, relative to the install prefix (empty: lib/python3/dist-packages under /usr, lib/python${TT_PYTHON_VERSION}/dist-packages elsewhere)")
if(IS_ABSOLUTE "${TT_PYTHON_INSTALL_DIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
  message(FATAL_ERROR "TT_PYTHON_INSTALL_DIR and CMAKE_INSTALL_BINDIR must be relative to the "
                      "install prefix (the package finds the binary by their relative path)")
endif()
# Both default directories are three levels deep, so one relative path serves either prefix.
if(TT_PYTHON_INSTALL_DIR)
  set(tt_pydir ${TT_PYTHON_INSTALL_DIR})
else()
  set(tt_pydir lib/python3/dist-packages)
endif()
file(RELATIVE_PATH TT_BINARY_FROM_PACKAGE /prefix/${tt_pydir}/tinytrace
     /prefix/${CMAKE_INSTALL_BINDIR}/tinytrace)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/python/_installed.py CONTENT
"\"\"\"Written by the install (tools/install.cmake): where the tinytrace binary installed together
with this package is, relative to the package's directory (tinytrace._cli.find_binary).\"\"\"
BINARY = \"@TT_BINARY_FROM_PACKAGE@\"
" @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/tools/install_python.cmake.in
               ${CMAKE_BINARY_DIR}/install_python.cmake @ONLY)
install(SCRIPT ${CMAKE_BINARY_DIR}/install_python.cmake)

# --- the Debian package (cpack -G DEB) ----------------------------------------------------------
# Runtime packages of Debian 13 that own the libraries the binary links (readelf -d: LibTorch,
# ONNX, protobuf, spdlog, fmt, jemalloc, the C/C++ runtime), and the Python package's torch.
# tests/python/check_install.py checks that every NEEDED library's package is here.
set(TT_DEB_DEPENDS
    "libtorch2.6, libonnx1t64, libprotobuf32t64, libssl3t64, zlib1g, libjemalloc2, libspdlog1.15, libfmt10, libstdc++6, libgcc-s1, libc6, python3, python3-torch"
    CACHE STRING "Depends: of the .deb")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tinytrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "turn TorchScript, torch.export and ONNX models back into readable PyTorch code")
set(CPACK_PACKAGE_DESCRIPTION
    "tinytrace converts a deployed model (TorchScript archive, torch.export .pt2, ONNX) into \
readable, editable PyTorch code, its weights and a JSON graph report; it prepares models for \
eager-mode quantization (PTQ, QAT) and inspects, diffs and profiles them. The Python package \
tinytrace runs it on live nn.Modules (tinytrace.convert, tinytrace.prepare_for_quantization).")
set(TT_DEB_MAINTAINER "tinytrace developers <tinytrace@localhost>" CACHE STRING
    "Maintainer: of the .deb")
set(CPACK_PACKAGE_CONTACT ${TT_DEB_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tinytrace_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DEPENDS ${TT_DEB_DEPENDS})
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "graphviz, python3-torchvision")
set(CPACK_STRIP_FILES ON)  # debug info stays in build/
# scripts/build.sh builds the installed targets; cpack/cmake --install must not rebuild the tree
# (tests run while the package is made).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
