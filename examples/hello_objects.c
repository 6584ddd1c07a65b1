/*
 * hello_objects.c: the core object system in one page. Builds a list, a map
 * and a tensor, shares them, shows copy-on-write and the error protocol,
 * and checks that nothing is left alive at the end.
 */
#include <stdio.h>

#include <tvmnode/tvmnode.h>

static void print_error(void) {
  TnObject *e = tn_error_take_raised();
  printf("  -> %s: %s\n", tn_error_kind(e), tn_error_message(e));
  tn_object_release(e);
}

int main(void) {
  printf("tvmnode %s (ABI %d)\n", tn_version(), tn_abi_version());
  int64_t live0 = tn_object_live_count();

  /* A list of mixed values; strings are copied in. */
  TnObject *list = tn_list_new(NULL, 0);
  TnAny items[] = {tn_any_int(1), tn_any_float(2.5), tn_any_cstr("three")};
  for (int i = 0; i < 3; i++) tn_list_append(list, &items[i]);
  printf("list has %lld items; item 2 is a %s\n",
         (long long)tn_array_size(list), tn_any_type_key(tn_array_at(list, 2)));

  /* An immutable array: a change through a shared reference copies. */
  TnObject *a = tn_array_new(items, 2);
  TnObject *b = a;
  tn_object_retain(b);
  TnAny four = tn_any_int(4);
  tn_array_push(&a, &four);
  printf("after push: a has %lld items, b still has %lld\n",
         (long long)tn_array_size(a), (long long)tn_array_size(b));

  /* An insertion-ordered map with string keys. */
  TnAny keys[] = {tn_any_cstr("conv"), tn_any_cstr("relu")};
  TnAny vals[] = {tn_any_int(7), tn_any_int(3)};
  TnObject *ops = tn_map_new(keys, vals, 2);
  const TnAny *k, *v;
  for (int64_t p = tn_map_next(ops, 0, &k, &v); p >= 0;
       p = tn_map_next(ops, p + 1, &k, &v)) {
    const char *name;
    tn_any_as_str(k, &name, NULL);
    printf("  %s -> %lld\n", name, (long long)v->v_int64);
  }

  /* A tensor, exported through DLPack and taken back without a copy. */
  int64_t shape[] = {2, 3};
  DLDataType f32;
  DLDevice cpu;
  tn_dtype_parse("float32", &f32);
  tn_device_parse("cpu:0", &cpu);
  TnObject *t = tn_tensor_empty(shape, 2, f32, cpu);
  DLManagedTensorVersioned *m = tn_tensor_to_dlpack(t);
  TnObject *t2 = tn_tensor_from_dlpack(m);
  printf("tensor of %lld bytes, same storage after a DLPack round trip: %s\n",
         (long long)tn_tensor_nbytes(t2),
         tn_tensor_dltensor(t)->data == tn_tensor_dltensor(t2)->data ? "yes"
                                                                     : "no");

  /* Errors name the function and the values involved. */
  printf("errors:\n");
  if (tn_array_at(list, 10) == NULL) print_error();
  TnAny missing = tn_any_cstr("softmax");
  TnAny out;
  if (tn_map_get(ops, &missing, &out) != 0) print_error();
  DLDataType bad;
  if (tn_dtype_parse("float7", &bad) != 0) print_error();

  TnObject *all[] = {list, a, b, ops, t, t2};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    tn_object_release(all[i]);
  printf("objects left alive: %lld\n",
         (long long)(tn_object_live_count() - live0));
  return tn_object_live_count() == live0 ? 0 : 1;
}
