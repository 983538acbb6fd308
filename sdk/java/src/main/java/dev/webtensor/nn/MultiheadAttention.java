package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Ops;
import dev.webtensor.Scope;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

/**
 * torch.nn.MultiheadAttention with equal query, key and value widths,
 * composed from the library's ops as Python's wt.nn composes it (same
 * arguments, state-dict names, draws and results). State: in_proj_weight
 * (3E, E), in_proj_bias (3E), out_proj.weight, out_proj.bias. Without
 * attention weights (and without attention dropout) it runs the fused
 * scaled_dot_product_attention op. Masks follow torch: a BOOL attnMask or
 * keyPaddingMask is true where attention is NOT allowed; float masks add.
 */
public final class MultiheadAttention extends Module {
    /** A call's options, torch's keyword arguments; setters return this. */
    public static final class Options {
        Tensor keyPaddingMask, attnMask;
        boolean needWeights = true, averageAttnWeights = true, isCausal;

        /** (N, S) or (S,): which keys are padding. */
        public Options keyPaddingMask(Tensor m) {
            keyPaddingMask = m;
            return this;
        }

        /** (L, S) or (N·H, L, S). */
        public Options attnMask(Tensor m) {
            attnMask = m;
            return this;
        }

        /** Return the attention weights too (default true). */
        public Options needWeights(boolean on) {
            needWeights = on;
            return this;
        }

        /** Average the weights over heads (default true). */
        public Options averageAttnWeights(boolean on) {
            averageAttnWeights = on;
            return this;
        }

        /** Mask out the future (top-left aligned, as torch's). */
        public Options isCausal(boolean on) {
            isCausal = on;
            return this;
        }
    }

    /** The attention output and, when asked for, the weights (else null); closing closes both. */
    public record Output(Tensor output, Tensor weights) implements AutoCloseable {
        @Override
        public void close() {
            output.close();
            if (weights != null) {
                weights.close();
            }
        }
    }

    private final long embedDim, numHeads, headDim;
    private final double dropout;
    private final boolean batchFirst;
    private final Linear outProj;

    /** torch's defaults: no dropout, biases, (L, N, E) inputs, f32 on the default device. */
    public MultiheadAttention(long embedDim, long numHeads) {
        this(embedDim, numHeads, 0, true, false, null, null);
    }

    public MultiheadAttention(long embedDim, long numHeads, double dropout, boolean bias, boolean batchFirst, DType dtype, String device) {
        if (embedDim < 1 || numHeads < 1 || embedDim % numHeads != 0) {
            throw new IllegalArgumentException("MultiheadAttention: embedDim (" + embedDim + ") must be a positive multiple of numHeads ("
                    + numHeads + ")");
        }
        this.embedDim = embedDim;
        this.numHeads = numHeads;
        this.headDim = embedDim / numHeads;
        this.dropout = dropout;
        this.batchFirst = batchFirst;
        long e = embedDim;
        // The Go package's order of draws: the xavier in-projection, then
        // out_proj as a Linear (whose bias is then zeroed).
        Init.xavierUniform(registerParameter("in_proj_weight", Ops.zeros(new long[] {3 * e, e}, dtype, device)));
        registerParameter("in_proj_bias", bias ? Ops.zeros(new long[] {3 * e}, dtype, device) : null);
        this.outProj = registerModule("out_proj", new Linear(e, e, bias, dtype, device));
        if (outProj.bias() != null) {
            Init.constant(outProj.bias(), 0);
        }
    }

    /** Self-attention of x without weights: the output, a new tensor the caller closes. */
    @Override
    public Tensor forward(Tensor x) {
        return forward(x, x, x, new Options().needWeights(false)).output();
    }

    /** Attention of query over key and value, with the weights averaged over heads. */
    public Output forward(Tensor query, Tensor key, Tensor value) {
        return forward(query, key, value, new Options());
    }

