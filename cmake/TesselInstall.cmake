# `cmake --install build --prefix P`: the SDK (docs/extending.md).
#   P/bin                      the tools
#   P/lib/libTessel.so         the compiler (what plugins link)
#   P/lib/tessel/              the runtime archives tessel-compile links
#                              executables with
#   P/include/tessel/          public headers, generated .inc files, .td files
#   P/lib/cmake/tessel/        TesselConfig.cmake, its version file, targets
#   P/share/tessel/hardware/   tessel-plan's hardware descriptions
include(CMakePackageConfigHelpers)
set(TESSEL_INSTALL_BINDIR bin)
set(TESSEL_INSTALL_INCLUDEDIR include)
set(TESSEL_INSTALL_CMAKEDIR lib/cmake/tessel)

set(TESSEL_INSTALLED_TOOLS tessel-opt tessel-compile tessel-run tessel-interp
  tessel-models tessel-generate tessel-export tessel-tokenize tessel-plan)
# Installed tools find libTessel.so beside them, and MLIR where it is.
set_target_properties(Tessel ${TESSEL_INSTALLED_TOOLS} PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../lib;${LLVM_LIBRARY_DIR}")

install(TARGETS Tessel EXPORT TesselTargets
  LIBRARY DESTINATION lib
  INCLUDES DESTINATION ${TESSEL_INSTALL_INCLUDEDIR})
install(TARGETS ${TESSEL_INSTALLED_TOOLS} RUNTIME DESTINATION bin)
set(TESSEL_RUNTIME_ARCHIVES tessel_rt TesselProgram TesselSupport)
if(TARGET tessel_rt_gpu)
  list(APPEND TESSEL_RUNTIME_ARCHIVES tessel_rt_gpu)
endif()
install(TARGETS ${TESSEL_RUNTIME_ARCHIVES} ARCHIVE DESTINATION lib/tessel)

# tessel-plan's hardware descriptions (found as ../share/tessel/hardware).
install(DIRECTORY data/hardware DESTINATION share/tessel)

install(DIRECTORY include/tessel DESTINATION ${TESSEL_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/tessel
  DESTINATION ${TESSEL_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT TesselTargets NAMESPACE Tessel::
  DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/TesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesselConfig.cmake
  INSTALL_DESTINATION ${TESSEL_INSTALL_CMAKEDIR}
  PATH_VARS TESSEL_INSTALL_INCLUDEDIR TESSEL_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesselConfig.cmake
  ${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
  DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
