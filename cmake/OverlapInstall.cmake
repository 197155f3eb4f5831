# `cmake --install build --prefix P` lays out an installable CMake package:
#
#   P/include/{OverlapDialect,overlap-c,ovlrt}   headers, TableGen'd .inc files
#   P/lib/libOverlap*.a, libovlrt.a              the C++ libraries
#   P/lib/libOverlapCAPI.so                      the C API (+ MLIR's core C API)
#   P/lib/libovlrt_mpi.so                        the MPI plugin (when built)
#   P/bin/overlap-{opt,run,sim}                  the tools
#   P/lib/cmake/overlap/OverlapConfig.cmake      find_package(Overlap CONFIG)
#   P/lib/cmake/overlap/OverlapConfigVersion.cmake  OVERLAP_VERSION; a request
#                                                for another major or minor
#                                                version is refused (0.x)
#   P/lib/cmake/overlap/OverlapTargets.cmake     targets Overlap::<library>
#
# Included last from the top-level CMakeLists.txt, when every target exists.
# Every add_mlir_library() target installs itself into the export set that
# MLIR's CMake names `MLIRTargets` (add_mlir_library_install); that set is
# overlap's own here (MLIR's installed one is imported, not exported again),
# so it is exported under the namespace Overlap:: as OverlapTargets.cmake and
# new libraries join the package without further rules. Their imported
# dependencies `MLIR`, `LLVM` and `mlir_c_runner_utils` are resolved by the
# find_package(MLIR) that OverlapConfig.cmake does.

include(CMakePackageConfigHelpers)

set(OVERLAP_INSTALL_CMAKE_DIR lib${LLVM_LIBDIR_SUFFIX}/cmake/overlap)

# Headers: sources, the generated .inc (build/include) and ovlrt's, which
# the Runner headers include.
install(DIRECTORY
  ${PROJECT_SOURCE_DIR}/include/OverlapDialect
  ${PROJECT_SOURCE_DIR}/include/overlap-c
  DESTINATION include
  COMPONENT overlap-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/OverlapDialect
  DESTINATION include
  COMPONENT overlap-headers
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/ovlrt
  DESTINATION include
  COMPONENT overlap-headers
  FILES_MATCHING PATTERN "*.h")

# The libraries of the export set: headers from P/include, C++17.
get_property(OVERLAP_EXPORTED_LIBS GLOBAL PROPERTY MLIR_EXPORTS)
foreach(lib ${OVERLAP_EXPORTED_LIBS})
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:include>)
  # Not on the C API: its consumers may be C-only projects.
  if(NOT lib STREQUAL "OverlapCAPI")
    target_compile_features(${lib} INTERFACE cxx_std_17)
  endif()
endforeach()

# ovlrt (linked by OverlapRunner) joins the export set; its MPI plugin is
# installed beside the libraries, where overlap-run looks for it
# (<bin>/../lib/libovlrt_mpi.so).
target_include_directories(ovlrt INTERFACE $<INSTALL_INTERFACE:include>)
install(TARGETS ovlrt EXPORT MLIRTargets
  ARCHIVE DESTINATION lib${LLVM_LIBDIR_SUFFIX} COMPONENT ovlrt)
if(TARGET ovlrt_mpi)
  install(TARGETS ovlrt_mpi
    LIBRARY DESTINATION lib${LLVM_LIBDIR_SUFFIX} COMPONENT ovlrt)
endif()

install(TARGETS overlap-opt overlap-run overlap-sim
  RUNTIME DESTINATION bin COMPONENT overlap-tools)

# Installed binaries find libMLIR.so/libLLVM.so in LLVM's library directory
# (not on the default search path on Debian) and overlap's in ../lib.
foreach(target overlap-opt overlap-run overlap-sim OverlapCAPI)
  set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH
    "${LLVM_LIBRARY_DIR}")
endforeach()

install(EXPORT MLIRTargets
  NAMESPACE Overlap::
  FILE OverlapTargets.cmake
  DESTINATION ${OVERLAP_INSTALL_CMAKE_DIR}
  COMPONENT overlap-cmake-exports)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/OverlapConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/OverlapConfig.cmake
  INSTALL_DESTINATION ${OVERLAP_INSTALL_CMAKE_DIR}
  PATH_VARS OVERLAP_INSTALL_CMAKE_DIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/OverlapConfigVersion.cmake
  VERSION ${OVERLAP_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/OverlapConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/OverlapConfigVersion.cmake
  DESTINATION ${OVERLAP_INSTALL_CMAKE_DIR}
  COMPONENT overlap-cmake-exports)
