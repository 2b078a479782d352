# cmake -DATTNVIZ=exe -DEXPECTED_CODE=n -DEXPECTED_REGEX=re -DARGS=a@@b@@c -P cli_expect.cmake
# Runs the executable once and checks both its exit code and its output (stdout, then stderr,
# trailing white space stripped), which CTest's WILL_FAIL and PASS_REGULAR_EXPRESSION cannot do
# in one test. Arguments are joined by "@@" (see attnviz_expect in cli_tests.cmake).
string(REPLACE "@@" ";" args "${ARGS}")
string(REPLACE "@@" ";" regex "${EXPECTED_REGEX}")
# -DINPUT=FILE: the run's standard input (for --text -).
if(DEFINED INPUT)
  execute_process(COMMAND ${ATTNVIZ} ${args} INPUT_FILE ${INPUT} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
else()
  execute_process(COMMAND ${ATTNVIZ} ${args} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
string(STRIP "${out}${err}" text)
if(NOT code STREQUAL EXPECTED_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECTED_CODE}; output:\n${text}")
endif()
if(NOT text MATCHES "${regex}")
  message(FATAL_ERROR "output does not match ${regex}:\n${text}")
endif()
