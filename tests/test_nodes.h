/*
 * test_nodes.h: node types declared in C, shared by the reflection,
 * structural, JSON and printer suites. They cover every node kind and every
 * field kind: a tiny expression language with variables, lambdas and lets.
 */
#ifndef TVMNODE_TESTS_TEST_NODES_H_
#define TVMNODE_TESTS_TEST_NODES_H_

#include <stdbool.h>

#include <tvmnode/tvmnode.h>

#include "tn_test.h"

/* test.Leaf: a tree node holding a number. */
typedef struct {
  TnObject header;
  int64_t value;
} TLeaf;

/* test.Add: a tree node with two operands of any kind. */
typedef struct {
  TnObject header;
  TnAny a, b;
} TAdd;

/* test.Var: a variable; its name is not part of its identity. */
typedef struct {
  TnObject header;
  TnObject *name;
  TnAny annotation;
} TVar;

/* test.Lambda: parameters (defining) and a body. */
typedef struct {
  TnObject header;
  TnObject *params;
  TnAny body;
} TLambda;

/* test.Let: var = value in body. */
typedef struct {
  TnObject header;
  TnObject *var;
  TnAny value, body;
} TLet;

/* test.Op: a unique instance, compared by identity. */
typedef struct {
  TnObject header;
  TnObject *name;
} TOp;

/* test.Pair: a DAG node, whose sharing pattern matters. */
typedef struct {
  TnObject header;
  TnAny first, second;
} TPair;

/* test.All: one field of every kind, with defaults and flags. */
typedef struct {
  TnObject header;
  int64_t i;
  double f;
  bool b;
  TnObject *s;
  DLDataType dt;
  DLDevice dev;
  TnAny any;
  TnObject *leaf;
  int64_t ro;
  int64_t scratch;
} TAll;

/* test.Derived: inherits test.Leaf's field and adds one. */
typedef struct {
  TLeaf base;
  TnObject *tag;
} TDerived;

typedef struct {
  int32_t leaf, add, var, lambda, let, op, pair, all, derived;
} TestTypes;

static TestTypes tt;

static const TnFieldDesc leaf_fields[] = {
    TN_FIELD_INT(TLeaf, value, 0, "the number"),
};
static const TnFieldDesc add_fields[] = {
    TN_FIELD_ANY(TAdd, a, 0, NULL),
    TN_FIELD_ANY(TAdd, b, 0, NULL),
};
static const TnFieldDesc var_fields[] = {
    TN_FIELD_STR(TVar, name, TN_FIELD_NO_SEQ, "for printing only"),
    TN_FIELD_ANY(TVar, annotation, TN_FIELD_OPTIONAL, NULL),
};
static const TnFieldDesc lambda_fields[] = {
    TN_FIELD_OBJ(TLambda, params, "tn.Array", TN_FIELD_DEF, NULL),
    TN_FIELD_ANY(TLambda, body, 0, NULL),
};
static const TnFieldDesc let_fields[] = {
    TN_FIELD_OBJ(TLet, var, "test.Var", TN_FIELD_DEF, NULL),
    TN_FIELD_ANY(TLet, value, 0, NULL),
    TN_FIELD_ANY(TLet, body, 0, NULL),
};
static const TnFieldDesc op_fields[] = {
    TN_FIELD_STR(TOp, name, 0, NULL),
};
static const TnFieldDesc pair_fields[] = {
    TN_FIELD_ANY(TPair, first, 0, NULL),
    TN_FIELD_ANY(TPair, second, 0, NULL),
};
static const TnFieldDesc all_fields[] = {
    TN_FIELD_INT_D(TAll, i, 7, 0, "an int with a default"),
    TN_FIELD_FLOAT_D(TAll, f, 0.5, 0, NULL),
    TN_FIELD_BOOL_D(TAll, b, true, 0, NULL),
    TN_FIELD_STR_D(TAll, s, "hello", 0, NULL),
    TN_FIELD_DTYPE(TAll, dt, TN_FIELD_OPTIONAL, NULL),
    TN_FIELD_DEVICE(TAll, dev, TN_FIELD_OPTIONAL, NULL),
    TN_FIELD_ANY(TAll, any, TN_FIELD_OPTIONAL, NULL),
    TN_FIELD_OBJ(TAll, leaf, "test.Leaf", TN_FIELD_OPTIONAL, NULL),
    TN_FIELD_INT_D(TAll, ro, 1, TN_FIELD_READONLY, NULL),
    TN_FIELD_INT_D(TAll, scratch, 0, TN_FIELD_NO_SEQ, NULL),
};
static const TnFieldDesc derived_fields[] = {
    TN_FIELD_STR(TDerived, tag, TN_FIELD_OPTIONAL, NULL),
};

