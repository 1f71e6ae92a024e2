# Runs rmbus-sim-check and requires that it passed and that its summary line counts every seed asked for:
# a runner that stopped early, or ran no seed, must not pass.  -DBIN=... -DSEEDS=... [-DPOLICY=ducc|sparing] [-DTAKEOVERS=ON]
if(NOT DEFINED POLICY)
  set(POLICY ducc)
endif()
set(extra "")
if(TAKEOVERS)
  set(extra --takeovers)
endif()
execute_process(COMMAND ${BIN} --seeds ${SEEDS} --policy ${POLICY} ${extra} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rmbus-sim-check exited ${rc}")
endif()
if(NOT out MATCHES "rmbus-sim-check: seeds ${SEEDS} \\(from 1\\), failures 0,")
  message(FATAL_ERROR "the summary line does not report ${SEEDS} seeds without failure")
endif()
