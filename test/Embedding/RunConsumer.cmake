# cmake -P script run by the `embedding-consumer` test (see CMakeLists.txt).
# Every step must succeed; the consumer's output must show the decomposed,
# asynchronous program.

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
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld
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

# The installed tools run from the prefix (RUNPATH to libMLIR.so).
run_step("installed overlap-opt" ${prefix}/bin/overlap-opt --version)
message(STATUS "embedding-consumer: OK")
