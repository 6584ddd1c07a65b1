/*
 * module.c: compiled models as runtime objects (tvmnode/module.h), over
 * the public API and the crt's firmware API only.
 *
 * A Module is a tn.Module object (the reserved type index 75) around one
 * TnCrtInstance: the crt already checks a descriptor's pools and binds the
 * in-pool inputs and outputs, so the host adds only what a host needs:
 * memory (pools and buffers allocated once, aligned as the descriptor
 * says), tensors in and out (zero copy where the crt's alignment rule
 * allows, a kept reference to the input tensor, output tensors that view
 * the Module's buffers through DLPack and hold a reference to the Module),
 * a library handle (each Module dlopens its library and dlcloses it when
 * it dies, so the loader's own count keeps a library mapped while any
 * Module or output of it lives), errors that name the model, and a busy
 * flag so that a second thread gets a RuntimeError instead of a race, and
 * optional threads (tn_module_set_threads: a worker pool that runs the
 * parts of the calls the generated code hands to its crt's parallel hook,
 * see "threads" below). The
 * system library is a list of static nodes that generated code registers
 * before main; registration takes a mutex that needs no initialisation, so
 * constructor order does not matter, and pins a shared object that
 * registers itself so that its node cannot be unmapped under the list.
 */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#include "tvmnode/module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_internal.h"
#include "tvmnode/crt/calls.h" /* TnCrtSplit */
#include "tvmnode/crt/kernels.h" /* TnCrtDType */
#include "tvmnode/kernel.h"     /* TnThreadPool */

#define BUF_ALIGN 64 /* of every buffer the Module allocates */
#define MAX_NDIM 32  /* of a model's input or output */

typedef struct {
  TnObject header;
  const TnCrtModel *model;
  void *library; /* dlopen handle, or NULL */
  int (*isa_limit)(int); /* the library's own crt's tn_crt_isa_limit */
  /* the library's tvmnode_module_set_parallel (NULL: none, or not a
   * library: the crt of libtvmnode itself is set) */
  int (*set_parallel)(TnCrtParallelFn fn, void *ctx);
  int32_t threads;      /* tn_module_set_threads (1: off) */
  TnThreadPool *pool;   /* threads > 1 and a call to cut: the workers */
  int64_t split_calls;  /* calls the last run ran in parts */
  int cuts;             /* its code hands calls to the hook (a library
                           that says so; any model linked in) */
  atomic_int busy;
  const char *stale;   /* why the outputs hold no run's results; NULL when
                          they hold the last run's */
  uint32_t inputs_set; /* bit i: input i has data */
  TnCrtInstance inst;
  void *ws[TN_CRT_MAX_POOLS];     /* the workspace pools in use */
  void *own_ws[TN_CRT_MAX_POOLS]; /* the Module's own (kept to the end) */
  TnObject *ws_tensor[TN_CRT_MAX_POOLS]; /* a caller's pool given as a
                                            tensor, kept alive */
  void *consts[TN_CRT_MAX_POOLS];
  void *in_copy[TN_CRT_MAX_IO];     /* where copied inputs go */
  TnObject *in_tensor[TN_CRT_MAX_IO]; /* zero-copy inputs, kept alive */
  void *out_buf[TN_CRT_MAX_IO];
  void *state; /* a stateful model's state pool, kept across runs */
} Module;

/* ---- descriptors ----------------------------------------------------------- */

TN_API int tn_module_dtype(int32_t crt, DLDataType *out) {
  switch (crt) {
#define DTYPE(N, ID, DL, BITS, C, RS) \
  case N: *out = (DLDataType){DL, BITS, 1}; return 1;
    TN_CRT_DTYPES(DTYPE)
#undef DTYPE
    default: return 0;
  }
}

/* The alignment the crt asks of a bound buffer (tn_crt_bind_input). */
static uintptr_t element_alignment(int32_t dtype) {
  DLDataType t;
  return tn_module_dtype(dtype, &t) ? (uintptr_t)t.bits / 8 : 1;
}

static bool tensors_ok(const TnCrtTensorInfo *t, int32_t n, int32_t npools) {
  if (n < 0 || n > TN_CRT_MAX_IO || (n > 0 && t == NULL)) return false;
  for (int32_t i = 0; i < n; i++) {
    DLDataType dt;
    uint64_t bytes;
    if (t[i].name == NULL || !tn_module_dtype(t[i].dtype, &dt) || t[i].ndim < 0 ||
        t[i].ndim > MAX_NDIM || (t[i].ndim > 0 && t[i].shape == NULL) ||
        t[i].pool < -1 || t[i].pool >= npools)
      return false;
    bytes = dt.bits / 8;
    for (int32_t d = 0; d < t[i].ndim; d++) {
      if (t[i].shape[d] < 0) return false;
      bytes *= (uint64_t)t[i].shape[d]; /* < 2^31 per dim, 32 dims: checked */
      if (bytes > UINT32_MAX) return false;
    }
    if (bytes != t[i].nbytes) return false;
  }
  return true;
}

static bool pools_ok(const TnCrtPoolInfo *p, int32_t n) {
  if (n < 0 || n > TN_CRT_MAX_POOLS || (n > 0 && p == NULL)) return false;
  for (int32_t i = 0; i < n; i++)
    if (p[i].alignment > 65536 || (p[i].alignment & (p[i].alignment - 1)))
      return false;
  return true;
}

/* Whether this runtime can drive `m`: what the crt checks at init, plus
 * what the Module relies on to make tensors (known dtypes, shapes that
 * agree with the byte sizes). Raises a ValueError naming `what`. */
static int check_model(const TnCrtModel *m, const char *who,
                       const char *what) {
  if (m == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s: the descriptor is NULL",
                             what);
  const TnCrtStatefulModel *sm = tn_crt_model_state(m);
  if (sm && (sm->run_with_state == NULL || sm->reset == NULL ||
             sm->state_pool_alignment > 65536 ||
             (sm->state_pool_alignment & (sm->state_pool_alignment - 1))))
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s: the stateful descriptor "
                             "of model '%s' is malformed (no run or reset "
                             "function, or a state pool alignment of %u)",
                             what, m->name ? m->name : "?",
                             sm->state_pool_alignment);
  if ((m->magic != TN_CRT_MODEL_MAGIC && sm == NULL) ||
      m->abi_version != TN_CRT_MODEL_ABI_VERSION || m->run == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s is not a model descriptor "
                             "this runtime reads (magic 0x%08x, ABI version "
                             "%u; expected 0x%08x and %d)", what, m->magic,
                             m->abi_version, TN_CRT_MODEL_MAGIC,
                             TN_CRT_MODEL_ABI_VERSION);
  if (m->name == NULL ||
      !pools_ok(m->workspace_pools, m->num_workspace_pools) ||
      !pools_ok(m->constant_pools, m->num_constant_pools) ||
      !tensors_ok(m->inputs, m->num_inputs, m->num_workspace_pools) ||
      !tensors_ok(m->outputs, m->num_outputs, m->num_workspace_pools) ||
      m->num_devices < 0 || m->num_devices > TN_CRT_MAX_POOLS ||
      (m->num_devices > 0 && m->devices == NULL))
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s: the descriptor of model "
                             "'%s' is malformed (counts, shapes, dtypes or "
                             "sizes out of range)", what,
                             m->name ? m->name : "?");
  return 0;
}

/* Append 'name' (after ", " but for the first) to a list of names in
 * `buf`, cut short when it is full. */
static void add_name(char *buf, size_t size, size_t *len, const char *name) {
  if (*len < size)
    *len += (size_t)snprintf(buf + *len, size - *len, "%s'%s'",
                             *len ? ", " : "", name);
}

/* ---- the object ------------------------------------------------------------- */

static void *aligned_alloc_zeroed(size_t size, size_t alignment) {
  void *p = NULL;
  if (alignment < BUF_ALIGN) alignment = BUF_ALIGN;
  if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
  memset(p, 0, size ? size : 1);
  return p;
}