    public Output forward(Tensor query, Tensor key, Tensor value, Options o) {
        try (Scope s = Webtensor.scope()) {
            boolean batched = query.ndim() == 3;
            Tensor q = query, k = key, v = value;
            if (!batched) {
                q = Ops.unsqueeze(q, 0);
                k = Ops.unsqueeze(k, 0);
                v = Ops.unsqueeze(v, 0);
            } else if (!batchFirst) {
                q = Ops.transpose(q, 0, 1);
                k = Ops.transpose(k, 0, 1);
                v = Ops.transpose(v, 0, 1);
            }
            long n = q.shape()[0], tq = q.shape()[1], sk = k.shape()[1];
            Tensor[] p = project(query == key && key == value, q, k, v);
            Tensor qh = heads(p[0], n, tq), kh = heads(p[1], n, sk), vh = heads(p[2], n, sk);
            Tensor bias = bias(o, n, tq, sk, batched, qh);
            double scale = 1 / Math.sqrt(Math.max(headDim, 1));
            double drop = isTraining() ? dropout : 0;
            Tensor weights = null, out;
            if (o.needWeights || drop > 0) {
                Tensor scores = Ops.matmul(qh, Ops.transpose(kh, -2, -1)).mul(scale);
                if (o.isCausal && bias == null) {
                    bias = causalBias(tq, sk, scores);
                }
                if (bias != null) {
                    scores = Ops.add(scores, bias);
                }
                weights = Ops.softmax(scores, -1);
                if (drop > 0) {
                    weights = Ops.dropout(weights, drop, true, null, null);
                }
                out = Ops.matmul(weights, vh);
            } else {
                out = Ops.scaledDotProductAttention(qh, kh, vh, bias, o.isCausal && bias == null, scale);
            }
            out = Ops.reshape(Ops.permute(out, 0, 2, 1, 3), n, tq, embedDim);
            out = outProj.forward(out);
            if (!batched) {
                out = Ops.squeeze(out, 0);
            } else if (!batchFirst) {
                out = Ops.transpose(out, 0, 1);
            }
            if (!o.needWeights) {
                return new Output(s.keep(out), null);
            }
            if (o.averageAttnWeights) {
                weights = Ops.mean(weights, new long[] {1}, false);
            }
            if (!batched) {
                weights = Ops.squeeze(weights, 0);
            }
            return new Output(s.keep(out), s.keep(weights));
        }
    }

    /** The three projections: one matmul with the stacked weight for self-attention, else its rows each. */
    private Tensor[] project(boolean selfAttention, Tensor q, Tensor k, Tensor v) {
        Tensor w = parameter("in_proj_weight"), b = parameter("in_proj_bias");
        if (selfAttention) {
            Tensor both = linear(q, w, b);
            return new Tensor[] {part(both, -1, 0), part(both, -1, 1), part(both, -1, 2)};
        }
        Tensor[] in = {q, k, v};
        Tensor[] out = new Tensor[3];
        for (int i = 0; i < 3; i++) {
            out[i] = linear(in[i], part(w, 0, i), b == null ? null : part(b, 0, i));
        }
        return out;
    }

    private Tensor part(Tensor t, long axis, int i) {
        return Ops.slice(t, axis, i * embedDim, (i + 1) * embedDim, 1);
    }

    /** x W^T + b, as Linear computes it. */
    private static Tensor linear(Tensor x, Tensor w, Tensor b) {
        Tensor y = Ops.matmul(x, Ops.transpose(w, 0, 1));
        return b == null ? y : Ops.add(y, b);
    }

    /** (N, T, E) -> (N, H, T, E/H). */
    private Tensor heads(Tensor x, long n, long t) {
        return Ops.permute(Ops.reshape(x, n, t, numHeads, headDim), 0, 2, 1, 3);
    }

    /** The masks as one float bias broadcastable to (N, H, L, S), or null. */
    private Tensor bias(Options o, long n, long tq, long sk, boolean batched, Tensor like) {
        if (o.attnMask == null && o.keyPaddingMask == null) {
            return null;
        }
        Tensor bias = null;
        if (o.attnMask != null) {
            bias = scoreBias(o.attnMask, like);
            if (o.attnMask.ndim() == 3) {
                bias = Ops.reshape(bias, n, numHeads, tq, sk);
            }
        }
        if (o.keyPaddingMask != null) {
            Tensor kp = scoreBias(o.keyPaddingMask, like);
            if (!batched) {
                kp = Ops.unsqueeze(kp, 0);
            }
            kp = Ops.reshape(kp, n, 1, 1, sk);
            bias = bias == null ? kp : Ops.add(bias, kp);
        }
        if (o.isCausal) {
            bias = Ops.add(bias, causalBias(tq, sk, like));
        }
        return bias;
    }

    /** A BOOL mask (true: masked out) as 0 / -inf in like's dtype; a float mask in like's dtype. */
    private static Tensor scoreBias(Tensor mask, Tensor like) {
        if (mask.dtype() == DType.BOOL) {
            long[] scalar = {};
            return Ops.where(mask, Ops.full(scalar, Double.NEGATIVE_INFINITY, like.dtype(), like.device()),
                    Ops.full(scalar, 0, like.dtype(), like.device()));
        }
        return mask.dtype() == like.dtype() ? mask : Ops.cast(mask, like.dtype());
    }

    /** The (L, S) mask with -inf above the diagonal (top-left aligned, as torch's is_causal), in like's dtype and device. */
    private static Tensor causalBias(long l, long s, Tensor like) {
        float[] vals = new float[(int) (l * s)];
        for (int i = 0; i < l; i++) {
            for (int j = i + 1; j < s; j++) {
                vals[(int) (i * s + j)] = Float.NEGATIVE_INFINITY;
            }
        }
        Tensor m = Tensor.of(vals, l, s);
        if (!m.device().equals(like.device())) {
            m = m.to(like.device());
        }
        return like.dtype() == DType.F32 ? m : Ops.cast(m, like.dtype());
    }

    @Override
    protected String extraRepr() {
        return "embed_dim=" + embedDim + ", num_heads=" + numHeads + ", batch_first=" + batchFirst;
    }
}
