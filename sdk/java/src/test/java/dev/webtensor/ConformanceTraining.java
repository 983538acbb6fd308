package dev.webtensor;

import dev.webtensor.nn.Checkpoints;
import dev.webtensor.nn.Linear;
import dev.webtensor.nn.ReLU;
import dev.webtensor.nn.Sequential;
import dev.webtensor.optim.Adam;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cross-SDK training check (conformance/training) through the public
 * Java API, step for step as python_runner.py's train and load_others: the
 * same MLP after the same seed, 20 Adam steps on the same seeded data, its
 * checkpoint saved beside the result file, and every other column's
 * checkpoint loaded into a fresh model.
 */
final class ConformanceTraining {
    private ConformanceTraining() {}

    static final long SEED = 2026;
    static final int STEPS = 20;
    static final double LR = 0.05;
    static final String SUFFIX = ".ckpt.safetensors";

    static Sequential model() {
        return new Sequential(new Linear(4, 16), new ReLU(), new Linear(16, 3));
    }

    /** Trains on device, saves the final weights to ckpt and returns the loss curve. */
    static List<Double> train(String device, Path ckpt) throws IOException {
        String previous = Webtensor.defaultDevice();
        Webtensor.setDefaultDevice(device);
        try {
            Webtensor.manualSeed(SEED);
            try (Sequential model = model();
                 Tensor x = Ops.randn(new long[] {32, 4}, null, device, 11L, null);
                 Tensor y = Ops.randint(new long[] {32}, 3, null, device, 0, 12L, null);
                 Adam opt = new Adam(model.parameters(), LR)) {
                List<Double> losses = new ArrayList<>(STEPS);
                for (int step = 0; step < STEPS; step++) {
                    opt.zeroGrad();
                    try (Tensor logits = model.forward(x); Tensor loss = logits.crossEntropy(y)) {
                        loss.backward();
                        losses.add(loss.item());
                        opt.step();
                    }
                }
                Checkpoints.save(model, ckpt);
                return losses;
            }
        } finally {
            Webtensor.setDefaultDevice(previous);
        }
    }

    /** Loads every other *.ckpt.safetensors beside ckpt into a fresh model: column name to "ok" or the error. */
    static Map<String, String> loadOthers(Path ckpt) throws IOException {
        Path self = ckpt.toAbsolutePath();
        List<Path> others;
        try (var files = Files.list(self.getParent())) {
            others = files.filter(f -> f.getFileName().toString().endsWith(SUFFIX) && !f.equals(self)).sorted()
                    .toList();
        }
        Map<String, String> res = new TreeMap<>();
        for (Path other : others) {
            String name = other.getFileName().toString();
            name = name.substring(0, name.length() - SUFFIX.length());
            try (Sequential m = model()) {
                Checkpoints.load(other, m);
                res.put(name, "ok");
            } catch (IOException | RuntimeException e) {
                res.put(name, e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        return res;
    }
}
