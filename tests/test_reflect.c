/* test_reflect.c: node types, fields, construction, methods, attributes. */
#include "test_nodes.h"

START_TEST(test_field_table) {
  ck_assert_int_eq(tn_type_field_count(tt.all), 10);
  ck_assert_int_eq(tn_type_field_count(tt.derived), 2); /* inherited first */
  ck_assert_str_eq(tn_type_field_at(tt.derived, 0)->name, "value");
  ck_assert_str_eq(tn_type_field_at(tt.derived, 1)->name, "tag");
  ck_assert_int_eq(tn_type_field_index(tt.all, "dev"), 5);
  const TnFieldDesc *f = tn_type_field_at(tt.all, 0);
  ck_assert_int_eq(f->kind, TN_FIELD_INT);
  ck_assert(f->flags & TN_FIELD_HAS_DEFAULT);
  ck_assert_str_eq(f->doc, "an int with a default");
  ck_assert_int_eq(f->offset, offsetof(TAll, i));
  ck_assert_str_eq(tn_type_field_at(tt.all, 7)->type_key, "test.Leaf");
  ck_assert_int_eq(tn_type_node_kind(tt.var), TN_NODE_VAR);
  ck_assert_int_eq(tn_type_node_kind(tt.pair), TN_NODE_DAG);
  ck_assert_int_eq(tn_type_node_kind(TN_TYPE_STRING), TN_NODE_UNIQUE);
  ck_assert(tn_type_is_subtype(tt.derived, tt.leaf));

  ck_assert_int_eq(tn_type_field_index(tt.all, "nope"), -1);
  TN_EXPECT_ERROR("AttributeError", "tn_type_field_index", "test.All",
                  "'nope'");
  ck_assert_ptr_null(tn_type_field_at(tt.all, 10));
  TN_EXPECT_ERROR("IndexError", "field 10", "10 fields");
  ck_assert_int_eq(tn_type_field_count(TN_TYPE_STRING), -1);
  TN_EXPECT_ERROR("TypeError", "tn.String is not a node type");
  ck_assert_int_eq(tn_type_field_count(99999), -1);
  TN_EXPECT_ERROR("KeyError", "99999");
  ck_assert_int_eq(tn_type_node_size(tt.all), (int64_t)sizeof(TAll));
  ck_assert_int_eq(tn_type_node_size(TN_TYPE_STRING), -1);
  TN_EXPECT_ERROR("TypeError", "tn.String is not a node type");
  /* The introspection function reports fields too. */
  TnObject *info = TN_NONNULL(tn_func_get("tn.type_info"));
  TnAny key = tn_any_cstr("test.All"), ret = tn_any_none();
  TN_OK(tn_func_call(info, &key, 1, &ret));
  TnAny fk = tn_any_cstr("fields");
  const TnAny *fields = tn_map_find(ret.v_obj, &fk);
  ck_assert_int_eq(tn_array_size(fields->v_obj), 10);
  TnAny nk = tn_any_cstr("name");
  const char *name;
  TN_OK(tn_any_as_str(tn_map_find(tn_array_at(fields->v_obj, 3)->v_obj, &nk),
                      &name, NULL));
  ck_assert_str_eq(name, "s");
  tn_any_clear(&ret);
  tn_object_release(info);
}
END_TEST

