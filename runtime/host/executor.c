/*
 * executor.c: the host executor, over the public API only (the build
 * compiles runtime/ without the library's private headers).
 *
 * An executor is the program (tvmnode/kernel.h) of the module's entry
 * function after InferType; the functions registered here are how Python,
 * Rust and Go reach it.
 */
#include "tvmnode/executor.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "host_internal.h"

TN_API TnObject *tn_executor_new(TnObject *mod, const char *entry) {
  const char *who = "tn_executor_new";
  if (mod == NULL || entry == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s is NULL",
                             mod ? "entry" : "mod"), NULL;
  TnObject *infer = tn_pass_infer_type();
  if (infer == NULL) return NULL;
  TnObject *typed = tn_pass_run(infer, mod, NULL);
  tn_object_release(infer);
  if (typed == NULL) return NULL;
  TnObject *fn = tn_ir_module_get(typed, entry);
  TnObject *prog = fn ? tn_program_new(typed, fn) : NULL;
  tn_object_release(fn);
  tn_object_release(typed);
  return prog;
}

/* ---- the registry's view ---------------------------------------------------- */

static int exec_new(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *entry = "main";
  TnObject *mod;
  if (n < 1 || n > 2)
    return tn_error_raise_in(TN_ERR_TYPE, "runtime.Executor",
                             "takes (mod[, entry]), got %d arguments", n);
  if (tn_any_as_object(&args[0], tn_type_index("ir.IRModule"), &mod) ||
      (n == 2 && tn_any_as_str(&args[1], &entry, NULL)))
    return -1;
  TnObject *e = tn_executor_new(mod, entry);
  if (e == NULL) return -1;
  *ret = tn_any_obj(e);
  return 0;
}

static int program_arg(const TnAny *args, int32_t n, const char *who,
                       TnObject **out) {
  if (n < 1 || !tn_any_is_object(&args[0]) ||
      tn_program_num_inputs(args[0].v_obj) < 0) {
    if (!tn_error_peek_raised())
      tn_error_raise_in(TN_ERR_TYPE, who,
                        "the first argument must be an executor");
    return -1;
  }
  *out = args[0].v_obj;
  return 0;
}

static int exec_run(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *who = "runtime.ExecutorRun";
  TnObject *prog;
  if (program_arg(args, n, who, &prog)) return -1;
  int32_t nin = n - 1, nout = tn_program_num_outputs(prog);
  TnObject *in[64], *out[64];
  if (nin > 64 || nout > 64)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "more than 64 inputs or outputs");
  for (int32_t i = 0; i < nin; i++) {
    if (args[1 + i].type_index != TN_TYPE_TENSOR) {
      const char *name = i < tn_program_num_inputs(prog)
                             ? tn_program_input_name(prog, i)
                             : NULL;
      return tn_error_raise_in(TN_ERR_TYPE, who,
                               "input %d ('%s'): expected a tn.Tensor, got %s",
                               i, name ? name : "?",
                               tn_any_type_key(&args[1 + i]));
    }
    in[i] = args[1 + i].v_obj;
  }
  if (tn_program_run(prog, in, nin, out)) return -1;
  TnAny items[64];
  for (int32_t i = 0; i < nout; i++) items[i] = tn_any_obj(out[i]);
  TnObject *arr = tn_array_new(items, nout);
  for (int32_t i = 0; i < nout; i++) tn_object_release(out[i]);
  if (arr == NULL) return -1;
  *ret = tn_any_obj(arr);
  return 0;
}

/* [{"name", "shape", "dtype"}] of the inputs or outputs. */
static int describe(const TnAny *args, int32_t n, TnAny *ret, bool inputs) {
  const char *who = inputs ? "runtime.ExecutorInputs"
                           : "runtime.ExecutorOutputs";
  TnObject *prog;
  if (program_arg(args, n, who, &prog)) return -1;
  int32_t count = inputs ? tn_program_num_inputs(prog)
                         : tn_program_num_outputs(prog);
  TnObject *list = tn_list_new(NULL, 0);
  if (list == NULL) return -1;
  for (int32_t i = 0; i < count; i++) {
    const TnIrTensorType *t = (const TnIrTensorType *)(
        inputs ? tn_program_input_type(prog, i)
               : tn_program_output_type(prog, i));
    char name[32], dt[32];
    const char *nm = name;
    if (inputs) nm = tn_program_input_name(prog, i);
    else snprintf(name, sizeof name, "output%d", i);
    tn_dtype_print(t->dtype, dt, sizeof dt);
    TnAny keys[3] = {tn_any_cstr("name"), tn_any_cstr("shape"),
                     tn_any_cstr("dtype")};
    TnAny vals[3] = {tn_any_cstr(nm), tn_any_obj(t->shape), tn_any_cstr(dt)};
    TnObject *m = tn_map_new(keys, vals, 3);
    TnAny mv = tn_any_obj(m);
    int rc = m ? tn_list_append(list, &mv) : -1;
    tn_object_release(m);
    if (rc) {
      tn_object_release(list);
      return -1;
    }
  }
  *ret = tn_any_obj(list);
  return 0;
}

