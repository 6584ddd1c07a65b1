/*
 * any.c: ownership, checked casts, and key equality/hash for TnAny.
 *
 * Strings come in three forms (a borrowed C string, up to seven inline bytes,
 * a tn.String object) and bytes likewise; everything that compares or hashes
 * them goes through one "view" helper so the forms are interchangeable.
 * Numbers compare by value across int, bool and float, following Python,
 * because the Python binding is where most maps are built.
 */
#include "core/glib_internal.h"

#include <math.h>
#include <stdio.h>


/* The bytes of a string or bytes value in any form. An invalid one (a
 * small value longer than its inline room or with no NUL after it, a NULL
 * pointer) is not text: nothing reads past what the value holds. */
TnTextKind tn__any_text(const TnAny *a, const char **data, size_t *size) {
  switch (a->type_index) {
    case TN_TYPE_RAW_STR:
      if (a->v_c_str == NULL) return TN_TEXT_NONE;
      *data = a->v_c_str;
      *size = strlen(a->v_c_str);
      return TN_TEXT_STR;
    case TN_TYPE_SMALL_STR:
      if (a->small_len > TN_SMALL_STR_MAX || a->v_small[a->small_len] != 0)
        return TN_TEXT_NONE;
      *data = a->v_small;
      *size = a->small_len;
      return TN_TEXT_STR;
    case TN_TYPE_STRING:
      if (a->v_obj == NULL) return TN_TEXT_NONE;
      *data = ((const TnStringObj *)a->v_obj)->data;
      *size = (size_t)((const TnStringObj *)a->v_obj)->size;
      return TN_TEXT_STR;
    case TN_TYPE_RAW_BYTES:
      if (a->v_bytes_ptr == NULL ||
          (a->v_bytes_ptr->data == NULL && a->v_bytes_ptr->size > 0))
        return TN_TEXT_NONE;
      *data = a->v_bytes_ptr->data;
      *size = a->v_bytes_ptr->size;
      return TN_TEXT_BYTES;
    case TN_TYPE_SMALL_BYTES:
      if (a->small_len > TN_SMALL_STR_MAX || a->v_small[a->small_len] != 0)
        return TN_TEXT_NONE;
      *data = a->v_small;
      *size = a->small_len;
      return TN_TEXT_BYTES;
    case TN_TYPE_BYTES:
      if (a->v_obj == NULL) return TN_TEXT_NONE;
      *data = ((const TnStringObj *)a->v_obj)->data;
      *size = (size_t)((const TnStringObj *)a->v_obj)->size;
      return TN_TEXT_BYTES;
    default:
      return TN_TEXT_NONE;
  }
}

int tn__any_check(const TnAny *a, const char *who) {
  int32_t t = a->type_index;
  if (t >= TN_TYPE_STATIC_OBJECT_BEGIN) {
    if (a->v_obj == NULL)
      return tn_error_raise_in(TN_ERR_TYPE, who, "invalid value: type index "
                               "%d (an object) with a NULL object", t);
    return 0;
  }
  switch (t) {
    case TN_TYPE_NONE:
    case TN_TYPE_INT:
    case TN_TYPE_BOOL:
    case TN_TYPE_FLOAT:
    case TN_TYPE_OPAQUE_PTR:
    case TN_TYPE_DATA_TYPE:
    case TN_TYPE_DEVICE:
    case TN_TYPE_DLTENSOR_PTR:
      return 0;
    case TN_TYPE_RAW_STR:
      if (a->v_c_str != NULL) return 0;
      return tn_error_raise_in(TN_ERR_TYPE, who, "invalid value: a const "
                               "char* that is NULL");
    case TN_TYPE_RAW_BYTES:
      if (a->v_bytes_ptr != NULL &&
          (a->v_bytes_ptr->data != NULL || a->v_bytes_ptr->size == 0))
        return 0;
      return tn_error_raise_in(TN_ERR_TYPE, who, "invalid value: a "
                               "TnByteArray* that is NULL or has NULL data");
    case TN_TYPE_SMALL_STR:
    case TN_TYPE_SMALL_BYTES:
      if (a->small_len > TN_SMALL_STR_MAX)
        return tn_error_raise_in(TN_ERR_TYPE, who, "invalid value: small %s "
                                 "of length %u (at most %d)",
                                 t == TN_TYPE_SMALL_STR ? "string" : "bytes",
                                 a->small_len, TN_SMALL_STR_MAX);
      if (a->v_small[a->small_len] != 0) /* readers rely on the NUL */
        return tn_error_raise_in(TN_ERR_TYPE, who, "invalid value: small %s "
                                 "of length %u is not followed by a NUL",
                                 t == TN_TYPE_SMALL_STR ? "string" : "bytes",
                                 a->small_len);
      return 0;
    default:
      return tn_error_raise_in(TN_ERR_TYPE, who, "invalid value: type index "
                               "%d is not assigned", t);
  }
}

