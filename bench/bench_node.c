/*
 * bench_node.c: structural hashing and equality, JSON graph save/load and
 * reflected field access on trees and heavily shared DAGs of 10k to 1M
 * nodes. bench/peers/tvmffi_node.cc builds the same graphs in tvm-ffi.
 *
 * Graphs: complete binary trees of bench.Add over bench.Leaf (2^k leaves,
 * no sharing), and layered DAGs (W nodes a layer, 100 layers, node i of a
 * layer adds nodes i and i+1 of the layer below) whose root is an array of
 * the top layer. Every figure is ns per node, so linear scaling shows as a
 * flat column.
 */
#include <stdlib.h>

#include <tvmnode/tvmnode.h>

#include "bench_util.h"

typedef struct {
  TnObject header;
  int64_t value;
} Leaf;

typedef struct {
  TnObject header;
  TnObject *a, *b;
} Add;

static int32_t g_leaf, g_add;

static void register_types(void) {
  static const TnFieldDesc leaf_fields[] = {
      TN_FIELD_INT(Leaf, value, 0, NULL),
  };
  static const TnFieldDesc add_fields[] = {
      TN_FIELD_OBJ(Add, a, NULL, 0, NULL),
      TN_FIELD_OBJ(Add, b, NULL, 0, NULL),
  };
  g_leaf = TN_NODE_REGISTER(Leaf, "bench.Leaf", TN_TYPE_OBJECT, TN_NODE_TREE,
                            leaf_fields);
  g_add = TN_NODE_REGISTER(Add, "bench.Add", TN_TYPE_OBJECT, TN_NODE_TREE,
                           add_fields);
  if (g_leaf < 0 || g_add < 0) {
    fprintf(stderr, "bench_node: %s\n",
            tn_error_message(tn_error_peek_raised()));
    exit(1);
  }
}

static TnObject *leaf(int64_t v) {
  TnObject *o = tn_node_alloc(g_leaf);
  ((Leaf *)o)->value = v;
  return o;
}

/* Add(a, b), stealing both references. */
static TnObject *add(TnObject *a, TnObject *b) {
  TnObject *o = tn_node_alloc(g_add);
  ((Add *)o)->a = a;
  ((Add *)o)->b = b;
  return o;
}

static TnObject *tree(int k) {
  int64_t n = INT64_C(1) << k;
  TnObject **level = malloc(sizeof(TnObject *) * (size_t)n);
  for (int64_t i = 0; i < n; i++) level[i] = leaf(i);
  for (; n > 1; n /= 2)
    for (int64_t i = 0; i < n / 2; i++)
      level[i] = add(level[2 * i], level[2 * i + 1]);
  TnObject *root = level[0];
  free(level);
  return root;
}

static TnObject *dag(int64_t width, int depth) {
  TnObject **cur = malloc(sizeof(TnObject *) * (size_t)width);
  TnObject **next = malloc(sizeof(TnObject *) * (size_t)width);
  for (int64_t i = 0; i < width; i++) cur[i] = leaf(i);
  for (int l = 1; l < depth; l++) {
    for (int64_t i = 0; i < width; i++) {
      TnObject *a = cur[i], *b = cur[(i + 1) % width];
      tn_object_retain(a);
      tn_object_retain(b);
      next[i] = add(a, b);
    }
    for (int64_t i = 0; i < width; i++) tn_object_release(cur[i]);
    TnObject **t = cur;
    cur = next;
    next = t;
  }
  TnAny *items = malloc(sizeof(TnAny) * (size_t)width);
  for (int64_t i = 0; i < width; i++) items[i] = tn_any_obj(cur[i]);
  TnObject *root = tn_array_new(items, width);
  for (int64_t i = 0; i < width; i++) tn_object_release(cur[i]);
  free(items);
  free(cur);
  free(next);
  return root;
}

typedef struct {
  TnAny a, b;
  TnObject *text;
} Ctx;

static void run_shash(int64_t n, void *p) {
  Ctx *c = p;
  uint64_t h = 0;
  for (int64_t i = 0; i < n; i++) tn_structural_hash(&c->a, 0, &h);
  BENCH_KEEP(h);
}

