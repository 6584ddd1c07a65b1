// Package modelfloor runs a compiled model the plainest way cgo can: the
// library opened with dlopen, its descriptor's entry point called with
// buffers bound once in C, one cgo call per run and nothing of the
// tvmnode binding or the host Module in between. The Module benchmarks
// report Module.Run beside it.
package modelfloor

/*
#cgo pkg-config: tvmnode
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <tvmnode/crt/model.h>

typedef struct {
  void *lib;
  const TnCrtModel *m;
  void *in[TN_CRT_MAX_IO], *out[TN_CRT_MAX_IO];
  void *ws[TN_CRT_MAX_POOLS], *cs[TN_CRT_MAX_POOLS], *dev[TN_CRT_MAX_POOLS];
} Floor;

static void *zalloc(size_t n, size_t align) {
  void *p = NULL;
  if (align < 64) align = 64;
  if (posix_memalign(&p, align, n ? n : 1)) return NULL;
  memset(p, 0, n ? n : 1);
  return p;
}

static void floor_close(Floor *f) {
  if (f == NULL) return;
  const TnCrtModel *m = f->m;
  for (int i = 0; m && i < m->num_inputs; i++) if (m->inputs[i].pool < 0) free(f->in[i]);
  for (int i = 0; m && i < m->num_outputs; i++) if (m->outputs[i].pool < 0) free(f->out[i]);
  for (int i = 0; m && i < m->num_workspace_pools; i++) free(f->ws[i]);
  for (int i = 0; m && i < m->num_constant_pools; i++) free(f->cs[i]);
  if (f->lib) dlclose(f->lib);
  free(f);
}

// NULL with *why set when the library holds no model this can run.
static Floor *floor_open(const char *path, const char **why) {
  Floor *f = calloc(1, sizeof *f);
  f->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!f->lib) { *why = "dlopen failed"; floor_close(f); return NULL; }
  const TnCrtModel *const *list = dlsym(f->lib, "tvmnode_module_models");
  if (!list || !list[0]) { *why = "no tvmnode_module_models"; floor_close(f); return NULL; }
  const TnCrtModel *m = f->m = list[0];
  if (m->num_devices > 0) { *why = "the model needs devices"; floor_close(f); return NULL; }
  for (int i = 0; i < m->num_workspace_pools; i++)
    f->ws[i] = zalloc(m->workspace_pools[i].size, m->workspace_pools[i].alignment);
  for (int i = 0; i < m->num_constant_pools; i++) {
    f->cs[i] = zalloc(m->constant_pools[i].size, m->constant_pools[i].alignment);
    if (m->constant_pool_data && m->constant_pool_data[i])
      memcpy(f->cs[i], m->constant_pool_data[i], m->constant_pools[i].size);
  }
  for (int i = 0; i < m->num_inputs; i++)
    f->in[i] = m->inputs[i].pool < 0 ? zalloc(m->inputs[i].nbytes, 64)
                                     : (char *)f->ws[m->inputs[i].pool] + m->inputs[i].offset;
  for (int i = 0; i < m->num_outputs; i++)
    f->out[i] = m->outputs[i].pool < 0 ? zalloc(m->outputs[i].nbytes, 64)
                                       : (char *)f->ws[m->outputs[i].pool] + m->outputs[i].offset;
  return f;
}

static int32_t floor_run(uintptr_t f) {
  Floor *p = (Floor *)f;
  return p->m->run(p->in, p->out, p->ws, p->cs, p->dev);
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Model is a compiled model's library opened without tvmnode.
type Model struct{ f *C.Floor }

// Open opens the first model of the library at path.
func Open(path string) (*Model, error) {
	c := C.CString(path)
	defer C.free(unsafe.Pointer(c))
	var why *C.char
	f := C.floor_open(c, &why)
	if f == nil {
		return nil, errors.New("modelfloor: " + path + ": " + C.GoString(why))
	}
	return &Model{f}, nil
}

// Run is one cgo call of the model's entry point (its status code).
func (m *Model) Run() int32 { return int32(C.floor_run(C.uintptr_t(uintptr(unsafe.Pointer(m.f))))) }

// Close unloads the library.
func (m *Model) Close() { C.floor_close(m.f) }
