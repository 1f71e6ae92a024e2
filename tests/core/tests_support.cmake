# rmbus_add_test() calls for free_blocks, job_cap, work_map, node_liveness, properties
rmbus_add_test(NAME test_free_blocks SOURCES test_free_blocks.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_job_cap SOURCES test_job_cap.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_work_map SOURCES test_work_map.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_node_liveness SOURCES test_node_liveness.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_scheduler_properties SOURCES test_scheduler_properties.cpp LIBS rmbus_core rmbus_workload TIMEOUT 300)
