//go:build js && wasm

package main

import (
	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/core"
)

// The bridge's function set: webtensor.h's, under the header's names, as
// doc.go says they read in JavaScript. abi's tests parse this file and hold
// calls equal to the header's functions less omitted.

// calls are exported synchronously on globalThis.__webtensor.
var calls = map[string]call{
	// version and build
	"wt_version":       func(args) (any, error) { return core.Version, nil },
	"wt_abi_version":   func(args) (any, error) { return abi.Version, nil },
	"wt_build_info":    func(args) (any, error) { return abi.BuildInfo(), nil },
	"wt_status_string": statusString,

	// devices
	"wt_device_count":       func(args) (any, error) { return abi.DeviceCount(), nil },
	"wt_device_name":        deviceName,
	"wt_default_device":     func(args) (any, error) { return abi.DefaultDevice(), nil },
	"wt_set_default_device": onDevice(abi.SetDefaultDevice),
	"wt_device_sync":        onDevice(abi.DeviceSync),
	"wt_device_info_json":   ofDevice(abi.DeviceInfoJSON),
	"wt_device_tuning_json": ofDevice(abi.DeviceTuningJSON),
	"wt_device_empty_cache": onDevice(abi.DeviceEmptyCache),
	"wt_device_set_option":  deviceSetOption,
	"wt_device_stream":      deviceStream,
	"wt_fallbacks_json":     fallbacks,
	"wt_set_num_threads":    setNumThreads,
	"wt_get_num_threads":    func(args) (any, error) { return abi.NumThreads(), nil },

	// op-call traces
	"wt_profile_start": func(a args) (any, error) {
		flags, err := a.int(0, "flags")
		if err != nil {
			return nil, err
		}
		return nil, abi.TraceStart(flags)
	},
	"wt_profile_stop": func(args) (any, error) { return nil, abi.TraceStop() },
	"wt_profile_json": func(args) (any, error) { return abi.TraceJSON() },

	// tensors
	"wt_tensor_from_data":     tensorFromData,
	"wt_tensor_zeros":         tensorZeros,
	"wt_tensor_retain":        onHandle(abi.TensorRetain),
	"wt_tensor_free":          onHandle(abi.TensorFree),
	"wt_live_tensors":         func(args) (any, error) { return abi.LiveTensors(), nil },
	"wt_tensor_ndim":          ofHandle(abi.TensorNDim),
	"wt_tensor_shape":         ofHandle(func(h int64) (any, error) { return ints(abi.TensorShape(h)) }),
	"wt_tensor_strides":       ofHandle(func(h int64) (any, error) { return ints(abi.TensorStrides(h)) }),
	"wt_tensor_numel":         ofHandle(abi.TensorNumel),
	"wt_tensor_dtype":         ofHandle(func(h int64) (any, error) { d, err := abi.TensorDType(h); return int(d), err }),
	"wt_tensor_device":        ofHandle(abi.TensorDevice),
	"wt_tensor_is_contiguous": ofHandle(abi.TensorIsContiguous),
	"wt_tensor_to_host":       tensorToHost,
	"wt_tensor_contiguous":    tensorContiguous,
	"wt_tensor_to_device":     tensorToDevice,

	// ops
	"wt_op":            op,
	"wt_manifest_json": func(args) (any, error) { return abi.ManifestJSON() },

	// autograd
	"wt_tensor_set_requires_grad": setRequiresGrad,
	"wt_tensor_requires_grad":     ofHandle(abi.TensorRequiresGrad),
	"wt_backward":                 backward,
	"wt_tensor_grad":              ofHandle(abi.TensorGrad),
	"wt_tensor_zero_grad":         onHandle(abi.TensorZeroGrad),
	"wt_tensor_detach":            ofHandle(abi.TensorDetach),
	"wt_no_grad_enter":            func(args) (any, error) { abi.NoGradEnter(&noGradDepth); return nil, nil },
	"wt_no_grad_exit":             func(args) (any, error) { return nil, abi.NoGradExit(&noGradDepth) },

	// random numbers
	"wt_manual_seed":   manualSeed,
	"wt_rng_state":     rngState,
	"wt_set_rng_state": setRNGState,

	// dtypes
	"wt_promote_types": promoteTypes,

	// graph capture
	"wt_trace_begin": traceBegin,
	"wt_trace_end":   traceEnd,
	"wt_trace_abort": func(args) (any, error) { abi.TraceAbort(); return nil, nil },
	"wt_graph_run":   graphRun,
	"wt_graph_text":  ofHandle(abi.GraphText),
	"wt_graph_free":  onHandle(abi.GraphFree),
	"wt_collect":     func(args) (any, error) { abi.Collect(); return nil, nil },

	// checkpoints and state dicts
	"wt_safetensors_header":   safetensorsHeader,
	"wt_state_new":            func(args) (any, error) { return abi.StateNew(), nil },
	"wt_state_free":           onHandle(abi.StateFree),
	"wt_state_put":            statePut,
	"wt_state_count":          ofHandle(abi.StateCount),
	"wt_state_name":           stateIndexed(abi.StateName),
	"wt_state_get":            stateIndexed(abi.StateGet),
	"wt_state_set_metadata":   stateSetMetadata,
	"wt_state_metadata_count": ofHandle(func(s int64) (int, error) { m, err := abi.StateMetadata(s); return len(m), err }),
	"wt_state_metadata_key":   metadataPart(0),
	"wt_state_metadata_value": metadataPart(1),
	"wt_state_to_bytes":       stateToBytes,
	"wt_state_from_bytes":     stateFromBytes,
	"wt_state_assign":         stateAssign,

	// training
	"wt_optimizer_new":        optimizerNew,
	"wt_optimizer_set":        optimizerSet,
	"wt_optimizer_step":       onHandle(abi.OptimizerStep),
	"wt_optimizer_zero_grad":  onHandle(abi.OptimizerZeroGrad),
	"wt_optimizer_state":      ofHandle(abi.OptimizerState),
	"wt_optimizer_load_state": optimizerLoadState,
	"wt_optimizer_free":       onHandle(abi.OptimizerFree),
	"wt_lr_schedule":          lrSchedule,
	"wt_clip_grad_norm":       clipGradNorm,
	"wt_clip_grad_value":      clipGradValue,
	"wt_nn_init":              nnInit,
	"wt_nn_calculate_gain":    nnCalculateGain,

	// the domain libraries' methods by name (call.go): the multimodal
	// library's tokenizers, image processors, models, video front end and
	// resampling, the diffusion pipelines (wt_call takes an optional last
	// argument the header has not: onStep(step, steps), called after each
	// denoising step), the ONNX importer, the auto-agents (which answer
	// WT_ERR_UNSUPPORTED here) and the datasets and loaders are reached
	// only through these
	"wt_call":             callMethod,
	"wt_call_result_json": ofHandle(abi.CallResultJSON),
	"wt_call_result_free": onHandle(abi.CallResultFree),
}

