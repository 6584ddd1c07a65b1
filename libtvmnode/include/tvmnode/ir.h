/*
 * tvmnode/ir.h: the graph-level tensor IR and its operators.
 *
 * IR nodes are ordinary reflected node types (so every language reads and
 * builds them, and structural equality, JSON and printing work on them);
 * their C layouts are public here for C code such as passes and code
 * generators. Expressions are immutable once built, with one exception that
 * does not take part in structural equality: `checked_type`, the type that
 * type inference gave them.
 *
 * The node layouts below are part of the frozen ABI: bindings read their
 * fields directly, so TN_ABI_VERSION (abi.h) covers them and a change that
 * moves a byte bumps its major. Passes are in pass.h.
 *
 * Ownership: builders take their object arguments borrowed (a reference is
 * taken) and return a new reference (transfer full).
 */
#ifndef TVMNODE_IR_H_
#define TVMNODE_IR_H_

#include "tvmnode/containers.h"
#include "tvmnode/function.h"
#include "tvmnode/reflect.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Node layouts                                                              */
/* ------------------------------------------------------------------------ */

/* ir.Type: the base of types. */
typedef struct {
  TnObject header;
} TnIrType;

/* ir.TensorType: Tensor[(d0, d1, ...), dtype]. */
typedef struct {
  TnIrType base;
  TnObject *shape; /* tn.Shape */
  DLDataType dtype;
} TnIrTensorType;

/* ir.TupleType: (T0, T1, ...). */
typedef struct {
  TnIrType base;
  TnObject *fields; /* tn.Array of ir.Type */
} TnIrTupleType;

/* ir.FuncType: fn (T0, T1, ...) -> R. */
typedef struct {
  TnIrType base;
  TnObject *arg_types; /* tn.Array of ir.Type */
  TnObject *ret_type;  /* ir.Type */
} TnIrFuncType;

/* ir.Expr: the base of expressions. */
typedef struct {
  TnObject header;
  TnObject *checked_type; /* ir.Type, or NULL before type inference */
} TnIrExpr;

typedef struct {
  TnIrExpr base;
  TnObject *name_hint;       /* tn.String; not part of its identity */
  TnObject *type_annotation; /* ir.Type or NULL */
} TnIrVar;

typedef struct {
  TnIrExpr base;
  TnObject *data; /* tn.Tensor */
} TnIrConstant;

/* ir.Op: a registered operator (see the operator registry). */
typedef struct {
  TnIrExpr base;
  TnObject *name;       /* tn.String */
  int64_t num_inputs;   /* -1: any number */
  TnObject *attrs_type; /* tn.String type key of its attrs node, or NULL */
  int32_t attrs_index;  /* type index of attrs_type, or -1 (not reflected) */
  /* Operator attributes (tn_ir_op_set_attr): a tn.Map from attribute name
   * to value, replaced whole on every set, and the maps it replaced, kept
   * until the operator dies because a reader may still be looking at one.
   * Everything else an operator has (type inference, fusion pattern, doc,
   * input names, kernels) is an attribute: new properties go there, never
   * into new fields. */
  TnObject *attr_map;     /* tn.Map, or NULL when none is set */
  TnObject *attr_retired; /* tn.List of replaced maps, or NULL */
} TnIrOp;

typedef struct {
  TnIrExpr base;
  TnObject *op;    /* ir.Op, ir.GlobalVar or ir.Function */
  TnObject *args;  /* tn.Array of ir.Expr */
  TnObject *attrs; /* the op's attrs node, or NULL */
} TnIrCall;

typedef struct {
  TnIrExpr base;
  TnObject *fields; /* tn.Array of ir.Expr */
} TnIrTuple;

typedef struct {
  TnIrExpr base;
  TnObject *tuple;
  int64_t index;
} TnIrTupleGetItem;

