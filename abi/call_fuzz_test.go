package abi

import (
	"testing"

	"github.com/webtensor/webtensor/core"
)

// FuzzCall feeds wt_call arbitrary targets and argument JSON on a live
// tokenizer and a small tensor: every input is an answer or an error
// with a status, never a panic, and an error leaves no tensor behind.
func FuzzCall(f *testing.F) {
	tok, err := tokenizerLoad("../multimodal/testdata/whisper_bpe/tokenizer.json")
	if err != nil {
		f.Fatal(err)
	}
	x := NewHandle(core.FromSlice([]float32{0, 1, 0, -1, 0, 1, 0, -1}, core.Shape{8}), false)
	for _, seed := range []struct{ target, args string }{
		{"tokenizer.encode", `{"texts": ["a b", "c"], "pad_id": 0}`},
		{"tokenizer.decode", `{"ids": [601, 609, 542], "skip_special_tokens": true}`},
		{"tokenizer.vocab_size", ``},
		{"video.uniform_frame_indices", `{"total": 10, "num_frames": 4}`},
		{"video.sample_frame_indices", `{"clip_len": 4, "frame_sample_rate": 2, "seg_len": 16, "seed": 0}`},
		{"audio.resample", `{"x": 2, "from_hz": 8, "to_hz": 4}`},
		{"whisper_stream.new", `{"model": 1, "tokens_per_second": "inf"}`},
		{"tokenizer.encode", `{"texts": "\u0000", "device": "cpu", "pad_id": null}`},
	} {
		f.Add(seed.target, seed.args)
	}
	f.Fuzz(func(t *testing.T, target, args string) {
		if target == "tokenizer.free" || target == "tokenizer.load" || len(args) > 1<<12 {
			return // keep the one tokenizer; loads read files
		}
		self := tok
		if target == "audio.resample" {
			self = 0
		}
		before := LiveTensors()
		_, err := Call(target, self, args, nil, CallContext{})
		if err != nil {
			if StatusOf(err) == StatusInternal {
				t.Fatalf("%s %s: internal error %v", target, args, err)
			}
			if LiveTensors() != before {
				t.Fatalf("%s %s failed (%v) and left %d tensors", target, args, err, LiveTensors()-before)
			}
		}
		_ = x
	})
}