/* Register the test types once per process. */
static inline void test_nodes_register(void) {
  if (tt.leaf > 0) return;
  tt.leaf = TN_NODE_REGISTER(TLeaf, "test.Leaf", TN_TYPE_OBJECT, TN_NODE_TREE,
                             leaf_fields);
  tt.add = TN_NODE_REGISTER(TAdd, "test.Add", TN_TYPE_OBJECT, TN_NODE_TREE,
                            add_fields);
  tt.var = TN_NODE_REGISTER(TVar, "test.Var", TN_TYPE_OBJECT, TN_NODE_VAR,
                            var_fields);
  tt.lambda = TN_NODE_REGISTER(TLambda, "test.Lambda", TN_TYPE_OBJECT,
                               TN_NODE_TREE, lambda_fields);
  tt.let = TN_NODE_REGISTER(TLet, "test.Let", TN_TYPE_OBJECT, TN_NODE_TREE,
                            let_fields);
  tt.op = TN_NODE_REGISTER(TOp, "test.Op", TN_TYPE_OBJECT, TN_NODE_UNIQUE,
                           op_fields);
  tt.pair = TN_NODE_REGISTER(TPair, "test.Pair", TN_TYPE_OBJECT, TN_NODE_DAG,
                             pair_fields);
  tt.all = TN_NODE_REGISTER(TAll, "test.All", TN_TYPE_OBJECT, TN_NODE_TREE,
                            all_fields);
  tt.derived = TN_NODE_REGISTER(TDerived, "test.Derived", tt.leaf,
                                TN_NODE_TREE, derived_fields);
  ck_assert_msg(tt.leaf > 0 && tt.add > 0 && tt.var > 0 && tt.lambda > 0 &&
                    tt.let > 0 && tt.op > 0 && tt.pair > 0 && tt.all > 0 &&
                    tt.derived > 0,
                "registering test nodes: %s", tn_test_raised_text());
}

/* Builders. Each returns a new reference and steals none. */
static inline TnObject *mk_leaf(int64_t v) {
  TnObject *o = TN_NONNULL(tn_node_alloc(tt.leaf));
  ((TLeaf *)o)->value = v;
  return o;
}

static inline TnObject *mk_var(const char *name) {
  TnObject *o = TN_NONNULL(tn_node_alloc(tt.var));
  TnAny n = tn_any_cstr(name);
  TN_OK(tn_node_set(o, "name", &n));
  return o;
}

/* Add(a, b), taking values as anys (borrowed). */
static inline TnObject *mk_add(TnAny a, TnAny b) {
  const char *names[] = {"a", "b"};
  TnAny vals[] = {a, b};
  return TN_NONNULL(tn_node_new(tt.add, names, vals, 2));
}

static inline TnObject *mk_lambda(TnObject **params, int n, TnAny body) {
  TnAny items[8];
  for (int i = 0; i < n; i++) items[i] = tn_any_obj(params[i]);
  TnObject *arr = TN_NONNULL(tn_array_new(items, n));
  const char *names[] = {"params", "body"};
  TnAny vals[] = {tn_any_obj(arr), body};
  TnObject *o = TN_NONNULL(tn_node_new(tt.lambda, names, vals, 2));
  tn_object_release(arr);
  return o;
}

static inline TnObject *mk_let(TnObject *var, TnAny value, TnAny body) {
  const char *names[] = {"var", "value", "body"};
  TnAny vals[] = {tn_any_obj(var), value, body};
  return TN_NONNULL(tn_node_new(tt.let, names, vals, 3));
}

static inline TnObject *mk_pair(TnAny a, TnAny b) {
  const char *names[] = {"first", "second"};
  TnAny vals[] = {a, b};
  return TN_NONNULL(tn_node_new(tt.pair, names, vals, 2));
}

static inline TnAny O(TnObject *o) { return tn_any_obj(o); }
static inline TnAny I(int64_t v) { return tn_any_int(v); }

static inline void test_nodes_setup(void) {
  test_nodes_register();
  tn_test_setup();
}

static inline TCase *tn_node_case(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, test_nodes_setup, tn_test_teardown);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return tc;
}

#endif /* TVMNODE_TESTS_TEST_NODES_H_ */
