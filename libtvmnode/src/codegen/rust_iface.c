/*
 * rust_iface.c: tvmgen_<model>.rs, the Embedded Rust twin of the C header
 * tvmgen_<model>.h (the interface of TVM's "Embedded Rust" RFC).
 *
 * The module is a safe veneer over the generated C, not a second
 * implementation: #[repr(C)] structs laid out like the header's, extern
 * declarations of the generated symbols, and constructors that take
 * arrays of the model's exact sizes and element types. What the C code can
 * only check at run time (a buffer's size and type, a pool's size and
 * alignment, a struct of another model) is therefore a compile error in
 * Rust; pools are a #[repr(align)] type for the same reason. What stays
 * dynamic (a device handle, a failing kernel or hook, a plain byte array
 * offered as a pool) comes back as Err(Error) carrying the crt's status
 * codes, whose names and texts come from status.h's X-macro so that the two
 * cannot drift. The text uses only `core`, so it builds in a #![no_std]
 * crate, under the 2021 and 2024 editions (Rust 1.82 or later, for `unsafe
 * extern` blocks with `safe` items), and it asserts at compile time the
 * facts of the plan its unsafe blocks rely on: sizes, and in-pool views in
 * range, aligned and disjoint.
 */
#include "codegen/codegen_internal.h"

#include <inttypes.h>
#include <string.h>

#define P(...) g_string_append_printf(out, __VA_ARGS__)

/* The crt's status table, from the X-macro status.h is written with. */
typedef struct {
  const char *name, *doc;
  int code;
} Status;

static const Status g_status[] = {
#define STATUS_ROW_(name, code, doc) {#name, doc, code},
    TN_CRT_STATUS_MAP(STATUS_ROW_)
#undef STATUS_ROW_
};

/* Rust keywords that a C identifier may spell: written as raw identifiers,
 * except the few that cannot be raw, which get a trailing underscore. */
static const char *const g_keywords[] = {
    "as", "async", "await", "break", "const", "continue", "dyn", "else",
    "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let",
    "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while",
    "abstract", "become", "box", "do", "final", "gen", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield", NULL};
static const char *const g_unraw[] = {"self", "Self", "super", "crate", "_",
                                      NULL};

static bool in_list(const char *const *l, const char *s) {
  for (; *l; l++)
    if (strcmp(*l, s) == 0) return true;
  return false;
}

/* A C identifier as a Rust identifier (a field or parameter name). */
static char *rs_ident(const char *c) {
  if (in_list(g_unraw, c)) return g_strconcat(c, "_", NULL);
  if (in_list(g_keywords, c)) return g_strconcat("r#", c, NULL);
  return g_strdup(c);
}

/* "global_workspace" -> "GlobalWorkspace", for type names. */
static char *camel(const char *s) {
  GString *r = g_string_new(NULL);
  bool up = true;
  for (; *s; s++) {
    if (*s == '_') {
      up = true;
      continue;
    }
    g_string_append_c(r, up ? g_ascii_toupper(*s) : *s);
    up = false;
  }
  if (r->len == 0) g_string_append(r, "Unnamed");
  return g_string_free(r, FALSE);
}

/* A Rust string literal's body (the status texts are plain ASCII, but a
 * quote or backslash must not end the literal). */
static void rs_str(GString *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') g_string_append_c(out, '\\');
    g_string_append_c(out, *s);
  }
}

/* The Rust element type of a tensor and its array length. Bool is u8: any
 * byte the C code writes is then a valid value. A type the crt does not
 * name is a byte array. */
typedef struct {
  const char *ty;
  int64_t len;
} Elem;

