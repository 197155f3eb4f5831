# cmake -P script run by the `embedding-consumer` test (see CMakeLists.txt).
# Every step must succeed; the C++ and the C consumers' output must show the
# decomposed, asynchronous program, and a request for another version of
# the package must fail.

function(run_step what)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${OVERLAP_BUILD_DIR}
  --prefix ${prefix})
foreach(file lib/cmake/overlap/OverlapConfig.cmake
             lib/cmake/overlap/OverlapConfigVersion.cmake
             lib/cmake/overlap/OverlapTargets.cmake
             include/overlap-c/Dialect.h
             include/OverlapDialect/Dialect/Ovl/IR/OvlOps.h.inc
             lib/libOverlapCAPI.so bin/overlap-opt bin/overlap-run
             bin/overlap-sim)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()

# Only the install prefix is given: the package finds MLIR by itself.
run_step("configuring the consumer" ${CMAKE_COMMAND}
  -S ${CONSUMER_SOURCE_DIR} -B ${build} -G ${GENERATOR}
  -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld ${SANITIZER_LINK_FLAGS}"
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix})
run_step("building the consumer" ${CMAKE_COMMAND} --build ${build})
run_step("running the consumer" ${build}/overlap-consumer)
foreach(expected "ovl.collective_permute_start" "ovl.collective_permute_done")
  string(FIND "${step_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no ${expected} in the consumer's output:\n${step_output}")
  endif()
endforeach()
string(FIND "${step_output}" "ovl.all_gather" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the all_gather was not decomposed:\n${step_output}")
endif()

# A C-only project through the C API, asking for this version.
set(c_build ${WORK_DIR}/c-build)
run_step("configuring the C consumer" ${CMAKE_COMMAND}
  -S ${C_CONSUMER_SOURCE_DIR} -B ${c_build} -G ${GENERATOR}
  -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
  -DCMAKE_C_COMPILER=${C_COMPILER}
  "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld ${SANITIZER_LINK_FLAGS}"
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix})
run_step("building the C consumer" ${CMAKE_COMMAND} --build ${c_build})
run_step("running the C consumer" ${c_build}/overlap-c-consumer)
foreach(expected "ovl.collective_permute_start" "\"step_time_s\"")
  string(FIND "${step_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no ${expected} in the C consumer's output:\n${step_output}")
  endif()
endforeach()

# A version the package is not must be refused at configure time.
execute_process(COMMAND ${CMAKE_COMMAND}
  -S ${C_CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/c-build-99 -G ${GENERATOR}
  -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
  -DCMAKE_C_COMPILER=${C_COMPILER}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DOVERLAP_REQUIRED_VERSION=99.0
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0)
  message(FATAL_ERROR "find_package(Overlap 99.0) succeeded")
endif()
string(FIND "${err}" "version" at)
if(at EQUAL -1)
  message(FATAL_ERROR "find_package(Overlap 99.0) failed without naming the version:\n${err}")
endif()

# The installed tools run from the prefix (RUNPATH to libMLIR.so).
run_step("installed overlap-opt" ${prefix}/bin/overlap-opt --version)
message(STATUS "embedding-consumer: OK")
