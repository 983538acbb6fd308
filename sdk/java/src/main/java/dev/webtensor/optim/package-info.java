/**
 * Optimizers as torch.optim's: SGD, Adam and AdamW with torch's update
 * equations and defaults, term for term the same as the Go nn package and
 * the Python and JavaScript SDKs, so the same seed trains to the same losses
 * in every SDK. A step is all-or-nothing and updates the parameter objects
 * in place (see {@link dev.webtensor.optim.Optimizer}).
 */
package dev.webtensor.optim;
