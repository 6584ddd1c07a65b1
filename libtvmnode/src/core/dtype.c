/*
 * dtype.c: text forms of DataType ("float32", "int8", "uint8x4", "bool",
 * "bfloat16", "float8_e4m3fn", "handle", "void") and Device ("cpu:0",
 * "cuda:1").
 *
 * The grammar is small and closed, so it is parsed by hand: a code name,
 * optional bits, optional "x<lanes>". Every rejection says what was wrong
 * and quotes the input, because these strings usually come from users.
 */
#include "core/glib_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  const char *name;
  uint8_t code;
  int default_bits; /* 0: bits are required */
} CodeName;

/* Longest names first so "bfloat" wins over "float" and "uint" over "int". */
static const CodeName kCodes[] = {
    {"bfloat", kDLBfloat, 16}, {"complex", kDLComplex, 64},
    {"float", kDLFloat, 32},   {"uint", kDLUInt, 32},
    {"int", kDLInt, 32},
};

/*
 * The DLPack 1.1 small floats. Each code has one width, so the name carries
 * no bits: "float8_e4m3fn", "float6_e2m3fn", "float4_e2m1fn", with lanes
 * after an 'x' ("float8_e5m2x4"). Within a family the longer variant comes
 * first, so "e4m3fn" is tried before "e4m3".
 */
typedef struct {
  const char *variant;
  uint8_t code;
  uint8_t bits;
} SmallFloat;