TN_API void tn_any_copy(TnAny *dst, const TnAny *src) {
  if (dst == NULL) return;
  if (src == NULL) {
    *dst = tn_any_none();
    return;
  }
  tn__any_move(dst, src);
  if (tn_any_is_object(dst)) tn__retain(dst->v_obj);
}

/* Everything tn__any_own does not copy inline: small strings and bytes
 * (their length checked), raw strings and bytes (copied), and the values
 * that cannot be stored (a borrowed DLTensor*, an invalid value). */
int tn__any_to_owned_slow(TnAny *dst, const TnAny *src, const char *who) {
  int32_t t = src->type_index;
  if (t == TN_TYPE_DLTENSOR_PTR)
    return tn_error_raise_in(TN_ERR_TYPE, who, "a borrowed DLTensor* cannot "
                             "be stored; wrap it in a tn.Tensor first");
  if (tn__any_check(src, who)) return -1;
  if (t == TN_TYPE_SMALL_STR || t == TN_TYPE_SMALL_BYTES) {
    /* rebuilt, so the unused bytes are zero (a NUL ends the text, and equal
     * values are bytewise equal, as map keys need) */
    TnAny a = {t, src->small_len, {0}};
    memcpy(a.v_small, src->v_small, src->small_len);
    *dst = a;
    return 0;
  }
  const char *data = NULL;
  size_t size = 0;
  TnTextKind k = tn__any_text(src, &data, &size); /* raw str or bytes */
  if (size <= TN_SMALL_STR_MAX) {
    TnAny a = {k == TN_TEXT_STR ? TN_TYPE_SMALL_STR : TN_TYPE_SMALL_BYTES,
               (uint32_t)size,
               {0}};
    if (size) memcpy(a.v_small, data, size);
    *dst = a;
    return 0;
  }
  TnObject *o = tn__string_new(k == TN_TEXT_STR ? TN_TYPE_STRING : TN_TYPE_BYTES,
                               data, size, who);
  if (o == NULL) return -1;
  *dst = tn_any_obj(o);
  return 0;
}

TN_API int tn_any_to_owned(TnAny *dst, const TnAny *src) {
  if (dst == NULL) return tn__raise_null("tn_any_to_owned", "dst");
  if (src == NULL) return tn__raise_null("tn_any_to_owned", "src");
  return tn__any_own(dst, src);
}

TN_API void tn_any_clear(TnAny *a) {
  if (a) tn__any_clear(a);
}

TN_API const char *tn_any_type_key(const TnAny *a) {
  if (a == NULL) return "NULL";
  return tn__type_key_or(a->type_index, "<unregistered type>");
}

static int cast_error(const char *func, const char *want, const TnAny *a) {
  return tn_error_raise_in(TN_ERR_TYPE, func, "expected %s, got %s", want,
                           tn_any_type_key(a));
}

#define CHECK_ARGS(func)                                  \
  do {                                                    \
    if (a == NULL) return tn__raise_null(func, "a");      \
    if (out == NULL) return tn__raise_null(func, "out");  \
  } while (0)

TN_API int tn_any_as_int(const TnAny *a, int64_t *out) {
  CHECK_ARGS("tn_any_as_int");
  if (a->type_index == TN_TYPE_INT || a->type_index == TN_TYPE_BOOL) {
    *out = a->v_int64;
    return 0;
  }
  return cast_error("tn_any_as_int", "int", a);
}

TN_API int tn_any_as_bool(const TnAny *a, int *out) {
  CHECK_ARGS("tn_any_as_bool");
  if (a->type_index == TN_TYPE_BOOL || a->type_index == TN_TYPE_INT) {
    *out = a->v_int64 != 0;
    return 0;
  }
  return cast_error("tn_any_as_bool", "bool", a);
}

TN_API int tn_any_as_float(const TnAny *a, double *out) {
  CHECK_ARGS("tn_any_as_float");
  switch (a->type_index) {
    case TN_TYPE_FLOAT:
      *out = a->v_float64;
      return 0;
    case TN_TYPE_INT:
    case TN_TYPE_BOOL:
      *out = (double)a->v_int64;
      return 0;
    default:
      return cast_error("tn_any_as_float", "float", a);
  }
}

TN_API int tn_any_as_ptr(const TnAny *a, void **out) {
  CHECK_ARGS("tn_any_as_ptr");
  switch (a->type_index) {
    case TN_TYPE_OPAQUE_PTR:
    case TN_TYPE_DLTENSOR_PTR:
      *out = a->v_ptr;
      return 0;
    case TN_TYPE_NONE:
      *out = NULL;
      return 0;
    default:
      return cast_error("tn_any_as_ptr", "void*", a);
  }
}

