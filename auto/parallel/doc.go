// Package parallel is auto-parallel (issue 22 item 9): a description of
// the machines a model may be split across, measured on this one
// (Measure: the CPU, the WebGPU device when there is one, and worker
// processes of the CPU backend talking over pipes), a cost model that
// reads a traced forward pass (Analyze: per-node FLOPs and bytes,
// parameters, activations, the K and V a sequence split must gather, the
// all-reduces of a Megatron split) and prices single-device, data,
// tensor, pipeline and sequence parallel training steps with per-device
// memory (Predict, Choose, PlanGraph, which auto.PlanParallel exposes),
// and executors whose results equal one device's: an MLP under data,
// tensor and pipeline parallel (RunDP, RunTP, RunPP) and a transformer
// block under sequence, tensor and data parallel (RunBlockSP, RunBlockTP,
// RunBlockDP), so the predictions are checked against measurements
// (BenchmarkCostModelAgainstMeasuredSteps).
//
// Collectives go through the parent process (a star over pipes): an
// all-reduce is each worker's gradients sent to the parent, summed there,
// and the sum sent back; sequence parallel's all-gather of K and V and
// its reduce-scatter of their gradients go the same way, and the model
// prices them so. On the 2-core machines this project is built on,
// worker processes share two cores: the cluster records each process's
// rate with every worker busy at once, and the model uses it; what this
// machine cannot validate is any speed-up from splitting, real network
// links, ring exchanges, and GPUs other than a software one.
package parallel
