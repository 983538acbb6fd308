package main

import (
	"encoding/json"
	"fmt"

	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

func main() {}

type proposal struct {
	What         string            `json:"what"`
	Why          string            `json:"why"`
	ExpectedGain float64           `json:"expected_gain"`
	Change       map[string]string `json:"change"`
}

type reply struct {
	Proposals []proposal `json:"proposals"`
}

var sink []byte

func init() {
	wtplugin.Plugin("hostile", "0.1.0")
	policy := func(name, doc string, f wtplugin.Decide) {
		wtplugin.RegisterPolicy(wtplugin.PolicySpec{Name: name, Doc: doc}, f)
	}
	policy("loop", "Never answers.", func(json.RawMessage) (any, error) {
		n := 0
		for {
			n++
		}
	})
	policy("trap", "Panics.", func(json.RawMessage) (any, error) {
		var m map[string]int
		m["x"] = 1 // assignment to a nil map: a runtime panic, a trap for the host
		return nil, nil
	})
	policy("hog", "Allocates until the memory cap stops it.", func(json.RawMessage) (any, error) {
		for {
			sink = append(sink, make([]byte, 64<<20)...)
		}
	})
	policy("flood", "Sends a thousand proposals.", func(json.RawMessage) (any, error) {
		var r reply
		for i := range 1000 {
			r.Proposals = append(r.Proposals, proposal{What: fmt.Sprint(i), Why: "more is better", ExpectedGain: 1,
				Change: map[string]string{"fake.speed": "slow"}})
		}
		return r, nil
	})
	policy("garbage", "Names settings and values that do not exist.", func(json.RawMessage) (any, error) {
		return reply{Proposals: []proposal{
			{What: "nope", Why: "trust me", ExpectedGain: 5, Change: map[string]string{"no.such.setting": "1"}},
			{What: "bad value", Why: "trust me", ExpectedGain: 5, Change: map[string]string{"fake.speed": "warp"}},
			{What: "nothing", Why: "trust me", ExpectedGain: 5, Change: map[string]string{}},
		}}, nil
	})
	policy("liar", "Claims a 900% gain for a change that makes the workload slower.", func(json.RawMessage) (any, error) {
		return reply{Proposals: []proposal{{What: "fake.speed=slow", Why: "it is much faster, honestly", ExpectedGain: 9,
			Change: map[string]string{"fake.speed": "slow"}}}}, nil
	})
}