TN_API int tn_any_as_dtype(const TnAny *a, DLDataType *out) {
  CHECK_ARGS("tn_any_as_dtype");
  if (a->type_index == TN_TYPE_DATA_TYPE) {
    *out = a->v_dtype;
    return 0;
  }
  const char *s;
  size_t n;
  if (tn__any_text(a, &s, &n) == TN_TEXT_STR) {
    if (tn_dtype_parse(s, out) == 0) return 0;
    TnObject *cause = tn_error_take_raised();
    int rc = TN_RAISE(TYPE, "expected DataType, got the string '%s', which is "
                      "not a DataType", s);
    tn_error_set_cause(tn_error_peek_raised(), cause);
    tn_object_release(cause);
    return rc;
  }
  if (tn__any_check(a, "tn_any_as_dtype")) return -1;
  return cast_error("tn_any_as_dtype", "DataType", a);
}

TN_API int tn_any_as_device(const TnAny *a, DLDevice *out) {
  CHECK_ARGS("tn_any_as_device");
  if (a->type_index == TN_TYPE_DEVICE) {
    *out = a->v_device;
    return 0;
  }
  return cast_error("tn_any_as_device", "Device", a);
}

TN_API int tn_any_as_str(const TnAny *a, const char **data, size_t *size) {
  if (a == NULL) return tn__raise_null("tn_any_as_str", "a");
  if (data == NULL) return tn__raise_null("tn_any_as_str", "data");
  const char *d;
  size_t n;
  if (tn__any_text(a, &d, &n) != TN_TEXT_STR) {
    if (tn__any_check(a, "tn_any_as_str")) return -1;
    return cast_error("tn_any_as_str", "str", a);
  }
  *data = d;
  if (size) *size = n;
  return 0;
}

TN_API int tn_any_as_bytes(const TnAny *a, const char **data, size_t *size) {
  if (a == NULL) return tn__raise_null("tn_any_as_bytes", "a");
  if (data == NULL) return tn__raise_null("tn_any_as_bytes", "data");
  const char *d;
  size_t n;
  if (tn__any_text(a, &d, &n) == TN_TEXT_NONE) {
    if (tn__any_check(a, "tn_any_as_bytes")) return -1;
    return cast_error("tn_any_as_bytes", "bytes", a);
  }
  *data = d;
  if (size) *size = n;
  return 0;
}

TN_API int tn_any_as_object(const TnAny *a, int32_t type_index,
                            TnObject **out) {
  CHECK_ARGS("tn_any_as_object");
  if (tn_any_is_object(a) && tn__is_instance(a->v_obj, type_index)) {
    *out = a->v_obj;
    return 0;
  }
  return cast_error("tn_any_as_object", tn__type_key_or(type_index, "?"), a);
}

/* ------------------------------------------------------------------------ */
/* Key equality and hash                                                     */
/* ------------------------------------------------------------------------ */

static bool is_number(int32_t t) {
  return t == TN_TYPE_INT || t == TN_TYPE_BOOL || t == TN_TYPE_FLOAT;
}

/* Exact int/float comparison: 2^53 + 1 is not equal to 2^53 as a double. */
/* d as an int64 when it is a whole number in range (NaN, infinities and
 * values past 2^63 are not: casting those is undefined behaviour). */
static bool float_as_int(double d, int64_t *out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    return false;
  if (d != floor(d)) return false;
  *out = (int64_t)d;
  return true;
}

static bool int_equals_float(int64_t i, double d) {
  int64_t v;
  return float_as_int(d, &v) && v == i;
}

static uint64_t str_hash(const char *data, size_t size) {
  uint64_t h = tn__hash_bytes(data, size);
  return h ? h : 1;
}

/*
 * Equality and hash take any bits and never fail: an invalid value (see
 * tn__any_check: an unassigned type index, a small string or bytes longer
 * than 7, a NULL pointer where text or an object belongs) equals only a
 * value with the very same bits, and hashes by its type and bits. Nothing
 * reads beyond the 16 bytes of such a value.
 */