static void module_deleter(TnObject *self, int flags) {
  Module *m = (Module *)self;
  if (flags & TN_DELETER_DESTRUCT) {
    for (int i = 0; i < TN_CRT_MAX_IO; i++) {
      tn_object_release(m->in_tensor[i]);
      free(m->in_copy[i]);
      free(m->out_buf[i]);
    }
    for (int i = 0; i < TN_CRT_MAX_POOLS; i++) {
      tn_object_release(m->ws_tensor[i]);
      free(m->own_ws[i]);
      free(m->consts[i]);
    }
    free(m->state);
    tn_thread_pool_free(m->pool);
    /* last: the descriptor lives in the library */
    if (m->library) dlclose(m->library);
    m->library = NULL;
  }
  if (flags & TN_DELETER_FREE) tn_object_free(self);
}

static const char *name_of(const Module *m) { return m->model->name; }

static int crt_error(const Module *m, int32_t st, const char *who,
                     const char *what) {
  return tn_error_raise_in(TN_ERR_RUNTIME, who, "model '%s': %s: %s (%s)",
                           name_of(m), what, tn_crt_status_name(st),
                           tn_crt_status_doc(st));
}

/* (Re)initialise the instance over the pools in m->ws and bind every
 * buffer the Module knows: outputs, inputs set so far. */
static int bind_all(Module *m, const char *who) {
  const TnCrtModel *d = m->model;
  TnCrtPool ws[TN_CRT_MAX_POOLS], cs[TN_CRT_MAX_POOLS];
  void *inputs[TN_CRT_MAX_IO], *devices[TN_CRT_MAX_POOLS];
  memcpy(inputs, m->inst.inputs, sizeof inputs);
  memcpy(devices, m->inst.devices, sizeof devices);
  for (int32_t k = 0; k < d->num_workspace_pools; k++)
    ws[k] = (TnCrtPool){m->ws[k], d->workspace_pools[k].size};
  for (int32_t k = 0; k < d->num_constant_pools; k++)
    cs[k] = (TnCrtPool){m->consts[k], d->constant_pools[k].size};
  int32_t st = tn_crt_instance_init(&m->inst, d, ws, d->num_workspace_pools,
                                    cs, d->num_constant_pools);
  if (st) return crt_error(m, st, who, "the pools do not fit the descriptor");
  for (int32_t i = 0; i < d->num_outputs; i++)
    if (d->outputs[i].pool < 0 &&
        (st = tn_crt_bind_output(&m->inst, i, m->out_buf[i],
                                 d->outputs[i].nbytes)))
      return crt_error(m, st, who, "binding an output");
  for (int32_t i = 0; i < d->num_inputs; i++)
    if (d->inputs[i].pool < 0 && inputs[i] &&
        (st = tn_crt_bind_input(&m->inst, i, inputs[i], d->inputs[i].nbytes)))
      return crt_error(m, st, who, "binding an input");
  for (int32_t k = 0; k < d->num_devices; k++)
    if (devices[k] && (st = tn_crt_set_device(&m->inst, k, devices[k])))
      return crt_error(m, st, who, "setting a device");
  const TnCrtStatefulModel *sm = tn_crt_model_state(d);
  if (sm && (st = tn_crt_set_state(&m->inst, m->state, sm->state_pool_size)))
    return crt_error(m, st, who, "setting the state pool");
  return 0;
}

/* A Module over `model`; it takes over `library` (closed on failure). */
static TnObject *module_new(const TnCrtModel *model, void *library,
                            const char *who, const char *what) {
  Module *m = NULL;
  if (check_model(model, who, what) ||
      !(m = (Module *)tn_object_alloc(TN_TYPE_MODULE, sizeof *m,
                                      module_deleter))) {
    if (library) dlclose(library);
    return NULL;
  }
  m->model = model;
  m->library = library;
  m->stale = "it has not run";
  m->threads = 1;
  m->cuts = library == NULL; /* linked in: libtvmnode's crt, hook set */
  atomic_init(&m->busy, 0);
  bool ok = true;
  for (int32_t k = 0; k < model->num_workspace_pools; k++) {
    const TnCrtPoolInfo *p = &model->workspace_pools[k];
    ok = ok && (m->ws[k] = m->own_ws[k] =
                    aligned_alloc_zeroed(p->size, p->alignment)) != NULL;
  }
  for (int32_t k = 0; k < model->num_constant_pools; k++) {
    const TnCrtPoolInfo *p = &model->constant_pools[k];
    ok = ok && (m->consts[k] = aligned_alloc_zeroed(p->size, p->alignment));
  }
  for (int32_t i = 0; i < model->num_outputs; i++)
    if (model->outputs[i].pool < 0)
      ok = ok && (m->out_buf[i] = aligned_alloc_zeroed(
                      model->outputs[i].nbytes, BUF_ALIGN));
  const TnCrtStatefulModel *sm = tn_crt_model_state(model);
  if (sm)
    ok = ok && (m->state = aligned_alloc_zeroed(sm->state_pool_size,
                                                sm->state_pool_alignment));
  int32_t st;
  if (!ok) {
    tn_error_raise_in(TN_ERR_MEMORY, who,
                      "model '%s': out of memory for its pools", model->name);
  } else if (bind_all(m, who) == 0) {
    if (!sm || (st = tn_crt_reset(&m->inst)) == TN_CRT_OK) return &m->header;
    crt_error(m, st, who, "giving the states their initial values");
  }
  tn_object_release(&m->header);
  return NULL;
}

static Module *as_module(const TnObject *obj, const char *who) {
  if (obj == NULL || obj->type_index != TN_TYPE_MODULE)
    return tn_error_raise_in(TN_ERR_TYPE, who, "expected a tn.Module, got %s",
                             tn_object_type_key(obj)), NULL;
  return (Module *)obj;
}

/* The busy flag: one call at a time on a Module. */
static int enter(Module *m, const char *who) {
  int idle = 0;
  if (atomic_compare_exchange_strong(&m->busy, &idle, 1)) return 0;
  return tn_error_raise_in(TN_ERR_RUNTIME, who, "model '%s': the Module is in "
                           "use by another thread (a Module serves one thread "
                           "at a time; make one Module per thread)",
                           name_of(m));
}

static void leave(Module *m) { atomic_store(&m->busy, 0); }

/* ---- finding models ---------------------------------------------------------- */

static int hook_in(int (*set_parallel)(TnCrtParallelFn, void *));

static TnCrtModelEntry *g_system; /* zero-initialised: no constructor needed */
static pthread_mutex_t g_system_lock = PTHREAD_MUTEX_INITIALIZER;

