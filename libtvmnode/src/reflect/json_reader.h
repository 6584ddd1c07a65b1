/*
 * json_reader.h: the streaming JSON reader under tn_json_load. Private to
 * the library.
 *
 * YAJL does the parsing (events, no tree). This layer turns the events into
 * small value trees in an arena, one top-level "nodes" element at a time:
 * each element is handed to a callback as soon as it is complete and its
 * arena is then reused, so memory stays flat however large the document.
 * Numbers keep their text until converted, so int64 stays exact and an
 * integer is told from a float.
 */
#ifndef TVMNODE_REFLECT_JSON_READER_H_
#define TVMNODE_REFLECT_JSON_READER_H_

#ifndef TN_BUILDING_LIBRARY
#error "json_reader.h is private to libtvmnode"
#endif

#include "reflect/reflect_internal.h"

typedef enum { J_NULL, J_BOOL, J_INT, J_FLOAT, J_STR, J_ARR, J_OBJ } JKind;

typedef struct JVal JVal;
typedef struct {
  const char *key;
  size_t klen;
  JVal *val;
} JMember;

struct JVal {
  JKind kind;
  union {
    bool b;
    int64_t i;
    double f;
    struct {
      const char *s; /* NUL-terminated; may also contain NULs */
      size_t n;
    } str;
    struct {
      JVal **items;
      size_t n;
    } arr;
    struct {
      JMember *members;
      size_t n;
    } obj;
  } u;
};

/* Called with each element of the top-level "nodes" array, in order. It
 * returns 0 to go on, or -1 (with the error raised) to stop. */
typedef int (*JNodeFn)(void *ctx, const JVal *node, size_t index);

typedef struct JDoc JDoc;

/*
 * Parse `text`. On success returns a document whose top-level object is
 * returned by tn__jdoc_root (its "nodes" member holds an empty array: the
 * elements went to `on_node`). On failure returns NULL with a ValueError
 * giving the line, column and byte, or with the callback's error.
 */
JDoc *tn__json_read(const char *text, size_t size, JNodeFn on_node,
                    void *ctx);
const JVal *tn__jdoc_root(const JDoc *doc);
void tn__jdoc_free(JDoc *doc);

/* Member of an object by key, or NULL. */
const JVal *tn__jobj_get(const JVal *obj, const char *key);
/* What a value is, for messages: "an object", "an integer", ... */
const char *tn__jkind_name(const JVal *v);

#endif /* TVMNODE_REFLECT_JSON_READER_H_ */
