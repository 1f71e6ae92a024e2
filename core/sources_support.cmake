# Support units of the core (free-space tables, job caps, work-map differencing, node liveness).
set(RMBUS_CORE_SUPPORT_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/free_blocks.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/job_cap.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/work_map.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/node_liveness.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/start_estimate.cpp
)
