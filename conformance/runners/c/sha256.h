#ifndef WT_CONF_SHA256_H
#define WT_CONF_SHA256_H
#include <stddef.h>
#include <stdint.h>
/* Writes the lowercase hex SHA-256 of data[0..n) and a NUL into out. */
void sha256_hex(const void *data, size_t n, char out[65]);
#endif
