package abi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// call runs target through the C ABI's path (CallToResult, then the
// result's JSON) and decodes the result into out.
func call(t *testing.T, target string, self int64, args any, data []byte, out any) error {
	t.Helper()
	js := ""
	if args != nil {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		js = string(b)
	}
	h, err := CallToResult(target, self, js, data, CallContext{})
	if err != nil {
		return err
	}
	s, err := CallResultJSON(h)
	require.NoError(t, err)
	require.NoError(t, CallResultFree(h))
	if out != nil {
		require.NoError(t, json.Unmarshal([]byte(s), out), s)
	}
	return nil
}

func TestCallTokenizerByName(t *testing.T) {
	var meta struct {
		Sentences []string `json:"sentences"`
		Batch     int      `json:"hidden_states_batch"`
	}
	refs := mmRefs(t, "minilm_refs", &meta)
	raw, err := os.ReadFile(filepath.Join(mmTestdata, "minilm_tokenizer", "tokenizer.json"))
	require.NoError(t, err)

	var tok int64
	require.NoError(t, call(t, "tokenizer.load", 0, nil, raw, &tok))
	defer func() { require.NoError(t, call(t, "tokenizer.free", tok, nil, nil, nil)) }()
	var vocab int
	require.NoError(t, call(t, "tokenizer.vocab_size", tok, nil, nil, &vocab))
	assert.Equal(t, 30522, vocab)

	var enc map[string]int64
	require.NoError(t, call(t, "tokenizer.encode", tok,
		map[string]any{"texts": meta.Sentences[:meta.Batch], "pad_id": 0, "device": "cpu"}, nil, &enc))
	for _, name := range []string{"input_ids", "token_type_ids", "attention_mask"} {
		want, shape := refTensor(t, refs, name)
		got, gotShape := hostValues(t, enc[name])
		assert.Equal(t, shape, gotShape, name)
		assert.Equal(t, want, got, name)
	}
	// One text is a list of one; null is the default (the file's padding).
	var one map[string]int64
	require.NoError(t, call(t, "tokenizer.encode", tok, map[string]any{"texts": "a", "pad_id": nil}, nil, &one))
	_, shape := hostValues(t, one["input_ids"])
	assert.Equal(t, core.Shape{1, 128}, shape)
	freeHandles(one["token_type_ids"], one["attention_mask"])

	// The library's own errors come through unchanged.
	err = call(t, "tokenizer.decode", tok, map[string]any{"ids": []int64{101, 40000}}, nil, nil)
	assert.ErrorContains(t, err, "id 40000 (at 1) is outside the vocabulary (0..30521)")
}

func TestCallBatchDecodeAndTranscribe(t *testing.T) {
	refs, meta := whisperRefs(t)
	var w int64
	require.NoError(t, call(t, "whisper.load", 0, map[string]any{"path": filepath.Join(mmTestdata, "whisper_tiny"), "device": "cpu"}, nil, &w))
	defer func() { require.NoError(t, call(t, "whisper.free", w, nil, nil, nil)) }()
	waves := []int64{refHandle(t, refs, "whisper/wave_0"), refHandle(t, refs, "whisper/wave_1")}
	var texts []string
	require.NoError(t, call(t, "whisper.transcribe", w,
		map[string]any{"waves": waves, "max_new_tokens": meta.Generate.MaxNewTokens}, nil, &texts))
	assert.Equal(t, meta.Generate.Texts, texts)

	var ids, tok int64
	require.NoError(t, call(t, "whisper.generate", w, map[string]any{"waves": waves, "max_new_tokens": meta.Generate.MaxNewTokens}, nil, &ids))
	require.NoError(t, call(t, "whisper.tokenizer", w, nil, nil, &tok))
	var decoded []string
	require.NoError(t, call(t, "tokenizer.batch_decode", tok, map[string]any{"ids": ids, "skip_special_tokens": true}, nil, &decoded))
	assert.Equal(t, meta.Generate.Texts, decoded)
	freeHandles(ids)
	require.NoError(t, tokenizerFree(tok))
}

func TestCallListsAndTensors(t *testing.T) {
	var idx []int64
	require.NoError(t, call(t, "video.uniform_frame_indices", 0, map[string]any{"total": 10, "num_frames": 4}, nil, &idx))
	want, err := ints(videoUniformFrameIndices(10, 4))
	require.NoError(t, err)
	assert.Equal(t, want, idx)

	x := NewHandle(core.FromSlice([]float32{0, 1, 0, -1, 0, 1, 0, -1}, core.Shape{8}), false)
	defer freeHandles(x)
	var y int64
	require.NoError(t, call(t, "audio.resample", 0, map[string]any{"x": x, "from_hz": 8, "to_hz": 4}, nil, &y))
	direct, err := audioResample(x, 8, 4)
	require.NoError(t, err)
	got, _ := hostValues(t, y)
	ref, _ := hostValues(t, direct)
	assert.Equal(t, ref, got)
	freeHandles(y, direct)
}