TN_API void tn_module_register_system(TnCrtModelEntry *entry) {
  if (entry == NULL || entry->model == NULL) return;
  /* A shared object that registers a node must stay mapped while the list
   * can reach the node: take a reference that is never given back. */
  Dl_info info;
  if (dladdr(entry, &info) && info.dli_fname && info.dli_fname[0])
    (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  pthread_mutex_lock(&g_system_lock);
  TnCrtModelEntry **at = &g_system;
  while (*at && *at != entry) at = &(*at)->next;
  if (*at == NULL) {
    entry->next = NULL;
    *at = entry;
  }
  pthread_mutex_unlock(&g_system_lock);
}

TN_API TnObject *tn_module_system(const char *name) {
  const char *who = "tn_module_system";
  if (name == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "name is NULL"), NULL;
  const TnCrtModel *found = NULL;
  char names[512] = "";
  size_t len = 0;
  pthread_mutex_lock(&g_system_lock);
  for (TnCrtModelEntry *e = g_system; e && !found; e = e->next) {
    const char *n = e->model->name ? e->model->name : "?";
    if (strcmp(n, name) == 0) found = e->model;
    else add_name(names, sizeof names, &len, n);
  }
  pthread_mutex_unlock(&g_system_lock);
  if (found) return module_new(found, NULL, who, "the system library");
  if (len == 0)
    return tn_error_raise_in(TN_ERR_KEY, who, "no model '%s': the system "
                             "library is empty (link in archives compiled with "
                             "-DTVMGEN_SYSTEM_LIB)", name), NULL;
  return tn_error_raise_in(TN_ERR_KEY, who,
                           "no model '%s' in the system library (it holds %s)",
                           name, names), NULL;
}

TN_API TnObject *tn_module_load(const char *path, const char *name) {
  const char *who = "tn_module_load";
  if (path == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "path is NULL"), NULL;
  /* dlopen searches the system's library path for a name without a
   * slash, and would run the constructors of whatever library it finds
   * there ("libz.so.1") before this could say it holds no model: such a
   * name is a file in the current folder */
  char *local = NULL;
  if (strchr(path, '/') == NULL) {
    size_t len = strlen(path);
    if ((local = malloc(len + 3)) == NULL)
      return tn_error_raise_in(TN_ERR_MEMORY, who, "out of memory"), NULL;
    memcpy(local, "./", 2);
    memcpy(local + 2, path, len + 1);
  }
  void *lib = dlopen(local ? local : path, RTLD_NOW | RTLD_LOCAL);
  free(local);
  if (lib == NULL) {
    const char *why = dlerror();
    return tn_error_raise("OSError", "%s: cannot load '%s': %s", who, path,
                          why ? why : "unknown error"), NULL;
  }
  const TnCrtModel *const *list = dlsym(lib, "tvmnode_module_models");
  if (list == NULL) {
    dlclose(lib);
    return tn_error_raise("OSError", "%s: '%s' holds no model (it exports no "
                          "tvmnode_module_models; build it with `tvmnode "
                          "build` or tvmnode.codegen.build_library)", who,
                          path), NULL;
  }
  int32_t n = 0, pick = -1;
  char names[512] = "";
  size_t len = 0;
  for (; list[n] && n < 4096; n++) {
    if (check_model(list[n], who, path)) {
      dlclose(lib);
      return NULL;
    }
    if (name && strcmp(list[n]->name, name) == 0 && pick < 0) pick = n;
    add_name(names, sizeof names, &len, list[n]->name);
  }
  if (n == 0 || (name == NULL && n > 1) || (name && pick < 0)) {
    if (n == 0)
      tn_error_raise("OSError", "%s: '%s' holds no model (its "
                     "tvmnode_module_models is empty)", who, path);
    else if (name == NULL)
      tn_error_raise_in(TN_ERR_KEY, who, "'%s' holds %d models (%s): name one",
                        path, n, names);
    else
      tn_error_raise_in(TN_ERR_KEY, who, "no model '%s' in '%s' (it holds %s)",
                        name, path, names);
    dlclose(lib);
    return NULL;
  }
  TnObject *mod = module_new(list[pick < 0 ? 0 : pick], lib, who, path);
  /* a library built before the ISA levels exports no
   * tvmnode_module_isa_limit, and one built before threads no
   * tvmnode_module_set_parallel */
  if (mod) {
    Module *m = (Module *)mod;
    *(void **)&m->isa_limit = dlsym(lib, "tvmnode_module_isa_limit");
    *(void **)&m->set_parallel = dlsym(lib, "tvmnode_module_set_parallel");
    m->cuts = hook_in(m->set_parallel);
  }
  return mod;
}

TN_API TnObject *tn_module_from_model(const TnCrtModel *model) {
  return module_new(model, NULL, "tn_module_from_model", "the model");
}

/* ---- describing ------------------------------------------------------------- */

TN_API const TnCrtModel *tn_module_model(const TnObject *mod) {
  const Module *m = as_module(mod, "tn_module_model");
  return m ? m->model : NULL;
}

TN_API int32_t tn_module_num_inputs(const TnObject *mod) {
  const Module *m = as_module(mod, "tn_module_num_inputs");
  return m ? m->model->num_inputs : -1;
}

TN_API int32_t tn_module_num_outputs(const TnObject *mod) {
  const Module *m = as_module(mod, "tn_module_num_outputs");
  return m ? m->model->num_outputs : -1;
}

/* Input or output `i`, or NULL with an IndexError. */
static const TnCrtTensorInfo *info_at(const Module *m, bool output, int32_t i,
                                      const char *who) {
  int32_t n = output ? m->model->num_outputs : m->model->num_inputs;
  if (i < 0 || i >= n)
    return tn_error_raise_in(TN_ERR_INDEX, who,
                             "model '%s' has %d %s, no %s %d", name_of(m), n,
                             output ? "outputs" : "inputs",
                             output ? "output" : "input", i), NULL;
  return output ? &m->model->outputs[i] : &m->model->inputs[i];
}

TN_API const TnCrtTensorInfo *tn_module_input_info(const TnObject *mod,
                                                   int32_t i) {
  const Module *m = as_module(mod, "tn_module_input_info");
  return m ? info_at(m, false, i, "tn_module_input_info") : NULL;
}

TN_API const TnCrtTensorInfo *tn_module_output_info(const TnObject *mod,
                                                    int32_t i) {
  const Module *m = as_module(mod, "tn_module_output_info");
  return m ? info_at(m, true, i, "tn_module_output_info") : NULL;
}

TN_API int32_t tn_module_input_index(const TnObject *mod, const char *name) {
  const char *who = "tn_module_input_index";
  const Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  int32_t i = name ? tn_crt_input_index(m->model, name) : -1;
  if (i >= 0) return i;
  char names[512] = "none";
  size_t len = 0;
  for (int32_t k = 0; k < m->model->num_inputs; k++)
    add_name(names, sizeof names, &len, m->model->inputs[k].name);
  return tn_error_raise_in(TN_ERR_KEY, who,
                           "model '%s' has no input '%s' (its inputs: %s)",
                           name_of(m), name ? name : "(NULL)", names);
}

/* {name, shape, dtype, scale, zero_point} of one tensor. */
static TnObject *describe_tensor(const TnCrtTensorInfo *t) {
  int64_t dims[MAX_NDIM];
  for (int32_t d = 0; d < t->ndim; d++) dims[d] = t->shape[d];
  DLDataType dt;
  char dts[32];
  tn_module_dtype(t->dtype, &dt);
  tn_dtype_print(dt, dts, sizeof dts);
  TnObject *shape = tn_shape_new(dims, t->ndim);
  if (shape == NULL) return NULL;
  TnAny keys[5] = {tn_any_cstr("name"), tn_any_cstr("shape"),
                   tn_any_cstr("dtype"), tn_any_cstr("scale"),
                   tn_any_cstr("zero_point")};
  TnAny vals[5] = {tn_any_cstr(t->name), tn_any_obj(shape), tn_any_cstr(dts),
                   tn_any_float(t->scale), tn_any_int(t->zero_point)};
  TnObject *map = tn_map_new(keys, vals, 5);
  tn_object_release(shape);
  return map;
}

/* An array of the descriptions of `n` (at most TN_CRT_MAX_IO) tensors. */
static TnObject *describe_list(const TnCrtTensorInfo *t, int32_t n) {
  TnAny items[TN_CRT_MAX_IO] = {{0, 0, {0}}}; /* (n may be 0) */
  int32_t k = 0;
  for (TnObject *o; k < n && (o = describe_tensor(&t[k])) != NULL; k++)
    items[k] = tn_any_obj(o);
  TnObject *arr = k == n ? tn_array_new(items, n) : NULL;
  for (int32_t i = 0; i < k; i++) tn_any_clear(&items[i]);
  return arr;
}

/* [{"name", "size", "alignment"}] of the workspace pools. */
static TnObject *describe_pools(const TnCrtModel *d) {
  TnAny items[TN_CRT_MAX_POOLS] = {{0, 0, {0}}}; /* (may be none) */
  int32_t n = 0;
  for (; n < d->num_workspace_pools; n++) {
    const TnCrtPoolInfo *p = &d->workspace_pools[n];
    TnAny keys[3] = {tn_any_cstr("name"), tn_any_cstr("size"),
                     tn_any_cstr("alignment")};
    TnAny vals[3] = {tn_any_cstr(p->name ? p->name : ""),
                     tn_any_int(p->size), tn_any_int(p->alignment)};
    TnObject *one = tn_map_new(keys, vals, 3);
    if (one == NULL) break;
    items[n] = tn_any_obj(one);
  }
  TnObject *list = n == d->num_workspace_pools ? tn_array_new(items, n) : NULL;
  for (int32_t k = 0; k < n; k++) tn_any_clear(&items[k]);
  return list;
}

TN_API TnObject *tn_module_describe(const TnObject *mod) {
  const Module *m = as_module(mod, "tn_module_describe");
  if (m == NULL) return NULL;
  const TnCrtModel *d = m->model;
  TnAny devs[TN_CRT_MAX_POOLS];
  int64_t ws = 0;
  for (int32_t i = 0; i < d->num_devices; i++)
    devs[i] = tn_any_cstr(d->devices[i] ? d->devices[i] : "?");
  for (int32_t k = 0; k < d->num_workspace_pools; k++)
    ws += d->workspace_pools[k].size;
  TnObject *ins = describe_list(d->inputs, d->num_inputs);
  TnObject *outs = ins ? describe_list(d->outputs, d->num_outputs) : NULL;
  TnObject *dev = outs ? tn_array_new(devs, d->num_devices) : NULL;
  TnObject *pools = dev ? describe_pools(d) : NULL;
  TnObject *map = NULL;
  if (pools) {
    const TnCrtStatefulModel *sm = tn_crt_model_state(d);
    TnAny keys[10] = {tn_any_cstr("name"), tn_any_cstr("version"),
                      tn_any_cstr("inputs"), tn_any_cstr("outputs"),
                      tn_any_cstr("devices"), tn_any_cstr("macs"),
                      tn_any_cstr("workspace_bytes"),
                      tn_any_cstr("constant_bytes"),
                      tn_any_cstr("workspace_pools"),
                      tn_any_cstr("state_bytes")};
    TnAny vals[10] = {tn_any_cstr(d->name),
                      tn_any_cstr(d->version ? d->version : ""),
                      tn_any_obj(ins), tn_any_obj(outs), tn_any_obj(dev),
                      tn_any_int(d->macs), tn_any_int(ws),
                      tn_any_int(d->constant_bytes), tn_any_obj(pools),
                      tn_any_int(sm ? sm->state_pool_size : 0)};
    map = tn_map_new(keys, vals, 10);
  }
  tn_object_release(ins);
  tn_object_release(outs);
  tn_object_release(dev);
  tn_object_release(pools);
  return map;
}

/* ---- inputs -------------------------------------------------------------- */

/* Whether [p, p + n) overlaps memory the Module writes during a run (its
 * output buffers and workspace pools): such an input must be copied. */
static bool overlap(const void *a, size_t na, const void *b, size_t nb) {
  const uint8_t *x = a, *y = b;
  return x < y + nb && y < x + na;
}

static bool overlaps_module(const Module *m, const uint8_t *p, size_t n) {
  const TnCrtModel *d = m->model;
  for (int32_t k = 0; k < d->num_workspace_pools; k++)
    if (overlap(p, n, m->ws[k], d->workspace_pools[k].size)) return true;
  for (int32_t i = 0; i < d->num_outputs; i++)
    if (m->inst.outputs[i] &&
        overlap(p, n, m->inst.outputs[i], d->outputs[i].nbytes))
      return true;
  const TnCrtStatefulModel *sm = tn_crt_model_state(d);
  return sm && overlap(p, n, m->state, sm->state_pool_size);
}

static void format_shape(const int64_t *s64, const int32_t *s32, int32_t n,
                         char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "[");
  for (int32_t d = 0; d < n && len < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? ", " : "",
                            (long long)(s64 ? s64[d] : s32[d]));
  if (len < size) snprintf(buf + len, size - len, "]");
}

