/*
 * params.c: the parameter file format (tvmnode/params.h, docs/mlf.md),
 * over the public API only.
 *
 * The writer sizes the whole file first and fills one buffer, so its
 * output is byte for byte what tvmnode.codegen.save_params writes. The
 * reader is written for hostile input (it is a libFuzzer target): every
 * field is read through one bounds-checked cursor, the tensor count and
 * each shape are checked against the bytes that remain before anything is
 * allocated for them, the data size must be exactly what the shape and
 * dtype need, and each failure names the entry and the field. The CRC-32 is
 * zlib's, table-driven here because GLib has none and the host runtime
 * takes no new dependency for 20 lines.
 */
#include "tvmnode/params.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char kMagic[8] = {'T', 'N', 'P', 'A', 'R', 'A', 'M', 'S'};
enum {
  kVersion = 1,
  kHeader = 16,       /* magic, version, count */
  kMinEntry = 20,     /* name length, dtype, ndim, data size: no name, scalar */
  kMaxNdim = 1024     /* as tn.Tensor */
};

/* ---- CRC-32 (zlib's: reflected polynomial 0xEDB88320) ------------------- */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

TN_API uint32_t tn_params_crc32(uint32_t crc, const void *data, size_t size) {
  pthread_once(&crc_once, crc_init);
  const uint8_t *p = data;
  crc = ~crc;
  for (size_t i = 0; i < size; i++)
    crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* ---- little-endian fields and element bytes ------------------------------ */

static bool host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

static void put_le(uint8_t *p, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; k++) p[k] = (uint8_t)(v >> (8 * k));
}

static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

/* The file stores elements little-endian: on a big-endian host each
 * element's bytes are reversed on the way in and out. */
static void fix_order(uint8_t *p, size_t n, size_t elem) {
  if (elem <= 1 || host_is_little_endian()) return;
  for (size_t i = 0; i + elem <= n; i += elem)
    for (size_t a = i, b = i + elem - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* The dtypes the format carries: (code, bits) with one lane. */
static bool dtype_supported(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) return false;
  switch (code) {
    case kDLInt: return bits == 8 || bits == 16 || bits == 32 || bits == 64;
    case kDLUInt: case kDLBool: return bits == 8;
    case kDLFloat: return bits == 32 || bits == 64;
    default: return false;
  }
}

/* ---- writing ------------------------------------------------------------- */

/* Copy the elements of `dl` in C order to `out` (compact tensors in one
 * memcpy; others element by element with an index vector). */
static int gather(const DLTensor *dl, uint8_t *out, size_t nbytes,
                  size_t elem, const char *who) {
  const uint8_t *base = (const uint8_t *)dl->data + dl->byte_offset;
  bool compact = dl->strides == NULL;
  if (!compact) {
    int64_t expect = 1;
    compact = true;
    for (int32_t d = dl->ndim; d-- > 0;) {
      if (dl->shape[d] != 1 && dl->strides[d] != expect) compact = false;
      expect *= dl->shape[d];
    }
  }
  if (compact || nbytes == 0) {
    if (nbytes) memcpy(out, base, nbytes);
    return 0;
  }
  int64_t *idx = calloc((size_t)dl->ndim, sizeof *idx);
  if (idx == NULL)
    return tn_error_raise_in(TN_ERR_MEMORY, who, "out of memory");
  for (size_t o = 0; o < nbytes; o += elem) {
    int64_t off = 0;
    for (int32_t d = 0; d < dl->ndim; d++) off += idx[d] * dl->strides[d];
    memcpy(out + o, base + off * (int64_t)elem, elem);
    for (int32_t d = dl->ndim; d-- > 0;) {
      if (++idx[d] < dl->shape[d]) break;
      idx[d] = 0;
    }
  }
  free(idx);
  return 0;
}

/* The name and tensor of entry `pos`, checked; the entry's file size is
 * added to `*total`. */
static int entry_of(const TnObject *params, int64_t pos, const char **name,
                    size_t *name_len, const DLTensor **dl, uint64_t *total,
                    const char *who) {
  const TnAny *k, *v;
  tn_map_next(params, pos, &k, &v);
  if (tn_any_as_str(k, name, name_len)) {
    tn_error_set_raised(NULL); /* the cast's own message names no key */
    return tn_error_raise_in(TN_ERR_TYPE, who, "keys must be strings, got %s",
                             tn_any_type_key(k));
  }
  if (v->type_index != TN_TYPE_TENSOR)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "'%s': expected a tn.Tensor, got %s", *name,
                             tn_any_type_key(v));
  const DLTensor *t = tn_tensor_dltensor(v->v_obj);
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "'%s': the tensor is not on the CPU", *name);
  if (!dtype_supported(t->dtype.code, t->dtype.bits, t->dtype.lanes)) {
    char dt[32];
    tn_dtype_print(t->dtype, dt, sizeof dt);
    return tn_error_raise_in(TN_ERR_TYPE, who, "'%s' has dtype %s; the format "
                             "carries int8, int16, int32, int64, uint8, "
                             "float32, float64 and bool", *name, dt);
  }
  if (*name_len > UINT32_MAX)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "a name of %zu bytes is too long", *name_len);
  *dl = t;
  *total += 12 + *name_len + 8 * (uint64_t)t->ndim + 8 +
            (uint64_t)tn_tensor_nbytes(v->v_obj);
  return 0;
}

