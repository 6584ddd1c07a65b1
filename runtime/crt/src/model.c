/*
 * model.c: the generic firmware API over a model descriptor (tvmnode/crt/
 * model.h). An instance is nothing but the buffer pointers a generated entry
 * point wants, laid out as the arrays it takes, plus a status and a run
 * count; so instances of one model, or of several models over one pool,
 * share nothing the runtime owns and cannot interfere. Initialisation checks
 * everything that would otherwise make the generated code read or write
 * out of bounds (pool sizes and alignment, in-pool tensors inside their
 * pool) before it touches any memory, so a failed init leaves the pools
 * alone and the instance unusable. Every later call checks the instance's
 * seals, then its descriptor again (magic, ABI, entry point): the struct
 * lives in the application's memory, may be zeroed, stale, copied or
 * foreign, and a wrong code is better than a hard fault. Nothing here allocates, prints or aborts.
 */
#include "tvmnode/crt/model.h"

#include "tvmnode/crt/kernels.h" /* TnCrtDType */

#include "crt_libc.h"

static int32_t record(TnCrtInstance *inst, int32_t status) {
  if (inst) inst->last_error = status;
  return status;
}

static int descriptor_ok(const TnCrtModel *m) {
  return (m->magic == TN_CRT_MODEL_MAGIC ||
          m->magic == TN_CRT_MODEL_STATE_MAGIC) &&
         m->abi_version == TN_CRT_MODEL_ABI_VERSION && m->run != NULL;
}

/* ---- seals ----------------------------------------------------------------
 * An instance lives in the application's memory, where it may be zeroed,
 * never initialised, copied, half overwritten or edited. Before any call
 * follows one of its pointers, two 32-bit checksums (FNV-1a over words)
 * must match: `seal` over the instance's own address and every pointer in
 * it, so that a garbage, torn, copied or swapped struct is refused without
 * a pointer followed; then `model_seal` over what the generated entry
 * point trusts of the descriptor (its identity and every pool's size and
 * alignment, the tensors' counts and placement), so that a descriptor in
 * RAM changed after init is refused too. A struct that matches by chance
 * is one in 2^32. Every call that changes a pointer seals again. */
static void mix(uint32_t *h, uintptr_t v) {
  for (unsigned k = 0; k < sizeof v; k += 4) {
    *h = (*h ^ (uint32_t)(v & 0xffffffffu)) * 16777619u;
    v = (uintptr_t)((uint64_t)v >> 32);
  }
}

static void mix_ptrs(uint32_t *h, void *const *p, int32_t n) {
  for (int32_t k = 0; k < n; k++) mix(h, (uintptr_t)p[k]);
}

static uint32_t instance_seal(const TnCrtInstance *inst) {
  uint32_t h = 2166136261u;
  mix(&h, (uintptr_t)inst);
  mix(&h, (uintptr_t)inst->model);
  mix_ptrs(&h, inst->inputs, TN_CRT_MAX_IO);
  mix_ptrs(&h, inst->outputs, TN_CRT_MAX_IO);
  mix_ptrs(&h, inst->workspace, TN_CRT_MAX_POOLS);
  mix_ptrs(&h, inst->constants, TN_CRT_MAX_POOLS);
  mix_ptrs(&h, inst->devices, TN_CRT_MAX_POOLS);
  mix(&h, (uintptr_t)inst->state);
  return h;
}

static void mix_pools(uint32_t *h, const TnCrtPoolInfo *p, int32_t n) {
  mix(h, (uintptr_t)p);
  for (int32_t k = 0; p && k < n && k < TN_CRT_MAX_POOLS; k++)
    mix(h, p[k].size), mix(h, p[k].alignment);
}

static void mix_tensors(uint32_t *h, const TnCrtTensorInfo *t, int32_t n) {
  mix(h, (uintptr_t)t);
  mix(h, (uint32_t)n);
  for (int32_t k = 0; t && k < n && k < TN_CRT_MAX_IO; k++)
    mix(h, t[k].nbytes), mix(h, (uint32_t)t[k].pool), mix(h, t[k].offset);
}

