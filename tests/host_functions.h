/*
 * host_functions.h: the global functions runtime/host registers at
 * start-up (runtime/host/init.c), listed once for the tests that look them
 * up: test_module.c through the shared library, host_registry.c from a
 * statically linked program (tests/host_registers.sh).
 */
#ifndef TVMNODE_TEST_HOST_FUNCTIONS_H_
#define TVMNODE_TEST_HOST_FUNCTIONS_H_

static const char *const tn_test_host_functions[] = {
    "runtime.Executor",        "runtime.ExecutorRun",
    "runtime.ExecutorInputs",  "runtime.ExecutorOutputs",
    "runtime.ExecutorStats",   "runtime.ExecutorProfile",
    "runtime.ModuleLoad",      "runtime.ModuleSystem",
    "runtime.ModuleDescribe",  "runtime.ModuleSetInput",
    "runtime.ModuleRun",       "runtime.ModuleGetOutput",
    "runtime.ModuleInvoke",    "runtime.ModuleTime",
    "runtime.ModuleSetWorkspace", "runtime.SaveParams",
    "runtime.LoadParams",
};

#endif /* TVMNODE_TEST_HOST_FUNCTIONS_H_ */