static Elem elem(const TnAotTensor *t) {
  switch (t->dtype) {
#define DTYPE(N, ID, DL, BITS, C, RS) \
  case N: return (Elem){#RS, t->numel};
    TN_CRT_DTYPES(DTYPE)
#undef DTYPE
    default: return (Elem){"u8", t->nbytes};
  }
}

/* Everything the writers below share: the interface and the names made
 * from it once. */
typedef struct {
  const TnAotInterface *f;
  const char *m;     /* the model, lower case */
  char *M;           /* upper case */
  char **pool_ids;   /* per workspace pool: its Rust identifier */
  char **pool_types; /* ... and its Pool alias */
} W;

/* The inputs (o = 0) or the outputs (1), and the names made of them. */
typedef struct {
  const TnAotTensor *t;
  int32_t n;
  const char *S, *lw, *one, *what; /* Inputs, inputs, input, INPUT */
} Side;

static Side side(const W *w, int o) {
  const TnAotInterface *f = w->f;
  return o ? (Side){f->outputs, f->num_outputs, "Outputs", "outputs",
                    "output", "OUTPUT"}
           : (Side){f->inputs, f->num_inputs, "Inputs", "inputs", "input",
                    "INPUT"};
}

/* ---- layout ----------------------------------------------------------------
 * The text is laid out as rustfmt would lay it out, so that `cargo fmt
 * --check` in an application that mods it in passes. Lines that depend on
 * names are kept short by construction (helpers, short aliases); the one
 * shape that cannot be, a parameter list, goes through sig(). */

#define MAX_WIDTH 100

static GPtrArray *strs(void) { return g_ptr_array_new_with_free_func(g_free); }

/* `head(p, ...)tail` on one line when it fits in MAX_WIDTH columns, else
 * one parameter a line with a trailing comma (rustfmt's "Tall"). */
static void sig(GString *out, int indent, const char *head, GPtrArray *ps,
                const char *tail) {
  size_t width = (size_t)indent + strlen(head) + 2 + strlen(tail);
  for (guint i = 0; i < ps->len; i++)
    width += strlen(g_ptr_array_index(ps, i)) + (i ? 2 : 0);
  P("%*s%s(", indent, "", head);
  if (width <= MAX_WIDTH || ps->len == 0) {
    for (guint i = 0; i < ps->len; i++)
      P("%s%s", i ? ", " : "", (char *)g_ptr_array_index(ps, i));
  } else {
    P("\n");
    for (guint i = 0; i < ps->len; i++)
      P("%*s%s,\n", indent + 4, "", (char *)g_ptr_array_index(ps, i));
    P("%*s", indent, "");
  }
  P(")%s\n", tail);
}

/* ---- the sections, in file order ----------------------------------------- */

static void preamble(const W *w, GString *out) {
  const char *m = w->m;
  P("//! tvmgen_%s.rs: the Rust interface of model '%s', generated by "
    "tvmnode %s\n//! beside tvmgen_%s.h, whose C functions it calls.\n//!\n"
    "//! Include it with `#[path = \".../codegen/host/src/tvmgen_%s.rs\"] "
    "mod tvmgen_%s;`\n//! and link the archive's C sources "
    "(codegen/host/src/*.c, runtime/src/*.c),\n//! with the `cc` crate in "
    "build.rs for example. It uses only `core`, so it\n//! builds in a "
    "`#![no_std]` crate. Every buffer is an array of the model's exact\n"
    "//! size and element type and every pool a [`Pool`] aligned as the "
    "model\n//! needs, so most of what the C code checks at run time holds "
    "by type; what\n//! remains comes back from [`run`] as an [`Error`].\n"
    "#![allow(\n    dead_code,\n    unused_imports,\n    non_snake_case,\n"
    "    non_camel_case_types,\n    non_upper_case_globals\n)]\n\n"
    "use core::ffi::{c_char, c_void};\nuse core::fmt;\nuse core::marker::"
    "PhantomData;\n\n", m, m, tn_version(), m, m, m);
}

static void consts(const W *w, GString *out) {
  const TnAotInterface *f = w->f;
  P("/// The model's name.\npub const MODEL_NAME: &str = \"%s\";\n", w->m);
  for (int o = 0; o < 2; o++) {
    const Side s = side(w, o);
    const char *what = s.what, *lw = s.one;
    for (int32_t i = 0; i < s.n; i++) {
      Elem e = elem(&s.t[i]);
      char *up = g_ascii_strup(s.t[i].name, -1);
      P("/// Bytes of %s `%s`: %" PRId64 " elements of `%s` "
        "(`TVMGEN_%s_%s_SIZE`).\npub const %s_%s_SIZE: usize = %" PRId64
        ";\n/// Elements of %s `%s`.\npub const %s_%s_LEN: usize = %" PRId64
        ";\n", lw, s.t[i].name, e.len, e.ty, w->M, up, what, up, s.t[i].nbytes,
        lw, s.t[i].name, what, up, e.len);
      if (f->io_in_pool)
        P("/// Where %s `%s` lives in workspace pool `%s`.\npub const %s_%s_"
          "OFFSET: usize = %" PRId64 ";\n", lw, s.t[i].name,
          f->pools[s.t[i].pool].name, what, up, s.t[i].offset);
      g_free(up);
    }
  }
  for (int32_t p = 0; p < f->num_pools; p++) {
    char *up = g_ascii_strup(f->pools[p].name, -1);
    P("/// Bytes of workspace pool `%s`\n/// "
      "(`TVMGEN_%s_%s_WORKSPACE_POOL_SIZE`).\npub const %s_WORKSPACE_POOL_"
      "SIZE: usize = %" PRId64 ";\n", f->pools[p].name, w->M, up, up,
      f->pools[p].size);
    g_free(up);
  }
  if (f->num_pools == 1) {
    char *up = g_ascii_strup(f->pools[0].name, -1);
    P("/// Bytes of the workspace pool.\npub const WORKSPACE_POOL_SIZE: usize "
      "= %s_WORKSPACE_POOL_SIZE;\n", up);
    g_free(up);
  }
  if (f->constant_pool_size > 0)
    P("/// Bytes of the constant pool (`TVMGEN_%s_CONSTANT_POOL_SIZE`).\n"
      "pub const CONSTANT_POOL_SIZE: usize = %" PRId64 ";\n", w->M,
      f->constant_pool_size);
  if (f->state_pool_size > 0)
    P("/// Bytes of the state pool (`TVMGEN_%s_STATE_POOL_SIZE`): what the "
      "model keeps\n/// between runs.\npub const STATE_POOL_SIZE: usize = %"
      PRId64 ";\n", w->M, f->state_pool_size);
  P("/// Alignment of every pool's base address, in bytes "
    "(`TVMGEN_%s_ALIGNMENT`).\npub const ALIGNMENT: usize = %" PRId64
    ";\n\n", w->M, f->alignment);
}

/* One of Error's `const fn`s: a `match self` with an arm per status, its
 * code, name or description, and `last` for Unknown. */
typedef enum { M_CODE, M_NAME, M_DOC } Method;

static void error_method(GString *out, char **v, const char *doc,
                         const char *sig, Method what, const char *last) {
  P("\n    /// %s\n    pub const fn %s {\n        match self {\n", doc, sig);
  for (size_t i = 0; i < G_N_ELEMENTS(g_status); i++) {
    if (g_status[i].code == TN_CRT_OK) continue;
    P("            Error::%s => ", v[i]);
    if (what == M_CODE) {
      P("%d", g_status[i].code);
    } else {
      P("\"");
      rs_str(out, what == M_NAME ? g_status[i].name : g_status[i].doc);
      P("\"");
    }
    P(",\n");
  }
  P("            %s,\n        }\n    }\n", last);
}

static void error_enum(GString *out) {
  size_t n = G_N_ELEMENTS(g_status);
  char **v = g_new0(char *, n + 1);
  for (size_t i = 0; i < n; i++) {
    char *lo = g_ascii_strdown(g_status[i].name, -1);
    v[i] = camel(lo);
    g_free(lo);
  }
  P("/// Why a run failed: a status code of the crt "
    "(`tvmnode/crt/status.h`) other\n/// than `OK`.\n#[derive(Debug, Clone, "
    "Copy, PartialEq, Eq, Hash)]\npub enum Error {\n");
  for (size_t i = 0; i < n; i++)
    if (g_status[i].code != TN_CRT_OK)
      P("    /// %s (`TN_CRT_%s`, %d)\n    %s,\n", g_status[i].doc,
        g_status[i].name, g_status[i].code, v[i]);
  P("    /// A status this interface does not know.\n    Unknown(i32),\n}\n\n"
    "impl Error {\n    /// `Ok(())` for status 0 (`TN_CRT_OK`), the error of "
    "any other.\n    pub const fn from_status(status: i32) -> Result<(), "
    "Error> {\n        match status {\n");
  for (size_t i = 0; i < n; i++)
    if (g_status[i].code == TN_CRT_OK)
      P("            %d => Ok(()),\n", g_status[i].code);
    else
      P("            %d => Err(Error::%s),\n", g_status[i].code, v[i]);
  P("            other => Err(Error::Unknown(other)),\n        }\n    }\n");
  error_method(out, v, "The status code.", "code(self) -> i32", M_CODE,
               "Error::Unknown(code) => code");
  error_method(out, v, "The status's name in status.h without `TN_CRT_` "
               "(`\"POOL_MISALIGNED\"`),\n    /// or `\"UNKNOWN\"`.",
               "name(self) -> &'static str", M_NAME,
               "Error::Unknown(_) => \"UNKNOWN\"");
  error_method(out, v, "status.h's one-line description.",
               "description(self) -> &'static str", M_DOC,
               "Error::Unknown(_) => \"unknown status\"");
  P("}\n\nimpl fmt::Display for Error {\n    fn fmt(&self, f: &mut "
    "fmt::Formatter<'_>) -> fmt::Result {\n        write!(\n            f,\n"
    "            \"{} ({}, status {})\",\n            self.description(),\n"
    "            self.name(),\n            self.code()\n        )\n    }\n}"
    "\n\nimpl core::error::Error for Error {}\n\n");
  g_strfreev(v);
}

/* Pool, its aliases, and the helpers the constructors share. */
static void pool_type(const W *w, GString *out) {
  const TnAotInterface *f = w->f;
  P("/// `N` bytes of pool memory, aligned to [`ALIGNMENT`] as the generated "
    "C code\n/// requires (it returns `POOL_MISALIGNED` for a pool that is "
    "not). The\n/// alignment is part of the type, so a pool made of one is "
    "never misaligned.\n#[repr(C, align(%" PRId64 "))]\npub struct Pool<const "
    "N: usize>(pub [u8; N]);\n\nimpl<const N: usize> Pool<N> {\n    /// A "
    "zeroed pool; `const`, so it can initialise a `static`.\n    pub const "
    "fn new() -> Self {\n        Pool([0; N])\n    }\n}\n\nimpl<const N: "
    "usize> Default for Pool<N> {\n    fn default() -> Self {\n        "
    "Self::new()\n    }\n}\n\n", f->alignment);
  for (int32_t p = 0; p < f->num_pools; p++) {
    char *up = g_ascii_strup(f->pools[p].name, -1);
    P("/// Memory for workspace pool `%s`.\npub type %s = Pool<%s_WORKSPACE_"
      "POOL_SIZE>;\n", f->pools[p].name, w->pool_types[p], up);
    g_free(up);
  }
  if (f->constant_pool_size > 0)
    P("/// Memory for the constant pool.\npub type ConstantPool = "
      "Pool<CONSTANT_POOL_SIZE>;\n");
  if (f->state_pool_size > 0)
    P("/// Memory for the state pool: the application keeps it across runs "
      "and\n/// gives it its initial values with [`reset`].\npub type "
      "StatePool = Pool<STATE_POOL_SIZE>;\n");
  if (f->num_pools > 0 || f->constant_pool_size > 0 ||
      f->state_pool_size > 0)
    P("\n");
  P("/// A buffer as the C structs hold it.\nfn ptr<T, const N: usize>("
    "buffer: &mut [T; N]) -> *mut c_void {\n    buffer.as_mut_ptr().cast()\n"
    "}\n\n/// A byte array offered as a pool: `Err(Error::PoolMisaligned)` "
    "unless its\n/// address is a multiple of [`ALIGNMENT`].\nfn aligned"
    "<const N: usize>(bytes: &[u8; N]) -> Result<(), Error> {\n    if "
    "bytes.as_ptr() as usize %% ALIGNMENT == 0 {\n        Ok(())\n    } "
    "else {\n        Err(Error::PoolMisaligned)\n    }\n}\n\n");
  if (f->io_in_pool)
    P("/// The `T` at `offset` bytes into a pool.\n///\n/// # Safety\n///\n"
      "/// `pool` + `offset` is valid, aligned and exclusive for a `T` for "
      "`'p`.\nunsafe fn view<'p, T>(pool: *mut c_void, offset: usize) -> "
      "&'p mut T {\n    // SAFETY: as the caller promises.\n    unsafe { "
      "&mut *pool.cast::<u8>().add(offset).cast::<T>() }\n}\n\n");
}

/* struct Inputs / Outputs over the application's buffers (io not in the
 * pool): laid out like the C structs and passed to C as they are. */
static void io_structs(const W *w, GString *out) {
  for (int o = 0; o < 2; o++) {
    const Side s = side(w, o);
    GPtrArray *ps = strs();
    P("/// The model's %s (`struct tvmgen_%s_%s`): the application's\n/// "
      "buffers, borrowed for `'a`.\n#[repr(C)]\npub struct %s<'a> {\n", s.lw,
      w->m, s.lw, s.S);
    for (int32_t i = 0; i < s.n; i++) {
      char *id = rs_ident(s.t[i].name);
      Elem e = elem(&s.t[i]);
      P("    %s: *mut c_void,\n", id);
      g_ptr_array_add(ps, g_strdup_printf("%s: &'a mut [%s; %" PRId64 "]", id,
                                          e.ty, e.len));
      g_free(id);
    }
    if (s.n == 0) P("    unused: *mut c_void,\n");
    P("    __borrow: PhantomData<&'a mut [u8]>,\n}\n\nimpl<'a> %s<'a> {\n"
      "    /// The %s, in the order of the C header.\n", s.S, s.lw);
    if (s.n > 7) P("    #[allow(clippy::too_many_arguments)]\n");
    sig(out, 4, "pub fn new", ps, " -> Self {");
    P("        %s {\n", s.S);
    for (int32_t i = 0; i < s.n; i++) {
      char *id = rs_ident(s.t[i].name);
      P("            %s: ptr(%s),\n", id, id);
      g_free(id);
    }
    if (s.n == 0) P("            unused: core::ptr::null_mut(),\n");
    P("            __borrow: PhantomData,\n        }\n    }\n}\n\n// SAFETY: "
      "%s stands for exclusive borrows of its buffers, which may\n// move to "
      "another thread as `&mut` may.\nunsafe impl Send for %s<'_> {}\n\n", s.S,
      s.S);
    g_ptr_array_free(ps, TRUE);
  }
}

/* io in the pool: the inputs and outputs are typed views into the pools,
 * borrowed from the WorkspacePools (so none is reachable while the model
 * runs, nor an input while an output, which may share its bytes). */
static void io_views(const W *w, GString *out) {
  for (int o = 0; o < 2; o++) {
    const Side s = side(w, o);
    P("/// The model's %s, where they live in the workspace pools: typed\n"
      "/// views borrowed from [`WorkspacePools`] (see\n/// "
      "[`WorkspacePools::map_%s`]).\npub struct %s<'p> {\n", s.lw, s.lw, s.S);
    for (int32_t i = 0; i < s.n; i++) {
      char *id = rs_ident(s.t[i].name);
      Elem e = elem(&s.t[i]);
      P("    /// %s `%s`.\n    pub %s: &'p mut [%s; %" PRId64 "],\n",
        o ? "Output" : "Input", s.t[i].name, id, e.ty, e.len);
      g_free(id);
    }
    if (s.n == 0) P("    __borrow: PhantomData<&'p mut [u8]>,\n");
    P("}\n\n");
  }
}

static void map_fns(const W *w, GString *out) {
  P("impl<'a> WorkspacePools<'a> {\n");
  for (int o = 0; o < 2; o++) {
    const Side s = side(w, o);
    P("%s    /// The %s in the pools, borrowed from them (what\n    /// "
      "`tvmgen_%s_map_%s` returns, typed).\n    pub fn map_%s(&mut self) -> "
      "%s<'_> {\n", o ? "\n" : "", s.lw, w->m, s.lw, s.lw, s.S);
    if (s.n == 0) {
      P("        %s {\n            __borrow: PhantomData,\n        }\n    }\n",
        s.S);
      continue;
    }
    P("        // SAFETY: the pools are live, exclusive, aligned and of the "
      "model's\n        // sizes (their constructors' types and checks), and "
      "the offsets are\n        // asserted at the end of this file to be "
      "in range, aligned and apart:\n        // each view is a valid, "
      "exclusive array for the borrow of self.\n        unsafe {\n"
      "            %s {\n", s.S);
    for (int32_t i = 0; i < s.n; i++) {
      char *id = rs_ident(s.t[i].name);
      char *up = g_ascii_strup(s.t[i].name, -1);
      P("                %s: view(self.%s, %s_%s_OFFSET),\n", id,
        w->pool_ids[s.t[i].pool], o ? "OUTPUT" : "INPUT", up);
      g_free(up), g_free(id);
    }
    P("            }\n        }\n    }\n");
  }
  P("}\n\n");
  for (int o = 0; o < 2; o++) {
    const Side s = side(w, o);
    P("/// The %s in the pools; see [`WorkspacePools::map_%s`].\npub fn "
      "map_%s<'p>(workspace_pools: &'p mut WorkspacePools<'_>) -> %s<'p> {\n"
      "    workspace_pools.map_%s()\n}\n\n", s.lw, s.lw, s.lw, s.S, s.lw);
  }
}

static void workspace_pools(const W *w, GString *out) {
  const TnAotInterface *f = w->f;
  int32_t n = f->num_pools;
  GPtrArray *typed = strs(), *plain = strs();
  P("/// The model's workspace pools (`struct "
    "tvmgen_%s_workspace_pools`).\n#[repr(C)]\npub struct WorkspacePools<'a> "
    "{\n", w->m);
  for (int32_t p = 0; p < n; p++) {
    P("    %s: *mut c_void,\n", w->pool_ids[p]);
    g_ptr_array_add(typed, g_strdup_printf("%s: &'a mut %s", w->pool_ids[p],
                                           w->pool_types[p]));
    g_ptr_array_add(plain, g_strdup_printf("%s: &'a mut [u8; %" PRId64 "]",
                                           w->pool_ids[p], f->pools[p].size));
  }
  P("    __borrow: PhantomData<&'a mut [u8]>,\n}\n\nimpl<'a> "
    "WorkspacePools<'a> {\n    /// The pools, in the order of the C header."
    "\n");
  sig(out, 4, "pub fn new", typed, " -> Self {");
  P("        WorkspacePools {\n");
  for (int32_t p = 0; p < n; p++)
    P("            %s: ptr(&mut %s.0),\n", w->pool_ids[p], w->pool_ids[p]);
  P("            __borrow: PhantomData,\n        }\n    }\n\n    /// The "
    "pools over plain byte arrays, as the RFC writes them:\n    /// "
    "`Err(Error::PoolMisaligned)` when an array's address is not a\n    /// "
    "multiple of [`ALIGNMENT`] (a [`Pool`]'s always is).\n");
  sig(out, 4, "pub fn from_bytes", plain, " -> Result<Self, Error> {");
  for (int32_t p = 0; p < n; p++) P("        aligned(%s)?;\n", w->pool_ids[p]);
  P("        Ok(WorkspacePools {\n");
  for (int32_t p = 0; p < n; p++)
    P("            %s: ptr(%s),\n", w->pool_ids[p], w->pool_ids[p]);
  P("            __borrow: PhantomData,\n        })\n    }\n}\n\n// SAFETY: "
    "WorkspacePools stands for exclusive borrows of its pools.\nunsafe impl "
    "Send for WorkspacePools<'_> {}\n\n");
  g_ptr_array_free(typed, TRUE), g_ptr_array_free(plain, TRUE);
}

static void constant_pools(const W *w, GString *out) {
  const char *m = w->m;
  int64_t n = w->f->constant_pool_size;
  P("/// `constant_pool_data!()`: the constant pool's initial contents\n/// "
    "(`TVMGEN_%s_CONSTANT_POOL_DATA`, the C array\n/// "
    "`tvmgen_%s_constant_pool_data`, in flash) as a\n/// `&'static [u8; "
    "CONSTANT_POOL_SIZE]`, to fill pool memory the application\n/// places "
    "itself. [`ConstantPools::new`] fills a [`ConstantPool`] with it.\n"
    "macro_rules! constant_pool_data {\n    () => {{\n        unsafe extern "
    "\"C\" {\n            safe static tvmgen_%s_constant_pool_data: [u8; %"
    PRId64 "];\n        }\n        &tvmgen_%s_constant_pool_data\n    }};\n"
    "}\npub(crate) use constant_pool_data;\n\n", w->M, m, m, n, m);
  P("/// The model's constant pool (`struct tvmgen_%s_constant_pools`).\n"
    "#[repr(C)]\npub struct ConstantPools<'a> {\n    constants: *mut c_void,\n"
    "    __borrow: PhantomData<&'a mut [u8]>,\n}\n\nimpl<'a> ConstantPools<'a>"
    " {\n    /// Fills `constants` with the model's constants\n    /// "
    "([`constant_pool_data!`]) and hands it to the model.\n    pub fn new("
    "constants: &'a mut ConstantPool) -> Self {\n        constants.0."
    "copy_from_slice(constant_pool_data!());\n        ConstantPools {\n"
    "            "
    "constants: ptr(&mut constants.0),\n            __borrow: PhantomData,\n"
    "        }\n    }\n\n    /// The same over a plain byte array: "
    "`Err(Error::PoolMisaligned)` when\n    /// its address is not a "
    "multiple of [`ALIGNMENT`].\n    pub fn from_bytes(constants: &'a mut "
    "[u8; %" PRId64 "]) -> Result<Self, Error> {\n        aligned(constants)?;"
    "\n        constants.copy_from_slice(constant_pool_data!());\n"
    "        Ok(ConstantPools "
    "{\n            constants: ptr(constants),\n            __borrow: "
    "PhantomData,\n        })\n    }\n}\n\n// SAFETY: ConstantPools stands "
    "for an exclusive borrow of its pool.\nunsafe impl Send for "
    "ConstantPools<'_> {}\n\n", m, n);
}

static void devices(const W *w, GString *out) {
  const TnAotInterface *f = w->f;
  int32_t n = f->num_devices;
  GPtrArray *ps = strs();
  size_t lit = 0;
  P("/// The model's device handles (`struct tvmgen_%s_devices`), handed\n"
    "/// as they are to the application's hooks:\n///\n", w->m);
  for (int32_t d = 0; d < n; d++)
    P("/// * `%s`: `tvmgen_%s_%s_compute`\n", f->devices[d], w->m,
      f->devices[d]);
  P("///\n/// Define each hook in the application, as\n/// `#[no_mangle] "
    "unsafe extern \"C\" fn tvmgen_%s_<device>_compute(\n/// device: *mut "
    "c_void, call: *const DeviceCall) -> i32`, returning 0\n/// when it "
    "computed the call; any other value makes [`run`] return\n/// "
    "`Err(Error::DeviceFailed)`.\n#[repr(C)]\npub struct Devices {\n", w->m);
  for (int32_t d = 0; d < n; d++) {
    char *id = rs_ident(f->devices[d]);
    P("    %s: *mut c_void,\n", id);
    g_ptr_array_add(ps, g_strdup_printf("%s: *mut c_void", id));
    lit += strlen(id) + (d ? 2 : 0);
    g_free(id);
  }
  P("}\n\nimpl Devices {\n    /// The handles, in the order of the C header."
    "\n    ///\n    /// # Safety\n    ///\n    /// The model passes each "
    "handle to its hook, which the application\n    /// defines: each must "
    "be what that hook expects, and stay valid while\n    /// these Devices "
    "are used. (A null handle is caught: `run` returns\n    /// "
    "`Err(Error::NullPointer)`.)\n");
  sig(out, 4, "pub unsafe fn new", ps, " -> Self {");
  /* rustfmt keeps a struct literal on one line up to 18 columns of fields */
  if (lit <= 18) {
    P("        Devices { ");
    for (int32_t d = 0; d < n; d++) {
      char *id = rs_ident(f->devices[d]);
      P("%s%s", d ? ", " : "", id);
      g_free(id);
    }
    P(" }\n");
  } else {
    P("        Devices {\n");
    for (int32_t d = 0; d < n; d++) {
      char *id = rs_ident(f->devices[d]);
      P("            %s,\n", id);
      g_free(id);
    }
    P("        }\n");
  }
  P("    }\n}\n\n");
  g_ptr_array_free(ps, TRUE);
  P("/// What a device hook receives (`TnCrtDeviceCall`, "
    "tvmnode/crt/model.h): the\n/// operator, the crt kernel that would "
    "compute it, its buffers, and the\n/// kernel itself with the model's "
    "parameters ([`DeviceCall::reference`]). A\n/// `&DeviceCall` exists "
    "only inside a hook, made from the pointer the C code\n/// passes, which "
    "is valid for the hook's duration.\n#[repr(C)]\npub struct DeviceCall {\n"
    "    op: *const c_char,\n    kernel: *const c_char,\n    num_inputs: "
    "i32,\n    inputs: *const *const c_void,\n    output: *mut c_void,\n"
    "    scratch: *mut c_void,\n    scratch_size: u32,\n    reference: "
    "Option<unsafe extern \"C\" fn(*const *const c_void, *mut c_void, *mut "
    "c_void) -> i32>,\n}\n\n"
    "/// A C string of the generated code (an operator or kernel name).\n"
    "///\n/// # Safety\n///\n/// `p` is null or a NUL-terminated string that "
    "outlives `'s`.\nunsafe fn c_str<'s>(p: *const c_char) -> &'s str {\n"
    "    if p.is_null() {\n        return \"\";\n    }\n    // SAFETY: as "
    "the caller promises.\n    unsafe { core::ffi::CStr::from_ptr(p) }\n"
    "        .to_str()\n        .unwrap_or(\"\")\n}\n\n"
    "impl DeviceCall {\n    /// The operator (`\"qnn.conv2d\"`).\n    pub fn "
    "op(&self) -> &str {\n        // SAFETY: a DeviceCall is the C code's, "
    "whose names are static strings.\n        unsafe { c_str(self.op) }\n"
    "    }\n\n    /// The crt kernel that computes the operator "
    "(`\"tn_crt_conv2d_s8\"`).\n    pub fn kernel(&self) -> &str {\n"
    "        // SAFETY: as in op.\n        unsafe { c_str(self.kernel) }\n"
    "    }\n\n    /// The operator's input buffers, in the kernel's order.\n"
    "    pub fn inputs(&self) -> &[*const c_void] {\n        if "
    "self.inputs.is_null() || self.num_inputs <= 0 {\n            return "
    "&[];\n        }\n        // SAFETY: the C code passes an array of "
    "num_inputs pointers that lives\n        // for the call.\n        "
    "unsafe { core::slice::from_raw_parts(self.inputs, self.num_inputs as "
    "usize) }\n    }\n\n    /// The output buffer.\n    pub fn output(&self) "
    "-> *mut c_void {\n        self.output\n    }\n\n    /// The kernel's "
    "scratch memory (null when it needs none) and its size.\n    pub fn "
    "scratch(&self) -> (*mut c_void, usize) {\n        (self.scratch, "
    "self.scratch_size as usize)\n    }\n\n    /// Computes the operator "
    "with the crt kernel and the model's parameters\n    /// into the "
    "output, as the model would without the device: the fallback\n    /// "
    "of a hook that cannot compute a call, and a reference for tests.\n"
    "    pub fn reference(&self) -> Result<(), Error> {\n        match "
    "self.reference {\n            // SAFETY: the C code's own function "
    "over the call's own buffers.\n            Some(f) => Error::from_status"
    "(unsafe { f(self.inputs, self.output, self.scratch) }),\n            "
    "None => Err(Error::NullPointer),\n        }\n    }\n}\n\n");
}

/* The parameters of run (`&mut`) or of ffi's tvmgen_<m>_run (`*mut`), in
 * the header's order; `names` gets the bare names. */
static GPtrArray *run_params(const W *w, bool raw, GPtrArray *names) {
  const TnAotInterface *f = w->f;
  static const char *const n[] = {"inputs", "outputs", "workspace_pools",
                                  "constant_pools", "devices", "state_pool"};
  static const char *const t[] = {"Inputs<'_>", "Outputs<'_>",
                                  "WorkspacePools<'_>", "ConstantPools<'_>",
                                  "Devices", "StatePool"};
  bool on[] = {!f->io_in_pool, !f->io_in_pool, f->num_pools > 0,
               f->constant_pool_size > 0, f->num_devices > 0,
               f->state_pool_size > 0};
  GPtrArray *ps = strs();
  for (int i = 0; i < 6; i++) {
    if (!on[i]) continue;
    g_ptr_array_add(ps, g_strdup_printf("%s: %s%s", n[i], raw ? "*mut "
                                        : "&mut ", t[i]));
    if (names) g_ptr_array_add(names, g_strdup(n[i]));
  }
  return ps;
}

static void run_fn(const W *w, GString *out) {
  GPtrArray *names = strs(), *ps = run_params(w, false, names);
  P("/// One inference (`tvmgen_%s_run`).\n///\n/// # Errors\n///\n/// The "
    "status the C code returns: a kernel's own, `DeviceFailed` when a\n/// "
    "device hook fails, `NullPointer` for a null device handle.\n", w->m);
  sig(out, 0, "pub fn run", ps, " -> Result<(), Error> {");
  P("    use ffi::tvmgen_%s_run as c_run;\n    // SAFETY: each struct holds "
    "pointers made from exclusive borrows that\n    // outlive the call, of "
    "the sizes, element types and alignment the model\n    // needs (their "
    "constructors' types and checks say so)%s.\n    let status = unsafe { "
    "c_run(", w->m, w->f->num_devices ? "; the device\n    // handles are "
    "the application's promise (Devices::new)" : "");
  for (guint i = 0; i < names->len; i++)
    P("%s%s", i ? ", " : "", (char *)g_ptr_array_index(names, i));
  P(") };\n    Error::from_status(status)\n}\n\n");
  g_ptr_array_free(names, TRUE), g_ptr_array_free(ps, TRUE);
  if (w->f->state_pool_size > 0)
    P("/// Gives the model's states their initial values (`tvmgen_%s_reset`):"
      "\n/// before the first run, and to start a new stream.\n///\n/// # "
      "Errors\n///\n/// None for a [`StatePool`] (the C code checks only "
      "its address).\npub fn reset(state_pool: &mut StatePool) -> Result<(), "
      "Error> {\n    // SAFETY: an exclusive borrow of a pool of the size and "
      "alignment\n    // the model needs.\n    let status = unsafe { "
      "ffi::tvmgen_%s_reset(state_pool) };\n    Error::from_status(status)"
      "\n}\n\n", w->m, w->m);
}

static void ffi(const W *w, GString *out) {
  const TnAotInterface *f = w->f;
  const char *m = w->m;
  P("/// The generated C symbols this module calls, as tvmgen_%s.h declares "
    "them.\npub mod ffi {\n    use super::*;\n\n", m);
  if (f->io_in_pool) {
    for (int o = 0; o < 2; o++) {
      const Side s = side(w, o);
      P("    /// `struct tvmgen_%s_%s`.\n    #[repr(C)]\n    pub struct "
        "tvmgen_%s_%s {\n", m, s.lw, m, s.lw);
      for (int32_t i = 0; i < s.n; i++) {
        char *id = rs_ident(s.t[i].name);
        P("        pub %s: *mut c_void,\n", id);
        g_free(id);
      }
      if (s.n == 0) P("        pub unused: *mut c_void,\n");
      P("    }\n\n");
    }
  }
  P("    unsafe extern \"C\" {\n        /// One inference: 0 or a crt "
    "status.\n");
  GPtrArray *ps = run_params(w, true, NULL);
  char *head = g_strdup_printf("pub fn tvmgen_%s_run", m);
  sig(out, 8, head, ps, " -> i32;");
  g_free(head);
  g_ptr_array_free(ps, TRUE);
  if (f->state_pool_size > 0)
    P("        /// The states' initial values into the state pool: 0 or a "
      "crt status.\n        pub fn tvmgen_%s_reset(state_pool: *mut "
      "StatePool) -> i32;\n", m);
  if (f->io_in_pool)
    for (int o = 0; o < 2; o++) {
      const char *lw = side(w, o).lw;
      GPtrArray *one = strs();
      g_ptr_array_add(one, g_strdup("workspace_pools: *mut "
                                    "WorkspacePools<'_>"));
      P("        /// Where the %s live in the pools.\n", lw);
      char *h = g_strdup_printf("pub fn tvmgen_%s_map_%s", m, lw);
      char *tail = g_strdup_printf(" -> tvmgen_%s_%s;", m, lw);
      sig(out, 8, h, one, tail);
      g_free(h), g_free(tail);
      g_ptr_array_free(one, TRUE);
    }
  if (f->constant_pool_size > 0) {
    char *ty = g_strdup_printf("[u8; %" PRId64 "];", f->constant_pool_size);
    bool one = 8 + strlen("pub safe static tvmgen__constant_pool_data: ") +
                   strlen(m) + strlen(ty) <= MAX_WIDTH;
    P("        /// The constant pool's initial contents.\n        pub safe "
      "static tvmgen_%s_constant_pool_data:%s%s\n", m,
      one ? " " : "\n            ", ty);
    g_free(ty);
  }
  P("    }\n}\n\n");
}

/* What the unsafe blocks above rely on, asserted when the module
 * compiles: the arrays are the C code's sizes, the structs its layouts,
 * and the in-pool views lie inside their pools, aligned, and apart from
 * the others of their kind (all inputs are alive at once, as are all
 * outputs; an input and an output may share bytes, which the borrows of
 * map_inputs and map_outputs keep apart). Short aliases keep every line
 * short whatever the names. */
static void asserts(const W *w, GString *out) {
  const TnAotInterface *f = w->f;
  P("// What the code above relies on, checked when it compiles.\nconst _: "
    "() = {\n    use core::mem::{align_of, size_of};\n    const PTR: usize "
    "= size_of::<*mut c_void>();\n");
  for (int o = 0; o < 2; o++) {
    const Side s = side(w, o);
    const char *what = s.what, k = o ? 'O' : 'I';
    for (int32_t i = 0; i < s.n; i++) {
      Elem e = elem(&s.t[i]);
      char *up = g_ascii_strup(s.t[i].name, -1);
      P("    const %c%d_N: usize = %s_%s_LEN;\n    const %c%d_BYTES: usize = "
        "%s_%s_SIZE;\n    assert!(size_of::<[%s; %c%d_N]>() == %c%d_BYTES);\n",
        k, i, what, up, k, i, what, up, e.ty, k, i, k, i);
      if (f->io_in_pool) {
        char *pu = g_ascii_strup(f->pools[s.t[i].pool].name, -1);
        P("    const %c%d_AT: usize = %s_%s_OFFSET;\n    const %c%d_POOL: "
          "usize = %s_WORKSPACE_POOL_SIZE;\n    assert!(%c%d_AT + %c%d_BYTES "
          "<= %c%d_POOL);\n    assert!(%c%d_AT %% align_of::<%s>() == 0);\n",
          k, i, what, up, k, i, pu, k, i, k, i, k, i, k, i, e.ty);
        g_free(pu);
        for (int32_t j = 0; j < i; j++)
          if (s.t[j].pool == s.t[i].pool)
            P("    assert!(%c%d_AT + %c%d_BYTES <= %c%d_AT || %c%d_AT + "
              "%c%d_BYTES <= %c%d_AT);\n", k, i, k, i, k, j, k, j, k, j, k, i);
      }
      g_free(up);
    }
  }
  /* a struct of one pointer is `PTR`, as clippy would have it */
  if (f->io_in_pool)
    P("    use ffi::tvmgen_%s_inputs as RawInputs;\n", w->m);
  const char *in_t = f->io_in_pool ? "RawInputs" : "Inputs<'static>";
  int32_t counts[] = {f->num_inputs > 0 ? f->num_inputs : 1, f->num_outputs,
                      f->num_pools, f->num_devices};
  const char *types[] = {in_t, f->io_in_pool ? NULL : "Outputs<'static>",
                         f->num_pools ? "WorkspacePools<'static>" : NULL,
                         f->num_devices ? "Devices" : NULL};
  for (int i = 0; i < 4; i++) {
    if (!types[i]) continue;
    P("    assert!(size_of::<%s>() == ", types[i]);
    if (counts[i] != 1) P("%d * ", (int)counts[i]);
    P("PTR);\n");
  }
  P("    assert!(align_of::<Pool<1>>() == ALIGNMENT);\n};\n");
}

/* ---- entry --------------------------------------------------------------- */

/* What the writers above index by without checking; an interface that
 * breaks it gets no text (the caller reports that as an error). */
static bool consistent(const TnAotInterface *f) {
  if (f->num_pools < 0 || f->num_pools > TN_CRT_MAX_POOLS ||
      (f->io_in_pool && f->num_pools == 0) || f->alignment < 1)
    return false;
  for (int o = 0; o < 2; o++) {
    const TnAotTensor *t = o ? f->outputs : f->inputs;
    for (int32_t i = 0; i < (o ? f->num_outputs : f->num_inputs); i++)
      if (f->io_in_pool && (t[i].pool < 0 || t[i].pool >= f->num_pools))
        return false;
  }
  return true;
}

void tn__codegen_rust(const TnAotInterface *iface, GString *out) {
  if (!consistent(iface)) return;
  int32_t np = iface->num_pools;
  W w = {iface, iface->model, g_ascii_strup(iface->model, -1),
         g_new0(char *, np + 1), g_new0(char *, np + 1)};
  for (int32_t p = 0; p < np; p++) {
    char *c = camel(iface->pools[p].name);
    w.pool_ids[p] = rs_ident(iface->pools[p].name);
    w.pool_types[p] = np > 1 ? g_strconcat(c, "WorkspacePool", NULL)
                             : g_strdup("WorkspacePool");
    g_free(c);
  }
  /* two pool names may camel-case alike ("a_b", "ab"): number them */
  for (int32_t p = 0; p < np; p++)
    for (int32_t q = 0; q < p; q++)
      if (strcmp(w.pool_types[p], w.pool_types[q]) == 0) {
        g_free(w.pool_types[p]);
        w.pool_types[p] = g_strdup_printf("WorkspacePool%d", (int)p);
        break;
      }
  preamble(&w, out);
  consts(&w, out);
  error_enum(out);
  pool_type(&w, out);
  if (iface->io_in_pool)
    io_views(&w, out);
  else
    io_structs(&w, out);
  if (np > 0) workspace_pools(&w, out);
  if (iface->io_in_pool) map_fns(&w, out);
  if (iface->constant_pool_size > 0) constant_pools(&w, out);
  if (iface->num_devices > 0) devices(&w, out);
  run_fn(&w, out);
  ffi(&w, out);
  asserts(&w, out);
  g_strfreev(w.pool_ids);
  g_strfreev(w.pool_types);
  g_free(w.M);
}
