/*
 * cclip: a webtensor plugin in C with no libc (see ../../sdk/c/wtplugin.h).
 *
 *   cclip.soft_clip(x; limit=1)       = limit * tanh(x / limit), f32, differentiable,
 *                                       with a WGSL kernel for the GPU path
 *   cclip.count_above(x; threshold=0) = how many elements exceed threshold, an i64 scalar
 */
#include "../../sdk/c/wtplugin.h"

/* The backward rule reuses the output: d/dx limit*tanh(x/limit) = 1 - (y/limit)^2. The
 * WGSL kernel binds x, y and a uniform {n, limit}; one invocation per element. */
WT_MANIFEST("{\"abi\": 1, \"name\": \"cclip\", \"version\": \"0.1.0\", \"ops\": ["
            "{\"name\": \"cclip.soft_clip\","
            " \"doc\": \"limit * tanh(x / limit): a smooth clip of x to (-limit, limit).\","
            " \"inputs\": [{\"name\": \"x\", \"dtypes\": [\"f32\"]}],"
            " \"attrs\": [{\"name\": \"limit\", \"kind\": \"float\", \"default\": 1.0,"
            " \"doc\": \"the bound approached as |x| grows (> 0)\"}],"
            " \"outputs\": [{\"name\": \"y\", \"shape\": \"input:0\", \"dtype\": \"input:0\"}],"
            " \"backward\": {\"x\": \"mul(grad, sub(1, square(div(y, limit))))\"},"
            " \"wgsl\": \"struct Params { n: u32, limit: f32 }\\n"
            "@group(0) @binding(0) var<storage, read> x: array<f32>;\\n"
            "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\\n"
            "@group(0) @binding(2) var<uniform> params: Params;\\n"
            "@compute @workgroup_size(64)\\n"
            "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\\n"
            "  if (id.x >= params.n) { return; }\\n"
            "  y[id.x] = params.limit * tanh(x[id.x] / params.limit);\\n"
            "}\\n\"},"
            "{\"name\": \"cclip.count_above\","
            " \"doc\": \"The number of elements of x greater than threshold (NaN never is), as an i64 scalar.\","
            " \"inputs\": [{\"name\": \"x\", \"dtypes\": [\"f32\"]}],"
            " \"attrs\": [{\"name\": \"threshold\", \"kind\": \"float\", \"default\": 0.0,"
            " \"doc\": \"elements above it are counted\"}],"
            " \"outputs\": [{\"name\": \"count\", \"shape\": \"infer\", \"dtype\": \"i64\"}]}"
            "]}")

WT_MAP_F32(soft_clip, float limit = (float)wt_attr_float(call, "limit", 1);
           if (!(limit > 0)) return wt_failf("cclip.soft_clip: limit must be > 0, got %f", (double)limit),
           limit * (float)wt_tanh((double)x / limit))

static int count_above(const wt_call *call) {
    const wt_tensor *x = wt_input(call, 0), *out = wt_output(call, 0);
    if (x->dtype != WT_F32 || out->dtype != WT_I64 || out->nbytes != 8)
        return wt_failf("cclip.count_above: wants f32 in and one i64 out, got %s and %u bytes of %s",
                        wt_dtype_name(x->dtype), out->nbytes, wt_dtype_name(out->dtype));
    const float threshold = (float)wt_attr_float(call, "threshold", 0);
    const float *xs = wt_f32(x);
    int64_t n = 0;
    for (uint64_t i = 0; i < wt_numel(x); i++)
        n += xs[i] > threshold;
    wt_i64(out)[0] = n;
    return 0;
}

WT_KERNELS(soft_clip, count_above)

/* Only count_above asks: its answer is a scalar whatever the input's shape. */
int64_t wt_infer(int32_t op, uint32_t req, uint32_t len) {
    (void)req, (void)len;
    if (op == 1)
        return wt_answer("[{\"shape\": [], \"dtype\": \"i64\"}]");
    wt_failf("cclip: op %d has no \"infer\" output", op);
    return 0;
}
