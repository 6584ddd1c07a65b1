/*
 * params.c: parameter blobs verified and bound in place (tvmnode/crt/
 * params.h). The blob comes from flash or a link and is hostile until its
 * checks pass: every field is read through one cursor bounded by the blob's
 * size, with 64-bit sizes compared against what is left before any sum is
 * formed, so no length in the blob can move a read out of it. The structure
 * is walked before the checksum so that a blob cut short says so
 * (PARAMS_TRUNCATED) rather than only that its CRC is wrong. Nothing here
 * allocates.
 */
#include "tvmnode/crt/params.h"

#include "crt_libc.h"

static const uint8_t kMagic[8] = {'T', 'N', 'P', 'A', 'R', 'A', 'M', 'S'};
static const char kIdName[] = "tvmnode.model_id";
static const char kPadName[] = "tvmnode.pad";
enum { kHeader = 16, kIdBytes = 16, kFormatVersion = 1, kEntries = 3 };

static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

typedef struct {
  const uint8_t *name; /* inside the blob */
  uint64_t name_len;
  const uint8_t *data;
  uint64_t size;
} Entry;

/* One entry at `*at` (an offset into the `end` bytes before the CRC): a
 * uint8 vector, or TN_CRT_PARAMS_INVALID; TN_CRT_PARAMS_TRUNCATED when a
 * field runs past `end`. */
static int32_t read_entry(const uint8_t *b, size_t end, size_t *at,
                          Entry *e) {
  size_t p = *at;
  if (end - p < 4) return TN_CRT_PARAMS_TRUNCATED;
  e->name_len = get_le(b + p, 4);
  p += 4;
  if (e->name_len > end - p) return TN_CRT_PARAMS_TRUNCATED;
  e->name = b + p;
  p += (size_t)e->name_len;
  if (end - p < 8) return TN_CRT_PARAMS_TRUNCATED;
  /* uint8 (code 1, 8 bits, 1 lane), one dimension */
  if (b[p] != 1 || b[p + 1] != 8 || get_le(b + p + 2, 2) != 1 ||
      get_le(b + p + 4, 4) != 1)
    return TN_CRT_PARAMS_INVALID;
  p += 8;
  if (end - p < 16) return TN_CRT_PARAMS_TRUNCATED;
  uint64_t dim = get_le(b + p, 8);
  e->size = get_le(b + p + 8, 8);
  p += 16;
  if (dim != e->size) return TN_CRT_PARAMS_INVALID;
  if (e->size > end - p) return TN_CRT_PARAMS_TRUNCATED;
  e->data = b + p;
  *at = p + (size_t)e->size;
  return TN_CRT_OK;
}

/* memcmp is not among the C library functions the crt may call */
static int same(const uint8_t *a, const void *b, size_t n) {
  const uint8_t *q = (const uint8_t *)b;
  for (size_t i = 0; i < n; i++)
    if (a[i] != q[i]) return 0;
  return 1;
}

static int name_is(const Entry *e, const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return e->name_len == n && same(e->name, s, n);
}

/* The layout, its descriptor and its one constant pool, or the code. */
static int32_t layout_ok(const TnCrtParamsLayout *layout) {
  if (!layout) return TN_CRT_NULL_POINTER;
  const TnCrtModel *m = layout->model;
  if (layout->magic != TN_CRT_PARAMS_LAYOUT_MAGIC ||
      layout->version != TN_CRT_PARAMS_VERSION || !m ||
      (m->magic != TN_CRT_MODEL_MAGIC && m->magic != TN_CRT_MODEL_STATE_MAGIC) ||
      m->abi_version != TN_CRT_MODEL_ABI_VERSION ||
      m->num_constant_pools != 1 || !m->constant_pools ||
      !m->constant_pools[0].name)
    return TN_CRT_MODEL_MISMATCH;
  return TN_CRT_OK;
}

int32_t tn_crt_params_verify(const TnCrtParamsLayout *layout,
                             const void *blob, size_t size,
                             TnCrtParamsInfo *out) {
  if (out) memset(out, 0, sizeof *out), out->copied = -1;
  int32_t st = layout_ok(layout);
  if (st != TN_CRT_OK) return st;
  if (!blob) return TN_CRT_NULL_POINTER;
  const uint8_t *b = (const uint8_t *)blob;
  /* the magic: a blob shorter than it is cut short if what there is
   * matches */
  size_t head = size < 8 ? size : 8;
  if (!same(b, kMagic, head)) return TN_CRT_PARAMS_INVALID;
  if (size < kHeader + 4) return TN_CRT_PARAMS_TRUNCATED;
  if (get_le(b + 8, 4) != kFormatVersion || get_le(b + 12, 4) != kEntries)
    return TN_CRT_PARAMS_INVALID;
  size_t end = size - 4, at = kHeader;
  Entry e[kEntries];
  for (int k = 0; k < kEntries; k++) {
    st = read_entry(b, end, &at, &e[k]);
    if (st != TN_CRT_OK) return st;
  }
  if (at != end) return TN_CRT_PARAMS_INVALID;
  if (tn_crt_crc32(0, b, end) != (uint32_t)get_le(b + end, 4))
    return TN_CRT_PARAMS_CHECKSUM;
  const TnCrtPoolInfo *pool = &layout->model->constant_pools[0];
  if (!name_is(&e[0], kIdName) || e[0].size != kIdBytes ||
      !name_is(&e[1], kPadName) || !name_is(&e[2], pool->name))
    return TN_CRT_PARAMS_INVALID;
  uint64_t id = get_le(e[0].data, 8);
  uint32_t version = (uint32_t)get_le(e[0].data + 8, 4);
  if (id != layout->model_id || version != TN_CRT_PARAMS_VERSION ||
      e[2].size != pool->size)
    return TN_CRT_PARAMS_WRONG_MODEL;
  if (out) {
    out->model_id = id;
    out->weights_version = (uint32_t)get_le(e[0].data + 12, 4);
    out->pool_size = pool->size;
    out->pool_data = e[2].data;
  }
  return TN_CRT_OK;
}