TN_API int tn_any_equal(const TnAny *a, const TnAny *b) {
  if (a == NULL || b == NULL) return a == b;
  int32_t ta = a->type_index, tb = b->type_index;
  if (ta == tb && ta != TN_TYPE_FLOAT && ta != TN_TYPE_RAW_STR &&
      ta != TN_TYPE_RAW_BYTES && ta != TN_TYPE_STRING &&
      ta != TN_TYPE_BYTES) {
    /* Same plain type or same object type: bytewise / identity. */
    return tn__any_same_bits(a, b);
  }
  if (is_number(ta) && is_number(tb)) {
    if (ta != TN_TYPE_FLOAT && tb != TN_TYPE_FLOAT)
      return a->v_int64 == b->v_int64;
    if (ta == TN_TYPE_FLOAT && tb == TN_TYPE_FLOAT)
      return a->v_float64 == b->v_float64;
    return ta == TN_TYPE_FLOAT ? int_equals_float(b->v_int64, a->v_float64)
                               : int_equals_float(a->v_int64, b->v_float64);
  }
  const char *da, *db;
  size_t na, nb;
  TnTextKind ka = tn__any_text(a, &da, &na), kb = tn__any_text(b, &db, &nb);
  if (ka != TN_TEXT_NONE && ka == kb)
    return na == nb && (da == db || memcmp(da, db, na) == 0);
  /* an invalid text value (a NULL pointer) equals only its own bits */
  return ta == tb && ka == TN_TEXT_NONE && kb == TN_TEXT_NONE &&
         tn__any_same_bits(a, b);
}

TN_API uint64_t tn_any_hash(const TnAny *a) {
  if (a == NULL) return 0;
  switch (a->type_index) {
    case TN_TYPE_INT:
    case TN_TYPE_BOOL:
      return tn__mix64((uint64_t)a->v_int64);
    case TN_TYPE_FLOAT: {
      double d = a->v_float64;
      int64_t whole;
      if (float_as_int(d, &whole)) return tn__mix64((uint64_t)whole);
      if (d == 0.0) return tn__mix64(0); /* -0.0 == 0.0 */
      uint64_t bits;
      memcpy(&bits, &d, 8);
      return tn__mix64(bits ^ UINT64_C(0x5bd1e995));
    }
    case TN_TYPE_STRING:
    case TN_TYPE_BYTES:
      if (a->v_obj == NULL) break;
      return tn__string_hash(a->v_obj);
    default: {
      const char *d;
      size_t n;
      if (tn__any_text(a, &d, &n) != TN_TEXT_NONE) return str_hash(d, n);
      if (tn_any_is_object(a) && a->v_obj != NULL)
        return tn__mix64((uint64_t)(uintptr_t)a->v_obj);
      break;
    }
  }
  /* other plain values, and invalid ones: by type and bits */
  return tn__mix64((uint64_t)a->v_int64 ^ ((uint64_t)a->type_index << 56));
}

/* ------------------------------------------------------------------------ */
/* Short rendering for messages                                              */
/* ------------------------------------------------------------------------ */

static void repr_text(GString *out, const char *d, size_t n, char quote) {
  const size_t limit = 60;
  g_string_append_c(out, quote);
  for (size_t i = 0; i < n && i < limit; i++) {
    unsigned char c = (unsigned char)d[i];
    if (c == (unsigned char)quote || c == '\\')
      g_string_append_printf(out, "\\%c", c);
    else if (c == '\n') g_string_append(out, "\\n");
    else if (c < 0x20 || c == 0x7f) g_string_append_printf(out, "\\x%02x", c);
    else g_string_append_c(out, (char)c);
  }
  if (n > limit) g_string_append(out, "...");
  g_string_append_c(out, quote);
}

void tn__any_repr(GString *out, const TnAny *a) {
  if (a == NULL) {
    g_string_append(out, "NULL");
    return;
  }
  const char *d;
  size_t n;
  char buf[64];
  switch (a->type_index) {
    case TN_TYPE_NONE:
      g_string_append(out, "None");
      return;
    case TN_TYPE_INT:
      g_string_append_printf(out, "%" G_GINT64_FORMAT, a->v_int64);
      return;
    case TN_TYPE_BOOL:
      g_string_append(out, a->v_int64 ? "True" : "False");
      return;
    case TN_TYPE_FLOAT:
      g_string_append_printf(out, "%.17g", a->v_float64);
      return;
    case TN_TYPE_DATA_TYPE:
      tn_dtype_print(a->v_dtype, buf, sizeof buf);
      g_string_append_printf(out, "DataType(%s)", buf);
      return;
    case TN_TYPE_DEVICE:
      tn_device_print(a->v_device, buf, sizeof buf);
      g_string_append_printf(out, "Device(%s)", buf);
      return;
    default:
      break;
  }
  TnTextKind k = tn__any_text(a, &d, &n);
  if (k == TN_TEXT_STR) {
    repr_text(out, d, n, '\'');
  } else if (k == TN_TEXT_BYTES) {
    g_string_append_c(out, 'b');
    repr_text(out, d, n, '\'');
  } else if (tn_any_is_object(a)) {
    g_string_append_printf(out, "<%s at %p>", tn_any_type_key(a),
                           (void *)a->v_obj);
  } else {
    g_string_append_printf(out, "<%s %p>", tn_any_type_key(a), a->v_ptr);
  }
}
