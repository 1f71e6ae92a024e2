# rmbus_add_test() calls for the scheduler stages
