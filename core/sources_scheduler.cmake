# The scheduling cycle (owned by the core scheduler work): model, stages and the public API.
set(RMBUS_CORE_SCHEDULER_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/apportion.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cluster_model.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/defragment.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/held_back.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/how_much.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/job_caps.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/job_estimates.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/nodepool_scheduler.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/nodepool_tree.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/nodepool_work.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plan_keeper.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/preemption.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/schedule_plan.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/share_tree.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/what_of.cpp
)