/* A tensor fit for input `t`: CPU, compact, its dtype and shape. */
static int check_input(const Module *m, int32_t i, const TnCrtTensorInfo *t,
                       TnObject *tensor, const char *who) {
  if (tensor == NULL || tensor->type_index != TN_TYPE_TENSOR)
    return tn_error_raise_in(TN_ERR_TYPE, who, "model '%s', input '%s' (%d): "
                             "expected a tn.Tensor, got %s", name_of(m),
                             t->name, i, tn_object_type_key(tensor));
  const DLTensor *dl = tn_tensor_dltensor(tensor);
  DLDataType want;
  char a[32], b[32];
  tn_module_dtype(t->dtype, &want);
  if (dl->dtype.code != want.code || dl->dtype.bits != want.bits ||
      dl->dtype.lanes != want.lanes) {
    tn_dtype_print(want, a, sizeof a);
    tn_dtype_print(dl->dtype, b, sizeof b);
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "model '%s', input '%s' is %s, got %s", name_of(m),
                             t->name, a, b);
  }
  bool same = dl->ndim == t->ndim;
  for (int32_t d = 0; same && d < t->ndim; d++)
    same = dl->shape[d] == t->shape[d];
  if (!same) {
    char sa[256], sb[256];
    format_shape(NULL, t->shape, t->ndim, sa, sizeof sa);
    format_shape(dl->shape, NULL, dl->ndim, sb, sizeof sb);
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "model '%s', input '%s' has shape %s, got %s",
                             name_of(m), t->name, sa, sb);
  }
  if (dl->device.device_type != kDLCPU &&
      dl->device.device_type != kDLCUDAHost)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s', input '%s': the "
                             "tensor is not in CPU memory", name_of(m),
                             t->name);
  int compact = 0;
  tn_tensor_is_contiguous(tensor, &compact);
  if (!compact)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s', input '%s': the "
                             "tensor is not compact (make a compact copy "
                             "first)", name_of(m), t->name);
  return 0;
}

/* With the flag held: input `i` reads `data` in place at run(), keeping
 * `keep` alive, or (`keep` NULL) a copy of it made now in the input's home
 * (its place in a pool, or the Module's buffer for it). The tensor the
 * input kept before goes to `*old`, for the caller to release once the
 * flag is down (its deleter may be foreign code). */
static int put_input(Module *m, int32_t i, const void *data, TnObject *keep,
                     TnObject **old, const char *who) {
  const TnCrtTensorInfo *t = &m->model->inputs[i];
  void *dst = keep ? (void *)data : m->inst.inputs[i];
  if (t->pool < 0 && !keep && m->in_copy[i] == NULL &&
      (m->in_copy[i] = aligned_alloc_zeroed(t->nbytes, BUF_ALIGN)) == NULL)
    return tn_error_raise_in(TN_ERR_MEMORY, who, "model '%s': out of memory",
                             name_of(m));
  if (t->pool < 0 && !keep) dst = m->in_copy[i];
  int32_t st = t->pool < 0 ? tn_crt_bind_input(&m->inst, i, dst, t->nbytes)
                           : TN_CRT_OK;
  if (st) return crt_error(m, st, who, "binding an input");
  if (!keep) memmove(dst, data, t->nbytes);
  tn_object_retain(keep);
  *old = m->in_tensor[i];
  m->in_tensor[i] = keep;
  m->inputs_set |= 1u << i;
  return 0;
}

TN_API int tn_module_set_input(TnObject *mod, int32_t i, TnObject *tensor) {
  const char *who = "tn_module_set_input";
  Module *m = as_module(mod, who);
  const TnCrtTensorInfo *t = m ? info_at(m, false, i, who) : NULL;
  if (t == NULL || check_input(m, i, t, tensor, who) || enter(m, who))
    return -1;
  const DLTensor *dl = tn_tensor_dltensor(tensor);
  const uint8_t *data = (const uint8_t *)dl->data + dl->byte_offset;
  bool in_place = t->pool < 0 &&
                  (uintptr_t)data % element_alignment(t->dtype) == 0 &&
                  !overlaps_module(m, data, t->nbytes);
  TnObject *old = NULL;
  int rc = put_input(m, i, data, in_place ? tensor : NULL, &old, who);
  leave(m);
  tn_object_release(old);
  return rc;
}