static const SmallFloat kSmallFloats[] = {
    {"e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
    {"e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
    {"e4m3fn", kDLFloat8_e4m3fn, 8},
    {"e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
    {"e8m0fnu", kDLFloat8_e8m0fnu, 8},
    {"e3m4", kDLFloat8_e3m4, 8},
    {"e4m3", kDLFloat8_e4m3, 8},
    {"e5m2", kDLFloat8_e5m2, 8},
    {"e2m3fn", kDLFloat6_e2m3fn, 6},
    {"e3m2fn", kDLFloat6_e3m2fn, 6},
    {"e2m1fn", kDLFloat4_e2m1fn, 4},
};

/* Prefixes of the small-float names: the long one and the short spellings
 * ("fp8_e4m3fn", "f8_e4m3fn") other libraries accept. */
static const struct {
  const char *prefix;
  uint8_t bits;
} kSmallFloatPrefixes[] = {
    {"float8_", 8}, {"float6_", 6}, {"float4_", 4}, {"fp8_", 8},
    {"fp6_", 6},    {"fp4_", 4},    {"f8_", 8},     {"f6_", 6},
    {"f4_", 4},
};

static const SmallFloat *small_float_of(uint8_t code) {
  for (size_t i = 0; i < G_N_ELEMENTS(kSmallFloats); i++)
    if (kSmallFloats[i].code == code) return &kSmallFloats[i];
  return NULL;
}

static int parse_error(const char *text, const char *why) {
  return tn_error_raise_in(TN_ERR_VALUE, "tn_dtype_parse",
                           "cannot parse '%s' as a DataType: %s", text, why);
}

/* Parse a positive decimal at *p (advancing it); -1 if none or too large. */
static long parse_uint(const char **p, long max) {
  const char *s = *p;
  if (*s < '0' || *s > '9') return -1;
  long v = 0;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (*s - '0');
    if (v > max) return -1;
    s++;
  }
  *p = s;
  return v;
}

TN_API int tn_dtype_parse(const char *text, DLDataType *out) {
  if (text == NULL) return tn__raise_null("tn_dtype_parse", "text");
  if (out == NULL) return tn__raise_null("tn_dtype_parse", "out");
  DLDataType t;
  const char *p = text;
  if (strcmp(text, "void") == 0) {
    t.code = kDLOpaqueHandle, t.bits = 0, t.lanes = 0;
    *out = t;
    return 0;
  }
  size_t prefix_len = 0;
  int family = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(kSmallFloatPrefixes); i++) {
    size_t n = strlen(kSmallFloatPrefixes[i].prefix);
    if (strncmp(text, kSmallFloatPrefixes[i].prefix, n) == 0) {
      prefix_len = n, family = kSmallFloatPrefixes[i].bits;
      break;
    }
  }
  if (family) {
    const SmallFloat *sf = NULL;
    p = text + prefix_len;
    for (size_t i = 0; i < G_N_ELEMENTS(kSmallFloats); i++) {
      size_t n = strlen(kSmallFloats[i].variant);
      if (kSmallFloats[i].bits == family &&
          strncmp(p, kSmallFloats[i].variant, n) == 0 &&
          (p[n] == '\0' || p[n] == 'x' || p[n] == '_')) {
        sf = &kSmallFloats[i];
        p += n;
        break;
      }
    }
    if (sf == NULL)
      return parse_error(text, family == 8
                         ? "unknown float8 variant (expected e3m4, e4m3, "
                           "e4m3b11fnuz, e4m3fn, e4m3fnuz, e5m2, e5m2fnuz or "
                           "e8m0fnu)"
                         : family == 6
                         ? "unknown float6 variant (expected e2m3fn or e3m2fn)"
                         : "unknown float4 variant (expected e2m1fn)");
    /* "float4_e2m1fn_x2": the pair of float4s a byte holds, as torch
     * spells it */
    if (sf->bits == 4 && p[0] == '_' && p[1] == 'x') p++;
    t.code = sf->code, t.bits = sf->bits, t.lanes = 1;
  } else if (strncmp(text, "handle", 6) == 0) {
    t.code = kDLOpaqueHandle, t.bits = 64, t.lanes = 1;
    p += 6;
  } else if (strncmp(text, "bool", 4) == 0) {
    t.code = kDLBool, t.bits = 8, t.lanes = 1;
    p += 4;
  } else {
    const CodeName *cn = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(kCodes); i++) {
      size_t n = strlen(kCodes[i].name);
      if (strncmp(text, kCodes[i].name, n) == 0 &&
          (text[n] == '\0' || text[n] == 'x' ||
           (text[n] >= '0' && text[n] <= '9'))) {
        cn = &kCodes[i];
        p += n;
        break;
      }
    }
    if (cn == NULL)
      return parse_error(text,
                         "unknown type code (expected int, uint, float, "
                         "bfloat, complex, bool, handle, void, or "
                         "float8_/float6_/float4_ and a variant)");
    t.code = cn->code;
    t.lanes = 1;
    long bits = cn->default_bits;
    if (*p >= '0' && *p <= '9') {
      bits = parse_uint(&p, 255);
      if (bits <= 0) return parse_error(text, "bits must be in [1, 255]");
    }
    if (cn->code == kDLFloat && bits != 8 && bits != 16 && bits != 32 &&
        bits != 64)
      return parse_error(text, "float bits must be 8, 16, 32 or 64");
    if (cn->code == kDLBfloat && bits != 16)
      return parse_error(text, "bfloat bits must be 16");
    if (cn->code == kDLComplex && bits != 64 && bits != 128)
      return parse_error(text, "complex bits must be 64 or 128");
    t.bits = (uint8_t)bits;
  }
  if (*p == 'x') {
    p++;
    long lanes = parse_uint(&p, 65535);
    if (lanes <= 0) return parse_error(text, "lanes must be in [1, 65535]");
    t.lanes = (uint16_t)lanes;
  }
  if (*p != '\0') return parse_error(text, "unexpected trailing characters");
  *out = t;
  return 0;
}

TN_API int tn_dtype_print(DLDataType t, char *buf, size_t size) {
  if (buf == NULL && size != 0) return tn__raise_null("tn_dtype_print", "buf");
  const char *name = NULL;
  int n;
  if (t.code == kDLOpaqueHandle && t.bits == 0 && t.lanes == 0)
    return snprintf(buf, size, "void");
  switch (t.code) {
    case kDLInt: name = "int"; break;
    case kDLUInt: name = "uint"; break;
    case kDLFloat: name = "float"; break;
    case kDLBfloat: name = "bfloat"; break;
    case kDLComplex: name = "complex"; break;
    case kDLBool: name = "bool"; break;
    case kDLOpaqueHandle: name = "handle"; break;
    default: {
      const SmallFloat *sf = small_float_of(t.code);
      if (sf == NULL)
        return TN_RAISE(VALUE, "unknown type code %u (bits %u, lanes %u)",
                        t.code, t.bits, t.lanes);
      if (t.bits != sf->bits)
        return TN_RAISE(VALUE, "type code %u (float%u_%s) has %u bits, not %u",
                        t.code, sf->bits, sf->variant, sf->bits, t.bits);
      n = snprintf(buf, size, "float%u_%s", sf->bits, sf->variant);
      if (t.lanes != 1) {
        size_t used = (size_t)n < size ? (size_t)n : size;
        n += snprintf(buf ? buf + used : NULL, size - used, "x%u", t.lanes);
      }
      return n;
    }
  }
  bool implicit_bits = (t.code == kDLBool && t.bits == 8) ||
                       (t.code == kDLOpaqueHandle && t.bits == 64);
  if (implicit_bits) n = snprintf(buf, size, "%s", name);
  else n = snprintf(buf, size, "%s%u", name, t.bits);
  if (t.lanes != 1) {
    size_t used = (size_t)n < size ? (size_t)n : size;
    n += snprintf(buf ? buf + used : NULL, size - used, "x%u", t.lanes);
  }
  return n;
}

