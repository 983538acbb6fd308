//go:build linux && cgo

#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Function pointers, filled by wt_cuda_load. A pointer stays NULL until its
// library loaded: the Go side never calls into a library it did not load.
static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDriverGetVersion)(int *);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*p_cuDeviceTotalMem)(size_t *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuCtxGetCurrent)(CUcontext *);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuGetErrorName)(CUresult, const char **);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
static CUresult (*p_cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
static CUresult (*p_cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
static CUresult (*p_cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
static CUresult (*p_cuStreamCreate)(CUstream *, unsigned);
static CUresult (*p_cuStreamSynchronize)(CUstream);
static CUresult (*p_cuStreamWaitEvent)(CUstream, CUevent, unsigned);
static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventSynchronize)(CUevent);
static CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*p_cuEventDestroy)(CUevent);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuFuncSetAttribute)(CUfunction, int, int);
static CUresult (*p_cuPointerGetAttribute)(void *, int, CUdeviceptr);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void **, void **);

static nvrtcResult (*p_nvrtcVersion)(int *, int *);
static nvrtcResult (*p_nvrtcGetNumSupportedArchs)(int *);
static nvrtcResult (*p_nvrtcGetSupportedArchs)(int *);
static const char *(*p_nvrtcGetErrorString)(nvrtcResult);
static nvrtcResult (*p_nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                           const char *const *);
static nvrtcResult (*p_nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
static nvrtcResult (*p_nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
static nvrtcResult (*p_nvrtcGetProgramLog)(nvrtcProgram, char *);
static nvrtcResult (*p_nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
static nvrtcResult (*p_nvrtcGetCUBIN)(nvrtcProgram, char *);
static nvrtcResult (*p_nvrtcGetPTXSize)(nvrtcProgram, size_t *);
static nvrtcResult (*p_nvrtcGetPTX)(nvrtcProgram, char *);
static nvrtcResult (*p_nvrtcDestroyProgram)(nvrtcProgram *);

static cublasStatus_t (*p_cublasCreate)(cublasHandle_t *);
static cublasStatus_t (*p_cublasSetStream)(cublasHandle_t, CUstream);
static cublasStatus_t (*p_cublasGetVersion)(cublasHandle_t, int *);
static cublasStatus_t (*p_cublasSetMathMode)(cublasHandle_t, int);
static cublasStatus_t (*p_cublasSetWorkspace)(cublasHandle_t, void *, size_t);
static const char *(*p_cublasGetStatusName)(cublasStatus_t);
static cublasStatus_t (*p_cublasGemmStridedBatchedEx)(cublasHandle_t, int, int, int, int, int, const void *,
                                                      const void *, int, int, long long, const void *, int, int,
                                                      long long, const void *, void *, int, int, long long, int, int,
                                                      int);

struct sym {
  void **slot;
  const char *name;
};

#define S(p, n) {(void **)&p, n}

static const struct sym driver_syms[] = {
    S(p_cuInit, "cuInit"),
    S(p_cuDriverGetVersion, "cuDriverGetVersion"),
    S(p_cuDeviceGetCount, "cuDeviceGetCount"),
    S(p_cuDeviceGet, "cuDeviceGet"),
    S(p_cuDeviceGetName, "cuDeviceGetName"),
    S(p_cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    S(p_cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
    S(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    S(p_cuCtxGetCurrent, "cuCtxGetCurrent"),
    S(p_cuCtxSetCurrent, "cuCtxSetCurrent"),
    S(p_cuGetErrorName, "cuGetErrorName"),
    S(p_cuGetErrorString, "cuGetErrorString"),
    S(p_cuMemAlloc, "cuMemAlloc_v2"),
    S(p_cuMemFree, "cuMemFree_v2"),
    S(p_cuMemGetInfo, "cuMemGetInfo_v2"),
    S(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    S(p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    S(p_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    S(p_cuMemsetD8Async, "cuMemsetD8Async"),
    S(p_cuStreamCreate, "cuStreamCreate"),
    S(p_cuStreamSynchronize, "cuStreamSynchronize"),
    S(p_cuStreamWaitEvent, "cuStreamWaitEvent"),
    S(p_cuEventCreate, "cuEventCreate"),
    S(p_cuEventRecord, "cuEventRecord"),
    S(p_cuEventSynchronize, "cuEventSynchronize"),
    S(p_cuEventElapsedTime, "cuEventElapsedTime"),
    S(p_cuEventDestroy, "cuEventDestroy_v2"),
    S(p_cuModuleLoadData, "cuModuleLoadData"),
    S(p_cuModuleGetFunction, "cuModuleGetFunction"),
    S(p_cuFuncSetAttribute, "cuFuncSetAttribute"),
    S(p_cuPointerGetAttribute, "cuPointerGetAttribute"),
    S(p_cuLaunchKernel, "cuLaunchKernel"),
    {0, 0},
};

static const struct sym nvrtc_syms[] = {
    S(p_nvrtcVersion, "nvrtcVersion"),
    S(p_nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"),
    S(p_nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"),
    S(p_nvrtcGetErrorString, "nvrtcGetErrorString"),
    S(p_nvrtcCreateProgram, "nvrtcCreateProgram"),
    S(p_nvrtcCompileProgram, "nvrtcCompileProgram"),
    S(p_nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
    S(p_nvrtcGetProgramLog, "nvrtcGetProgramLog"),
    S(p_nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
    S(p_nvrtcGetCUBIN, "nvrtcGetCUBIN"),
    S(p_nvrtcGetPTXSize, "nvrtcGetPTXSize"),
    S(p_nvrtcGetPTX, "nvrtcGetPTX"),
    S(p_nvrtcDestroyProgram, "nvrtcDestroyProgram"),
    {0, 0},
};

static const struct sym cublas_syms[] = {
    S(p_cublasCreate, "cublasCreate_v2"),
    S(p_cublasSetStream, "cublasSetStream_v2"),
    S(p_cublasGetVersion, "cublasGetVersion_v2"),
    S(p_cublasSetMathMode, "cublasSetMathMode"),
    S(p_cublasSetWorkspace, "cublasSetWorkspace_v2"),
    S(p_cublasGetStatusName, "cublasGetStatusName"),
    S(p_cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx"),
    {0, 0},
};

// cuBLASLt is loaded (cuBLAS needs it beside it) but not yet called.
static const struct sym cublaslt_syms[] = {{0, 0}};

int wt_cuda_load(int lib, const char *path, char *err, int errlen) {
  const struct sym *syms = lib == WT_LIB_DRIVER   ? driver_syms
                           : lib == WT_LIB_NVRTC  ? nvrtc_syms
                           : lib == WT_LIB_CUBLAS ? cublas_syms
                                                  : cublaslt_syms;
  // RTLD_GLOBAL: cuBLAS finds the cuBLASLt we opened first.
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    return -1;
  }
  for (const struct sym *s = syms; s->name; s++) {
    void *f = dlsym(h, s->name);
    if (!f) {
      snprintf(err, errlen, "%s has no symbol %s (too old a version?)", path, s->name);
      for (const struct sym *t = syms; t != s; t++) *t->slot = NULL;
      dlclose(h);
      return -1;
    }
    *s->slot = f;
  }
  return 0;
}

// ---- driver ----------------------------------------------------------------

static CUresult current(CUcontext ctx) {
  CUcontext cur = NULL;
  CUresult r = p_cuCtxGetCurrent(&cur);
  if (r != 0 || cur == ctx) return r;
  return p_cuCtxSetCurrent(ctx);
}

#define WITH_CTX(call)            \
  do {                            \
    CUresult r_ = current(ctx);   \
    if (r_ != 0) return r_;       \
    return call;                  \
  } while (0)

CUresult wt_cuInit(void) { return p_cuInit(0); }
CUresult wt_cuDriverGetVersion(int *v) { return p_cuDriverGetVersion(v); }
CUresult wt_cuDeviceGetCount(int *n) { return p_cuDeviceGetCount(n); }
CUresult wt_cuDeviceGet(CUdevice *d, int ordinal) { return p_cuDeviceGet(d, ordinal); }
CUresult wt_cuDeviceGetName(char *name, int len, CUdevice d) { return p_cuDeviceGetName(name, len, d); }
CUresult wt_cuDeviceGetAttribute(int *v, int attr, CUdevice d) { return p_cuDeviceGetAttribute(v, attr, d); }
CUresult wt_cuDeviceTotalMem(size_t *bytes, CUdevice d) { return p_cuDeviceTotalMem(bytes, d); }
CUresult wt_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { return p_cuDevicePrimaryCtxRetain(c, d); }

const char *wt_cuErrorName(CUresult r) {
  const char *s = NULL;
  if (!p_cuGetErrorName || p_cuGetErrorName(r, &s) != 0 || !s) return "CUDA_ERROR_UNKNOWN_CODE";
  return s;
}

const char *wt_cuErrorString(CUresult r) {
  const char *s = NULL;
  if (!p_cuGetErrorString || p_cuGetErrorString(r, &s) != 0 || !s) return "unknown CUDA error";
  return s;
}

CUresult wt_cuMemAlloc(CUcontext ctx, CUdeviceptr *p, size_t bytes) { WITH_CTX(p_cuMemAlloc(p, bytes)); }
CUresult wt_cuMemFree(CUcontext ctx, CUdeviceptr p) { WITH_CTX(p_cuMemFree(p)); }
CUresult wt_cuMemGetInfo(CUcontext ctx, size_t *f, size_t *t) { WITH_CTX(p_cuMemGetInfo(f, t)); }
CUresult wt_cuMemcpyHtoD(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  WITH_CTX(p_cuMemcpyHtoDAsync(dst, src, n, s));
}
CUresult wt_cuMemcpyDtoH(CUcontext ctx, void *dst, CUdeviceptr src, size_t n, CUstream s) {
  CUresult r = current(ctx);
  if (r != 0) return r;
  r = p_cuMemcpyDtoHAsync(dst, src, n, s);
  if (r != 0) return r;
  // A read is where the host waits for the stream.
  return p_cuStreamSynchronize(s);
}
CUresult wt_cuMemcpyDtoD(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  WITH_CTX(p_cuMemcpyDtoDAsync(dst, src, n, s));
}
CUresult wt_cuMemsetD8(CUcontext ctx, CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  WITH_CTX(p_cuMemsetD8Async(dst, v, n, s));
}
CUresult wt_cuStreamCreate(CUcontext ctx, CUstream *s) { WITH_CTX(p_cuStreamCreate(s, 1 /* non-blocking */)); }
CUresult wt_cuStreamSynchronize(CUcontext ctx, CUstream s) { WITH_CTX(p_cuStreamSynchronize(s)); }
CUresult wt_cuStreamWaitEvent(CUcontext ctx, CUstream s, CUevent e) { WITH_CTX(p_cuStreamWaitEvent(s, e, 0)); }
CUresult wt_cuEventCreate(CUcontext ctx, CUevent *e, unsigned flags) { WITH_CTX(p_cuEventCreate(e, flags)); }
CUresult wt_cuEventRecord(CUcontext ctx, CUevent e, CUstream s) { WITH_CTX(p_cuEventRecord(e, s)); }
CUresult wt_cuEventSynchronize(CUcontext ctx, CUevent e) { WITH_CTX(p_cuEventSynchronize(e)); }
CUresult wt_cuEventElapsedTime(CUcontext ctx, float *ms, CUevent a, CUevent b) {
  WITH_CTX(p_cuEventElapsedTime(ms, a, b));
}
CUresult wt_cuEventDestroy(CUcontext ctx, CUevent e) { WITH_CTX(p_cuEventDestroy(e)); }
CUresult wt_cuModuleLoadData(CUcontext ctx, CUmodule *m, const void *image) {
  WITH_CTX(p_cuModuleLoadData(m, image));
}
CUresult wt_cuModuleGetFunction(CUcontext ctx, CUfunction *f, CUmodule m, const char *name) {
  WITH_CTX(p_cuModuleGetFunction(f, m, name));
}
CUresult wt_cuFuncSetMaxDynamicShared(CUcontext ctx, CUfunction f, int bytes) {
  WITH_CTX(p_cuFuncSetAttribute(f, 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */, bytes));
}

CUresult wt_cuPointerDevice(CUcontext ctx, CUdeviceptr p, int *memtype, int *ordinal) {
  CUresult r = current(ctx);
  if (r != 0) return r;
  unsigned int mt = 0;
  r = p_cuPointerGetAttribute(&mt, 2 /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */, p);
  if (r != 0) return r;
  *memtype = (int)mt;
  int ord = -1;
  r = p_cuPointerGetAttribute(&ord, 9 /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */, p);
  *ordinal = ord;
  return r;
}

CUresult wt_launch(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned shmem,
                   CUstream s, void *args, size_t size) {
  (void)size;
  CUresult r = current(ctx);
  if (r != 0) return r;
  void *params[1] = {args};
  return p_cuLaunchKernel(f, gx, gy, gz, bx, 1, 1, shmem, s, params, NULL);
}

// ---- NVRTC -----------------------------------------------------------------

nvrtcResult wt_nvrtcVersion(int *major, int *minor) { return p_nvrtcVersion(major, minor); }

nvrtcResult wt_nvrtcSupportedArchs(int *archs, int cap, int *n) {
  int count = 0;
  nvrtcResult r = p_nvrtcGetNumSupportedArchs(&count);
  if (r != 0) return r;
  *n = count;
  if (count > cap) return 0;
  return p_nvrtcGetSupportedArchs(archs);
}

const char *wt_nvrtcErrorString(nvrtcResult r) { return p_nvrtcGetErrorString ? p_nvrtcGetErrorString(r) : "NVRTC not loaded"; }

nvrtcResult wt_nvrtcCompile(const char *src, const char *name, const char **opts, int nopts, int want_cubin, char **out,
                            size_t *outlen, char **log) {
  *out = NULL;
  *outlen = 0;
  *log = NULL;
  nvrtcProgram prog;
  nvrtcResult r = p_nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
  if (r != 0) return r;
  nvrtcResult cr = p_nvrtcCompileProgram(prog, nopts, opts);
  size_t logn = 0;
  if (p_nvrtcGetProgramLogSize(prog, &logn) == 0 && logn > 0) {
    *log = malloc(logn + 1);
    if (*log && p_nvrtcGetProgramLog(prog, *log) != 0) (*log)[0] = 0;
    if (*log) (*log)[logn] = 0;
  }
  if (cr == 0) {
    size_t n = 0;
    cr = want_cubin ? p_nvrtcGetCUBINSize(prog, &n) : p_nvrtcGetPTXSize(prog, &n);
    if (cr == 0) {
      *out = malloc(n > 0 ? n : 1);
      if (!*out) {
        cr = 1; /* NVRTC_ERROR_OUT_OF_MEMORY */
      } else {
        cr = want_cubin ? p_nvrtcGetCUBIN(prog, *out) : p_nvrtcGetPTX(prog, *out);
        *outlen = n;
      }
    }
  }
  p_nvrtcDestroyProgram(&prog);
  return cr;
}

// ---- cuBLAS ----------------------------------------------------------------

cublasStatus_t wt_cublasCreate(CUcontext ctx, cublasHandle_t *h, CUstream s, int version[1]) {
  if (current(ctx) != 0) return 3; /* CUBLAS_STATUS_ALLOC_FAILED: no context */
  cublasStatus_t st = p_cublasCreate(h);
  if (st != 0) return st;
  st = p_cublasSetStream(*h, s);
  if (st != 0) return st;
  return p_cublasGetVersion(*h, version);
}

cublasStatus_t wt_cublasSetMathMode(CUcontext ctx, cublasHandle_t h, int mode) {
  if (current(ctx) != 0) return 3;
  return p_cublasSetMathMode(h, mode);
}

cublasStatus_t wt_cublasSetWorkspace(CUcontext ctx, cublasHandle_t h, CUdeviceptr ws, size_t bytes) {
  if (current(ctx) != 0) return 3;
  return p_cublasSetWorkspace(h, (void *)ws, bytes);
}

cublasStatus_t wt_cublasGemm(CUcontext ctx, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
                             CUdeviceptr a, int atype, int lda, long long sa, CUdeviceptr b, int btype, int ldb,
                             long long sb, double beta, CUdeviceptr c, int ctype, int ldc, long long sc, int batch,
                             int compute) {
  if (current(ctx) != 0) return 3;
  // Scalars have the compute type's width: double for CUBLAS_COMPUTE_64F*
  // (70, 71), float otherwise.
  float af = (float)alpha, bf = (float)beta;
  const void *pa = &af, *pb = &bf;
  if (compute == 70 || compute == 71) {
    pa = &alpha;
    pb = &beta;
  }
  return p_cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, pa, (const void *)a, atype, lda, sa, (const void *)b, btype,
                                      ldb, sb, pb, (void *)c, ctype, ldc, sc, batch, compute,
                                      -1 /* CUBLAS_GEMM_DEFAULT */);
}

const char *wt_cublasStatusName(cublasStatus_t s) {
  return p_cublasGetStatusName ? p_cublasGetStatusName(s) : "CUBLAS_STATUS_UNKNOWN";
}