START_TEST(test_alloc_defaults_get_set) {
  TnObject *o = TN_NONNULL(tn_node_alloc(tt.all));
  TAll *a = (TAll *)o;
  ck_assert_int_eq(a->i, 7);
  ck_assert(a->f == 0.5);
  ck_assert(a->b);
  ck_assert_str_eq(((TnStringObj *)a->s)->data, "hello");
  ck_assert_int_eq(a->ro, 1);
  TnAny v;
  TN_OK(tn_node_get(o, "s", &v));
  ck_assert_int_eq(v.type_index, TN_TYPE_STRING);
  tn_any_clear(&v);
  TN_OK(tn_node_get(o, "leaf", &v));
  ck_assert_int_eq(v.type_index, TN_TYPE_NONE); /* optional, unset */

  TnAny x = tn_any_int(42);
  TN_OK(tn_node_set(o, "i", &x));
  ck_assert_int_eq(a->i, 42);
  TnAny fl = tn_any_int(3); /* int converts to float */
  TN_OK(tn_node_set(o, "f", &fl));
  ck_assert(a->f == 3.0);
  TnAny dts = tn_any_cstr("int8x4"); /* a string converts to DataType */
  TN_OK(tn_node_set(o, "dt", &dts));
  ck_assert_uint_eq(a->dt.lanes, 4);
  DLDevice dev = {kDLCUDA, 2};
  TnAny dv = tn_any_device(dev);
  TN_OK(tn_node_set(o, "dev", &dv));
  TN_OK(tn_node_get(o, "dev", &v));
  ck_assert_int_eq(v.v_device.device_id, 2);
  TnAny s = tn_any_cstr("a longer string than seven bytes");
  TN_OK(tn_node_set(o, "s", &s));
  ck_assert_str_eq(((TnStringObj *)a->s)->data, "a longer string than seven bytes");
  TnObject *leaf = mk_leaf(5);
  TnAny lv = tn_any_obj(leaf);
  TN_OK(tn_node_set(o, "leaf", &lv));
  ck_assert_uint_eq(tn_object_strong_count(leaf), 2);
  TN_OK(tn_node_set(o, "any", &lv));
  ck_assert_uint_eq(tn_object_strong_count(leaf), 3);
  TN_OK(tn_node_set_at(o, 6, &x)); /* replace "any": the leaf is released */
  ck_assert_uint_eq(tn_object_strong_count(leaf), 2);
  TN_OK(tn_node_get_at(o, 6, &v));
  ck_assert_int_eq(v.v_int64, 42);
  tn_object_release(leaf);
  tn_object_release(o); /* releases the string and the leaf */
}
END_TEST

START_TEST(test_set_errors_leave_object_unchanged) {
  TnObject *o = TN_NONNULL(tn_node_alloc(tt.all));
  TAll *a = (TAll *)o;
  TnAny fl = tn_any_float(1.5);
  ck_assert_int_eq(tn_node_set(o, "i", &fl), -1);
  TN_EXPECT_ERROR("TypeError", "tn_node_set", "field 'i' of test.All",
                  "expects int", "got float");
  ck_assert_int_eq(a->i, 7);
  TnObject *add = mk_add(I(1), I(2));
  TnAny av = tn_any_obj(add);
  ck_assert_int_eq(tn_node_set(o, "leaf", &av), -1);
  TN_EXPECT_ERROR("TypeError", "expects test.Leaf or None", "got test.Add");
  ck_assert_ptr_null(a->leaf);
  TnAny none = tn_any_none();
  ck_assert_int_eq(tn_node_set(o, "s", &none), -1); /* not optional */
  TN_EXPECT_ERROR("TypeError", "field 's'", "expects str", "got None");
  ck_assert_str_eq(((TnStringObj *)a->s)->data, "hello");
  TnAny one = tn_any_int(2);
  ck_assert_int_eq(tn_node_set(o, "ro", &one), -1);
  TN_EXPECT_ERROR("AttributeError", "field 'ro' of test.All is read-only");
  ck_assert_int_eq(a->ro, 1);
  ck_assert_int_eq(tn_node_set(o, "zzz", &one), -1);
  TN_EXPECT_ERROR("AttributeError", "test.All has no field 'zzz'");
  TnAny bad_dt = tn_any_cstr("float7");
  ck_assert_int_eq(tn_node_set(o, "dt", &bad_dt), -1);
  TN_EXPECT_ERROR("TypeError", "float7");
  ck_assert_int_eq(tn_node_set(NULL, "i", &one), -1);
  TN_EXPECT_ERROR("ValueError", "'obj' is NULL");
  TnObject *str = TN_NONNULL(tn_string_from_cstr("x"));
  ck_assert_int_eq(tn_node_get(str, "i", &one), -1);
  TN_EXPECT_ERROR("TypeError", "tn.String is not a node type");
  ck_assert_int_eq(tn_node_get_at(o, 99, &one), -1);
  TN_EXPECT_ERROR("IndexError", "field 99");
  tn_object_release(str);
  tn_object_release(add);
  tn_object_release(o);
}
END_TEST

