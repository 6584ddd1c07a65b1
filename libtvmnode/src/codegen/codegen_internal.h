/*
 * codegen_internal.h: what the code generator's files share. Private to the
 * library.
 */
#ifndef TVMNODE_CODEGEN_INTERNAL_H_
#define TVMNODE_CODEGEN_INTERNAL_H_
#ifndef TN_BUILDING_LIBRARY
#error "codegen_internal.h is private to libtvmnode; include <tvmnode/tvmnode.h>"
#endif

#include "core/core_internal.h"
#include "ir/ir_internal.h"
#include "tvmnode/codegen.h"
#include "tvmnode/crt/kernels.h"
#include "tvmnode/crt/model.h"

/* A compiled model's interface, as the interface writers see it: what
 * tvmgen_<model>.h declares, in the same order. */
typedef struct {
  const char *name; /* a C identifier (the field of the inputs/outputs
                       struct) */
  int32_t dtype;    /* a TnCrtDType */
  int64_t numel, nbytes;
  int32_t pool;     /* -1, or (io in the pool) the workspace pool index ... */
  int64_t offset;   /* ... and its offset there */
} TnAotTensor;

typedef struct {
  const char *name; /* the field of the workspace pools struct */
  int64_t size;
} TnAotPool;

typedef struct {
  const char *model; /* lower case C identifier */
  int64_t alignment;
  bool io_in_pool;
  int32_t num_inputs, num_outputs;
  const TnAotTensor *inputs, *outputs;
  int32_t num_pools; /* the workspace pools tvmgen_<model>_run takes */
  const TnAotPool *pools;
  int64_t constant_pool_size; /* 0: constants are const arrays */
  int32_t num_devices;
  const char *const *devices;
  int64_t state_pool_size; /* 0: stateless; else run and reset take the
                              state pool */
} TnAotInterface;

/* The Embedded Rust twin of tvmgen_<model>.h (rust_iface.c). */
void tn__codegen_rust(const TnAotInterface *iface, GString *out);

/* The code generator's start-up: registers its global functions. */
void tn__codegen_init(void);

#endif /* TVMNODE_CODEGEN_INTERNAL_H_ */
