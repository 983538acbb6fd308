// Package nn builds models on top of core: modules (Linear, Conv2d,
// LayerNorm, MultiheadAttention, TransformerEncoderLayer, ...), their
// initialisers, the optimisers SGD, Adam, AdamW, RMSprop and Adagrad,
// learning-rate schedules, gradient clipping and safetensors checkpoints.
// These exist once, here: the ABI (package abi) exports them, so the Python,
// JavaScript and Java SDKs train with this code and get its bits.
//
// Each optimiser's update is written once, as elementwise trees over a
// parameter, its gradient and its state (optim_trees.go); a backend that
// fuses (fusion.MultiMapFuser: the CPU's loop, WebGPU's and CUDA's generated
// kernels) runs a parameter's whole step as one pass, and the trees run op
// by op elsewhere.
//
// It follows PyTorch wherever PyTorch has an answer: parameter and buffer
// names match torch.nn's state_dict keys, so a checkpoint written here loads
// into the equivalent torch module and back; default initialisation and
// optimiser update equations are torch's, and tests compare against numbers
// torch produced. Every computation goes through registry ops, so a model runs
// on whichever backend its tensors live on. Random initialisation draws from
// core's seeded Philox generator: core.ManualSeed(s) before building a model
// reproduces it on every backend.
//
// A module is a struct that embeds Base and registers its parameters,
// buffers and sub-modules in its constructor; Forward is a typed method of
// each module. Forward results carry errors the way core tensors do (check
// Err once at the end); constructors, optimiser steps and checkpoint I/O
// return errors.
package nn
