# cmake -DATTNVIZ=exe -DPATTERN=re -DEXPECTED_COUNT=n -DARGS=a@@b@@c -P cli_count.cmake
# Runs the executable once and passes only if it exits 0 and PATTERN matches its output (stdout,
# then stderr) exactly EXPECTED_COUNT times: "said once" fails on a warning printed twice, which
# a PASS_REGULAR_EXPRESSION (one match is enough) cannot see. Arguments are joined by "@@".
string(REPLACE "@@" ";" args "${ARGS}")
execute_process(COMMAND ${ATTNVIZ} ${args} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "exit code ${code}, expected 0; output:\n${out}${err}")
endif()
string(REGEX MATCHALL "${PATTERN}" found "${out}${err}")
list(LENGTH found count)
if(NOT count EQUAL EXPECTED_COUNT)
  message(FATAL_ERROR "${PATTERN} matched ${count} times, expected ${EXPECTED_COUNT}; output:\n${out}${err}")
endif()