START_TEST(test_init_at_writes_read_only_fields) {
  TnObject *o = TN_NONNULL(tn_node_alloc(tt.all));
  TAll *a = (TAll *)o;
  int32_t ro = tn_type_field_index(tt.all, "ro");
  ck_assert_int_ge(ro, 0);
  TnAny two = tn_any_int(2);
  ck_assert_int_eq(tn_node_set_at(o, ro, &two), -1); /* refused for users */
  TN_EXPECT_ERROR("AttributeError", "read-only");
  TN_OK(tn_node_init_at(o, ro, &two)); /* the constructor's write */
  ck_assert_int_eq(a->ro, 2);
  /* still checked like any store, and the object is unchanged on failure */
  TnAny fl = tn_any_float(1.5);
  ck_assert_int_eq(tn_node_init_at(o, ro, &fl), -1);
  TN_EXPECT_ERROR("TypeError", "tn_node_init_at", "field 'ro'", "expects int");
  ck_assert_int_eq(a->ro, 2);
  ck_assert_int_eq(tn_node_init_at(o, 999, &two), -1);
  TN_EXPECT_ERROR("IndexError", "field 999");
  ck_assert_int_eq(tn_node_init_at(o, ro, NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'value' is NULL");
  ck_assert_int_eq(tn_node_init_at(NULL, ro, &two), -1);
  TN_EXPECT_ERROR("ValueError", "'obj' is NULL");
  tn_object_release(o);
}
END_TEST

START_TEST(test_kw_construction) {
  const char *names[] = {"ro", "i"};
  TnAny vals[] = {tn_any_int(9), tn_any_int(3)};
  TnObject *o = TN_NONNULL(tn_node_new(tt.all, names, vals, 2));
  ck_assert_int_eq(((TAll *)o)->ro, 9); /* read-only is settable here */
  ck_assert_int_eq(((TAll *)o)->i, 3);
  tn_object_release(o);

  ck_assert_ptr_null(tn_node_new(tt.add, names, vals, 0));
  TN_EXPECT_ERROR("TypeError", "test.Add is missing required field 'a'");
  const char *dup[] = {"i", "i"};
  ck_assert_ptr_null(tn_node_new(tt.all, dup, vals, 2));
  TN_EXPECT_ERROR("TypeError", "field 'i' of test.All is given twice");
  const char *unknown[] = {"q"};
  ck_assert_ptr_null(tn_node_new(tt.all, unknown, vals, 1));
  TN_EXPECT_ERROR("AttributeError", "test.All has no field 'q'");
  const char *wrong[] = {"b"};
  TnAny s = tn_any_cstr("yes");
  ck_assert_ptr_null(tn_node_new(tt.all, wrong, &s, 1));
  TN_EXPECT_ERROR("TypeError", "field 'b'", "expects bool");
  ck_assert_ptr_null(tn_node_new(TN_TYPE_ARRAY, NULL, NULL, 0));
  TN_EXPECT_ERROR("TypeError", "tn.Array is not a node type");
  /* Derived types construct with inherited fields. */
  const char *dn[] = {"value", "tag"};
  TnAny dvals[] = {tn_any_int(4), tn_any_cstr("t")};
  TnObject *d = TN_NONNULL(tn_node_new(tt.derived, dn, dvals, 2));
  ck_assert_int_eq(((TDerived *)d)->base.value, 4);
  ck_assert(tn_object_is_instance(d, tt.leaf));
  tn_object_release(d);
}
END_TEST

typedef struct {
  TnObject header;
  int64_t a;
  int64_t b;
} TBad;

START_TEST(test_registration_checks) {
  TnFieldDesc overlap[] = {
      {"a", 24, TN_FIELD_ANY, 0, NULL, {0}, NULL},
      {"b", 32, TN_FIELD_INT, 0, NULL, {0}, NULL},
  };
  TnNodeDesc d = {"test.Bad1", TN_TYPE_OBJECT, TN_NODE_TREE, 0, 48, overlap, 2,
                  NULL, NULL};
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "'test.Bad1'", "field 'b' overlaps field 'a'");
  TnFieldDesc outside[] = {{"a", 40, TN_FIELD_ANY, 0, NULL, {0}, NULL}};
  d.fields = outside;
  d.nfields = 1;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "outside the object's 48-byte body");
  TnFieldDesc header[] = {{"a", 8, TN_FIELD_INT, 0, NULL, {0}, NULL}};
  d.fields = header;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "offset 8");
  TnFieldDesc misaligned[] = {{"a", 25, TN_FIELD_INT, 0, NULL, {0}, NULL}};
  d.fields = misaligned;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "not aligned");
  TnFieldDesc twice[] = {{"a", 24, TN_FIELD_INT, 0, NULL, {0}, NULL},
                         {"a", 32, TN_FIELD_INT, 0, NULL, {0}, NULL}};
  d.fields = twice;
  d.nfields = 2;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "declared twice");
  TnFieldDesc unknown_type[] = {{"a", 24, TN_FIELD_OBJ, 0, "no.Such", {0}, NULL}};
  d.fields = unknown_type;
  d.nfields = 1;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "unknown type 'no.Such'");
  TnFieldDesc bad_kind[] = {{"a", 24, 42, 0, NULL, {0}, NULL}};
  d.fields = bad_kind;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "unknown kind 42");
  TnFieldDesc def_int[] = {{"a", 24, TN_FIELD_INT, TN_FIELD_DEF, NULL, {0}, NULL}};
  d.fields = def_int;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "define variables");
  TnFieldDesc bad_default[] = {{"a", 24, TN_FIELD_INT, TN_FIELD_HAS_DEFAULT,
                                NULL, {TN_TYPE_FLOAT, 0, {.v_float64 = 1.5}},
                                NULL}};
  d.fields = bad_default;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("TypeError", "expects int", "got float");
  d.fields = NULL;
  d.nfields = 0;
  d.size = 8;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "size 8 is smaller");
  d.size = 24;
  d.kind = 9;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("ValueError", "unknown node kind 9");
  d.kind = TN_NODE_TREE;
  d.parent_index = TN_TYPE_STRING;
  ck_assert_int_eq(tn_node_register(&d), -1);
  TN_EXPECT_ERROR("TypeError", "not tn.Object or a node type");
  /* None of the failures registered anything. */
  ck_assert_int_eq(tn_type_index("test.Bad1"), -1);
  TN_EXPECT_ERROR("KeyError", "test.Bad1");
  /* Declaring a node type twice is refused. */
  ck_assert_int_eq(TN_NODE_REGISTER(TLeaf, "test.Leaf", TN_TYPE_OBJECT,
                                    TN_NODE_TREE, leaf_fields),
                   -1);
  TN_EXPECT_ERROR("ValueError", "already declared");
  ck_assert_int_eq(tn_node_register(NULL), -1);
  TN_EXPECT_ERROR("ValueError", "'desc' is NULL");
}
END_TEST

