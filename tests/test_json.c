/* test_json.c: JSON graphs: round trips, sharing, and every bad input. */
#include <glib.h>
#include <math.h>

#include "test_nodes.h"

static TnAny load_text(const char *text) {
  TnAny out = tn_any_none();
  ck_assert_msg(tn_json_load(text, strlen(text), &out) == 0, "load failed: %s",
                tn_test_raised_text());
  return out;
}

/* save -> load -> structurally equal, and return the loaded value. */
static TnAny round_trip(TnAny v) {
  TnObject *text = TN_NONNULL(tn_json_save(&v, 0));
  TnAny back = tn_any_none();
  TnStringObj *s = (TnStringObj *)text;
  ck_assert_msg(tn_json_load(s->data, (size_t)s->size, &back) == 0,
                "reload failed: %s\n%s", tn_test_raised_text(), s->data);
  TnObject *path = NULL;
  ck_assert_msg(tn_structural_equal_path(&v, &back, 0, &path) == 1,
                "round trip differs at %s\n%s",
                path ? ((TnStringObj *)path)->data : "?", s->data);
  tn_object_release(text);
  return back;
}

START_TEST(test_plain_values) {
  TnAny vals[] = {tn_any_none(), I(-5), tn_any_bool(1), tn_any_float(2.5),
                  tn_any_float(1.0), tn_any_float(INFINITY),
                  tn_any_float(-INFINITY), tn_any_cstr("quote \" and \\ and \n"),
                  tn_any_cstr("unicode: \xc3\xa9\xe2\x82\xac"),
                  tn_any_dtype((DLDataType){kDLInt, 8, 4}),
                  tn_any_device((DLDevice){kDLCUDA, 1})};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
    TnAny back = round_trip(vals[i]);
    ck_assert_int_eq(back.type_index == TN_TYPE_SMALL_STR ||
                         back.type_index == TN_TYPE_STRING,
                     vals[i].type_index == TN_TYPE_RAW_STR);
    tn_any_clear(&back);
  }
  /* 1.0 stays a float, not an int. */
  TnAny f = load_text("{\"tvmnode.json\": 1, \"root\": 1.0, \"nodes\": []}");
  ck_assert_int_eq(f.type_index, TN_TYPE_FLOAT);
  TnAny nan = round_trip(tn_any_float(NAN));
  ck_assert(isnan(nan.v_float64));
  /* Strings with a NUL byte and invalid UTF-8 survive too. */
  TnObject *nul = TN_NONNULL(tn_string_new("a\0b", 3));
  TnObject *bad_utf8 = TN_NONNULL(tn_string_new("\xff\xfe", 2));
  TnObject *bytes = TN_NONNULL(tn_bytes_new("\x00\x01\x02\xff", 4));
  TnAny odd[] = {O(nul), O(bad_utf8), O(bytes)};
  for (int i = 0; i < 3; i++) {
    TnAny back = round_trip(odd[i]);
    tn_any_clear(&back);
  }
  tn_object_release(nul);
  tn_object_release(bad_utf8);
  tn_object_release(bytes);
}
END_TEST