TN_API TnObject *tn_params_save(const TnObject *params) {
  const char *who = "tn_params_save";
  int64_t n = tn_map_size(params);
  if (n < 0) return NULL;
  if (n > UINT32_MAX)
    return tn_error_raise_in(TN_ERR_VALUE, who, "%lld tensors",
                             (long long)n), NULL;
  uint64_t total = kHeader + 4;
  for (int64_t pos = tn_map_next(params, 0, NULL, NULL); pos >= 0;
       pos = tn_map_next(params, pos + 1, NULL, NULL)) {
    const char *name;
    size_t len;
    const DLTensor *dl;
    if (entry_of(params, pos, &name, &len, &dl, &total, who)) return NULL;
  }
  if (total > SIZE_MAX)
    return tn_error_raise_in(TN_ERR_MEMORY, who, "out of memory"), NULL;
  uint8_t *buf = malloc((size_t)total), *p = buf;
  if (buf == NULL)
    return tn_error_raise_in(TN_ERR_MEMORY, who, "out of memory (%llu bytes)",
                             (unsigned long long)total), NULL;
  memcpy(p, kMagic, 8);
  put_le(p + 8, kVersion, 4);
  put_le(p + 12, (uint64_t)n, 4);
  p += kHeader;
  for (int64_t pos = tn_map_next(params, 0, NULL, NULL); pos >= 0;
       pos = tn_map_next(params, pos + 1, NULL, NULL)) {
    const char *name;
    size_t len;
    const DLTensor *dl;
    uint64_t unused = 0;
    entry_of(params, pos, &name, &len, &dl, &unused, who); /* checked above */
    put_le(p, len, 4);
    memcpy(p + 4, name, len);
    p += 4 + len;
    p[0] = dl->dtype.code, p[1] = dl->dtype.bits;
    put_le(p + 2, 1, 2);
    put_le(p + 4, (uint64_t)dl->ndim, 4);
    p += 8;
    size_t elem = dl->dtype.bits / 8, nbytes = elem;
    for (int32_t d = 0; d < dl->ndim; d++, p += 8) {
      put_le(p, (uint64_t)dl->shape[d], 8);
      nbytes *= (size_t)dl->shape[d];
    }
    put_le(p, nbytes, 8);
    p += 8;
    if (gather(dl, p, nbytes, elem, who)) {
      free(buf);
      return NULL;
    }
    fix_order(p, nbytes, elem);
    p += nbytes;
  }
  put_le(p, tn_params_crc32(0, buf, (size_t)(p - buf)), 4);
  TnObject *out = tn_bytes_new((const char *)buf, (size_t)total);
  free(buf);
  return out;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct {
  const uint8_t *p, *end;
  uint32_t entry;
  const char *name; /* of the entry, once read (NUL-terminated copy) */
} Cursor;

static size_t left(const Cursor *c) { return (size_t)(c->end - c->p); }

/* Raise "entry i ('name'): <what>" for the current entry. */
#define ENTRY_ERROR(c, fmt, ...)                                             \
  ((c)->name ? tn_error_raise_in(TN_ERR_VALUE, "tn_params_load",             \
                                 "entry %u ('%s'): " fmt, (c)->entry,        \
                                 (c)->name, __VA_ARGS__)                     \
             : tn_error_raise_in(TN_ERR_VALUE, "tn_params_load",             \
                                 "entry %u: " fmt, (c)->entry, __VA_ARGS__))

static int take(Cursor *c, size_t n, const char *field, const uint8_t **out) {
  if (left(c) < n)
    return ENTRY_ERROR(c, "truncated (%s needs %zu bytes, %zu left)", field,
                       n, left(c));
  *out = c->p;
  c->p += n;
  return 0;
}

static int take_le(Cursor *c, int bytes, const char *field, uint64_t *v) {
  const uint8_t *p;
  if (take(c, (size_t)bytes, field, &p)) return -1;
  *v = get_le(p, bytes);
  return 0;
}

/* Strict UTF-8, as Python's bytes.decode(): no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
static bool utf8_valid(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint8_t b = s[i];
    size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2
                 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > n) return false;
    uint32_t cp = len == 1 ? b : (uint32_t)(b & (0x7F >> len));
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

/* The data bytes of a shape of `elem`-byte elements, or -1 when they
 * overflow. Like tn.Tensor, a 0 dimension counts as 1 for the overflow
 * check: a shape whose other dimensions overflow is refused even if it
 * holds nothing. */
static int64_t nbytes_of(const int64_t *dims, uint32_t ndim, int64_t elem) {
  int64_t span = elem;
  bool empty = false;
  for (uint32_t d = 0; d < ndim; d++) {
    int64_t k = dims[d] ? dims[d] : 1;
    if (span > INT64_MAX / k) return -1;
    span *= k;
    empty = empty || dims[d] == 0;
  }
  return empty ? 0 : span;
}

/* Read one entry: its name into `*key` and its tensor into `*value` (both
 * owned). `dims` has room for kMaxNdim dimensions. */
static int read_entry(Cursor *c, int64_t *dims, TnAny *key, TnAny *value) {
  const uint8_t *name, *data;
  uint64_t len, ndim, nbytes;
  if (take_le(c, 4, "the name length", &len) ||
      take(c, (size_t)len, "the name", &name))
    return -1;
  if (!utf8_valid(name, (size_t)len))
    return ENTRY_ERROR(c, "the name (%llu bytes) is not UTF-8",
                       (unsigned long long)len);
  TnObject *s = tn_string_new((const char *)name, (size_t)len);
  if (s == NULL) return -1;
  *key = tn_any_obj(s);
  c->name = ((const TnStringObj *)s)->data;
  const uint8_t *dt;
  if (take(c, 4, "the dtype", &dt) || take_le(c, 4, "ndim", &ndim)) return -1;
  uint16_t lanes = (uint16_t)get_le(dt + 2, 2);
  if (!dtype_supported(dt[0], dt[1], lanes))
    return ENTRY_ERROR(c, "unsupported dtype (type code %u, %u bits, %u lanes)",
                       dt[0], dt[1], lanes);
  if (ndim > kMaxNdim)
    return ENTRY_ERROR(c, "ndim %llu is more than %d",
                       (unsigned long long)ndim, kMaxNdim);
  const uint8_t *sp;
  if (take(c, 8 * (size_t)ndim, "the shape", &sp)) return -1;
  for (uint32_t d = 0; d < ndim; d++) {
    dims[d] = (int64_t)get_le(sp + 8 * d, 8);
    if (dims[d] < 0)
      return ENTRY_ERROR(c, "dimension %u is negative (%lld)", d,
                         (long long)dims[d]);
  }
  int64_t elem = dt[1] / 8, need = nbytes_of(dims, (uint32_t)ndim, elem);
  if (need < 0)
    return ENTRY_ERROR(c, "the shape overflows (%llu dimensions)",
                       (unsigned long long)ndim);
  if (take_le(c, 8, "the data size", &nbytes)) return -1;
  if (nbytes != (uint64_t)need)
    return ENTRY_ERROR(c, "%llu data bytes, but its shape and dtype need %lld",
                       (unsigned long long)nbytes, (long long)need);
  if (take(c, (size_t)nbytes, "the data", &data)) return -1;
  DLDataType dtype = {dt[0], dt[1], 1};
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t = tn_tensor_empty(dims, (int32_t)ndim, dtype, cpu);
  if (t == NULL) return -1;
  uint8_t *dst = tn_tensor_dltensor(t)->data;
  if (nbytes) memcpy(dst, data, (size_t)nbytes);
  fix_order(dst, (size_t)nbytes, (size_t)elem);
  *value = tn_any_obj(t);
  return 0;
}

TN_API TnObject *tn_params_load(const void *data, size_t size) {
  const char *who = "tn_params_load";
  const uint8_t *p = data;
  if (p == NULL && size > 0)
    return tn_error_raise_in(TN_ERR_VALUE, who, "data is NULL"), NULL;
  if (size < 8 || memcmp(p, kMagic, 8) != 0)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "not a parameter file (bad magic)"), NULL;
  if (size < kHeader + 4)
    return tn_error_raise_in(TN_ERR_VALUE, who, "truncated: %zu bytes, a "
                             "parameter file has at least %d", size,
                             kHeader + 4), NULL;
  size_t body = size - 4;
  uint32_t stored = (uint32_t)get_le(p + body, 4);
  uint32_t crc = tn_params_crc32(0, p, body);
  if (stored != crc)
    return tn_error_raise_in(TN_ERR_VALUE, who, "checksum mismatch: the file "
                             "says 0x%08x, its bytes give 0x%08x (the file is "
                             "corrupted or truncated)", stored, crc), NULL;
  uint32_t version = (uint32_t)get_le(p + 8, 4);
  uint32_t count = (uint32_t)get_le(p + 12, 4);
  if (version != kVersion)
    return tn_error_raise_in(TN_ERR_VALUE, who, "version %u, expected %d",
                             version, kVersion), NULL;
  if (count > (body - kHeader) / kMinEntry)
    return tn_error_raise_in(TN_ERR_VALUE, who,
                             "%u tensors, but %zu bytes hold at most %zu",
                             count, body - kHeader,
                             (body - kHeader) / kMinEntry), NULL;
  TnAny *keys = calloc(count ? count : 1, 2 * sizeof(TnAny));
  int64_t *dims = malloc(kMaxNdim * sizeof *dims);
  TnObject *out = NULL;
  if (keys == NULL || dims == NULL) {
    tn_error_raise_in(TN_ERR_MEMORY, who, "out of memory");
    goto done;
  }
  TnAny *values = keys + count;
  Cursor c = {p + kHeader, p + body, 0, NULL};
  for (; c.entry < count; c.entry++) {
    c.name = NULL;
    if (read_entry(&c, dims, &keys[c.entry], &values[c.entry])) goto done;
  }
  if (left(&c) != 0) {
    tn_error_raise_in(TN_ERR_VALUE, who, "%zu trailing bytes after %u tensors",
                      left(&c), count);
    goto done;
  }
  out = tn_map_new(keys, values, count);
  if (out && tn_map_size(out) != (int64_t)count) {
    /* two tensors of one name: the map kept one of them, so the name of
     * the first entry whose value it did not keep is the repeated one */
    for (uint32_t i = 0; i < count; i++) {
      const TnAny *kept = tn_map_find(out, &keys[i]);
      if (kept && kept->v_obj != values[i].v_obj) {
        const char *name = "", *other = NULL;
        tn_any_as_str(&keys[i], &name, NULL);
        uint32_t j = 0;
        for (; j < count; j++)
          if (j != i && tn_any_as_str(&keys[j], &other, NULL) == 0 &&
              strcmp(other, name) == 0)
            break;
        tn_error_raise_in(TN_ERR_VALUE, who, "entries %u and %u are both "
                          "named '%s': each tensor needs a name of its own",
                          i < j ? i : j, i < j ? j : i, name);
        break;
      }
    }
    tn_object_release(out);
    out = NULL;
  }
done:
  for (uint32_t i = 0; keys && i < 2 * count; i++) tn_any_clear(&keys[i]);
  free(keys);
  free(dims);
  return out;
}