const char *tn__dtype_text(DLDataType t, char *buf, size_t size) {
  int n = tn_dtype_print(t, buf, size);
  if (n < 0 || (size_t)n >= size) {
    if (n < 0) tn_error_set_raised(NULL);
    snprintf(buf, size, "DataType(%u, %u, %u)", t.code, t.bits, t.lanes);
  }
  return buf;
}

const char *tn__device_text(DLDevice d, char *buf, size_t size) {
  if (tn_device_print(d, buf, size) < 0) {
    tn_error_set_raised(NULL);
    snprintf(buf, size, "Device(%d, %d)", (int)d.device_type, d.device_id);
  }
  return buf;
}

/* Whether a DLDataType is one the text forms name and read back. */
bool tn__dtype_valid(DLDataType t) {
  char buf[64];
  DLDataType back;
  int n = tn_dtype_print(t, buf, sizeof buf);
  bool ok = n > 0 && (size_t)n < sizeof buf && tn_dtype_parse(buf, &back) == 0 &&
            back.code == t.code && back.bits == t.bits && back.lanes == t.lanes;
  if (!ok) tn_error_set_raised(NULL);
  return ok;
}

static const struct {
  const char *name;
  int type;
} kDevices[] = {
    {"cpu", kDLCPU},          {"cuda", kDLCUDA},
    {"cuda_host", kDLCUDAHost}, {"opencl", kDLOpenCL},
    {"vulkan", kDLVulkan},    {"metal", kDLMetal},
    {"vpi", kDLVPI},          {"rocm", kDLROCM},
    {"rocm_host", kDLROCMHost}, {"ext_dev", kDLExtDev},
    {"cuda_managed", kDLCUDAManaged}, {"oneapi", kDLOneAPI},
    {"webgpu", kDLWebGPU},    {"hexagon", kDLHexagon},
    {"maia", kDLMAIA},
};

TN_API int tn_device_parse(const char *text, DLDevice *out) {
  if (text == NULL) return tn__raise_null("tn_device_parse", "text");
  if (out == NULL) return tn__raise_null("tn_device_parse", "out");
  const char *colon = strchr(text, ':');
  size_t n = colon ? (size_t)(colon - text) : strlen(text);
  for (size_t i = 0; i < G_N_ELEMENTS(kDevices); i++) {
    if (strlen(kDevices[i].name) != n || strncmp(text, kDevices[i].name, n))
      continue;
    long id = 0;
    if (colon) {
      const char *p = colon + 1;
      id = parse_uint(&p, INT32_MAX);
      if (id < 0 || *p != '\0')
        return TN_RAISE(VALUE, "cannot parse '%s' as a Device: the id after "
                        "':' must be a non-negative integer", text);
    }
    out->device_type = (DLDeviceType)kDevices[i].type;
    out->device_id = (int32_t)id;
    return 0;
  }
  return TN_RAISE(VALUE,
                  "cannot parse '%s' as a Device: unknown device type '%.*s'",
                  text, (int)n, text);
}

TN_API int tn_device_print(DLDevice d, char *buf, size_t size) {
  if (buf == NULL && size != 0) return tn__raise_null("tn_device_print", "buf");
  for (size_t i = 0; i < G_N_ELEMENTS(kDevices); i++)
    if (kDevices[i].type == (int)d.device_type)
      return snprintf(buf, size, "%s:%d", kDevices[i].name, d.device_id);
  return TN_RAISE(VALUE, "unknown device type %d", (int)d.device_type);
}