/* Types declared the way Python, Rust or Go declare them. */
START_TEST(test_any_slot_types) {
  const char *names[] = {"x", "y"};
  int32_t point = tn_node_register_any_slots("test.py.Point", TN_TYPE_OBJECT,
                                             TN_NODE_TREE, names, 2);
  ck_assert_int_ge(point, TN_TYPE_DYNAMIC_BEGIN);
  const char *more[] = {"z"};
  int32_t point3 = tn_node_register_any_slots("test.py.Point3", point,
                                              TN_NODE_TREE, more, 1);
  ck_assert_int_ge(point3, TN_TYPE_DYNAMIC_BEGIN);
  ck_assert_int_eq(tn_type_field_count(point3), 3);
  ck_assert_int_eq(tn_type_field_at(point3, 2)->offset, 24 + 32);
  const char *all[] = {"x", "y", "z"};
  TnAny vals[] = {tn_any_int(1), tn_any_cstr("two"), tn_any_float(3.0)};
  TnObject *p = TN_NONNULL(tn_node_new(point3, all, vals, 3));
  TnAny v;
  TN_OK(tn_node_get(p, "y", &v));
  const char *s;
  TN_OK(tn_any_as_str(&v, &s, NULL));
  ck_assert_str_eq(s, "two");
  tn_any_clear(&v);
  /* Unset slots read as None. */
  TnObject *q = TN_NONNULL(tn_node_alloc(point));
  TN_OK(tn_node_get(q, "x", &v));
  ck_assert_int_eq(v.type_index, TN_TYPE_NONE);
  tn_object_release(q);
  tn_object_release(p);
  const char *dup[] = {"x"};
  ck_assert_int_eq(tn_node_register_any_slots("test.py.Bad", point,
                                              TN_NODE_TREE, dup, 1), -1);
  TN_EXPECT_ERROR("ValueError", "declared twice");
}
END_TEST

static int describe(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  if (nargs != 1 || !tn_any_is_object(&args[0]))
    return tn_error_raise("TypeError", "describe takes one object");
  TnAny raw = tn_any_cstr(tn_object_type_key(args[0].v_obj));
  return tn_any_to_owned(ret, &raw);
}

