# rmbus_add_test() calls for the scheduler stages
rmbus_add_test(NAME test_apportion SOURCES test_apportion.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_how_much SOURCES test_how_much.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_preemption SOURCES test_preemption.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_defragment SOURCES test_defragment.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_scheduler SOURCES test_scheduler.cpp LIBS rmbus_core TIMEOUT 60)
rmbus_add_test(NAME test_core_purity SOURCES test_core_purity.cpp LIBS rmbus_core TIMEOUT 60)
target_compile_definitions(test_core_purity PRIVATE RMBUS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
rmbus_add_test(NAME test_incremental SOURCES test_incremental.cpp LIBS rmbus_core rmbus_workload TIMEOUT 300)
