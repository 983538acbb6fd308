// Package parallel is auto-parallel (issue 22 item 9): a description of
// the machines a model may be split across, measured on this one
// (Measure: the CPU, the WebGPU device when there is one, and worker
// processes of the CPU backend talking over pipes), a cost model that
// predicts the step time and per-device memory of data, tensor, pipeline
// and sequence parallel plans for an MLP's layers (Predict, Choose), and
// executors that run the data, tensor and pipeline plans on worker
// processes with results equal to one device's (RunDP, RunTP, RunPP), so
// the predictions are checked against measurements.
//
// Collectives go through the parent process (a star over pipes): an
// all-reduce is each worker's gradients sent to the parent, summed there,
// and the sum sent back, and the model prices it that way. On the 2-core
// machines this project is built on, worker processes share two cores:
// the cluster records each host's cores and the model divides compute
// among the processes running at once; what this machine cannot validate
// is any speed-up from more than two ways of parallelism, real network
// links, and GPUs other than a software one.
package parallel