TN_API int tn_module_set_input_bytes(TnObject *mod, int32_t i,
                                     const void *data, size_t nbytes) {
  const char *who = "tn_module_set_input_bytes";
  Module *m = as_module(mod, who);
  const TnCrtTensorInfo *t = m ? info_at(m, false, i, who) : NULL;
  if (t == NULL) return -1;
  if (data == NULL || nbytes != t->nbytes)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "model '%s', input '%s' takes %u bytes, got %zu%s",
                             name_of(m), t->name, t->nbytes, nbytes,
                             data ? "" : " (NULL)");
  if (enter(m, who)) return -1;
  TnObject *old = NULL;
  int rc = put_input(m, i, data, NULL, &old, who);
  leave(m);
  tn_object_release(old);
  return rc;
}

/* ---- running ----------------------------------------------------------------- */

/* ---- threads ------------------------------------------------------------------ *
 *
 * Generated code for a host calls its large convolutions and dense layers
 * through its crt's tn_crt_call_split, which runs each whole unless a
 * parallel hook takes it. A library whose code has such calls exports
 * tvmnode_module_set_parallel (codegen.module_list_source), through which
 * tn_module_load sets the hook below, once, before any Module of it runs
 * (libtvmnode's own crt, which a model linked into the program calls, gets
 * it at start-up); the hook is
 * the same for every Module of every library, and finds the Module that
 * runs on this thread in a thread-local: a Module without threads (or a
 * library's other Modules, on other threads) declines, and the call runs
 * whole. The pool's workers cut the call with the library's own crt
 * (TnCrtSplit's count and run) and take the parts the caller has not;
 * each worker's scratch is the largest workspace pool's size, as no
 * kernel's scratch lies outside a pool, so a run allocates nothing. */

static _Thread_local Module *g_running;
static pthread_mutex_t g_parallel_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
  const TnCrtSplit *c;
  int32_t n;
} SplitJob;

static int32_t split_part(void *ctx, int32_t i, void *scratch, size_t size) {
  const SplitJob *j = ctx;
  return j->c->run(j->c, i, j->n, scratch, size);
}

static int32_t parallel_hook(void *ctx, const TnCrtSplit *c, void *scratch,
                             int32_t *status) {
  (void)ctx;
  Module *m = g_running;
  if (m == NULL || m->pool == NULL || c->count == NULL || c->run == NULL ||
      c->scratch_size > tn_thread_pool_scratch_size(m->pool))
    return 0;
  SplitJob j = {c, c->count(c->kind, c->params,
                            tn_thread_pool_size(m->pool))};
  if (j.n < 2) return 0;
  *status = tn_thread_pool_run(m->pool, split_part, &j, j.n, scratch,
                               c->scratch_size);
  m->split_calls++;
  return 1;
}

/* Set the hook in a loaded library's crt (when it is not set already),
 * before any Module of it exists to run: the one write of the crt's hook
 * never meets a run that reads it. 1 when the library's code has calls
 * to cut, 0 when none (or built before threads). */
static int hook_in(int (*set_parallel)(TnCrtParallelFn, void *)) {
  if (set_parallel == NULL) return 0;
  pthread_mutex_lock(&g_parallel_lock);
  int cuts = set_parallel(parallel_hook, NULL);
  pthread_mutex_unlock(&g_parallel_lock);
  return cuts;
}

TN_API int tn_module_set_threads(TnObject *mod, int64_t n) {
  const char *who = "tn_module_set_threads";
  Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  if (n < 1 || n > TN_PROGRAM_MAX_THREADS)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s': argument n "
                             "(threads): expected 1 to %d, got %lld",
                             name_of(m), TN_PROGRAM_MAX_THREADS,
                             (long long)n);
  if (enter(m, who)) return -1;
  tn_thread_pool_free(m->pool);
  m->pool = NULL;
  m->threads = 1;
  int rc = 0;
  if (n > 1 && m->cuts) {
    size_t scratch = 0;
    for (int32_t k = 0; k < m->model->num_workspace_pools; k++)
      if (m->model->workspace_pools[k].size > scratch)
        scratch = m->model->workspace_pools[k].size;
    m->pool = tn_thread_pool_new(n, scratch);
    rc = m->pool ? 0 : -1;
  }
  if (rc == 0) m->threads = (int32_t)n;
  leave(m);
  return rc;
}

TN_API int32_t tn_module_threads(const TnObject *mod) {
  const Module *m = as_module(mod, "tn_module_threads");
  return m ? m->threads : -1;
}

TN_API int64_t tn_module_split_calls(const TnObject *mod) {
  const Module *m = as_module(mod, "tn_module_split_calls");
  return m ? m->split_calls : -1;
}

/* One run with the flag held. */
static int run_locked(Module *m, const char *who) {
  const TnCrtModel *d = m->model;
  for (int32_t i = 0; i < d->num_inputs; i++)
    if (!(m->inputs_set & (1u << i)))
      return tn_error_raise_in(TN_ERR_RUNTIME, who,
                               "model '%s': input '%s' (%d) is not set",
                               name_of(m), d->inputs[i].name, i);
  for (int32_t k = 0; k < d->num_devices; k++)
    if (m->inst.devices[k] == NULL)
      return tn_error_raise_in(TN_ERR_RUNTIME, who, "model '%s': device '%s' "
                               "(%d) is not set (tn_module_set_device)",
                               name_of(m), d->devices[k], k);
  /* the library's crt runs the ISA forms this process's crt would (the
   * level tn_crt_isa_limit or TVMNODE_ISA set, see init.c), with the
   * AVX-VNNI flag, which a cap of AVX2 alone would drop */
  if (m->isa_limit)
    m->isa_limit(tn_crt_isa() &
                 (TN_CRT_ISA_LEVEL_MASK | TN_CRT_ISA_AVXVNNI));
  m->split_calls = 0;
  g_running = m->pool ? m : NULL;
  int32_t st = tn_crt_run(&m->inst);
  g_running = NULL;
  m->stale = st ? "the last run failed" : NULL;
  return st ? crt_error(m, st, who, "run failed") : 0;
}

TN_API int tn_module_reset(TnObject *mod) {
  const char *who = "tn_module_reset";
  Module *m = as_module(mod, who);
  if (m == NULL || enter(m, who)) return -1;
  int32_t st = tn_crt_reset(&m->inst);
  leave(m);
  return st ? crt_error(m, st, who, "reset failed") : 0;
}

TN_API int tn_module_run(TnObject *mod) {
  const char *who = "tn_module_run";
  Module *m = as_module(mod, who);
  if (m == NULL || enter(m, who)) return -1;
  int rc = run_locked(m, who);
  leave(m);
  return rc;
}

/* Run once on the first `n` inputs given as caller memory: set and run
 * under one claim. An input is read in place when it may be (aligned for
 * its dtype, outside the pools, not overlapping what the run writes) and
 * copied into its home otherwise; an input read in place is unset again
 * before returning, so the Module never keeps a pointer into memory it
 * does not own. */
