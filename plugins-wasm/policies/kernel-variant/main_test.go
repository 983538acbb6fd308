package main

import (
	"encoding/json"
	"testing"

	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

func ask(t *testing.T, r Request) Reply {
	t.Helper()
	raw, err := wtplugin.RunPolicy("kernel_variant", r)
	if err != nil {
		t.Fatal(err)
	}
	var rep Reply
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRules(t *testing.T) {
	vs := []string{"regblock", "tiled"}
	big := map[string]int{"batch": 1, "m": 512, "k": 512, "n": 512}
	small := map[string]int{"batch": 1, "m": 16, "k": 8, "n": 16}
	cases := []struct {
		r    Request
		want string
	}{
		{Request{Software: true, Kind: "matmul", Workload: big, Variants: vs, Current: "tiled"}, "regblock"},
		{Request{Kind: "matmul", Workload: big, Variants: vs, Current: "regblock"}, "tiled"},
		{Request{Kind: "matmul", Workload: small, Variants: vs, Current: "tiled"}, "regblock"},
		{Request{Kind: "conv", Workload: big, Variants: vs, Current: "tiled"}, "tiled"},
		{Request{Kind: "matmul", Workload: big, Variants: []string{"regblock"}, Current: "regblock"}, "regblock"},
	}
	for _, c := range cases {
		if got := ask(t, c.r); got.Variant != c.want || got.Reason == "" {
			t.Errorf("%+v: got %+v, want %s with a reason", c.r, got, c.want)
		}
	}
	if _, err := wtplugin.RunPolicy("kernel_variant", map[string]any{"variants": []string{}}); err == nil {
		t.Error("an empty variant list must be an error")
	}
}
