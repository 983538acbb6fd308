//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"
	"time"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/diffuse"
)

// Diffusion pipelines (abi/diffuse.go) as the page can use them: loaded
// from a zip archive's bytes (the page has no folders), sampled as the C
// ABI samples, with one addition the header has not: the sampling calls
// take a last, optional function called after each denoising step.

// onStep reads argument i, an optional function(step, steps), as the
// Progress a sampling call reports to. In an async call each step first
// waits for the pipeline's device, so the count is what has run rather
// than what was queued, and then sleeps a moment after the function: both
// hand the event loop back to the page, which can then draw the progress
// (a CPU-backend run would otherwise hold it until the last step). An
// exception the function throws stops the run, which rejects with it.
func (a args) onStep(i int, pipe int64) (diffuse.Progress, error) {
	if a.absent(i) {
		return nil, nil
	}
	fn := a.v[i]
	if fn.Type() != js.TypeFunction {
		return nil, abi.Invalidf("onStep must be a function, got %s", fn.Type())
	}
	dev, err := abi.DiffusionDevice(pipe)
	if err != nil {
		return nil, err
	}
	return func(step, steps int) (err error) {
		if a.async {
			if err := abi.DeviceSync(dev); err != nil {
				return err
			}
		}
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("onStep threw at step %d: %v", step, r)
			}
		}()
		fn.Invoke(step, steps)
		if a.async {
			time.Sleep(time.Millisecond)
		}
		return nil
	}, nil
}

// diffusionLoadZip(bytes: Uint8Array, device) -> pipeline handle
func diffusionLoadZip(a args) (any, error) {
	raw, err := a.bytes(0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	d, err := a.optStr(1, "device")
	if err != nil {
		return nil, err
	}
	return abi.DiffusionLoadZip(raw, d)
}

// diffusionGenerate(pipe, batch, steps, seed: decimal string, scheduler, onStep?) -> images handle
func diffusionGenerate(a args) (any, error) {
	r := a.reader()
	p := r.handle(0)
	batch := r.int(1, "batch")
	steps := r.int(2, "steps")
	seed := r.uint64(3, "seed")
	sched := r.optStr(4, "scheduler")
	if r.err != nil {
		return nil, r.err
	}
	progress, err := a.onStep(5, p)
	if err != nil {
		return nil, err
	}
	return abi.DiffusionGenerate(p, int(batch), int(steps), seed, sched, progress)
}

// diffusionGenerateClasses(pipe, labels: number[], steps, seed, guidanceScale, scheduler, onStep?) -> images handle
func diffusionGenerateClasses(a args) (any, error) {
	r := a.reader()
	p := r.handle(0)
	labels := r.ints(1, "labels")
	steps := r.int(2, "steps")
	seed := r.uint64(3, "seed")
	guidance := r.float(4, "guidance scale")
	sched := r.optStr(5, "scheduler")
	if r.err != nil {
		return nil, r.err
	}
	progress, err := a.onStep(6, p)
	if err != nil {
		return nil, err
	}
	return abi.DiffusionGenerateClasses(p, labels, int(steps), seed, guidance, sched, progress)
}

// diffusionGenerateText(pipe, prompts, negativePrompts, imagesPerPrompt,
// steps, seed, guidanceScale, height, width, scheduler, latents, onStep?) -> images handle
func diffusionGenerateText(a args) (any, error) {
	p, err := a.handle(0)
	if err != nil {
		return nil, err
	}
	var r abi.TextToImage
	if r.Prompts, err = a.strings(1, "prompts"); err != nil {
		return nil, err
	}
	if r.NegativePrompts, err = a.strings(2, "negative prompts"); err != nil {
		return nil, err
	}
	ints := []struct {
		i    int
		what string
		to   *int
	}{{3, "images per prompt", &r.ImagesPerPrompt}, {4, "steps", &r.Steps}, {7, "height", &r.Height}, {8, "width", &r.Width}}
	for _, x := range ints {
		n, err := a.int(x.i, x.what)
		if err != nil {
			return nil, err
		}
		*x.to = int(n)
	}
	if r.Seed, err = a.uint64(5, "seed"); err != nil {
		return nil, err
	}
	if r.GuidanceScale, err = a.float(6, "guidance scale"); err != nil {
		return nil, err
	}
	if r.Scheduler, err = a.optStr(9, "scheduler"); err != nil {
		return nil, err
	}
	if r.Latents, err = a.int(10, "latents handle"); err != nil {
		return nil, err
	}
	if r.Progress, err = a.onStep(11, p); err != nil {
		return nil, err
	}
	return abi.DiffusionGenerateText(p, r)
}

// diffusionEncodeText(pipe, texts: string[]) -> states handle
func diffusionEncodeText(a args) (any, error) {
	r := a.reader()
	p := r.handle(0)
	texts := r.strings(1, "texts")
	return r.then(func() (any, error) { return abi.DiffusionEncodeText(p, texts) })
}