TN_API int tn_module_run_with(TnObject *mod, int32_t n,
                              const void *const *data, const size_t *nbytes,
                              uint32_t *lent_out) {
  const char *who = "tn_module_run_with";
  if (lent_out) *lent_out = 0;
  Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  const TnCrtModel *d = m->model;
  if (n < 0 || n > d->num_inputs)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "model '%s' has %d inputs, got %d", name_of(m),
                             d->num_inputs, n);
  if (n > 0 && (data == NULL || nbytes == NULL))
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "model '%s': %d inputs given with NULL %s",
                             name_of(m), n, data == NULL ? "data" : "nbytes");
  for (int32_t i = 0; i < n; i++)
    if (data[i] == NULL || nbytes[i] != d->inputs[i].nbytes)
      return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s', input '%s' "
                               "takes %u bytes, got %zu%s", name_of(m),
                               d->inputs[i].name, d->inputs[i].nbytes,
                               nbytes[i], data[i] ? "" : " (NULL)");
  if (enter(m, who)) return -1;
  TnObject *old[TN_CRT_MAX_IO] = {0};
  uint32_t lent = 0; /* inputs read in place */
  int rc = 0;
  for (int32_t i = 0; i < n && rc == 0; i++) {
    const TnCrtTensorInfo *t = &d->inputs[i];
    const uint8_t *p = data[i];
    if (t->pool >= 0 || (uintptr_t)p % element_alignment(t->dtype) != 0 ||
        overlaps_module(m, p, t->nbytes)) {
      rc = put_input(m, i, p, NULL, &old[i], who);
      continue;
    }
    int32_t st = tn_crt_bind_input(&m->inst, i, (void *)p, t->nbytes);
    if (st) {
      rc = crt_error(m, st, who, "binding an input");
      continue;
    }
    old[i] = m->in_tensor[i];
    m->in_tensor[i] = NULL;
    m->inputs_set |= 1u << i;
    lent |= 1u << i;
  }
  if (rc == 0) rc = run_locked(m, who);
  for (int32_t i = 0; i < n; i++)
    if (lent & (1u << i)) { /* forget the caller's memory */
      m->inputs_set &= ~(1u << i);
      if (m->in_copy[i]) /* the module's own copy, else nothing */
        tn_crt_bind_input(&m->inst, i, m->in_copy[i],
                          m->model->inputs[i].nbytes);
      else
        tn_crt_unbind_input(&m->inst, i);
    }
  leave(m);
  if (lent_out) *lent_out = lent;
  for (int32_t i = 0; i < n; i++) tn_object_release(old[i]);
  return rc;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

TN_API int tn_module_time(TnObject *mod, int32_t number, int32_t repeat,
                          double *ms_per_run) {
  const char *who = "tn_module_time";
  Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  if (number < 1 || repeat < 1 || ms_per_run == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "number and repeat must be at "
                             "least 1 and ms_per_run not NULL (got %d, %d)",
                             number, repeat);
  if (enter(m, who)) return -1;
  int rc = 0;
  for (int32_t r = 0; r < repeat && rc == 0; r++) {
    int64_t t0 = now_ns();
    for (int32_t k = 0; k < number && rc == 0; k++) rc = run_locked(m, who);
    ms_per_run[r] = (double)(now_ns() - t0) / 1e6 / number;
  }
  leave(m);
  return rc;
}

/* ---- outputs ------------------------------------------------------------------ */

typedef struct {
  DLManagedTensorVersioned managed;
  TnObject *pool; /* the caller's pool tensor the output lives in, or NULL */
  int64_t shape[MAX_NDIM];
} OutputView;

static void output_view_delete(DLManagedTensorVersioned *self) {
  tn_object_release(self->manager_ctx);
  tn_object_release(((OutputView *)self)->pool);
  free(self);
}

static int no_outputs(const Module *m, const char *who) {
  return tn_error_raise_in(TN_ERR_RUNTIME, who,
                           "model '%s' has no outputs to give: %s", name_of(m),
                           m->stale);
}

/* Output `i` (checked) with the flag held: a tensor over its buffer that
 * holds a reference to the Module. */
static TnObject *output_locked(Module *m, int32_t i, const char *who) {
  const TnCrtTensorInfo *t = &m->model->outputs[i];
  if (m->stale) return no_outputs(m, who), NULL;
  OutputView *v = calloc(1, sizeof *v);
  if (v == NULL)
    return tn_error_raise_in(TN_ERR_MEMORY, who, "out of memory"), NULL;
  for (int32_t d = 0; d < t->ndim; d++) v->shape[d] = t->shape[d];
  v->managed.version.major = DLPACK_MAJOR_VERSION;
  v->managed.version.minor = DLPACK_MINOR_VERSION;
  v->managed.manager_ctx = &m->header;
  v->managed.deleter = output_view_delete;
  v->managed.dl_tensor.data = m->inst.outputs[i];
  v->managed.dl_tensor.device = (DLDevice){kDLCPU, 0};
  v->managed.dl_tensor.ndim = t->ndim;
  tn_module_dtype(t->dtype, &v->managed.dl_tensor.dtype);
  v->managed.dl_tensor.shape = v->shape;
  /* an output in a pool the caller gave as a tensor keeps that tensor, so
   * the view stays readable after the pool is replaced */
  v->pool = t->pool >= 0 ? m->ws_tensor[t->pool] : NULL;
  tn_object_retain(v->pool);
  tn_object_retain(&m->header);
  return tn_tensor_from_dlpack(&v->managed); /* deletes `v` on failure */
}

TN_API TnObject *tn_module_get_output(TnObject *mod, int32_t i) {
  const char *who = "tn_module_get_output";
  Module *m = as_module(mod, who);
  if (m == NULL || info_at(m, true, i, who) == NULL || enter(m, who))
    return NULL;
  TnObject *out = output_locked(m, i, who);
  leave(m);
  return out;
}

TN_API const void *tn_module_output_data(TnObject *mod, int32_t i,
                                         size_t *nbytes) {
  const char *who = "tn_module_output_data";
  Module *m = as_module(mod, who);
  const TnCrtTensorInfo *t = m ? info_at(m, true, i, who) : NULL;
  if (t == NULL || enter(m, who)) return NULL;
  const void *p = m->stale ? (no_outputs(m, who), NULL) : m->inst.outputs[i];
  leave(m);
  if (p && nbytes) *nbytes = t->nbytes;
  return p;
}

TN_API int tn_module_copy_output(TnObject *mod, int32_t i, void *out,
                                 size_t nbytes) {
  const char *who = "tn_module_copy_output";
  Module *m = as_module(mod, who);
  const TnCrtTensorInfo *t = m ? info_at(m, true, i, who) : NULL;
  if (t == NULL) return -1;
  if (out == NULL || nbytes != t->nbytes)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s', output '%s' has "
                             "%u bytes, got a buffer of %zu%s", name_of(m),
                             t->name, t->nbytes, nbytes, out ? "" : " (NULL)");
  if (enter(m, who)) return -1;
  int rc = m->stale ? no_outputs(m, who) : 0;
  if (rc == 0) memcpy(out, m->inst.outputs[i], nbytes);
  leave(m);
  return rc;
}

/* ---- memory and devices -------------------------------------------------------- */

/* What memory `base` would overlap as pool `i` (with the flag held): the
 * other pools, the output buffers outside the pools, the inputs read in
 * place; NULL when nothing. A run writes its pools, so none of these may
 * share memory with one. */
static const char *pool_clash(const Module *m, int32_t i, const void *base) {
  const TnCrtModel *d = m->model;
  const size_t size = d->workspace_pools[i].size;
  for (int32_t k = 0; k < d->num_workspace_pools; k++)
    if (k != i && overlap(base, size, m->ws[k], d->workspace_pools[k].size))
      return "another workspace pool";
  for (int32_t k = 0; k < d->num_outputs; k++)
    if (d->outputs[k].pool < 0 &&
        overlap(base, size, m->inst.outputs[k], d->outputs[k].nbytes))
      return "an output buffer of the Module";
  for (int32_t k = 0; k < d->num_inputs; k++)
    if (m->in_tensor[k] &&
        overlap(base, size, m->inst.inputs[k], d->inputs[k].nbytes))
      return "an input the Module reads in place (set the input again "
             "first)";
  return NULL;
}

/* Pool `i` (checked) becomes `base` (NULL: the Module's own), kept alive
 * through `owner` when not NULL. */