// asyncTwins are the calls that may wait for the GPU: each is exported a
// second time as NAME_async, which runs on its own goroutine and returns a
// Promise, for what must read GPU memory to proceed (a copy to the host, an
// output shape that depends on the data, sparse structure, ...).
var asyncTwins = []string{"wt_tensor_to_host", "wt_tensor_to_device", "wt_op", "wt_backward", "wt_graph_run", "wt_device_sync",
	"wt_state_to_bytes", "wt_call"}

// browserOnly are the calls the header has no counterpart of, all async.
var browserOnly = map[string]call{
	// wt_browser_init opens the WebGPU device (its adapter and device
	// promises need the event loop) and makes it the default unless the page
	// asked for the CPU; it resolves to [default device, why WebGPU is not
	// used, the adapter's description, whether it is a software adapter].
	"wt_browser_init": browserInit,
	// wt_browser_calibrate times a short workload on webgpu:0 and the CPU
	// (calibrate.go); it resolves to {webgpu, cpu} in ms and the workload.
	"wt_browser_calibrate": calibrate,
}

// omitted are the header's functions the browser has not, and why; each is
// exported as a call that fails (WT_ERR_UNSUPPORTED) saying so.
var omitted = map[string]string{
	"wt_last_error":                "errors come back as Error objects carrying the message and the status",
	"wt_to_dlpack_versioned":       "DLPack shares C memory; the page's JavaScript cannot reach the module's",
	"wt_to_dlpack":                 "DLPack shares C memory; the page's JavaScript cannot reach the module's",
	"wt_from_dlpack_versioned":     "DLPack shares C memory; the page's JavaScript cannot reach the module's",
	"wt_from_dlpack":               "DLPack shares C memory; the page's JavaScript cannot reach the module's",
	"wt_live_dlpack_exports":       "there are no DLPack exports (the binding reports 0)",
	"wt_python_capsule_destructor": "for CPython only",
	"wt_tensor_from_host_borrowed": "the module cannot lend the page's memory: wt_tensor_from_data copies",
	"wt_plugin_load":               "no plugin host in the browser build (abi/plugins.go), nor a file system",
	"wt_plugin_load_bytes":         "no plugin host in the browser build (abi/plugins.go)",
	"wt_plugin_ops":                "no plugin host in the browser build (abi/plugins.go)",
	"wt_tuning_policy_set":         "no plugin host in the browser build (abi/plugins.go)",
	"wt_state_save":                "no file system: wt_state_to_bytes gives the file's bytes",
	"wt_state_load":                "no file system: wt_state_from_bytes reads a file's bytes",
	"wt_profile_write":             "no file system: wt_profile_json gives the trace's text",
	"wt_profile_exit_path":         "no environment variables or process exit in a page",
}
