// Package reftest holds what diffuse's and multimodal's tests share: the
// comparison of a model's outputs with a peer library's reference tensors
// (diffusers', transformers') and the zip archive of a model folder that
// checks loading through FromFS. Only tests import it.
package reftest