/* Only for a descriptor that descriptor_ok() accepted. */
static uint32_t model_seal(const TnCrtModel *m) {
  uint32_t h = 2166136261u;
  mix(&h, m->magic);
  mix(&h, (uintptr_t)m->run);
  mix(&h, (uint32_t)m->num_workspace_pools);
  mix_pools(&h, m->workspace_pools, m->num_workspace_pools);
  mix(&h, (uint32_t)m->num_constant_pools);
  mix_pools(&h, m->constant_pools, m->num_constant_pools);
  mix(&h, (uint32_t)m->num_devices);
  mix_tensors(&h, m->inputs, m->num_inputs);
  mix_tensors(&h, m->outputs, m->num_outputs);
  const TnCrtStatefulModel *sm = tn_crt_model_state(m);
  if (sm) {
    mix(&h, sm->state_pool_size);
    mix(&h, sm->state_pool_alignment);
    mix(&h, (uintptr_t)sm->run_with_state);
  }
  return h;
}

static void seal(TnCrtInstance *inst) { inst->seal = instance_seal(inst); }

/* Whether `inst` may be used at all (TN_CRT_OK, or the code to return). */
static int32_t usable(const TnCrtInstance *inst) {
  if (!inst) return TN_CRT_NULL_POINTER;
  if (inst->seal != instance_seal(inst) || !inst->model ||
      !descriptor_ok(inst->model) || inst->model_seal != model_seal(inst->model))
    return TN_CRT_MODEL_MISMATCH;
  return TN_CRT_OK;
}

/* Input or output `i` of `m`, or NULL when out of range. */
static const TnCrtTensorInfo *info_at(const TnCrtModel *m, int is_output,
                                      int32_t i) {
  int32_t n = is_output ? m->num_outputs : m->num_inputs;
  const TnCrtTensorInfo *t = is_output ? m->outputs : m->inputs;
  if (!t || i < 0 || i >= n || i >= TN_CRT_MAX_IO) return NULL;
  return &t[i];
}

/* The alignment a bound buffer needs so that generated code may load its
 * elements whole (a Cortex-M faults on a misaligned VLDR or LDRD). */
static uint32_t element_alignment(int32_t dtype) {
  switch (dtype) {
    case TN_CRT_F32: case TN_CRT_I32: return 4;
    case TN_CRT_I64: case TN_CRT_F64: return 8;
    case TN_CRT_I16: return 2;
    default: return 1;
  }
}

static int aligned(const void *p, uint32_t alignment) {
  return alignment <= 1 || (uintptr_t)p % alignment == 0;
}

/* The application's pools against the descriptor's. */
static int32_t check_pools(const TnCrtPoolInfo *info, int32_t n_model,
                           const TnCrtPool *pools, int32_t n) {
  if (n_model < 0 || n_model > TN_CRT_MAX_POOLS || n != n_model)
    return TN_CRT_INVALID_ARGUMENT;
  if (n > 0 && !info) return TN_CRT_MODEL_MISMATCH;
  if (n > 0 && !pools) return TN_CRT_NULL_POINTER;
  for (int32_t k = 0; k < n; k++) {
    if (!pools[k].base) return TN_CRT_NULL_POINTER;
    if (pools[k].size < info[k].size) return TN_CRT_POOL_TOO_SMALL;
    if (!aligned(pools[k].base, info[k].alignment))
      return TN_CRT_POOL_MISALIGNED;
  }
  return TN_CRT_OK;
}

/* The descriptor's inputs or outputs: a count the instance can hold, and
 * every in-pool tensor inside its (already checked) pool. */
