// Package reftest holds what the tests that compare a model's outputs with
// a peer library's reference tensors share (diffuse's against diffusers,
// multimodal's against transformers). Only tests import it.
package reftest
