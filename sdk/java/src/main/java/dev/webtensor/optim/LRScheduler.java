package dev.webtensor.optim;

import dev.webtensor.Attr;
import dev.webtensor.Webtensor;
import dev.webtensor.WebtensorException;

import java.util.Arrays;
import java.util.List;

/**
 * A learning-rate schedule, as torch.optim.lr_scheduler's (its closed forms,
 * computed by the runtime: {@link Webtensor#lrSchedule}): call {@link #step}
 * after the optimizer's, and the optimizer's learning rate follows.
 *
 * <pre>{@code
 * var sched = LRScheduler.stepLR(opt, 30, 0.1);
 * for (int epoch = 0; epoch < 100; epoch++) { train(opt); sched.step(); }
 * }</pre>
 */
public final class LRScheduler {
    private final Optimizer optimizer;
    private final String kind;
    private final List<Attr> settings;
    private final double base;
    private long lastEpoch = -1;
    private double lastLr;

    private LRScheduler(Optimizer optimizer, String kind, List<Attr> settings) {
        this.optimizer = optimizer;
        this.kind = kind;
        this.settings = settings;
        this.base = optimizer.lr();
        step();
    }

    /** torch's StepLR: lr = base * gamma^floor(epoch / stepSize). */
    public static LRScheduler stepLR(Optimizer opt, long stepSize, double gamma) {
        return new LRScheduler(opt, "step", List.of(Attr.of("step_size", stepSize), Attr.of("gamma", gamma)));
    }

    /** torch's MultiStepLR: lr = base * gamma^(milestones passed). */
    public static LRScheduler multiStepLR(Optimizer opt, long[] milestones, double gamma) {
        long[] sorted = milestones.clone();
        Arrays.sort(sorted);
        return new LRScheduler(opt, "multistep", List.of(Attr.of("milestones", sorted), Attr.of("gamma", gamma)));
    }

    /** torch's ExponentialLR: lr = base * gamma^epoch. */
    public static LRScheduler exponentialLR(Optimizer opt, double gamma) {
        return new LRScheduler(opt, "exponential", List.of(Attr.of("gamma", gamma)));
    }

    /** torch's CosineAnnealingLR: lr = etaMin + (base - etaMin) * (1 + cos(pi * epoch / tMax)) / 2. */
    public static LRScheduler cosineAnnealingLR(Optimizer opt, long tMax, double etaMin) {
        return new LRScheduler(opt, "cosine", List.of(Attr.of("t_max", tMax), Attr.of("eta_min", etaMin)));
    }

    /** torch's LinearLR: the factor on base moves from startFactor to endFactor over totalIters steps. */
    public static LRScheduler linearLR(Optimizer opt, double startFactor, double endFactor, long totalIters) {
        return new LRScheduler(opt, "linear", List.of(Attr.of("start_factor", startFactor),
                Attr.of("end_factor", endFactor), Attr.of("total_iters", totalIters)));
    }

    /** Linear warm-up from 0 over warmup steps, then cosine annealing to etaMin by step total. */
    public static LRScheduler warmupCosine(Optimizer opt, long warmup, long total, double etaMin) {
        return new LRScheduler(opt, "warmup_cosine", List.of(Attr.of("warmup", warmup), Attr.of("total", total),
                Attr.of("eta_min", etaMin)));
    }

    /** Advances one step and sets the optimizer's learning rate; bad settings are an IllegalArgumentException. */
    public void step() {
        try {
            lastLr = Webtensor.lrSchedule(kind, settings, base, lastEpoch + 1);
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.INVALID) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            throw e;
        }
        lastEpoch++;
        optimizer.setLr(lastLr);
    }

    /** The rate the optimizer uses now. */
    public double lastLr() {
        return lastLr;
    }

    /** Steps taken (torch's last_epoch). */
    public long lastEpoch() {
        return lastEpoch;
    }
}
