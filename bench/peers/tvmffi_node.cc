// tvmffi_node.cc: the node-graph operations of bench/bench_node.c (structural
// hash, structural equality, JSON graph save/load, reflected field access),
// measured on apache-tvm-ffi with the same harness and the same graphs.
//
// Node types (both compared by content, i.e. tree nodes):
//   bench.Leaf { int64 value }
//   bench.Add  { a, b }          (each an Add or a Leaf)
// Graphs (each built twice, as two separate identical copies):
//   tree_*: complete binary trees of 2^k leaves, no sharing
//   dag_*:  D = 100 layers of W nodes; node i of layer l+1 is
//           Add(layer_l[i], layer_l[(i+1) % W]); root = Array of the last layer
#include <tvm/ffi/any.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#if __has_include(<tvm/ffi/extra/structural_equal.h>) && \
    __has_include(<tvm/ffi/extra/structural_hash.h>)
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#define HAVE_STRUCTURAL 1
#endif
#if __has_include(<tvm/ffi/extra/serialization.h>) && __has_include(<tvm/ffi/extra/json.h>)
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/serialization.h>
#define HAVE_JSON_GRAPH 1
#endif

#include <cstring>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

extern "C" {
#include "../bench_util.h"
}

using namespace tvm::ffi;
namespace refl = tvm::ffi::reflection;

class LeafObj : public Object {
 public:
  int64_t value = 0;
  LeafObj() = default;  // default-constructible: lets FromJSONGraph create it
  explicit LeafObj(int64_t v) : value(v) {}
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.Leaf", LeafObj, Object);
};

class AddObj : public Object {
 public:
  ObjectRef a;
  ObjectRef b;
  AddObj() = default;
  AddObj(ObjectRef a, ObjectRef b) : a(std::move(a)), b(std::move(b)) {}
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.Add", AddObj, Object);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<LeafObj>().def_ro("value", &LeafObj::value);
  refl::ObjectDef<AddObj>().def_ro("a", &AddObj::a).def_ro("b", &AddObj::b);
}

static ObjectRef Leaf(int64_t v) { return ObjectRef(make_object<LeafObj>(v)); }
static ObjectRef Add(const ObjectRef& a, const ObjectRef& b) {
  return ObjectRef(make_object<AddObj>(a, b));
}

// Complete binary tree over leaves [lo, hi), values lo..hi-1 left to right.
static ObjectRef BuildTree(int64_t lo, int64_t hi) {
  if (hi - lo == 1) return Leaf(lo);
  int64_t mid = lo + (hi - lo) / 2;
  ObjectRef l = BuildTree(lo, mid);
  ObjectRef r = BuildTree(mid, hi);
  return Add(l, r);
}

static ObjectRef BuildDag(int64_t w, int64_t d) {
  std::vector<ObjectRef> layer, next;
  layer.reserve(w);
  next.reserve(w);
  for (int64_t i = 0; i < w; i++) layer.push_back(Leaf(i));
  for (int64_t l = 1; l < d; l++) {
    next.clear();
    for (int64_t i = 0; i < w; i++) next.push_back(Add(layer[i], layer[(i + 1) % w]));
    layer.swap(next);
  }
  Array<ObjectRef> root;
  root.reserve(w);
  for (int64_t i = 0; i < w; i++) root.push_back(layer[i]);
  return root;
}

struct Graph {
  std::string label;
  int64_t nodes;
  bool shared;       // a DAG with shared sub-graphs
  ObjectRef g1, g2;  // two separate identical copies
  String text;       // JSON text of g1 (for the load rows)
};

#ifdef HAVE_STRUCTURAL
static void shash(int64_t n, void* ctx) {
  const Graph& g = *static_cast<Graph*>(ctx);
  uint64_t h = 0;
  for (int64_t i = 0; i < n; i++) h ^= StructuralHash::Hash(g.g1, false);
  BENCH_KEEP(h);
}

static void sequal(int64_t n, void* ctx) {
  const Graph& g = *static_cast<Graph*>(ctx);
  int64_t ok = 0;
  for (int64_t i = 0; i < n; i++) ok += StructuralEqual::Equal(g.g1, g.g2, false);
  BENCH_KEEP(ok);
}
#endif

