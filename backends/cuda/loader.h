// The CUDA driver API, NVRTC and cuBLAS as the backend uses them, loaded at
// run time with dlopen so that a build of webtensor runs where CUDA is
// absent. Only the handful of types and functions the backend calls are
// declared here; the values of enums are those of cuda.h, nvrtc.h and
// cublas_api.h (CUDA 12 and 13 agree on all of them).
#ifndef WT_CUDA_LOADER_H
#define WT_CUDA_LOADER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef int nvrtcResult;
typedef void *nvrtcProgram;
typedef int cublasStatus_t;
typedef void *cublasHandle_t;

// Which library a wt_cuda_load_* call loads.
enum { WT_LIB_DRIVER = 0, WT_LIB_NVRTC = 1, WT_LIB_CUBLAS = 2, WT_LIB_CUBLASLT = 3 };

// wt_cuda_load opens path as library lib and resolves its symbols. It
// returns 0, or -1 with a message in err (dlerror's, or the missing symbol).
int wt_cuda_load(int lib, const char *path, char *err, int errlen);

// ---- driver ----------------------------------------------------------------
CUresult wt_cuInit(void);
CUresult wt_cuDriverGetVersion(int *v);
CUresult wt_cuDeviceGetCount(int *n);
CUresult wt_cuDeviceGet(CUdevice *d, int ordinal);
CUresult wt_cuDeviceGetName(char *name, int len, CUdevice d);
CUresult wt_cuDeviceGetAttribute(int *v, int attr, CUdevice d);
CUresult wt_cuDeviceTotalMem(size_t *bytes, CUdevice d);
CUresult wt_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
const char *wt_cuErrorName(CUresult r);
const char *wt_cuErrorString(CUresult r);

// Every call below first makes ctx current on the calling OS thread: Go
// moves goroutines between threads, so each cgo call sets it.
CUresult wt_cuMemAlloc(CUcontext ctx, CUdeviceptr *p, size_t bytes);
CUresult wt_cuMemFree(CUcontext ctx, CUdeviceptr p);
CUresult wt_cuMemGetInfo(CUcontext ctx, size_t *free_bytes, size_t *total);
CUresult wt_cuMemcpyHtoD(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult wt_cuMemcpyDtoH(CUcontext ctx, void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult wt_cuMemcpyDtoD(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult wt_cuMemsetD8(CUcontext ctx, CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
CUresult wt_cuStreamCreate(CUcontext ctx, CUstream *s);
CUresult wt_cuStreamSynchronize(CUcontext ctx, CUstream s);
CUresult wt_cuStreamWaitEvent(CUcontext ctx, CUstream s, CUevent e);
CUresult wt_cuEventCreate(CUcontext ctx, CUevent *e, unsigned flags);
CUresult wt_cuEventRecord(CUcontext ctx, CUevent e, CUstream s);
CUresult wt_cuEventSynchronize(CUcontext ctx, CUevent e);
CUresult wt_cuEventElapsedTime(CUcontext ctx, float *ms, CUevent a, CUevent b);
CUresult wt_cuEventDestroy(CUcontext ctx, CUevent e);
CUresult wt_cuModuleLoadData(CUcontext ctx, CUmodule *m, const void *image);
CUresult wt_cuModuleGetFunction(CUcontext ctx, CUfunction *f, CUmodule m, const char *name);
CUresult wt_cuFuncSetMaxDynamicShared(CUcontext ctx, CUfunction f, int bytes);
CUresult wt_cuPointerDevice(CUcontext ctx, CUdeviceptr p, int *memtype, int *ordinal);

// wt_launch runs f with one by-value parameter: the args block of size
// bytes (the kernels' WtArgs struct).
CUresult wt_launch(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned shmem, CUstream s, void *args, size_t size);

// ---- NVRTC -----------------------------------------------------------------
nvrtcResult wt_nvrtcVersion(int *major, int *minor);
nvrtcResult wt_nvrtcSupportedArchs(int *archs, int cap, int *n);
const char *wt_nvrtcErrorString(nvrtcResult r);
// wt_nvrtcCompile compiles src with the options; on success *out is a
// malloc'd CUBIN (want_cubin) or PTX image of *outlen bytes. *log is a
// malloc'd compiler log either way (may be empty). The caller frees both.
nvrtcResult wt_nvrtcCompile(const char *src, const char *name, const char **opts, int nopts, int want_cubin,
                            char **out, size_t *outlen, char **log);

// ---- cuBLAS ----------------------------------------------------------------
cublasStatus_t wt_cublasCreate(CUcontext ctx, cublasHandle_t *h, CUstream s, int version[1]);
cublasStatus_t wt_cublasSetMathMode(CUcontext ctx, cublasHandle_t h, int mode);
cublasStatus_t wt_cublasSetWorkspace(CUcontext ctx, cublasHandle_t h, CUdeviceptr ws, size_t bytes);
// wt_cublasGemm is cublasGemmStridedBatchedEx with scalars as doubles
// (converted to the compute type's width).
cublasStatus_t wt_cublasGemm(CUcontext ctx, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
                             CUdeviceptr a, int atype, int lda, long long sa, CUdeviceptr b, int btype, int ldb,
                             long long sb, double beta, CUdeviceptr c, int ctype, int ldc, long long sc, int batch,
                             int compute);
const char *wt_cublasStatusName(cublasStatus_t s);

#endif