START_TEST(test_graph_round_trip_keeps_sharing) {
  TnObject *x = mk_var("x"), *leaf = mk_leaf(3);
  TnObject *body = mk_add(O(x), O(leaf));
  TnObject *fn = mk_lambda(&x, 1, O(body));
  TnObject *all_kinds = TN_NONNULL(tn_node_alloc(tt.all));
  TnAny lv = O(leaf);
  TN_OK(tn_node_set(all_kinds, "leaf", &lv));
  TN_OK(tn_node_set(all_kinds, "any", &lv));
  TnAny items[] = {O(fn), O(all_kinds), O(leaf), tn_any_cstr("text")};
  TnObject *list = TN_NONNULL(tn_list_new(items, 4));
  TnAny keys[] = {tn_any_cstr("list"), I(7)};
  TnAny values[] = {O(list), O(leaf)};
  TnObject *dict = TN_NONNULL(tn_dict_new(keys, values, 2));
  TnAny back = round_trip(O(dict));
  ck_assert_int_eq(back.type_index, TN_TYPE_DICT); /* types kept */
  /* The leaf was one object in four places; it still is. */
  const TnAny *l2 = tn_map_find(back.v_obj, &keys[0]);
  ck_assert_int_eq(l2->type_index, TN_TYPE_LIST);
  TnObject *leaf2 = tn_array_at(l2->v_obj, 2)->v_obj;
  ck_assert_ptr_eq(tn_map_find(back.v_obj, &keys[1])->v_obj, leaf2);
  TAll *a2 = (TAll *)tn_array_at(l2->v_obj, 1)->v_obj;
  ck_assert_ptr_eq(a2->leaf, leaf2);
  ck_assert_ptr_eq(a2->any.v_obj, leaf2);
  /* The variable defined by the lambda is the one used in its body. */
  TLambda *f2 = (TLambda *)tn_array_at(l2->v_obj, 0)->v_obj;
  TnObject *param = tn_array_at(f2->params, 0)->v_obj;
  ck_assert_ptr_eq(((TAdd *)f2->body.v_obj)->a.v_obj, param);
  tn_any_clear(&back);
  TnObject *objs[] = {x, leaf, body, fn, all_kinds, list, dict};
  for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
    tn_object_release(objs[i]);
}
END_TEST

START_TEST(test_containers_shapes_tensors) {
  int64_t dims[] = {2, 3};
  TnObject *shape = TN_NONNULL(tn_shape_new(dims, 2));
  DLDataType f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  TnObject *t = TN_NONNULL(tn_tensor_empty(dims, 2, f32, cpu));
  float *d = tn_tensor_dltensor(t)->data;
  for (int i = 0; i < 6; i++) d[i] = (float)i * 1.5f;
  int64_t tdims[] = {3, 2}, tstr[] = {1, 3};
  TnObject *view = TN_NONNULL(tn_tensor_view(t, tdims, tstr, 2, f32, 0));
  TnAny kv[] = {tn_any_cstr("s"), tn_any_cstr("t"), tn_any_cstr("v")};
  TnAny vv[] = {O(shape), O(t), O(view)};
  TnObject *m = TN_NONNULL(tn_map_new(kv, vv, 3));
  TnAny back = round_trip(O(m)); /* the view comes back compact, equal */
  tn_any_clear(&back);
  /* An object used as a key and as a value stays one object. */
  TnAny ok[] = {O(shape)}, ov[] = {O(shape)};
  TnObject *m2 = TN_NONNULL(tn_map_new(ok, ov, 1));
  TnAny m2a = O(m2);
  TnObject *text = TN_NONNULL(tn_json_save(&m2a, 0));
  TN_OK(tn_json_load(((TnStringObj *)text)->data,
                     (size_t)((TnStringObj *)text)->size, &back));
  const TnAny *k2, *v2;
  ck_assert_int_eq(tn_map_next(back.v_obj, 0, &k2, &v2), 0);
  ck_assert_ptr_eq(k2->v_obj, v2->v_obj);
  ck_assert_ptr_ne(k2->v_obj, shape);
  tn_any_clear(&back);
  tn_object_release(text);
  tn_object_release(m2);
  TnObject *empty = TN_NONNULL(tn_array_new(NULL, 0));
  back = round_trip(O(empty));
  tn_any_clear(&back);
  TnObject *objs[] = {shape, t, view, m, empty};
  for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
    tn_object_release(objs[i]);
}
END_TEST

START_TEST(test_format_is_readable) {
  TnObject *leaf = mk_leaf(4);
  TnAny v = O(leaf);
  TnObject *text = TN_NONNULL(tn_json_save(&v, 1));
  const char *s = ((TnStringObj *)text)->data;
  ck_assert_ptr_nonnull(strstr(s, "\"tvmnode.json\": 1"));
  ck_assert_ptr_nonnull(strstr(s, "\"root\": {\"$node\": 0}"));
  ck_assert_ptr_nonnull(strstr(s, "{\"type\": \"test.Leaf\", \"fields\": {\"value\": 4}}"));
  ck_assert_ptr_nonnull(strchr(s, '\n')); /* indented */
  tn_object_release(text);
  tn_object_release(leaf);
}
END_TEST