#ifdef HAVE_JSON_GRAPH
static void json_save(int64_t n, void* ctx) {
  const Graph& g = *static_cast<Graph*>(ctx);
  for (int64_t i = 0; i < n; i++) {
    String s = json::Stringify(ToJSONGraph(g.g1));
    BENCH_KEEP(s.data());
  }
}

static void json_load(int64_t n, void* ctx) {
  const Graph& g = *static_cast<Graph*>(ctx);
  for (int64_t i = 0; i < n; i++) {
    Any v = FromJSONGraph(json::Parse(g.text));
    BENCH_KEEP(&v);
  }
}
#endif

// The generic path a language binding takes for `obj.value`: find the field
// by name in the object's reflected type info, then call its getter.
static Any GetFieldByName(const Object* obj, const char* name) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj->type_index());
  size_t len = std::strlen(name);
  const TVMFFIFieldInfo* found = nullptr;
  refl::ForEachFieldInfoWithEarlyStop(info, [&](const TVMFFIFieldInfo* f) {
    if (f->name.size == len && std::memcmp(f->name.data, name, len) == 0) {
      found = f;
      return true;
    }
    return false;
  });
  if (found == nullptr) {
    fprintf(stderr, "tvmffi_node: no field %s\n", name);
    abort();
  }
  return refl::FieldGetter(found)(obj);
}

static void field_get_by_name(int64_t n, void* ctx) {
  const Object* obj = static_cast<const Object*>(ctx);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) sum += GetFieldByName(obj, "value").cast<int64_t>();
  BENCH_KEEP(sum);
}

template <typename T>
static const T* As(const Object* x) {
  return x != nullptr && x->IsInstance<T>() ? static_cast<const T*>(x) : nullptr;
}

// Untimed check that two graphs are equal by content, memoised on node pairs
// so that shared sub-graphs are compared once (see RunGraph for why tvm-ffi's
// StructuralEqual cannot be used for this on the DAGs).
struct PairHash {
  size_t operator()(const std::pair<const Object*, const Object*>& p) const {
    return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
  }
};
using PairSet = std::unordered_set<std::pair<const Object*, const Object*>, PairHash>;

static bool SameNode(const Object* x, const Object* y, PairSet* seen) {
  if (x == y) return true;
  if (x == nullptr || y == nullptr || x->type_index() != y->type_index()) return false;
  if (!seen->insert({x, y}).second) return true;
  if (const auto* lx = As<LeafObj>(x)) return lx->value == As<LeafObj>(y)->value;
  if (const auto* ax = As<AddObj>(x)) {
    const auto* ay = As<AddObj>(y);
    return SameNode(ax->a.get(), ay->a.get(), seen) && SameNode(ax->b.get(), ay->b.get(), seen);
  }
  if (const auto* vx = As<ArrayObj>(x)) {
    const auto* vy = As<ArrayObj>(y);
    if (vx->size() != vy->size()) return false;
    for (size_t i = 0; i < vx->size(); i++) {
      if (!SameNode((*vx)[i].cast<ObjectRef>().get(), (*vy)[i].cast<ObjectRef>().get(), seen))
        return false;
    }
    return true;
  }
  return false;
}

static bool SameGraph(const ObjectRef& x, const ObjectRef& y) {
  PairSet seen;
  return SameNode(x.get(), y.get(), &seen);
}

// Number of distinct Leaf/Add nodes reachable from root (sharing preserved?).
static int64_t CountNodes(const Object* x, std::unordered_set<const Object*>* seen) {
  if (x == nullptr || !seen->insert(x).second) return 0;
  if (const auto* ax = As<AddObj>(x))
    return 1 + CountNodes(ax->a.get(), seen) + CountNodes(ax->b.get(), seen);
  if (const auto* vx = As<ArrayObj>(x)) {
    int64_t n = 0;
    for (size_t i = 0; i < vx->size(); i++) n += CountNodes((*vx)[i].cast<ObjectRef>().get(), seen);
    return n;
  }
  return 1;
}

