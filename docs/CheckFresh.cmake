# Fails when a committed generated doc differs from the one the build made.
# FILES is a |-separated list of (built, committed) path pairs.
string(REPLACE "|" ";" FILES "${FILES}")
list(LENGTH FILES n)
math(EXPR last "${n} - 1")
set(stale "")
foreach(i RANGE 0 ${last} 2)
  math(EXPR j "${i} + 1")
  list(GET FILES ${i} built)
  list(GET FILES ${j} committed)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${built} ${committed}
                  RESULT_VARIABLE different)
  if(different)
    string(APPEND stale "  ${committed}\n")
  endif()
endforeach()
if(stale)
  message(FATAL_ERROR "Generated docs are stale; run `ninja overlap-doc` and commit:\n${stale}")
endif()
