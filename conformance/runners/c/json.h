/* json.h: a small JSON reader for the C conformance runner (no
 * dependencies). Parses a whole document into a tree; strings are
 * NUL-terminated copies with escapes decoded (\uXXXX below 0x80 only, which
 * is all the vector headers use). Errors return NULL and set json_error. */
#ifndef WT_CONF_JSON_H
#define WT_CONF_JSON_H

#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
  jkind kind;
  double num;      /* J_NUM, J_BOOL (0/1) */
  char *str;       /* J_STR */
  struct jval **items; /* J_ARR values, J_OBJ values */
  char **keys;     /* J_OBJ keys */
  size_t n;
} jval;

extern const char *json_error;

jval *json_parse(const char *text, size_t len);
void json_free(jval *v);
/* Object member by key, or NULL. */
const jval *jget(const jval *obj, const char *key);
/* Member helpers with defaults. */
double jnum(const jval *obj, const char *key, double def);
const char *jstr(const jval *obj, const char *key, const char *def);
int jbool(const jval *obj, const char *key, int def);

#endif