static int32_t check_tensors(const TnCrtModel *m, const TnCrtTensorInfo *t,
                             int32_t n) {
  if (n < 0 || n > TN_CRT_MAX_IO) return TN_CRT_INVALID_ARGUMENT;
  if (n > 0 && !t) return TN_CRT_MODEL_MISMATCH;
  for (int32_t k = 0; k < n; k++) {
    if (t[k].pool < -1 || t[k].pool >= m->num_workspace_pools)
      return TN_CRT_MODEL_MISMATCH;
    if (t[k].pool >= 0 && (uint64_t)t[k].offset + t[k].nbytes >
                              m->workspace_pools[t[k].pool].size)
      return TN_CRT_MODEL_MISMATCH;
  }
  return TN_CRT_OK;
}

static void bind_in_pool(TnCrtInstance *inst, const TnCrtTensorInfo *t,
                         int32_t n, void **slots) {
  for (int32_t k = 0; k < n; k++)
    if (t[k].pool >= 0)
      slots[k] = (uint8_t *)inst->workspace[t[k].pool] + t[k].offset;
}

/* tn_crt_instance_init, and with `fill` 0 the form tn_crt_params_init uses:
 * the constant pools are bound as given, not filled from the descriptor. */
static int32_t init(TnCrtInstance *inst, const TnCrtModel *model,
                    const TnCrtPool *workspace_pools,
                    int32_t num_workspace_pools,
                    const TnCrtPool *constant_pools,
                    int32_t num_constant_pools, int fill) {
  if (!inst) return TN_CRT_NULL_POINTER;
  memset(inst, 0, sizeof *inst);
  if (!model) return record(inst, TN_CRT_NULL_POINTER);
  if (!descriptor_ok(model)) return record(inst, TN_CRT_MODEL_MISMATCH);
  if (model->num_devices < 0 || model->num_devices > TN_CRT_MAX_POOLS)
    return record(inst, TN_CRT_INVALID_ARGUMENT);
  int32_t st = check_pools(model->workspace_pools, model->num_workspace_pools,
                           workspace_pools, num_workspace_pools);
  if (st == TN_CRT_OK)
    st = check_pools(model->constant_pools, model->num_constant_pools,
                     constant_pools, num_constant_pools);
  if (st == TN_CRT_OK) st = check_tensors(model, model->inputs,
                                          model->num_inputs);
  if (st == TN_CRT_OK) st = check_tensors(model, model->outputs,
                                          model->num_outputs);
  if (st != TN_CRT_OK) return record(inst, st);

  /* Checked: now write. */
  for (int32_t k = 0; k < num_workspace_pools; k++)
    inst->workspace[k] = workspace_pools[k].base;
  for (int32_t k = 0; k < num_constant_pools; k++) {
    inst->constants[k] = constant_pools[k].base;
    const uint8_t *data =
        model->constant_pool_data ? model->constant_pool_data[k] : NULL;
    if (data && fill) memmove(constant_pools[k].base, data,
                      model->constant_pools[k].size);
  }
  bind_in_pool(inst, model->inputs, model->num_inputs, inst->inputs);
  bind_in_pool(inst, model->outputs, model->num_outputs, inst->outputs);
  inst->model = model;
  inst->model_seal = model_seal(model);
  seal(inst);
  return TN_CRT_OK;
}

int32_t tn_crt_instance_init(TnCrtInstance *inst, const TnCrtModel *model,
                             const TnCrtPool *workspace_pools,
                             int32_t num_workspace_pools,
                             const TnCrtPool *constant_pools,
                             int32_t num_constant_pools) {
  return init(inst, model, workspace_pools, num_workspace_pools,
              constant_pools, num_constant_pools, 1);
}

int32_t tn__crt_instance_init_bound(TnCrtInstance *inst,
                                    const TnCrtModel *model,
                                    const TnCrtPool *workspace_pools,
                                    int32_t num_workspace_pools,
                                    const TnCrtPool *constant_pools,
                                    int32_t num_constant_pools) {
  return init(inst, model, workspace_pools, num_workspace_pools,
              constant_pools, num_constant_pools, 0);
}

