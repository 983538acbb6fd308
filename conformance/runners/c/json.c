/* json.c: see json.h. A recursive-descent parser; depth is bounded so a
 * hostile file cannot overflow the stack. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

const char *json_error = NULL;

typedef struct {
  const char *p, *end;
  int depth;
} parser;

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')) ps->p++;
}

static jval *new_val(jkind k) {
  jval *v = calloc(1, sizeof *v);
  if (v) v->kind = k;
  return v;
}

static jval *parse_value(parser *ps);

static char *parse_string_raw(parser *ps) {
  if (ps->p >= ps->end || *ps->p != '"') {
    json_error = "expected a string";
    return NULL;
  }
  ps->p++;
  size_t cap = 16, n = 0;
  char *out = malloc(cap);
  while (ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if (c == '\\' && ps->p < ps->end) {
      char e = *ps->p++;
      switch (e) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          unsigned code = 0;
          for (int i = 0; i < 4 && ps->p < ps->end; i++) {
            char h = *ps->p++;
            code = code * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
          }
          c = code < 0x80 ? (char)code : '?';
          break;
        }
        default: c = e;
      }
    }
    if (n + 2 > cap) out = realloc(out, cap *= 2);
    out[n++] = c;
  }
  if (ps->p >= ps->end) {
    free(out);
    json_error = "unterminated string";
    return NULL;
  }
  ps->p++;
  out[n] = 0;
  return out;
}

static int push(jval *v, char *key, jval *item) {
  if ((v->n & (v->n - 1)) == 0) { /* grow at powers of two */
    size_t cap = v->n ? 2 * v->n : 1;
    v->items = realloc(v->items, cap * sizeof *v->items);
    if (key || v->kind == J_OBJ) v->keys = realloc(v->keys, cap * sizeof *v->keys);
  }
  v->items[v->n] = item;
  if (v->kind == J_OBJ) v->keys[v->n] = key;
  v->n++;
  return 1;
}

static jval *parse_container(parser *ps, int obj) {
  if (++ps->depth > 64) {
    json_error = "nesting deeper than 64";
    return NULL;
  }
  jval *v = new_val(obj ? J_OBJ : J_ARR);
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
    ps->p++;
    ps->depth--;
    return v;
  }
  for (;;) {
    char *key = NULL;
    skip_ws(ps);
    if (obj) {
      if (!(key = parse_string_raw(ps))) goto fail;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        free(key);
        json_error = "expected ':'";
        goto fail;
      }
      ps->p++;
    }
    jval *item = parse_value(ps);
    if (!item) {
      free(key);
      goto fail;
    }
    push(v, key, item);
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
      ps->p++;
      ps->depth--;
      return v;
    }
    json_error = obj ? "expected ',' or '}'" : "expected ',' or ']'";
    goto fail;
  }
fail:
  json_free(v);
  return NULL;
}

static jval *parse_value(parser *ps) {
  skip_ws(ps);
  if (ps->p >= ps->end) {
    json_error = "unexpected end";
    return NULL;
  }
  char c = *ps->p;
  if (c == '{' || c == '[') return parse_container(ps, c == '{');
  if (c == '"') {
    char *s = parse_string_raw(ps);
    if (!s) return NULL;
    jval *v = new_val(J_STR);
    v->str = s;
    return v;
  }
  if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
    jval *v = new_val(J_BOOL);
    v->num = c == 't';
    ps->p += c == 't' ? 4 : 5;
    return v;
  }
  if (!strncmp(ps->p, "null", 4)) {
    ps->p += 4;
    return new_val(J_NULL);
  }
  char *endp;
  double d = strtod(ps->p, &endp);
  if (endp == ps->p || endp > ps->end) {
    json_error = "bad value";
    return NULL;
  }
  ps->p = endp;
  jval *v = new_val(J_NUM);
  v->num = d;
  return v;
}

jval *json_parse(const char *text, size_t len) {
  parser ps = {text, text + len, 0};
  json_error = NULL;
  jval *v = parse_value(&ps);
  return v;
}

void json_free(jval *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    json_free(v->items[i]);
    if (v->kind == J_OBJ) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  free(v);
}

const jval *jget(const jval *obj, const char *key) {
  if (!obj || obj->kind != J_OBJ) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (!strcmp(obj->keys[i], key)) return obj->items[i];
  return NULL;
}

double jnum(const jval *obj, const char *key, double def) {
  const jval *v = jget(obj, key);
  return v && (v->kind == J_NUM || v->kind == J_BOOL) ? v->num : def;
}

const char *jstr(const jval *obj, const char *key, const char *def) {
  const jval *v = jget(obj, key);
  return v && v->kind == J_STR ? v->str : def;
}

int jbool(const jval *obj, const char *key, int def) {
  const jval *v = jget(obj, key);
  return v && v->kind == J_BOOL ? (int)v->num : def;
}