START_TEST(test_methods) {
  TnObject *f = TN_NONNULL(tn_func_new(describe, NULL, NULL));
  TN_OK(tn_type_method_register(tt.leaf, "describe", f, 0));
  ck_assert_int_eq(tn_type_method_register(tt.leaf, "describe", f, 0), -1);
  TN_EXPECT_ERROR("ValueError", "already has a method 'describe'");
  TN_OK(tn_type_method_register(tt.leaf, "describe", f, 1));
  /* Found on the derived type too. */
  TnObject *m = TN_NONNULL(tn_type_method_get(tt.derived, "describe"));
  TnObject *d = TN_NONNULL(tn_node_alloc(tt.derived));
  TnAny arg = tn_any_obj(d), ret = tn_any_none();
  TN_OK(tn_func_call(m, &arg, 1, &ret));
  const char *s;
  TN_OK(tn_any_as_str(&ret, &s, NULL));
  ck_assert_str_eq(s, "test.Derived");
  tn_any_clear(&ret);
  ck_assert_ptr_null(tn_type_method_get(tt.derived, "missing"));
  TN_EXPECT_ERROR("AttributeError", "test.Derived has no method 'missing'");
  /* find: the same look-up (inherited too), without raising */
  ck_assert_ptr_null(tn_type_method_find(tt.derived, "missing"));
  ck_assert_ptr_null(tn_error_peek_raised());
  TnObject *found = TN_NONNULL(tn_type_method_find(tt.derived, "describe"));
  ck_assert_ptr_eq(found, m);
  tn_object_release(found);
  TnObject *names = TN_NONNULL(tn_type_method_list(tt.leaf));
  ck_assert_int_eq(tn_array_size(names), 1);
  tn_object_release(names);
  names = TN_NONNULL(tn_type_method_list(tt.derived));
  ck_assert_int_eq(tn_array_size(names), 0); /* own methods only */
  tn_object_release(names);
  TnObject *s2 = TN_NONNULL(tn_string_from_cstr("x"));
  ck_assert_int_eq(tn_type_method_register(tt.leaf, "bad", s2, 0), -1);
  TN_EXPECT_ERROR("TypeError", "expected tn.Function");
  tn_object_release(s2);
  TN_OK(tn_type_method_unregister(tt.leaf, "describe"));
  ck_assert_int_eq(tn_type_method_unregister(tt.leaf, "describe"), -1);
  TN_EXPECT_ERROR("AttributeError", "no method 'describe' of its own");
  ck_assert_ptr_null(tn_type_method_get(tt.derived, "describe"));
  TN_EXPECT_ERROR("AttributeError", "no method 'describe'");
  tn_object_release(d);
  tn_object_release(m);
  tn_object_release(f);
}
END_TEST

START_TEST(test_type_attributes) {
  /* A short string: an inline value, not an object (attribute values stay
   * alive until exit, which the live-object fixture would count). */
  TnAny v = tn_any_cstr("inject");
  TN_OK(tn_type_attr_set("test.pattern", tt.leaf, &v));
  const TnAny *got = tn_type_attr_get("test.pattern", tt.leaf);
  ck_assert_ptr_nonnull(got);
  const char *s;
  TN_OK(tn_any_as_str(got, &s, NULL));
  ck_assert_str_eq(s, "inject");
  ck_assert_ptr_null(tn_type_attr_get("test.pattern", tt.derived)); /* exact */
  ck_assert_ptr_eq(tn_type_attr_find("test.pattern", tt.derived), got);
  ck_assert_ptr_null(tn_type_attr_find("test.pattern", tt.add));
  ck_assert_ptr_null(tn_type_attr_get("test.no_such_attr", tt.leaf));
  ck_assert_ptr_null(tn_error_peek_raised());
  ck_assert_int_eq(tn_type_attr_set("test.pattern", 77777, &v), -1);
  TN_EXPECT_ERROR("KeyError", "77777");
  ck_assert_int_eq(tn_type_attr_set(NULL, tt.leaf, &v), -1);
  TN_EXPECT_ERROR("ValueError", "'attr' is NULL");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reflect");
  TCase *tc = tn_node_case(s, "reflect");
  tcase_add_test(tc, test_field_table);
  tcase_add_test(tc, test_alloc_defaults_get_set);
  tcase_add_test(tc, test_set_errors_leave_object_unchanged);
  tcase_add_test(tc, test_init_at_writes_read_only_fields);
  tcase_add_test(tc, test_kw_construction);
  tcase_add_test(tc, test_registration_checks);
  tcase_add_test(tc, test_any_slot_types);
  tcase_add_test(tc, test_methods);
  tcase_add_test(tc, test_type_attributes);
  return s;
}

TN_TEST_MAIN(make_suite)