/* ---- the registry's view (registered by tn__module_init, module.c) ------ */

int tn__params_save_fn(void *self, const TnAny *args, int32_t n, TnAny *ret);
int tn__params_save_fn(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *who = "runtime.SaveParams";
  if (n != 1)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "takes (params), got %d arguments", n);
  if (args[0].type_index != TN_TYPE_MAP && args[0].type_index != TN_TYPE_DICT)
    return tn_error_raise_in(TN_ERR_TYPE, who,
                             "expected a map of name -> tensor, got %s",
                             tn_any_type_key(&args[0]));
  TnObject *b = tn_params_save(args[0].v_obj);
  *ret = tn_any_obj(b);
  return b ? 0 : -1;
}

int tn__params_load_fn(void *self, const TnAny *args, int32_t n, TnAny *ret);
int tn__params_load_fn(void *self, const TnAny *args, int32_t n, TnAny *ret) {
  (void)self;
  const char *data;
  size_t size;
  if (n != 1)
    return tn_error_raise_in(TN_ERR_TYPE, "runtime.LoadParams",
                             "takes (data), got %d arguments", n);
  if (tn_any_as_bytes(&args[0], &data, &size)) return -1;
  TnObject *m = tn_params_load(data, size);
  *ret = tn_any_obj(m);
  return m ? 0 : -1;
}