/* Where the verified image `info` goes: in place, or copied into the RAM
 * pool (the copy is made here, once everything is checked). */
static int32_t place(const TnCrtPoolInfo *pool, TnCrtParamsInfo *info,
                     void *ram_pool, uint32_t ram_size, void **where) {
  uint32_t a = pool->alignment;
  if (a <= 1 || (uintptr_t)info->pool_data % a == 0) {
    *where = (void *)(uintptr_t)info->pool_data; /* the model only reads */
    info->copied = 0;
    return TN_CRT_OK;
  }
  if (!ram_pool) return TN_CRT_POOL_MISALIGNED;
  if (ram_size < info->pool_size) return TN_CRT_POOL_TOO_SMALL;
  if ((uintptr_t)ram_pool % a != 0) return TN_CRT_POOL_MISALIGNED;
  memmove(ram_pool, info->pool_data, info->pool_size);
  *where = ram_pool;
  info->copied = 1;
  return TN_CRT_OK;
}

int32_t tn_crt_params_bind(TnCrtInstance *inst,
                           const TnCrtParamsLayout *layout, const void *blob,
                           size_t size, void *ram_pool, uint32_t ram_size,
                           TnCrtParamsInfo *out) {
  TnCrtParamsInfo info;
  if (out) memset(out, 0, sizeof *out), out->copied = -1;
  if (!inst) return TN_CRT_NULL_POINTER;
  /* the instance first: a foreign or stale one is refused before the blob
   * is read (tn_crt_report checks its seals) */
  TnCrtReport r;
  int32_t st = tn_crt_report(inst, &r);
  if (st == TN_CRT_OK && layout && r.model != layout->model)
    st = TN_CRT_MODEL_MISMATCH;
  if (st == TN_CRT_OK)
    st = tn_crt_params_verify(layout, blob, size, &info);
  void *where = 0;
  if (st == TN_CRT_OK)
    st = place(&layout->model->constant_pools[0], &info, ram_pool, ram_size,
               &where);
  if (st == TN_CRT_OK) st = tn__crt_set_constants(inst, 0, where);
  if (st != TN_CRT_OK) {
    if (tn_crt_report(inst, &r) == TN_CRT_OK) inst->last_error = st;
    return st;
  }
  if (out) *out = info;
  return TN_CRT_OK;
}

int32_t tn_crt_params_init(TnCrtInstance *inst,
                           const TnCrtParamsLayout *layout,
                           const TnCrtPool *workspace_pools,
                           int32_t num_workspace_pools, const void *blob,
                           size_t size, void *ram_pool, uint32_t ram_size,
                           TnCrtParamsInfo *out) {
  TnCrtParamsInfo info;
  if (out) memset(out, 0, sizeof *out), out->copied = -1;
  if (!inst) return TN_CRT_NULL_POINTER;
  memset(inst, 0, sizeof *inst);
  int32_t st = tn_crt_params_verify(layout, blob, size, &info);
  if (st != TN_CRT_OK) return inst->last_error = st;
  const TnCrtModel *m = layout->model;
  /* tn_crt_instance_init's checks of the workspace and of the pool the
   * constants will live in (the image in place, or the RAM pool), before
   * anything is written; then, for the RAM pool, the copy */
  uint32_t align = m->constant_pools[0].alignment;
  if (align <= 1 || (uintptr_t)info.pool_data % align == 0) {
    TnCrtPool in_place = {(void *)(uintptr_t)info.pool_data, info.pool_size};
    st = tn__crt_instance_init_bound(inst, m, workspace_pools,
                                     num_workspace_pools, &in_place, 1);
    info.copied = 0;
  } else if (!ram_pool) {
    st = TN_CRT_POOL_MISALIGNED;
  } else {
    TnCrtPool ram = {ram_pool, ram_size};
    void *where = 0;
    st = tn__crt_instance_init_bound(inst, m, workspace_pools,
                                     num_workspace_pools, &ram, 1);
    if (st == TN_CRT_OK)
      st = place(&m->constant_pools[0], &info, ram_pool, ram_size, &where);
  }
  if (st != TN_CRT_OK) {
    memset(inst, 0, sizeof *inst);
    return inst->last_error = st;
  }
  if (out) *out = info;
  return TN_CRT_OK;
}
