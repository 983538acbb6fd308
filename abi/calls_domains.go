package abi

import (
	"encoding/json"
	"math"
)

// The diffusion pipelines', the ONNX importer's and the auto-agents'
// methods as wt_call targets (call.go), each running the function of this
// package that does the work (diffuse.go, onnx.go, onnx_values.go;
// calls_auto.go's auto.go and auto_parallel.go).

func init() {
	registerCalls(diffusionCalls)
	registerCalls(onnxCalls)
	registerCalls(autoCalls) // calls_auto.go; calls_auto_js.go in the browser build
}

var diffusionCalls = map[string]method{
	"diffusion.load": {"diffusion handle", func(c *CallArgs) func() (any, error) { return loadModel(c, diffusionLoad, diffusionLoadZip) }},
	"diffusion.free": {"null", freeCall(diffusionFree)},
	"diffusion.info": {`object: "pipeline", "scheduler", "image_shape", "class_conditional", "text_conditional", "device", "weight_bytes", "int8_weights"`, func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return rawJSON(diffusionInfoJSON(c.Self)) }
	}},
	"diffusion.quantize_int8": {"null", func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return nil, diffusionQuantizeInt8(c.Self) }
	}},
	"diffusion.generate": {"tensor (batch, C, H, W) in [0, 1] on the pipeline's device", func(c *CallArgs) func() (any, error) {
		batch, steps, seed, sched := c.IntIn("batch", 1, 1, math.MaxInt32), c.IntIn("steps", 50, 1, math.MaxInt32), seedArg(c), c.Str("scheduler", "")
		return func() (any, error) {
			return diffusionGenerate(c.Self, int(batch), int(steps), seed, sched, c.Ctx.Progress)
		}
	}},
	"diffusion.generate_classes": {"tensor (labels, C, H, W) in [0, 1]", func(c *CallArgs) func() (any, error) {
		labels, steps, seed := c.Ints("labels"), c.IntIn("steps", 50, 1, math.MaxInt32), seedArg(c)
		guidance, sched := c.Float("guidance_scale", 4), c.Str("scheduler", "")
		return func() (any, error) {
			return diffusionGenerateClasses(c.Self, labels, int(steps), seed, guidance, sched, c.Ctx.Progress)
		}
	}},
	"diffusion.generate_text": {"tensor (prompts × images_per_prompt, C, height, width) in [0, 1]", func(c *CallArgs) func() (any, error) {
		r := TextToImage{Prompts: c.Strings("prompts"), ImagesPerPrompt: int(c.IntIn("images_per_prompt", 1, 0, math.MaxInt32)),
			Steps: int(c.IntIn("steps", 50, 1, math.MaxInt32)), Seed: seedArg(c), GuidanceScale: c.Float("guidance_scale", 7.5),
			Height: int(c.IntIn("height", 0, 0, math.MaxInt32)), Width: int(c.IntIn("width", 0, 0, math.MaxInt32)),
			Scheduler: c.Str("scheduler", ""), Latents: c.OptTensor("latents")}
		if c.Has("negative_prompts") {
			r.NegativePrompts = c.Strings("negative_prompts")
		}
		return func() (any, error) {
			r.Progress = c.Ctx.Progress
			return diffusionGenerateText(c.Self, r)
		}
	}},
	"diffusion.encode_text": {"tensor (texts, max length, width)", func(c *CallArgs) func() (any, error) {
		texts := c.Strings("texts")
		return func() (any, error) { return diffusionEncodeText(c.Self, texts) }
	}},
}

// seedArg is a sampling call's seed: any uint64, which JSON numbers past
// 2^53 do not carry exactly in JavaScript, so a decimal string is taken too.
func seedArg(c *CallArgs) uint64 {
	return uint64(optional[seedValue](c, "seed", "integer in [0, 2^64), or its decimal string",
		"an integer in [0, 2^64) or its decimal string", 0, 0))
}

var onnxCalls = map[string]method{
	"onnx.load": {"onnx handle", func(c *CallArgs) func() (any, error) {
		fromBytes := onnxLoadBytes
		if c.Ctx.OwnsData {
			fromBytes = onnxAdoptBytes
		}
		return loadPathOrData(c, onnxLoad, fromBytes, "the .onnx file's bytes, every weight inside it rather than in external data files")
	}},
	"onnx.free": {"null", freeCall(onnxFree)},
	"onnx.info": {`object: "opset", "device", "inputs" and "outputs" (each "name", "kind", "dtype", "shape")`, func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return rawJSON(onnxInfoJSON(c.Self)) }
	}},
	// run takes the inputs by name and returns the outputs' handles in the
	// model's output order (info's "outputs").
	"onnx.run": {`list of tensors: the outputs in info's "outputs" order`, func(c *CallArgs) func() (any, error) {
		var inputs map[string]int64
		c.note("inputs", "object of input name to tensor", nil, true)
		c.missing("inputs", c.get("inputs", &inputs, "an object of input names to tensor handles"))
		return func() (any, error) {
			names := make([]string, 0, len(inputs))
			hs := make([]int64, 0, len(inputs))
			for n, h := range inputs {
				names, hs = append(names, n), append(hs, h)
			}
			outs, err := onnxRun(c.Self, names, hs, c.Ctx.NoGrad)
			if err != nil {
				return nil, err
			}
			res := make([]int64, outs.Len())
			outs.Handles(res)
			return res, nil
		}
	}},
	// run_values is onnx.run_values in one call: the tensors and the
	// layout in, the outputs' layout and their tensors out.
	"onnx.run_values": {`object: "layout" (each output by name: an index into "tensors", a list of them, or null) and "tensors"`, func(c *CallArgs) func() (any, error) {
		tensors, layout := c.Tensors("tensors"), c.JSON("layout", "object: input name to tensor index, list of them, or null")
		return func() (any, error) {
			h, err := onnxRunValues(c.Self, tensors, layout, c.Ctx.NoGrad)
			if err != nil {
				return nil, err
			}
			defer func() { _ = onnxValuesFree(h) }()
			l, _ := onnxValuesLayoutJSON(h)
			outs, err := onnxValuesTensors(h)
			if err != nil {
				return nil, err
			}
			res := make([]int64, outs.Len())
			outs.Handles(res)
			return map[string]any{"layout": json.RawMessage(l), "tensors": res}, nil
		}
	}},
}