static void bad_load(const char *text, const char *kind, const char *where,
                     const char *why) {
  int64_t before = tn_object_live_count();
  TnAny out = I(123);
  ck_assert_int_eq(tn_json_load(text, strlen(text), &out), -1);
  ck_assert_int_eq(out.type_index, TN_TYPE_NONE);
  TN_EXPECT_ERROR(kind, "tn_json_load", where, why);
  ck_assert_int_eq(tn_object_live_count(), before); /* nothing leaked */
}

#define DOC(nodes, root) \
  "{\"tvmnode.json\": 1, \"root\": " root ", \"nodes\": [" nodes "]}"
#define LEAF(v) "{\"type\": \"test.Leaf\", \"fields\": {\"value\": " v "}}"

START_TEST(test_bad_input) {
  bad_load("", "ValueError", "invalid JSON at line 1", "");
  bad_load("{\"tvmnode.json\": 1, \"root\": ", "ValueError", "line 1", "");
  bad_load("[1, 2]", "ValueError", "document", "expected a JSON object");
  bad_load("{\"root\": 1, \"nodes\": []}", "ValueError", "document",
           "not a tvmnode JSON graph");
  bad_load("{\"tvmnode.json\": 99, \"root\": 1, \"nodes\": []}", "ValueError",
           "document", "version 99");
  bad_load("{\"tvmnode.json\": 1, \"nodes\": []}", "ValueError", "document",
           "missing \"root\"");
  bad_load("{\"tvmnode.json\": 1, \"root\": 1, \"nodes\": [], \"x\": 2}",
           "ValueError", "document", "unexpected key \"x\"");
  bad_load(DOC("{\"type\": \"no.Such\", \"fields\": {}}", "null"),
           "ValueError", "nodes[0]", "unknown type key 'no.Such'");
  bad_load(DOC(LEAF("1.5"), "null"), "ValueError", "nodes[0].fields.value",
           "expects int, got float");
  bad_load(DOC("{\"type\": \"test.Leaf\", \"fields\": {\"valu\": 1}}", "null"),
           "ValueError", "nodes[0].fields.valu", "no such field");
  bad_load(DOC("{\"type\": \"test.Leaf\", \"fields\": {}}", "null"),
           "ValueError", "nodes[0]", "required field 'value'");
  bad_load(DOC(LEAF("1"), "{\"$node\": 1}"), "ValueError", "root",
           "out of range");
  bad_load(DOC(LEAF("1") ", {\"type\": \"tn.Array\", \"items\": [{\"$node\": 1}]}",
               "null"),
           "ValueError", "nodes[1].items[0]", "references point to earlier");
  bad_load(DOC("{\"type\": \"tn.Array\", \"items\": [{\"$node\": -1}]}", "null"),
           "ValueError", "nodes[0].items[0]", "out of range");
  bad_load(DOC("{\"type\": \"tn.Array\", \"items\": [[1]]}", "null"),
           "ValueError", "nodes[0].items[0]", "arrays are nodes");
  bad_load(DOC("{\"type\": \"tn.Array\", \"items\": [{\"$what\": 1}]}", "null"),
           "ValueError", "nodes[0].items[0]", "unknown tag '$what'");
  bad_load(DOC("{\"type\": \"tn.Map\", \"items\": [[1]]}", "null"),
           "ValueError", "nodes[0].items[0]", "[key, value] pair");
  bad_load(DOC("{\"type\": \"tn.Map\", \"items\": [[1, 2], [1.0, 3]]}", "null"),
           "ValueError", "nodes[0].items[1]", "duplicate key");
  bad_load(DOC("{\"type\": \"tn.Shape\", \"dims\": [2, -1]}", "null"),
           "ValueError", "nodes[0]", "dimension 1");
  bad_load(DOC("{\"type\": \"tn.Tensor\", \"dtype\": \"float32\", "
               "\"shape\": [1099511627776, 1099511627776], \"data\": \"\"}",
               "null"),
           "ValueError", "nodes[0]", "absurd");
  bad_load(DOC("{\"type\": \"tn.Tensor\", \"dtype\": \"float32\", "
               "\"shape\": [2], \"data\": \"AAAA\"}", "null"),
           "ValueError", "nodes[0]", "need 8");
  bad_load(DOC("{\"type\": \"tn.Tensor\", \"dtype\": \"float32\", "
               "\"shape\": [3], \"data\": \"AAAAAAAAAAAAAA!A\"}", "null"),
           "ValueError", "nodes[0]", "invalid base64");
  bad_load(DOC("{\"type\": \"tn.Tensor\", \"dtype\": \"floaty\", "
               "\"shape\": [1], \"data\": \"AAAAAA==\"}", "null"),
           "ValueError", "nodes[0]", "floaty");
  bad_load(DOC("{\"type\": \"tn.Function\", \"fields\": {}}", "null"),
           "ValueError", "nodes[0]", "cannot be loaded");
  bad_load("{\"tvmnode.json\": 1, \"root\": 99999999999999999999, "
           "\"nodes\": []}", "ValueError", "invalid JSON", "int64 range");
  bad_load("{\"tvmnode.json\": 1, \"tvmnode.json\": 1, \"root\": 1, "
           "\"nodes\": []}", "ValueError", "invalid JSON", "duplicate");
  bad_load(DOC("5", "null"), "ValueError", "nodes[0]", "must be an object");
  bad_load(DOC(LEAF("1"), "{\"$dtype\": \"int0\"}"), "ValueError", "root",
           "int0");
  /* A deeply nested document is refused by the parser, not the stack. */
  GString *deep = g_string_new("{\"tvmnode.json\": 1, \"root\": ");
  for (int i = 0; i < 100000; i++) g_string_append_c(deep, '[');
  bad_load(deep->str, "ValueError", "invalid JSON", "");
  g_string_free(deep, TRUE);
  /* A partly built graph is released when a later node fails. */
  bad_load(DOC(LEAF("1") ", " LEAF("2") ", " LEAF("\"x\""), "null"),
           "ValueError", "nodes[2].fields.value", "got");
  ck_assert_int_eq(tn_json_load(NULL, 3, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'text' is NULL");
}
END_TEST

static int ident(void *self, const TnAny *a, int32_t n, TnAny *r) {
  (void)self, (void)a, (void)n, (void)r;
  return 0;
}

START_TEST(test_save_errors) {
  TnObject *f = TN_NONNULL(tn_func_new(ident, NULL, NULL));
  TnAny items[] = {O(f)};
  TnObject *arr = TN_NONNULL(tn_array_new(items, 1));
  TnAny v = O(arr);
  ck_assert_ptr_null(tn_json_save(&v, 0));
  TN_EXPECT_ERROR("TypeError", "tn_json_save", "tn.Function cannot be saved");
  int cell;
  TnAny p = tn_any_ptr(&cell);
  ck_assert_ptr_null(tn_json_save(&p, 0));
  TN_EXPECT_ERROR("TypeError", "void* cannot be saved");
  TnObject *list = TN_NONNULL(tn_list_new(NULL, 0));
  TnAny self = O(list);
  TN_OK(tn_list_append(list, &self)); /* a cycle */
  ck_assert_ptr_null(tn_json_save(&self, 0));
  TN_EXPECT_ERROR("ValueError", "cycle");
  TN_OK(tn_list_clear(list));
  tn_object_release(list);
  TnAny bad_dtype = tn_any_dtype((DLDataType){200, 8, 1});
  ck_assert_ptr_null(tn_json_save(&bad_dtype, 0));
  TN_EXPECT_ERROR("ValueError", "unknown type code 200");
  tn_object_release(arr);
  tn_object_release(f);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("json");
  TCase *tc = tn_node_case(s, "json");
  tcase_add_test(tc, test_plain_values);
  tcase_add_test(tc, test_graph_round_trip_keeps_sharing);
  tcase_add_test(tc, test_containers_shapes_tensors);
  tcase_add_test(tc, test_format_is_readable);
  tcase_add_test(tc, test_bad_input);
  tcase_add_test(tc, test_save_errors);
  return s;
}

TN_TEST_MAIN(make_suite)