static int exec_inputs(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  return describe(args, n, ret, true);
}

static int exec_outputs(void *self, const TnAny *args, int32_t n,
                        TnAny *ret) {
  (void)self;
  return describe(args, n, ret, false);
}

static int exec_profile(void *self, const TnAny *args, int32_t n,
                        TnAny *ret) {
  (void)self, (void)ret;
  TnObject *prog;
  bool on = true;
  if (program_arg(args, n, "runtime.ExecutorProfile", &prog)) return -1;
  if (n > 1 && (args[1].type_index == TN_TYPE_BOOL ||
                args[1].type_index == TN_TYPE_INT))
    on = args[1].v_int64 != 0;
  return tn_program_set_profiling(prog, on);
}

/* (executor[, n]): set the threads when n is given; the threads now. */
static int exec_threads(void *self, const TnAny *args, int32_t n,
                        TnAny *ret) {
  (void)self;
  const char *who = "runtime.ExecutorThreads";
  TnObject *prog;
  if (program_arg(args, n, who, &prog)) return -1;
  if (n > 2)
    return tn_error_raise_in(TN_ERR_TYPE, who, "takes (executor[, threads]), "
                             "got %d arguments", n);
  if (n == 2) {
    if (args[1].type_index != TN_TYPE_INT)
      return tn_error_raise_in(TN_ERR_TYPE, who, "argument threads: expected "
                               "an int, got %s", tn_any_type_key(&args[1]));
    if (tn_program_set_threads(prog, args[1].v_int64)) return -1;
  }
  *ret = tn_any_int(tn_program_threads(prog));
  return 0;
}

static int exec_stats(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  TnObject *prog;
  TnProgramStats s;
  if (program_arg(args, n, "runtime.ExecutorStats", &prog) ||
      tn_program_stats(prog, &s))
    return -1;
  TnAny keys[10] = {tn_any_cstr("steps"), tn_any_cstr("arena_bytes"),
                    tn_any_cstr("arena_lower_bound"),
                    tn_any_cstr("scratch_bytes"), tn_any_cstr("macs"),
                    tn_any_cstr("runs"), tn_any_cstr("run_ns"),
                    tn_any_cstr("kernel_ns"), tn_any_cstr("threads"),
                    tn_any_cstr("split_steps")};
  TnAny vals[10] = {tn_any_int(s.steps), tn_any_int(s.arena_bytes),
                    tn_any_int(s.arena_lower_bound),
                    tn_any_int(s.scratch_bytes), tn_any_int(s.macs),
                    tn_any_int(s.runs), tn_any_int(s.run_ns),
                    tn_any_int(s.kernel_ns),
                    tn_any_int(tn_program_threads(prog)),
                    tn_any_int(tn_program_split_steps(prog))};
  TnObject *m = tn_map_new(keys, vals, 10);
  if (m == NULL) return -1;
  *ret = tn_any_obj(m);
  return 0;
}

/* Called once by the host runtime's start-up (init.c). */
int tn__executor_init(void) {
  static const TnHostFn fns[] = {{"runtime.Executor", exec_new},
             {"runtime.ExecutorRun", exec_run},
             {"runtime.ExecutorInputs", exec_inputs},
             {"runtime.ExecutorOutputs", exec_outputs},
             {"runtime.ExecutorStats", exec_stats},
             {"runtime.ExecutorProfile", exec_profile},
             {"runtime.ExecutorThreads", exec_threads}};
  return tn__host_register(fns, sizeof fns / sizeof fns[0]);
}