int32_t tn__crt_set_constants(TnCrtInstance *inst, int32_t k, void *base) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return st;
  if (k < 0 || k >= inst->model->num_constant_pools || !base)
    return TN_CRT_INVALID_ARGUMENT;
  inst->constants[k] = base;
  seal(inst);
  return TN_CRT_OK;
}

static int32_t bind(TnCrtInstance *inst, int is_output, int32_t i, void *data,
                    uint32_t size) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return record(inst, st);
  const TnCrtTensorInfo *t = info_at(inst->model, is_output, i);
  if (!t || t->pool >= 0) return record(inst, TN_CRT_INVALID_ARGUMENT);
  if (!data) return record(inst, TN_CRT_NULL_POINTER);
  if (size < t->nbytes) return record(inst, TN_CRT_POOL_TOO_SMALL);
  if (!aligned(data, element_alignment(t->dtype)))
    return record(inst, TN_CRT_POOL_MISALIGNED);
  (is_output ? inst->outputs : inst->inputs)[i] = data;
  seal(inst);
  return TN_CRT_OK;
}

static int32_t unbind(TnCrtInstance *inst, int is_output, int32_t i) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return record(inst, st);
  const TnCrtTensorInfo *t = info_at(inst->model, is_output, i);
  if (!t || t->pool >= 0) return record(inst, TN_CRT_INVALID_ARGUMENT);
  (is_output ? inst->outputs : inst->inputs)[i] = NULL;
  seal(inst);
  return TN_CRT_OK;
}

int32_t tn_crt_unbind_input(TnCrtInstance *inst, int32_t i) {
  return unbind(inst, 0, i);
}

int32_t tn_crt_unbind_output(TnCrtInstance *inst, int32_t i) {
  return unbind(inst, 1, i);
}

int32_t tn_crt_bind_input(TnCrtInstance *inst, int32_t i, void *data,
                          uint32_t size) {
  return bind(inst, 0, i, data, size);
}

int32_t tn_crt_bind_output(TnCrtInstance *inst, int32_t i, void *data,
                           uint32_t size) {
  return bind(inst, 1, i, data, size);
}

int32_t tn_crt_set_device(TnCrtInstance *inst, int32_t i, void *device) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return record(inst, st);
  if (i < 0 || i >= inst->model->num_devices || i >= TN_CRT_MAX_POOLS)
    return record(inst, TN_CRT_INVALID_ARGUMENT);
  if (!device) return record(inst, TN_CRT_NULL_POINTER);
  inst->devices[i] = device;
  seal(inst);
  return TN_CRT_OK;
}

int32_t tn_crt_set_state(TnCrtInstance *inst, void *pool, uint32_t size) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return record(inst, st);
  const TnCrtStatefulModel *m = tn_crt_model_state(inst->model);
  if (!m) return record(inst, TN_CRT_INVALID_ARGUMENT);
  if (!pool) return record(inst, TN_CRT_NULL_POINTER);
  if (size < m->state_pool_size) return record(inst, TN_CRT_POOL_TOO_SMALL);
  if (m->state_pool_alignment > 1 &&
      (uintptr_t)pool % m->state_pool_alignment != 0)
    return record(inst, TN_CRT_POOL_MISALIGNED);
  inst->state = pool;
  seal(inst);
  return TN_CRT_OK;
}

int32_t tn_crt_reset(TnCrtInstance *inst) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return record(inst, st);
  const TnCrtStatefulModel *m = tn_crt_model_state(inst->model);
  if (!m) return TN_CRT_OK;
  if (!inst->state || !m->reset) return record(inst, TN_CRT_NOT_BOUND);
  st = m->reset(inst->state);
  return st == TN_CRT_OK ? TN_CRT_OK : record(inst, st);
}

