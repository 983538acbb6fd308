#!/usr/bin/env bash
# Builds libwebtensor.so and runs the C ABI tests three ways:
#   1. plain:     the library as shipped; capi_test and threads_test.
#   2. asan:      library built with `go build -asan`, tests with
#                 -fsanitize=address; LeakSanitizer on (capi_test, threads_test).
#   3. cgocheck2: library built with GOEXPERIMENT=cgocheck2; capi_test.
# Valgrind is not used: it cannot follow the Go runtime here (see README.md).
#
# Usage: capi/test/run.sh [BUILD_DIR]   (default build/capi-test)
set -euo pipefail

cd "$(dirname "$0")/../.."
OUT=${1:-build/capi-test}
GO=${GO:-go}
CC=${CC:-gcc}
export CC
CFLAGS=(-std=c11 -Wall -Wextra -Werror -O1 -g -I capi/include -pthread)
LIMIT=${WT_TEST_TIMEOUT:-180} # seconds per test program; a hang is a failure

stage() { printf '\n== %s\n' "$*"; }

# build_lib DIR [GO BUILD ARGS...]: the shared library into DIR.
build_lib() {
  local dir=$1
  shift
  mkdir -p "$dir"
  "$GO" build "$@" -buildmode=c-shared -o "$dir/libwebtensor.so" ./capi
}

# build_test DIR NAME [EXTRA CFLAGS...]: a test program linked to DIR's library.
build_test() {
  local dir=$1 name=$2
  shift 2
  local srcs=("capi/test/$name.c")
  [ "$name" = capi_test ] && srcs+=("capi/test/dlpack_c_test.c" "capi/test/plugins_c_test.c" "capi/test/graphs_c_test.c" "capi/test/train_c_test.c" "capi/test/onnx_c_test.c" "capi/test/domains_c_test.c")
  "$CC" "${CFLAGS[@]}" "$@" "${srcs[@]}" -o "$dir/$name" \
    -L"$dir" -lwebtensor -Wl,-rpath,"$(cd "$dir" && pwd)" -lm
}

# run_test DIR NAME: runs it; its last line is "N passed, M failed".
run_test() {
  local dir=$1 name=$2
  echo "-- $dir/$name"
  timeout "$LIMIT" "$dir/$name"
}

stage "plain: go build -buildmode=c-shared"
build_lib "$OUT/plain"

# The header is the contract: every function it declares must be exported.
# Other wt_ symbols (a Go //export that C code calls back) are listed, not failed.
declared=$(grep -ohE '\bwt_[a-z0-9_]+\(' capi/include/webtensor.h capi/include/webtensor_domains.h | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$OUT/plain/libwebtensor.so" | awk '$3 ~ /^wt_/ {print $3}' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
if [[ -n $extra ]]; then echo "note: exported but not in webtensor.h:" $extra; fi
if [[ -n $missing ]]; then
  echo "FAIL: declared in webtensor.h but not exported by libwebtensor.so:" $missing
  exit 1
fi
echo "all $(echo "$declared" | wc -l) functions of webtensor.h are exported"
build_test "$OUT/plain" capi_test
build_test "$OUT/plain" threads_test
run_test "$OUT/plain" capi_test
run_test "$OUT/plain" threads_test

# With -asan the Go runtime tells LeakSanitizer about its heap, so C memory
# owned by Go objects (tensor storage, DLPack bookkeeping) is not reported as
# leaked, while C memory that nothing references still is; and Go code's reads
# and writes of C memory are checked too. The one suppression (lsan.supp) is
# a leak inside the third-party WebGPU binding.
stage "asan: go build -asan, gcc -fsanitize=address, leak detection on"
build_lib "$OUT/asan" -asan
build_test "$OUT/asan" capi_test -fsanitize=address -fno-omit-frame-pointer
build_test "$OUT/asan" threads_test -fsanitize=address -fno-omit-frame-pointer
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 run_test "$OUT/asan" capi_test
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 run_test "$OUT/asan" threads_test

stage "cgocheck2: GOEXPERIMENT=cgocheck2 go build -buildmode=c-shared"
GOEXPERIMENT=cgocheck2 build_lib "$OUT/cgocheck2"
build_test "$OUT/cgocheck2" capi_test
run_test "$OUT/cgocheck2" capi_test

stage "all C ABI tests passed"
