/**
 * Neural-network layers over webtensor tensors, as torch.nn's: modules own
 * named parameters with PyTorch's state-dict names ("0.weight"), layers draw
 * their initial weights from the runtime's global Philox generator in the
 * same order as the Go nn package and the Python and JavaScript SDKs (the
 * same {@code Webtensor.manualSeed} gives the same weights in every SDK), and
 * {@link dev.webtensor.nn.Checkpoints} reads and writes the safetensors
 * checkpoints they all share, byte for byte.
 */
package dev.webtensor.nn;
