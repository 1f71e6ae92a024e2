# rmbus_add_test() calls for free_blocks, job_cap, work_map, node_liveness, properties