typedef struct {
  TnIrExpr base;
  TnObject *var; /* ir.Var, defined here */
  TnObject *value;
  TnObject *body;
} TnIrLet;

typedef struct {
  TnIrExpr base;
  TnObject *params;   /* tn.Array of ir.Var, defined here */
  TnObject *body;     /* ir.Expr */
  TnObject *ret_type; /* ir.Type or NULL */
  TnObject *attrs;    /* tn.Map (e.g. {"Primitive": 1}) or NULL */
} TnIrFunction;

typedef struct {
  TnIrExpr base;
  TnObject *name_hint; /* tn.String: global functions are named */
} TnIrGlobalVar;

/* ir.IRModule: named global functions and module attributes. */
typedef struct {
  TnObject header;
  TnObject *functions; /* tn.Map: name (str) -> ir.Function */
  TnObject *attrs;     /* tn.Map */
} TnIrModule;

/* The type indices of the IR node types (valid after the library loads). */
typedef struct {
  int32_t type, tensor_type, tuple_type, func_type;
  int32_t expr, var, constant, op, call, tuple, tuple_get_item, let,
      function, global_var;
  int32_t module, attrs;
} TnIrTypes;
TN_API const TnIrTypes *tn_ir_types(void);

/* ------------------------------------------------------------------------ */
/* Building                                                                  */
/* ------------------------------------------------------------------------ */

/* (transfer full) */
TN_API TnObject *tn_ir_tensor_type(const int64_t *shape, int32_t ndim,
                                   DLDataType dtype);
/* (transfer full) */
TN_API TnObject *tn_ir_tuple_type(TnObject *const *fields, int32_t n);
/* (transfer full) */
TN_API TnObject *tn_ir_func_type(TnObject *const *arg_types, int32_t n,
                                 TnObject *ret_type);

/* A variable; `type_annotation` may be NULL. (transfer full) */
TN_API TnObject *tn_ir_var(const char *name_hint, TnObject *type_annotation);
/* A constant holding a tensor (borrowed; a reference is taken).
 * (transfer full) */
TN_API TnObject *tn_ir_constant(TnObject *tensor);
/* A 0-d constant, for scales, zero points and scalars. (transfer full) */
TN_API TnObject *tn_ir_scalar(double value, DLDataType dtype);
/* The registered operator named `name`; KeyError for an unknown one.
 * (transfer full) */
TN_API TnObject *tn_ir_op_get(const char *name);
/*
 * A call. `op` is an ir.Op, ir.GlobalVar or ir.Function. For an operator,
 * the number of arguments is checked, `attrs` (may be NULL: the defaults)
 * must be of the op's attrs type, and when every argument's type is known
 * the call's type is inferred at once, so a shape or dtype mismatch is a
 * TypeError here that names the operator, the argument and both types.
 * (transfer full) */
TN_API TnObject *tn_ir_call(TnObject *op, TnObject *const *args, int32_t nargs,
                            TnObject *attrs);
/* A call of the operator `op_name` with attributes given by name (the
 * attrs node is built and checked from them). (transfer full) */
TN_API TnObject *tn_ir_call_op(const char *op_name, TnObject *const *args,
                               int32_t nargs, const char *const *attr_names,
                               const TnAny *attr_values, int32_t nattrs);
/* (transfer full) */
TN_API TnObject *tn_ir_tuple(TnObject *const *fields, int32_t n);
/* (transfer full) */
TN_API TnObject *tn_ir_tuple_get_item(TnObject *tuple, int64_t index);
/* (transfer full) */
TN_API TnObject *tn_ir_let(TnObject *var, TnObject *value, TnObject *body);
/* `ret_type` and `attrs` may be NULL. (transfer full) */
TN_API TnObject *tn_ir_function(TnObject *const *params, int32_t nparams,
                                TnObject *body, TnObject *ret_type,
                                TnObject *attrs);
/* (transfer full) */
TN_API TnObject *tn_ir_global_var(const char *name);

