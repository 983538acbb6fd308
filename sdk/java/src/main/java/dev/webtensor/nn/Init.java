package dev.webtensor.nn;

import dev.webtensor.Attr;
import dev.webtensor.DType;
import dev.webtensor.Ops;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

import java.util.List;

/**
 * torch.nn.init, Python's {@code wt.nn.init}: each initialiser replaces the
 * values behind a tensor's handle in place (a parameter stays a leaf that
 * requires its gradient, and keeps it) and returns the tensor. The formulas
 * and the draws are the library's (Go's nn package, through wt_nn_init), so
 * a seed gives the same weights here as in Go, Python and JavaScript.
 *
 * <p>The layers' own initial values are drawn here too, as Go's nn package
 * draws them (init.go's uniformTensor), op for op, so every SDK consumes the
 * global generator in the same order and rounds the same way.
 */
public final class Init {
    private Init() {}

    /** torch's fan modes: keep the variance of activations (FAN_IN) or of gradients (FAN_OUT). */
    public enum FanMode {
        FAN_IN("fan_in"), FAN_OUT("fan_out");

        final String name;

        FanMode(String name) {
            this.name = name;
        }
    }

    /**
     * torch.nn.init.calculate_gain: the scale that keeps activations' variance
     * through a nonlinearity (linear, identity, sigmoid, the conv names, tanh,
     * relu, leaky_relu, selu); for leaky_relu, torch's default slope 0.01.
     */
    public static double calculateGain(String nonlinearity) {
        return Webtensor.nnCalculateGain(nonlinearity, 0.01);
    }

    /** calculateGain with param, leaky_relu's negative slope. */
    public static double calculateGain(String nonlinearity, double param) {
        return Webtensor.nnCalculateGain(nonlinearity, param);
    }

    /** U(a, b). */
    public static Tensor uniform(Tensor t, double a, double b) {
        Webtensor.nnInit(t, "uniform", List.of(Attr.of("a", a), Attr.of("b", b)));
        return t;
    }

    /** N(mean, std²). */
    public static Tensor normal(Tensor t, double mean, double std) {
        Webtensor.nnInit(t, "normal", List.of(Attr.of("mean", mean), Attr.of("std", std)));
        return t;
    }

    /** Every element val. */
    public static Tensor constant(Tensor t, double val) {
        Webtensor.nnInit(t, "constant", List.of(Attr.of("val", val)));
        return t;
    }

    public static Tensor zeros(Tensor t) {
        return constant(t, 0);
    }

    public static Tensor ones(Tensor t) {
        return constant(t, 1);
    }

    /** U(-a, a) with a = gain·sqrt(6 / (fan_in + fan_out)); t needs at least 2 dims. */
    public static Tensor xavierUniform(Tensor t, double gain) {
        Webtensor.nnInit(t, "xavier_uniform", List.of(Attr.of("gain", gain)));
        return t;
    }

    public static Tensor xavierUniform(Tensor t) {
        return xavierUniform(t, 1);
    }

    /** N(0, std²) with std = gain·sqrt(2 / (fan_in + fan_out)). */
    public static Tensor xavierNormal(Tensor t, double gain) {
        Webtensor.nnInit(t, "xavier_normal", List.of(Attr.of("gain", gain)));
        return t;
    }

    public static Tensor xavierNormal(Tensor t) {
        return xavierNormal(t, 1);
    }

    /** U(-b, b) with b = sqrt(3)·gain/sqrt(fan); a is leaky_relu's negative slope. */
    public static Tensor kaimingUniform(Tensor t, double a, FanMode mode, String nonlinearity) {
        Webtensor.nnInit(t, "kaiming_uniform", kaiming(a, mode, nonlinearity));
        return t;
    }

    /** torch's defaults: a 0, fan_in, leaky_relu. */
    public static Tensor kaimingUniform(Tensor t) {
        return kaimingUniform(t, 0, FanMode.FAN_IN, "leaky_relu");
    }

    /** N(0, std²) with std = gain/sqrt(fan). */
    public static Tensor kaimingNormal(Tensor t, double a, FanMode mode, String nonlinearity) {
        Webtensor.nnInit(t, "kaiming_normal", kaiming(a, mode, nonlinearity));
        return t;
    }

    public static Tensor kaimingNormal(Tensor t) {
        return kaimingNormal(t, 0, FanMode.FAN_IN, "leaky_relu");
    }

    private static List<Attr> kaiming(double a, FanMode mode, String nonlinearity) {
        return List.of(Attr.of("a", a), Attr.of("mode", mode.name), Attr.of("nonlinearity", nonlinearity));
    }

    /** U(lo, hi) as rand * (hi - lo) + lo, skipping the * 1 and the + 0. */
    static Tensor uniformValues(long[] shape, double lo, double hi, DType dtype, String device) {
        try (var g = Webtensor.noGrad()) {
            Tensor u = Ops.rand(shape, dtype, device, null, null);
            if (hi - lo != 1) {
                u = replace(u, u.mul(hi - lo));
            }
            if (lo != 0) {
                u = replace(u, u.add(lo));
            }
            return u;
        }
    }

    private static Tensor replace(Tensor old, Tensor next) {
        old.close();
        return next;
    }

    /**
     * A Linear's (or convolution's) weight, then its bias when biasLen >= 0, as
     * torch's reset_parameters draws them: both from U(+-1/sqrt(fan_in)), with
     * fan_in the product of the weight's dims after the first.
     */
    static Tensor[] defaultWeightAndBias(long[] wShape, long biasLen, DType dtype, String device) {
        long fanIn = 1;
        for (int i = 1; i < wShape.length; i++) {
            fanIn *= wShape[i];
        }
        double bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
        Tensor w = uniformValues(wShape, -bound, bound, dtype, device);
        if (biasLen < 0) {
            return new Tensor[] {w, null};
        }
        try {
            return new Tensor[] {w, uniformValues(new long[] {biasLen}, -bound, bound, dtype, device)};
        } catch (RuntimeException e) {
            w.close();
            throw e;
        }
    }
}
