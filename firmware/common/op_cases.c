/*
 * op_cases.c: runs the table of op_cases.h and reports each case; the
 * header says what is printed. Needs only the crt's model API and
 * <stdint.h>, so the same file builds for every device (wasm32 has no C
 * library headers: the byte loops below stand in for string.h).
 */
#include "op_cases.h"

#include "tvmnode/crt/kernels.h"

/* The byte outputs are filled with before a run, and the guard bytes after
 * each output that a kernel must not write. */
#define OC_MARK 0xA5u
#define OC_GUARD 16u
#define OC_ALIGN 16u

/* ---- one line of text ---------------------------------------------------- */

static char line[512];
static size_t line_len;

static void put(char c) {
  if (line_len + 1 < sizeof line) line[line_len++] = c;
}

static void str(const char *s) {
  while (*s) put(*s++);
}

static void u32(uint32_t v) {
  char d[10];
  int n = 0;
  do {
    d[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  while (n) put(d[--n]);
}

static void i32(int32_t v) {
  if (v < 0) {
    put('-');
    u32(0u - (uint32_t)v);
  } else {
    u32((uint32_t)v);
  }
}

static void field(const char *key, uint32_t v) {
  put(' ');
  str(key);
  put('=');
  u32(v);
}

/* An element of `size` bytes (little-endian, as every target stores it) as
 * hex digits of its value, most significant first. */
static void hex_element(const char *key, const uint8_t *p, uint32_t size) {
  static const char digits[] = "0123456789abcdef";
  put(' ');
  str(key);
  put('=');
  for (uint32_t i = size; i-- > 0;) {
    put(digits[p[i] >> 4]);
    put(digits[p[i] & 15u]);
  }
}

static void endl(void) {
  line[line_len] = '\0';
  oc_emit(line);
  line_len = 0;
}

/* ---- bytes --------------------------------------------------------------- */

static void copy(void *dst, const void *src, uint32_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  for (uint32_t i = 0; i < n; i++) d[i] = s[i];
}

static void fill(void *dst, uint8_t v, uint32_t n) {
  uint8_t *d = (uint8_t *)dst;
  for (uint32_t i = 0; i < n; i++) d[i] = v;
}

static int same(const void *a, const void *b, uint32_t n) {
  const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
  for (uint32_t i = 0; i < n; i++)
    if (x[i] != y[i]) return 0;
  return 1;
}

/* ---- comparing ----------------------------------------------------------- */

static uint32_t element_size(int32_t dtype) {
  switch (dtype) {
#define OC__SIZE(name, code, dl, bits, c, rs) \
  case code:                                  \
    return (bits) / 8u;
    TN_CRT_DTYPES(OC__SIZE)
#undef OC__SIZE
    default:
      return 1u;
  }
}

/* A float's bits mapped to integers that order like the values, +0 and -0
 * both to 0; adjacent floats are 1 apart. */
static int64_t ordered(uint32_t bits) {
  int64_t magnitude = (int64_t)(bits & 0x7FFFFFFFu);
  return (bits & 0x80000000u) ? -magnitude : magnitude;
}

static int is_nan(uint32_t bits) {
  return (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0u;
}

/* Units in the last place between two float32 bit patterns (two NaNs are
 * equal; a NaN and a number are as far apart as can be). */
static uint32_t ulp_distance(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return (is_nan(a) && is_nan(b)) ? 0u : 0xFFFFFFFFu;
  int64_t d = ordered(a) - ordered(b);
  if (d < 0) d = -d;
  return d > 0xFFFFFFFF ? 0xFFFFFFFFu : (uint32_t)d;
}

typedef struct {
  uint32_t mismatches; /* elements outside the tolerance */
  uint32_t first;      /* the first of them */
  uint32_t max_ulp;    /* float32 only */
} Compare;

static Compare compare(const uint8_t *got, const uint8_t *want, uint32_t nbytes,
                       int32_t dtype, uint32_t ulps) {
  Compare c = {0u, 0u, 0u};
  uint32_t size = element_size(dtype);
  for (uint32_t i = 0; i < nbytes / size; i++) {
    const uint8_t *g = got + (size_t)i * size, *w = want + (size_t)i * size;
    int bad;
    if (dtype == TN_CRT_F32) {
      uint32_t gb, wb;
      copy(&gb, g, 4);
      copy(&wb, w, 4);
      uint32_t d = ulp_distance(gb, wb);
      if (d > c.max_ulp) c.max_ulp = d;
      bad = d > ulps;
    } else {
      bad = !same(g, w, size);
    }
    if (bad && c.mismatches++ == 0u) c.first = i;
  }
  return c;
}

/* ---- one case ------------------------------------------------------------ */

static size_t arena_used;

/* `size` bytes of the arena at `align` (a power of two), or NULL when the
 * arena is full. */
static uint8_t *carve(uint32_t size, uint32_t align) {
  if (align < OC_ALIGN) align = OC_ALIGN;
  uintptr_t base = (uintptr_t)oc_arena;
  uintptr_t at = (base + arena_used + align - 1u) & ~(uintptr_t)(align - 1u);
  if (at + size > base + oc_arena_size) return NULL;
  arena_used = (size_t)(at + size - base);
  return (uint8_t *)at;
}

static void head(int32_t index, const OcCase *c) {
  str("case ");
  i32(index);
  put(' ');
  str(c->id);
}

static int fail_step(int32_t index, const OcCase *c, const char *step, int32_t status) {
  head(index, c);
  str(" FAIL status=");
  i32(status);
  str(" step=");
  str(step);
  endl();
  return 1;
}

static TnCrtInstance inst;

/* 0 when the case passes; its line is emitted either way. */
static int run_case(int32_t index, const OcCase *c) {
  const TnCrtModel *m = c->model;
  TnCrtPool ws[TN_CRT_MAX_POOLS], cp[TN_CRT_MAX_POOLS];
  uint8_t *guards[TN_CRT_MAX_IO] = {0};
  arena_used = 0;
  if (m->num_devices != 0) return fail_step(index, c, "devices", 0);
  if (m->num_workspace_pools > TN_CRT_MAX_POOLS || m->num_constant_pools > TN_CRT_MAX_POOLS ||
      m->num_inputs > TN_CRT_MAX_IO || m->num_outputs > TN_CRT_MAX_IO)
    return fail_step(index, c, "counts", 0);
  for (int32_t i = 0; i < m->num_workspace_pools; i++) {
    ws[i].size = m->workspace_pools[i].size;
    ws[i].base = carve(ws[i].size ? ws[i].size : 1u, m->workspace_pools[i].alignment);
    if (!ws[i].base) return fail_step(index, c, "arena", 0);
  }
  for (int32_t i = 0; i < m->num_constant_pools; i++) {
    cp[i].size = m->constant_pools[i].size;
    cp[i].base = carve(cp[i].size ? cp[i].size : 1u, m->constant_pools[i].alignment);
    if (!cp[i].base) return fail_step(index, c, "arena", 0);
  }
  int32_t st = tn_crt_instance_init(&inst, m, ws, m->num_workspace_pools, cp,
                                    m->num_constant_pools);
  if (st != 0) return fail_step(index, c, "init", st);

  for (int32_t i = 0; i < m->num_inputs; i++) {
    const TnCrtTensorInfo *t = &m->inputs[i];
    if (t->pool < 0) {
      uint8_t *buf = carve(t->nbytes, OC_ALIGN);
      if (!buf) return fail_step(index, c, "arena", 0);
      st = tn_crt_bind_input(&inst, i, buf, t->nbytes);
      if (st != 0) return fail_step(index, c, "bind", st);
    }
    TnCrtTensor x;
    st = tn_crt_input(&inst, i, &x);
    if (st != 0) return fail_step(index, c, "input", st);
    copy(x.data, c->inputs[i], t->nbytes);
  }
  for (int32_t i = 0; i < m->num_outputs; i++) {
    const TnCrtTensorInfo *t = &m->outputs[i];
    if (t->pool < 0) {
      uint8_t *buf = carve(t->nbytes + OC_GUARD, OC_ALIGN);
      if (!buf) return fail_step(index, c, "arena", 0);
      guards[i] = buf + t->nbytes;
      fill(guards[i], OC_MARK, OC_GUARD);
      st = tn_crt_bind_output(&inst, i, buf, t->nbytes);
      if (st != 0) return fail_step(index, c, "bind", st);
    }
    TnCrtTensor y;
    st = tn_crt_output(&inst, i, &y);
    if (st != 0) return fail_step(index, c, "output", st);
    fill(y.data, OC_MARK, t->nbytes);
  }

  st = tn_crt_run(&inst);
  if (st != 0) return fail_step(index, c, "run", st);

  uint32_t max_ulp = 0;
  for (int32_t i = 0; i < m->num_outputs; i++) {
    const TnCrtTensorInfo *t = &m->outputs[i];
    TnCrtTensor y;
    tn_crt_output(&inst, i, &y);
    Compare r = compare((const uint8_t *)y.data, c->expected[i], t->nbytes, t->dtype, c->ulps);
    if (r.max_ulp > max_ulp) max_ulp = r.max_ulp;
    if (r.mismatches) {
      uint32_t size = element_size(t->dtype);
      head(index, c);
      str(" FAIL");
      field("output", (uint32_t)i);
      field("index", r.first);
      hex_element("got", (const uint8_t *)y.data + (size_t)r.first * size, size);
      hex_element("want", c->expected[i] + (size_t)r.first * size, size);
      field("mismatches", r.mismatches);
      field("maxulp", r.max_ulp);
      endl();
      return 1;
    }
    if (guards[i]) {
      for (uint32_t k = 0; k < OC_GUARD; k++) {
        if (guards[i][k] != OC_MARK) {
          head(index, c);
          str(" FAIL");
          field("output", (uint32_t)i);
          field("overrun", k);
          endl();
          return 1;
        }
      }
    }
  }
  for (int32_t i = 0; i < m->num_inputs; i++) {
    TnCrtTensor x;
    tn_crt_input(&inst, i, &x);
    if (!same(x.data, c->inputs[i], m->inputs[i].nbytes)) {
      head(index, c);
      str(" FAIL");
      field("input", (uint32_t)i);
      str(" written");
      endl();
      return 1;
    }
  }
  head(index, c);
  str(" PASS");
  field("outputs", (uint32_t)m->num_outputs);
  field("maxulp", max_ulp);
  endl();
  return 0;
}

int32_t oc_run_all(void) {
  int32_t failed = 0;
  for (int32_t i = 0; i < oc_num_cases; i++) failed += run_case(i, &oc_cases[i]);
  str("cases ");
  i32(oc_num_cases);
  str(" failed ");
  i32(failed);
  endl();
  return failed;
}
