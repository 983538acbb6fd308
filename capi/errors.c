// Per-thread error messages and the version strings of the C ABI. The message
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

int32_t wt_abi_version(void) { return WT_ABI_VERSION; }

const char *wt_version(void) { return WT_VERSION_STRING; }