static int set_workspace(TnObject *mod, int32_t i, void *base, size_t nbytes,
                         TnObject *owner, const char *who) {
  Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  const TnCrtModel *d = m->model;
  if (i < 0 || i >= d->num_workspace_pools)
    return tn_error_raise_in(TN_ERR_INDEX, who,
                             "model '%s' has %d workspace pools, no pool %d",
                             name_of(m), d->num_workspace_pools, i);
  const TnCrtPoolInfo *p = &d->workspace_pools[i];
  if (base && nbytes < p->size)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "model '%s': pool '%s' needs %u bytes, got %zu",
                             name_of(m), p->name ? p->name : "?", p->size,
                             nbytes);
  if (base && p->alignment > 1 && (uintptr_t)base % p->alignment)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s': pool '%s' must be "
                             "aligned to %u bytes", name_of(m),
                             p->name ? p->name : "?", p->alignment);
  if (enter(m, who)) return -1;
  const char *clash = base ? pool_clash(m, i, base) : NULL;
  if (clash) {
    leave(m);
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "model '%s': pool '%s' overlaps %s", name_of(m),
                             p->name ? p->name : "?", clash);
  }
  m->ws[i] = base ? base : m->own_ws[i];
  TnObject *old = m->ws_tensor[i];
  tn_object_retain(owner);
  m->ws_tensor[i] = owner;
  m->stale = "its workspace changed since the last run";
  for (int32_t k = 0; k < d->num_inputs; k++) /* their data was in the pool */
    if (d->inputs[k].pool == i) m->inputs_set &= ~(1u << k);
  int rc = bind_all(m, who);
  leave(m);
  tn_object_release(old);
  return rc;
}

TN_API int tn_module_set_workspace(TnObject *mod, int32_t i, void *base,
                                   size_t nbytes) {
  return set_workspace(mod, i, base, nbytes, NULL, "tn_module_set_workspace");
}

TN_API int tn_module_set_workspace_tensor(TnObject *mod, int32_t i,
                                          TnObject *tensor) {
  const char *who = "tn_module_set_workspace_tensor";
  Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  if (tensor == NULL) return set_workspace(mod, i, NULL, 0, NULL, who);
  if (tensor->type_index != TN_TYPE_TENSOR)
    return tn_error_raise_in(TN_ERR_TYPE, who, "model '%s', pool %d: expected "
                             "a tn.Tensor, got %s", name_of(m), i,
                             tn_object_type_key(tensor));
  const DLTensor *dl = tn_tensor_dltensor(tensor);
  int compact = 0, readonly = 0;
  tn_tensor_is_contiguous(tensor, &compact);
  tn_tensor_is_readonly(tensor, &readonly);
  if ((dl->device.device_type != kDLCPU &&
       dl->device.device_type != kDLCUDAHost) || !compact)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s', pool %d: the "
                             "tensor must be compact and in CPU memory",
                             name_of(m), i);
  if (readonly)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s', pool %d: the "
                             "tensor is read-only (a run writes its pools)",
                             name_of(m), i);
  return set_workspace(mod, i, (uint8_t *)dl->data + dl->byte_offset,
                       (size_t)tn_tensor_nbytes(tensor), tensor, who);
}

TN_API int tn_module_set_device(TnObject *mod, int32_t i, void *device) {
  const char *who = "tn_module_set_device";
  Module *m = as_module(mod, who);
  if (m == NULL) return -1;
  if (i < 0 || i >= m->model->num_devices)
    return tn_error_raise_in(TN_ERR_INDEX, who,
                             "model '%s' has %d devices, no device %d",
                             name_of(m), m->model->num_devices, i);
  if (device == NULL)
    return tn_error_raise_in(TN_ERR_VALUE, who, "model '%s': device %d is NULL",
                             name_of(m), i);
  if (enter(m, who)) return -1;
  int32_t st = tn_crt_set_device(&m->inst, i, device);
  leave(m);
  return st ? crt_error(m, st, who, "setting a device") : 0;
}

/* ---- the registry's view -------------------------------------------------------- */

/* The Module of args[0], `n` being the count that `usage` describes. */
static Module *module_arg(const TnAny *args, int32_t n, int32_t want,
                          const char *who, const char *usage) {
  if (n < 1 || args[0].type_index != TN_TYPE_MODULE)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "the first argument must be a tn.Module, got %s",
                             n < 1 ? "nothing" : tn_any_type_key(&args[0])),
           NULL;
  if (want >= 0 && n != want)
    return tn_error_raise_in(TN_ERR_TYPE, who, "takes %s, got %d arguments",
                             usage, n), NULL;
  return (Module *)args[0].v_obj;
}

static int ret_obj(TnObject *obj, TnAny *ret) {
  if (obj == NULL) return -1;
  *ret = tn_any_obj(obj);
  return 0;
}

/* A string argument that C takes as a NUL-terminated string: one with a
 * NUL inside is refused (the C string would be cut short there and name
 * another file or model). */
static int c_string_arg(const TnAny *a, const char *who, const char *what,
                        const char **out) {
  size_t len;
  if (tn_any_as_str(a, out, &len)) return -1;
  if (strlen(*out) != len)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%s holds a NUL byte at %zu",
                             what, strlen(*out));
  return 0;
}

static int fn_load(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *who = "runtime.ModuleLoad", *path, *name = NULL;
  if (n < 1 || n > 2)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "takes (path[, name]), got %d arguments", n);
  if (c_string_arg(&args[0], who, "the path", &path) ||
      (n == 2 && args[1].type_index != TN_TYPE_NONE &&
       c_string_arg(&args[1], who, "the model name", &name)))
    return -1;
  return ret_obj(tn_module_load(path, name), ret);
}

static int fn_system(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *name;
  if (n != 1)
    return tn_error_raise_in(TN_ERR_TYPE, "runtime.ModuleSystem",
                             "takes (name), got %d arguments", n);
  if (c_string_arg(&args[0], "runtime.ModuleSystem", "the model name", &name))
    return -1;
  return ret_obj(tn_module_system(name), ret);
}

static int fn_describe(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  Module *m = module_arg(args, n, 1, "runtime.ModuleDescribe", "(module)");
  if (m == NULL) return -1;
  return ret_obj(tn_module_describe(&m->header), ret);
}

/* An index argument beyond int32, which the C API's int32_t would
 * truncate: an IndexError naming the value as given (within int32, the
 * API's own range check names it). */
static int index_fits(const Module *m, int64_t i, const char *what,
                      int32_t count, const char *who) {
  if (i >= INT32_MIN && i <= INT32_MAX) return 0;
  return tn_error_raise_in(TN_ERR_INDEX, who, "model '%s' has %d %ss, no "
                           "%s %lld", name_of(m), count, what, what, (long long)i);
}

/* An input given by index or by name. */
static int input_arg(Module *m, const TnAny *a, const char *who,
                     int32_t *out) {
  const char *name;
  if (a->type_index == TN_TYPE_INT) { /* out of range: an IndexError later */
    if (index_fits(m, a->v_int64, "input", m->model->num_inputs, who))
      return -1;
    *out = (int32_t)a->v_int64;
    return 0;
  }
  if (tn_any_as_str(a, &name, NULL)) {
    tn_error_set_raised(NULL);
    return tn_error_raise_in(TN_ERR_TYPE, who, "an input is named by its index "
                             "or its name, got %s", tn_any_type_key(a));
  }
  *out = tn_module_input_index(&m->header, name);
  return *out < 0 ? -1 : 0;
}

/* Set input `i` from a tensor or from bytes. */
static int set_from_any(Module *m, int32_t i, const TnAny *v,
                        const char *who) {
  const char *data;
  size_t size;
  if (v->type_index == TN_TYPE_TENSOR)
    return tn_module_set_input(&m->header, i, v->v_obj);
  if (v->type_index == TN_TYPE_BYTES || v->type_index == TN_TYPE_RAW_BYTES ||
      v->type_index == TN_TYPE_SMALL_BYTES) {
    tn_any_as_bytes(v, &data, &size);
    return tn_module_set_input_bytes(&m->header, i, data, size);
  }
  const TnCrtTensorInfo *t = info_at(m, false, i, who);
  return t ? tn_error_raise_in(TN_ERR_TYPE, who, "model '%s', input '%s': "
                               "expected a tn.Tensor or bytes, got %s",
                               name_of(m), t->name, tn_any_type_key(v))
           : -1;
}

static int fn_set_input(void *self, const TnAny *args, int32_t n,
                        TnAny *ret) {
  (void)self, (void)ret;
  const char *who = "runtime.ModuleSetInput";
  int32_t i = -1;
  Module *m = module_arg(args, n, 3, who, "(module, index or name, tensor)");
  if (m == NULL || input_arg(m, &args[1], who, &i)) return -1;
  return set_from_any(m, i, &args[2], who);
}