/* Queries take a const instance and so record nothing. */
static int32_t tensor(const TnCrtInstance *inst, int is_output, int32_t i,
                      TnCrtTensor *out) {
  if (!out) return TN_CRT_NULL_POINTER;
  out->data = NULL;
  out->info = NULL;
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return st;
  const TnCrtTensorInfo *t = info_at(inst->model, is_output, i);
  if (!t) return TN_CRT_INVALID_ARGUMENT;
  out->data = (is_output ? inst->outputs : inst->inputs)[i];
  out->info = t;
  return TN_CRT_OK;
}

int32_t tn_crt_input(const TnCrtInstance *inst, int32_t i, TnCrtTensor *out) {
  return tensor(inst, 0, i, out);
}

int32_t tn_crt_output(const TnCrtInstance *inst, int32_t i, TnCrtTensor *out) {
  return tensor(inst, 1, i, out);
}

static int all_set(void *const *slots, int32_t n, int32_t max) {
  for (int32_t k = 0; k < n && k < max; k++)
    if (!slots[k]) return 0;
  return 1;
}

int32_t tn_crt_run(TnCrtInstance *inst) {
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return record(inst, st);
  const TnCrtModel *m = inst->model;
  if (!all_set(inst->inputs, m->num_inputs, TN_CRT_MAX_IO) ||
      !all_set(inst->outputs, m->num_outputs, TN_CRT_MAX_IO) ||
      !all_set(inst->devices, m->num_devices, TN_CRT_MAX_POOLS))
    return record(inst, TN_CRT_NOT_BOUND);
  const TnCrtStatefulModel *sm = tn_crt_model_state(m);
  if (sm && (!inst->state || !sm->run_with_state))
    return record(inst, TN_CRT_NOT_BOUND);
  st = sm ? sm->run_with_state(inst->inputs, inst->outputs, inst->workspace,
                               inst->constants, inst->devices, inst->state)
          : m->run(inst->inputs, inst->outputs, inst->workspace,
                   inst->constants, inst->devices);
  if (st == TN_CRT_OK) inst->runs++;
  return record(inst, st);
}

int32_t tn_crt_last_error(const TnCrtInstance *inst) {
  if (!inst) return TN_CRT_NULL_POINTER;
  /* A failed init leaves its code behind an unusable instance. */
  return inst->last_error != TN_CRT_OK ? inst->last_error : usable(inst);
}

int32_t tn_crt_report(const TnCrtInstance *inst, TnCrtReport *out) {
  if (!out) return TN_CRT_NULL_POINTER;
  memset(out, 0, sizeof *out);
  int32_t st = usable(inst);
  if (st != TN_CRT_OK) return st;
  const TnCrtModel *m = inst->model;
  out->model = m;
  for (int32_t k = 0; m->workspace_pools && k < m->num_workspace_pools &&
                     k < TN_CRT_MAX_POOLS; k++)
    out->workspace_bytes += m->workspace_pools[k].size;
  out->constant_bytes = m->constant_bytes;
  for (int is_output = 0; is_output < 2; is_output++) {
    const TnCrtTensorInfo *t;
    for (int32_t k = 0; (t = info_at(m, is_output, k)) != NULL; k++)
      if (t->pool < 0) out->io_bytes += t->nbytes;
  }
  out->runs = inst->runs;
  out->last_error = inst->last_error;
  return TN_CRT_OK;
}

static int32_t find(const TnCrtModel *m, int is_output, const char *name) {
  if (!m || !name || m->magic != TN_CRT_MODEL_MAGIC ||
      m->abi_version != TN_CRT_MODEL_ABI_VERSION)
    return -1;
  for (int32_t k = 0;; k++) {
    const TnCrtTensorInfo *t = info_at(m, is_output, k);
    if (!t) return -1;
    const char *a = t->name, *b = name;
    if (!a) continue;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return k;
  }
}

int32_t tn_crt_input_index(const TnCrtModel *model, const char *name) {
  return find(model, 0, name);
}

int32_t tn_crt_output_index(const TnCrtModel *model, const char *name) {
  return find(model, 1, name);
}