/* The type inference gave an expression, or NULL. (transfer none) */
TN_API TnObject *tn_ir_checked_type(const TnObject *expr);

/* An empty module, and modules changed functionally: each returns a new
 * module and leaves its argument as it was. (transfer full) */
TN_API TnObject *tn_ir_module_new(void);
/* `mod` with function `name` set to `func` (both borrowed). (transfer full) */
TN_API TnObject *tn_ir_module_with(const TnObject *mod, const char *name,
                                   TnObject *func);
/* `mod` with module attribute `key` set to `value` (plain data: numbers,
 * strings, dtypes, arrays and maps of them; ir.WellFormed checks).
 * (transfer full) */
TN_API TnObject *tn_ir_module_with_attr(const TnObject *mod, const char *key,
                                        const TnAny *value);
/* A module whose "main" is `expr` (a function, or an expression whose free
 * variables become the parameters, in order of first use). (transfer full) */
TN_API TnObject *tn_ir_module_from_expr(TnObject *expr);
/* A function by name; KeyError if absent. (transfer full) */
TN_API TnObject *tn_ir_module_get(const TnObject *mod, const char *name);

/* ------------------------------------------------------------------------ */
/* Operators                                                                 */
/* ------------------------------------------------------------------------ */

/* How an operator fuses (as FuseOps sees it). */
enum {
  TN_OP_ELEMWISE = 0,   /* one output element from the same input element */
  TN_OP_BROADCAST = 1,  /* elementwise with broadcasting */
  TN_OP_INJECTIVE = 2,  /* each output element from one input element */
  TN_OP_REDUCE = 3,     /* reductions */
  TN_OP_OUT_FUSABLE = 4, /* conv2d, dense: elementwise ops fuse after them */
  TN_OP_OPAQUE = 8      /* fuses with nothing */
};

/*
 * The operator attributes the library itself reads (tn_ir_op_set_attr
 * checks their values):
 *   TN_OP_ATTR_INFER_TYPE  tn.Function infer(arg_types, attrs) -> ir.Type
 *                          (arg_types a tn.Array of types; attrs the call's
 *                          attrs node or None). Without it a call of the
 *                          operator cannot be built.
 *   TN_OP_ATTR_PATTERN     int, a TN_OP_* fusion pattern (default opaque)
 *   TN_OP_ATTR_DOC         str, one line on what the operator computes
 *   TN_OP_ATTR_INPUT_NAMES tn.Array of num_inputs str, the names bindings
 *                          give its inputs ("data", "weight", ...)
 */
#define TN_OP_ATTR_INFER_TYPE "infer_type"
#define TN_OP_ATTR_PATTERN "pattern"
#define TN_OP_ATTR_DOC "doc"
#define TN_OP_ATTR_INPUT_NAMES "input_names"

/*
 * Register an operator: its identity (name, number of inputs, the node type
 * of its attributes, NULL for none) and, as attributes set before it is
 * published, its type inference `infer` (TN_OP_ATTR_INFER_TYPE), `pattern`
 * and `doc` (NULL: none). More attributes (input names, kernels) are set
 * with tn_ir_op_set_attr. A taken name is a ValueError unless `override`,
 * which replaces the operator (calls built before keep the old one).
 * `infer` is borrowed (a reference is taken). The registry follows the
 * library's one pattern (core/registry.c):
 * tn_ir_op_{register,unregister,get,find,list}.
 */
TN_API int tn_ir_op_register(const char *name, int32_t num_inputs,
                             const char *attrs_type_key, int32_t pattern,
                             TnObject *infer, const char *doc, int override);
/* Remove an operator from the registry (calls that use it keep it);
 * KeyError if there is none by that name. */
TN_API int tn_ir_op_unregister(const char *name);
/* The operator registered as `name`, or NULL: tn_ir_op_get raises a
 * KeyError, tn_ir_op_find raises nothing. (transfer full) */