static int fn_run(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self, (void)ret;
  Module *m = module_arg(args, n, 1, "runtime.ModuleRun", "(module)");
  if (m == NULL) return -1;
  return tn_module_run(&m->header);
}

static int fn_reset(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self, (void)ret;
  Module *m = module_arg(args, n, 1, "runtime.ModuleReset", "(module)");
  if (m == NULL) return -1;
  return tn_module_reset(&m->header);
}

static int fn_get_output(void *self, const TnAny *args, int32_t n,
                         TnAny *ret) {
  (void)self;
  const char *who = "runtime.ModuleGetOutput";
  int64_t i;
  Module *m = module_arg(args, n, 2, who, "(module, index)");
  if (m == NULL || tn_any_as_int(&args[1], &i) ||
      index_fits(m, i, "output", m->model->num_outputs, who))
    return -1;
  return ret_obj(tn_module_get_output(&m->header, (int32_t)i), ret);
}

/* (module, tensor...): set the first inputs, run, return every output: a
 * whole inference in one call, for bindings that care about overhead. */
static int fn_invoke(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *who = "runtime.ModuleInvoke";
  Module *m = module_arg(args, n, -1, who, "(module, tensor...)");
  if (m == NULL) return -1;
  const TnCrtModel *d = m->model;
  if (n - 1 > d->num_inputs)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "model '%s' has %d inputs, got %d", name_of(m),
                             d->num_inputs, n - 1);
  for (int32_t i = 0; i + 1 < n; i++)
    if (set_from_any(m, i, &args[i + 1], who)) return -1;
  if (enter(m, who)) return -1;
  TnAny outs[TN_CRT_MAX_IO];
  int32_t k = 0;
  int rc = run_locked(m, who);
  for (; rc == 0 && k < d->num_outputs; k++) {
    TnObject *o = output_locked(m, k, who);
    if (o == NULL) rc = -1;
    outs[k] = tn_any_obj(o);
  }
  leave(m);
  TnObject *arr = rc == 0 ? tn_array_new(outs, d->num_outputs) : NULL;
  for (int32_t j = 0; j < k; j++) tn_any_clear(&outs[j]);
  return ret_obj(arr, ret);
}

static int fn_time(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *who = "runtime.ModuleTime";
  int64_t number, repeat;
  Module *m = module_arg(args, n, 3, who, "(module, number, repeat)");
  if (m == NULL || tn_any_as_int(&args[1], &number) ||
      tn_any_as_int(&args[2], &repeat))
    return -1;
  double ms[1000];
  TnAny items[1000];
  if (number < 1 || number > INT32_MAX || repeat < 1 || repeat > 1000)
    return tn_error_raise_in(TN_ERR_VALUE, who, "number must be in [1, 2^31) "
                             "and repeat in [1, 1000], got %lld and %lld",
                             (long long)number, (long long)repeat);
  if (tn_module_time(&m->header, (int32_t)number, (int32_t)repeat, ms))
    return -1;
  for (int64_t r = 0; r < repeat; r++) items[r] = tn_any_float(ms[r]);
  return ret_obj(tn_array_new(items, repeat), ret);
}

/* (module, pool index, tensor or None) */
static int fn_set_workspace(void *self, const TnAny *args, int32_t n,
                            TnAny *ret) {
  (void)self, (void)ret;
  const char *who = "runtime.ModuleSetWorkspace";
  int64_t i;
  Module *m = module_arg(args, n, 3, who, "(module, pool index, tensor or None)");
  if (m == NULL || tn_any_as_int(&args[1], &i) ||
      index_fits(m, i, "workspace pool", m->model->num_workspace_pools, who))
    return -1;
  if (args[2].type_index == TN_TYPE_NONE)
    return tn_module_set_workspace_tensor(&m->header, (int32_t)i, NULL);
  if (args[2].type_index != TN_TYPE_TENSOR)
    return tn_error_raise_in(TN_ERR_TYPE, who, "model '%s', pool %lld: "
                             "expected a tn.Tensor or None, got %s", name_of(m),
                             (long long)i, tn_any_type_key(&args[2]));
  return tn_module_set_workspace_tensor(&m->header, (int32_t)i, args[2].v_obj);
}

/* (module[, n]): sets the threads when n is given; returns
 * [threads, calls the last run ran in parts] */
static int fn_threads(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *who = "runtime.ModuleThreads";
  int64_t k;
  Module *m = module_arg(args, n, -1, who, "(module[, n])");
  if (m == NULL) return -1;
  if (n > 2)
    return tn_error_raise_in(TN_ERR_TYPE, who, "takes (module[, n]), got %d "
                             "arguments", n);
  if (n == 2) {
    if (args[1].type_index != TN_TYPE_INT)
      return tn_error_raise_in(TN_ERR_TYPE, who, "model '%s': argument n "
                               "(threads): expected an int, got %s",
                               name_of(m), tn_any_type_key(&args[1]));
    k = args[1].v_int64;
    if (tn_module_set_threads(&m->header, k)) return -1;
  }
  TnAny items[2] = {tn_any_int(m->threads), tn_any_int(m->split_calls)};
  return ret_obj(tn_array_new(items, 2), ret);
}

/* Called once by the host runtime's start-up (init.c), after the
 * executor's functions. */
int tn__params_save_fn(void *self, const TnAny *args, int32_t n, TnAny *ret);
int tn__params_load_fn(void *self, const TnAny *args, int32_t n, TnAny *ret);
/* runtime.IsaLimit(level: int or str) -> int: caps the ISA forms the
 * kernels of this process (and of the Modules it runs) take; -1 or "" only
 * reads the level. Returns the level in effect, without the AVX-VNNI flag. */
static int fn_isa_limit(void *self, const TnAny *args, int32_t n,
                        TnAny *ret) {
  (void)self;
  const char *who = "runtime.IsaLimit";
  if (n != 1)
    return tn_error_raise_in(TN_ERR_TYPE, who, "takes (level), got %d "
                             "arguments", n);
  int level = -1;
  if (args[0].type_index == TN_TYPE_INT) {
    if (args[0].v_int64 < -1 || args[0].v_int64 > TN_CRT_ISA_AVX512VNNI)
      return tn_error_raise_in(TN_ERR_VALUE, who, "level: expected -1 to %d, "
                               "got %lld", TN_CRT_ISA_AVX512VNNI,
                               (long long)args[0].v_int64);
    level = (int)args[0].v_int64;
  } else {
    const char *name;
    if (c_string_arg(&args[0], who, "the level", &name)) return -1;
    if (*name && (level = tn__isa_parse(name)) < 0)
      return tn_error_raise_in(TN_ERR_VALUE, who, "level: expected one of "
                               "%s, got '%s'", TN__ISA_NAMES, name);
  }
  *ret = tn_any_int(tn_crt_isa_limit(level) & TN_CRT_ISA_LEVEL_MASK);
  return 0;
}

int tn__module_init(void) {
  /* a model linked into the program calls the crt inside libtvmnode: its
   * hook is set here, at start-up, before anything runs */
  tn_crt_set_parallel(parallel_hook, NULL);
  static const TnHostFn fns[] = {{"runtime.ModuleLoad", fn_load},
             {"runtime.ModuleSystem", fn_system},
             {"runtime.ModuleDescribe", fn_describe},
             {"runtime.ModuleSetInput", fn_set_input},
             {"runtime.ModuleRun", fn_run},
             {"runtime.ModuleReset", fn_reset},
             {"runtime.ModuleGetOutput", fn_get_output},
             {"runtime.ModuleInvoke", fn_invoke},
             {"runtime.ModuleTime", fn_time},
             {"runtime.ModuleSetWorkspace", fn_set_workspace},
             {"runtime.ModuleThreads", fn_threads},
             {"runtime.IsaLimit", fn_isa_limit},
             {"runtime.SaveParams", tn__params_save_fn}, /* params.c */
             {"runtime.LoadParams", tn__params_load_fn}};
  return tn__host_register(fns, sizeof fns / sizeof fns[0]);
}