static void run_sequal(int64_t n, void *p) {
  Ctx *c = p;
  for (int64_t i = 0; i < n; i++) {
    int eq = tn_structural_equal(&c->a, &c->b, 0);
    BENCH_KEEP(eq);
  }
}

static void run_save(int64_t n, void *p) {
  Ctx *c = p;
  for (int64_t i = 0; i < n; i++) {
    TnObject *t = tn_json_save(&c->a, 0);
    BENCH_KEEP(t);
    tn_object_release(t);
  }
}

static void run_load(int64_t n, void *p) {
  Ctx *c = p;
  TnStringObj *s = (TnStringObj *)c->text;
  for (int64_t i = 0; i < n; i++) {
    TnAny out;
    tn_json_load(s->data, (size_t)s->size, &out);
    tn_any_clear(&out);
  }
}

static void run_graph(const char *label, TnObject *a, TnObject *b,
                      int64_t nodes) {
  char name[64];
  Ctx c = {tn_any_obj(a), tn_any_obj(b), NULL};
  if (tn_structural_equal(&c.a, &c.b, 0) != 1) {
    fprintf(stderr, "bench_node: %s copies are not equal\n", label);
    exit(1);
  }
  snprintf(name, sizeof name, "shash_%s", label);
  bench_run("node", name, run_shash, &c, nodes);
  snprintf(name, sizeof name, "sequal_%s", label);
  bench_run("node", name, run_sequal, &c, nodes);
  snprintf(name, sizeof name, "json_save_%s", label);
  double save_ns = bench_run("node", name, run_save, &c, nodes);
  c.text = tn_json_save(&c.a, 0);
  double bytes = (double)((TnStringObj *)c.text)->size;
  snprintf(name, sizeof name, "json_bytes_%s", label);
  bench_report("node", name, bytes, "bytes");
  snprintf(name, sizeof name, "json_save_mbps_%s", label);
  bench_report("node", name, bytes / (save_ns * (double)nodes) * 1e3, "MB/s");
  TnAny back;
  TnStringObj *s = (TnStringObj *)c.text;
  if (tn_json_load(s->data, (size_t)s->size, &back) != 0 ||
      tn_structural_equal(&c.a, &back, 0) != 1) {
    fprintf(stderr, "bench_node: %s does not survive JSON\n", label);
    exit(1);
  }
  tn_any_clear(&back);
  snprintf(name, sizeof name, "json_load_%s", label);
  double load_ns = bench_run("node", name, run_load, &c, nodes);
  snprintf(name, sizeof name, "json_load_mbps_%s", label);
  bench_report("node", name, bytes / (load_ns * (double)nodes) * 1e3, "MB/s");
  tn_object_release(c.text);
}

static void run_field_get(int64_t n, void *p) {
  TnObject *o = p;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    TnAny v;
    tn_node_get(o, "value", &v);
    sum += v.v_int64;
  }
  BENCH_KEEP(sum);
}

int main(void) {
  register_types();
  int64_t live0 = tn_object_live_count();
  static const struct {
    const char *label;
    int k;
  } trees[] = {{"tree_16k", 13}, {"tree_131k", 16}, {"tree_1m", 19}};
  for (int i = 0; i < 3; i++) {
    TnObject *a = tree(trees[i].k), *b = tree(trees[i].k);
    run_graph(trees[i].label, a, b, (INT64_C(2) << trees[i].k) - 1);
    tn_object_release(a);
    tn_object_release(b);
  }
  static const struct {
    const char *label;
    int64_t width;
  } dags[] = {{"dag_10k", 100}, {"dag_100k", 1000}, {"dag_1m", 10000}};
  for (int i = 0; i < 3; i++) {
    TnObject *a = dag(dags[i].width, 100), *b = dag(dags[i].width, 100);
    run_graph(dags[i].label, a, b, dags[i].width * 100);
    tn_object_release(a);
    tn_object_release(b);
  }
  TnObject *l = leaf(42);
  bench_run("node", "field_get_by_name", run_field_get, l, 1);
  tn_object_release(l);
  if (tn_object_live_count() != live0) {
    fprintf(stderr, "bench_node: %lld objects leaked\n",
            (long long)(tn_object_live_count() - live0));
    return 1;
  }
  return 0;
}
