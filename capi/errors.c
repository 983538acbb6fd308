// Per-thread error messages and static strings of the C ABI. The message
// lives in a fixed thread-local buffer, so setting it never allocates and a
// thread that exits leaks nothing.
#include <string.h>

#include "include/webtensor.h"

static _Thread_local char wt_error_buf[1024];

__attribute__((visibility("hidden"))) void wt_set_error(const char *msg, size_t n) {
  if (n >= sizeof wt_error_buf) {
    n = sizeof wt_error_buf - 4;
    memcpy(wt_error_buf, msg, n);
    memcpy(wt_error_buf + n, "...", 4);
    return;
  }
  memcpy(wt_error_buf, msg, n);
  wt_error_buf[n] = 0;
}

const char *wt_last_error(void) { return wt_error_buf; }

const char *wt_status_string(int32_t status) {
  switch (status) {
  case WT_OK:
    return "ok";
  case WT_ERR_INVALID:
    return "invalid argument";
  case WT_ERR_HANDLE:
    return "unknown or freed tensor handle";
  case WT_ERR_UNSUPPORTED:
    return "unsupported";
  case WT_ERR_OUT_OF_MEMORY:
    return "out of memory";
  case WT_ERR_BUFFER_TOO_SMALL:
    return "buffer too small";
  case WT_ERR_INTERNAL:
    return "internal error";
  }
  return "unknown status";
}

int32_t wt_abi_version(void) { return WT_ABI_VERSION; }

const char *wt_version(void) { return WT_VERSION_STRING; }