static int64_t CountNodes(const ObjectRef& root) {
  std::unordered_set<const Object*> seen;
  return CountNodes(root.get(), &seen);
}

static void Check(bool ok, const std::string& what) {
  if (!ok) {
    fprintf(stderr, "tvmffi_node: check failed: %s\n", what.c_str());
    exit(1);
  }
}

static void RunGraph(Graph& g) {
  std::string name;
  Check(CountNodes(g.g1) == g.nodes && CountNodes(g.g2) == g.nodes, "node count " + g.label);
  Check(SameGraph(g.g1, g.g2), "copies equal " + g.label);
#ifdef HAVE_STRUCTURAL
  Check(StructuralHash::Hash(g.g1, false) == StructuralHash::Hash(g.g2, false),
        "shash " + g.label);
  name = "shash_" + g.label;
  bench_run("node", name.c_str(), shash, &g, g.nodes);
  // tvm-ffi's StructuralEqual memoises visited pairs only for DAGNode and
  // FreeVar kinds; tree nodes are compared along every path, so on these DAGs
  // (each node reached by 2^layer paths) it never finishes. Skip those rows.
  if (!g.shared) {
    Check(StructuralEqual::Equal(g.g1, g.g2, false), "sequal " + g.label);
    name = "sequal_" + g.label;
    bench_run("node", name.c_str(), sequal, &g, g.nodes);
  } else {
    fprintf(stderr, "tvmffi_node: sequal_%s skipped (tree-node StructuralEqual is "
            "exponential on shared DAGs)\n", g.label.c_str());
  }
#endif
#ifdef HAVE_JSON_GRAPH
  g.text = json::Stringify(ToJSONGraph(g.g1));
  double bytes = static_cast<double>(g.text.size());
  name = "json_save_" + g.label;
  double ns = bench_run("node", name.c_str(), json_save, &g, g.nodes);
  name = "json_bytes_" + g.label;
  bench_report("node", name.c_str(), bytes, "bytes");
  name = "json_save_mbps_" + g.label;
  bench_report("node", name.c_str(), bytes / (ns * g.nodes) * 1e3, "MB/s");
  {
    ObjectRef loaded = FromJSONGraph(json::Parse(g.text)).cast<ObjectRef>();
    Check(SameGraph(loaded, g.g1), "json round trip " + g.label);
    Check(CountNodes(loaded) == g.nodes, "json round trip keeps sharing " + g.label);
#ifdef HAVE_STRUCTURAL
    if (!g.shared) Check(StructuralEqual::Equal(loaded, g.g1, false), "json sequal " + g.label);
    Check(StructuralHash::Hash(loaded, false) == StructuralHash::Hash(g.g1, false),
          "json shash " + g.label);
#endif
  }
  name = "json_load_" + g.label;
  ns = bench_run("node", name.c_str(), json_load, &g, g.nodes);
  name = "json_load_mbps_" + g.label;
  bench_report("node", name.c_str(), bytes / (ns * g.nodes) * 1e3, "MB/s");
  g.text = String();
#endif
  (void)name;
}

int main() {
  for (int k : {13, 16, 19}) {
    Graph g;
    int64_t leaves = int64_t(1) << k;
    g.nodes = 2 * leaves - 1;
    g.label = k == 13 ? "tree_16k" : k == 16 ? "tree_131k" : "tree_1m";
    g.shared = false;
    g.g1 = BuildTree(0, leaves);
    g.g2 = BuildTree(0, leaves);
    RunGraph(g);
  }
  for (int64_t w : {100, 1000, 10000}) {
    Graph g;
    const int64_t d = 100;
    g.nodes = w * d;
    g.label = w == 100 ? "dag_10k" : w == 1000 ? "dag_100k" : "dag_1m";
    g.shared = true;
    g.g1 = BuildDag(w, d);
    g.g2 = BuildDag(w, d);
    RunGraph(g);
  }
  ObjectRef leaf = Leaf(42);
  Check(GetFieldByName(leaf.get(), "value").cast<int64_t>() == 42, "field_get_by_name");
  bench_run("node", "field_get_by_name", field_get_by_name, const_cast<Object*>(leaf.get()), 1);
  return 0;
}