// TestCallArgumentErrors: every mistake in a call names the target and
// the argument, and none starts the work (no tensor is made).
func TestCallArgumentErrors(t *testing.T) {
	before := LiveTensors()
	cases := []struct {
		target string
		args   string
		want   string
	}{
		{"tokenizer.encod", `{}`, `unknown target "tokenizer.encod" (tokenizer has tokenizer.batch_decode, tokenizer.decode, tokenizer.encode,`},
		{"nothing.here", `{}`, `(no target has the kind "nothing")`},
		{"video.uniform_frame_indices", `{"total": 10, "numframes": 4}`,
			"video.uniform_frame_indices: unknown argument numframes (it takes num_frames, total)"},
		{"video.uniform_frame_indices", `{"total": "ten", "num_frames": 4}`, `video.uniform_frame_indices: total must be an integer, got "ten"`},
		{"video.uniform_frame_indices", `{"total": 2.5, "num_frames": 4}`, "total must be an integer, got 2.5"},
		{"video.uniform_frame_indices", `{"total": -1, "num_frames": 4}`, "total is -1, outside [0, 2147483647]"},
		{"video.sample_frame_indices", `{"clip_len": 2, "frame_sample_rate": 1, "seg_len": 8, "seed": 4294967296}`,
			"seed is 4294967296, outside [0, 4294967295]"},
		{"audio.resample", `{"from_hz": 8, "to_hz": 4}`, "audio.resample: x is required"},
		{"audio.resample", `[1, 2]`, "audio.resample: arguments must be a JSON object"},
		{"audio.resample", `{"x": 1`, "audio.resample: arguments must be a JSON object"},
		{"audio.resample", `{"x": 1} {"x": 2}`, "audio.resample: arguments must be a JSON object"},
		{"tokenizer.load", `{}`, "tokenizer.load: needs the file's bytes (or a path argument) as the call's data, got none"},
		{"clip.zero_shot", `{"pixels": 1, "texts": [1, 2]}`, "clip.zero_shot: texts[0] must be a string, got 1"},
		{"clip.zero_shot", `{"pixels": 1, "texts": ["a", null]}`, "clip.zero_shot: texts[1] must be a string, got null"},
		{"clip.zero_shot", `{"pixels": 1, "texts": {"a": 1}}`, `clip.zero_shot: texts must be a list, got {"a": 1}`},
		{"whisper.generate", `{"waves": [1, null]}`, "whisper.generate: waves[1] must be a tensor handle, got null"},
		{"tokenizer.decode", `{"ids": [1.5]}`, "tokenizer.decode: ids[0] must be an integer, got 1.5"},
		{"whisper_stream.new", `{"model": 1, "tokens_per_second": "fast"}`, `tokens_per_second must be a number, got "fast"`},
	}
	for _, c := range cases {
		_, err := Call(c.target, 0, c.args, nil, CallContext{})
		require.Error(t, err, "%s %s", c.target, c.args)
		assert.Equal(t, StatusInvalid, StatusOf(err), "%v", err)
		assert.Contains(t, err.Error(), c.want, "%s %s", c.target, c.args)
	}
	assert.Equal(t, before, LiveTensors(), "a refused call made tensors")

	// Objects: a freed handle says so; NaN and infinities come as strings.
	_, err := Call("sentence_encoder.dim", 999999, "", nil, CallContext{})
	assert.Equal(t, StatusHandle, StatusOf(err), "%v", err)
	_, err = Call("tokenizer.free", 0, "", nil, CallContext{})
	assert.ErrorContains(t, err, "unknown tokenizer handle 0")
	_, err = CallResultJSON(123456789)
	assert.ErrorContains(t, err, "unknown call result handle 123456789")
}

// TestCallTargetsAreDocumented holds docs/calls.md to the registered
// targets: each is listed there, and nothing else is.
func TestCallTargetsAreDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "calls.md"))
	require.NoError(t, err)
	var listed []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "| `") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			listed = append(listed, name)
		}
	}
	assert.ElementsMatch(t, CallTargets(), listed)
}

func TestCallKindsDocumented(t *testing.T) {
	for _, target := range CallTargets() {
		kind, _, _ := strings.Cut(target, ".")
		assert.NotEmpty(t, callKinds[kind], "kind %s (of %s) has no entry in callKinds", kind, target)
	}
}

// BenchmarkCallOverhead: what wt_call adds to a method (argument JSON read
// and checked, the result written as JSON and held behind a handle) over
// calling the function itself; `go test ./abi -run '^$' -bench CallOverhead`.
func BenchmarkCallOverhead(b *testing.B) {
	tok, err := tokenizerLoad(filepath.Join(mmTestdata, "whisper_bpe", "tokenizer.json"))
	require.NoError(b, err)
	defer func() { _ = tokenizerFree(tok) }()
	ids := []int64{601, 609, 542, 78, 11, 489, 597, 67, 0, 600}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := tokenizerDecode(tok, ids, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wt_call", func(b *testing.B) {
		args := `{"ids": [601, 609, 542, 78, 11, 489, 597, 67, 0, 600], "skip_special_tokens": true}`
		for b.Loop() {
			h, err := CallToResult("tokenizer.decode", tok, args, nil, CallContext{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := CallResultJSON(h); err != nil {
				b.Fatal(err)
			}
			_ = CallResultFree(h)
		}
	})
}

// Every target says what it returns (docs/calls.md's column): one that
// does not is refused when it registers, before any call.
func TestRegisterCallsRefusesAnUndescribedResult(t *testing.T) {
	undescribed := map[string]method{"x.y": {fn: func(*CallArgs) func() (any, error) { return nil }}}
	assert.PanicsWithValue(t, "abi: call target x.y does not say what it returns", func() { registerCalls(undescribed) })
	assert.NotContains(t, CallTargets(), "x.y")
}