TN_API TnObject *tn_ir_op_find(const char *name);
/* Names of all registered operators, sorted. (transfer full) */
TN_API TnObject *tn_ir_op_list(void);

/*
 * Operator attributes, as TVM's Op::GetAttrMap: named values attached to an
 * operator (a kernel, a parameter builder, input names, a layout rule), so
 * operators registered from any language can carry everything the C ones
 * do and ir.Op keeps its layout. Set takes `value` borrowed and keeps an
 * owned copy; a set attribute is a ValueError unless `override`; a value
 * of the wrong kind for one of the TN_OP_ATTR_* attributes above is a
 * TypeError (ValueError for an unknown pattern or a wrong count). Setting
 * takes a lock; reading takes none. Also reachable as the global functions
 * "ir.OpSetAttr"(op_name, attr, value, override) and
 * "ir.OpGetAttr"(op_name, attr) -> value or None.
 */
TN_API int tn_ir_op_set_attr(TnObject *op, const char *attr,
                             const TnAny *value, int override);
/* The value of `attr` on `op`, or NULL (no error) when it has none.
 * (transfer none: valid while `op` lives) */
TN_API const TnAny *tn_ir_op_get_attr(const TnObject *op, const char *attr);

/* ------------------------------------------------------------------------ */
/* Visiting and rewriting                                                    */
/* ------------------------------------------------------------------------ */

/* Call `fn` on every expression under `expr` (nested functions included),
 * children before parents, each node once. -1 if `fn` fails. */
typedef int (*TnIrVisitFn)(void *ctx, TnObject *expr);
TN_API int tn_ir_post_order_visit(TnObject *expr, TnIrVisitFn fn, void *ctx);

/*
 * Rewrite bottom-up, each node once. For every node, `fn(ctx, orig,
 * rebuilt)` gets the node and the same node rebuilt over its rewritten
 * children (`rebuilt` is `orig` itself when no child changed) and returns
 * the replacement (transfer full; NULL with an error raised to stop). The
 * result is the original graph itself when nothing changed anywhere.
 * Replacing a variable replaces its uses; where it is defined (a let, a
 * function parameter) a replacement that is not itself a variable leaves
 * the definition as it was, so a pass can substitute values for variables.
 * (transfer full)
 */
typedef TnObject *(*TnIrRewriteFn)(void *ctx, TnObject *orig,
                                   TnObject *rebuilt);
/* (transfer full) */
TN_API TnObject *tn_ir_mutate(TnObject *expr, TnIrRewriteFn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Well-formedness                                                           */
/* ------------------------------------------------------------------------ */

/*
 * Check that `node` (a module, a function or an expression) is well formed:
 * every array holds what its field declares, every call names a registered
 * operator (or a function) with the operator's arity and attribute type,
 * every variable is bound once and defined before it is used, and every
 * saved checked_type equals the type inference derives. 0 if so; -1 with a
 * ValueError (TypeError for a wrong kind of node) naming the function and
 * the place, e.g. "@main: %x is used before it is defined". The JSON loader
 * of an IRModule and the importers run it; passes assume it.
 */
TN_API int tn_ir_well_formed(TnObject *node);

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

/*
 * Print a module, an expression or a type in the text format:
 *   def @main(%x: Tensor[(1, 10), float32]) -> Tensor[(1, 10), float32] {
 *     %0 = nn.relu(%x);
 *     %0
 *   }
 * Non-scalar constants print as meta[i]; with `show_meta` the constants
 * follow after a "#[metadata]" line, which tn_ir_parse reads back.
 * (transfer full: a tn.String)
 */
TN_API TnObject *tn_ir_astext(TnObject *node, int show_meta);
/* Parse the text format into a module; a ValueError gives the line and
 * column of what is wrong. (transfer full) */
TN_API TnObject *tn_ir_parse(const char *text, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_IR_H_ */
