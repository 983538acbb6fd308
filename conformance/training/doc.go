// Package training is the conformance suite's cross-SDK training check in
// Go: every SDK with an nn library builds the same 4-16-3 MLP after the
// same seed, trains it for Steps steps of Adam on the same seeded data,
// records the loss curve and saves a checkpoint; the report requires the
// curves to agree and every SDK's checkpoint to load into every other's
// model with the same values (CheckpointValues).
//
// It stands apart from package conformance because it needs nn, and
// conformance's vectors and grading are what every backend's tests run
// (backends/backendtest): a backend's op suite must not depend on the
// modules and optimisers built on top of it.
package training
