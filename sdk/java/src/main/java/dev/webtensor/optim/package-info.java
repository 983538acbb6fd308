/**
 * Optimizers and learning-rate schedules as torch.optim's: SGD, Adam, AdamW,
 * RMSprop and Adagrad with torch's equations and defaults, and
 * {@link dev.webtensor.optim.LRScheduler}'s schedules. The runtime runs them
 * (the Go optimisers every SDK uses, through {@link dev.webtensor.NativeOptimizer}),
 * so the same seed trains to the same bits in every SDK. A step is
 * all-or-nothing and updates the parameter objects in place.
 */
package dev.webtensor.optim;
