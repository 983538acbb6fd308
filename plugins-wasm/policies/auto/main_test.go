package main

import (
	"encoding/json"
	"testing"

	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

func propose(t *testing.T, policy string, r Request) []Proposal {
	t.Helper()
	raw, err := wtplugin.RunPolicy(policy, r)
	if err != nil {
		t.Fatal(err)
	}
	var rep Reply
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Proposals
}

func TestKernelRules(t *testing.T) {
	threads := Setting{Name: "cpu.threads", Current: "2", Choices: []string{"1", "2"}}
	fuse := Setting{Name: "graph.mlp.fuse", Current: "off", Choices: []string{"off", "on"}}
	small := []HotOp{{Op: "add", Calls: 10, Bytes: 10 * 4096, Share: 0.6}, {Op: "matmul", Calls: 5, Bytes: 5 * 8192, Share: 0.4}}
	ps := propose(t, "kernel", Request{HotOps: small, Settings: []Setting{threads, fuse}})
	if len(ps) != 2 || ps[0].Change["graph.mlp.fuse"] != "on" || ps[1].Change["cpu.threads"] != "1" {
		t.Fatalf("small elementwise ops: got %+v, want fusion on then one thread", ps)
	}
	big := []HotOp{{Op: "matmul", Calls: 1, Bytes: 64 << 20, Share: 1}}
	threads.Current = "1"
	ps = propose(t, "kernel", Request{HotOps: big, Settings: []Setting{threads}})
	if len(ps) != 1 || ps[0].Change["cpu.threads"] != "2" || ps[0].Why == "" {
		t.Fatalf("large ops on one thread: got %+v, want every thread with a reason", ps)
	}
	hist := []Outcome{{Change: map[string]string{"cpu.threads": "2"}, Verdict: "rejected"}}
	if ps = propose(t, "kernel", Request{HotOps: big, Settings: []Setting{threads}, History: hist}); len(ps) != 0 {
		t.Fatalf("a change already rejected was proposed again: %+v", ps)
	}
}

func TestQuantRules(t *testing.T) {
	layers := []Layer{{Name: "fc1", Params: 100, Mode: "f32"}, {Name: "fc2", Params: 1000, Mode: "f32"}, {Name: "fc3", Params: 50, Mode: "int8"}}
	modes := []string{"f32", "int8", "bf16", "f16"}
	settings := []Setting{{Name: "quant.fc1", Current: "f32", Choices: modes}, {Name: "quant.fc2", Current: "f32", Choices: modes},
		{Name: "quant.fc3", Current: "int8", Choices: modes}}
	ps := propose(t, "quant", Request{Layers: layers, Settings: settings})
	if len(ps) != 2 || ps[0].Change["quant.fc2"] != "int8" || ps[1].Change["quant.fc1"] != "int8" || ps[0].ExpectedGain != 0.75 {
		t.Fatalf("got %+v, want int8 for fc2 then fc1", ps)
	}
	hist := []Outcome{{Change: map[string]string{"quant.fc2": "int8"}, Verdict: "rejected"}}
	ps = propose(t, "quant", Request{Layers: layers, Settings: settings, History: hist, Max: 1})
	if len(ps) != 1 || ps[0].Change["quant.fc2"] != "bf16" {
		t.Fatalf("after int8 failed on fc2: got %+v, want bf16 for it", ps)
	}
}

func TestDataRules(t *testing.T) {
	counts := []string{"0", "1", "2", "4", "8"}
	settings := func(cache, workers, prefetch string) []Setting {
		return []Setting{{Name: "data.img.cache", Current: cache, Choices: []string{"off", "on"}},
			{Name: "data.img.workers", Current: workers, Choices: counts},
			{Name: "data.img.prefetch", Current: prefetch, Choices: []string{"1", "2", "4", "8"}}}
	}
	// Decoding 1 ms a record against a 37 KB copy: the cache alone, the
	// workers question waiting for the cached profile.
	decode := &Loader{Records: 256, BatchSize: 32, RecordBytes: 37632, CacheFits: true, ReadSeconds: 1e-3, SampleSeconds: 1e-3, Cores: 2}
	ps := propose(t, "data", Request{Workload: "img", Loader: decode, Settings: settings("off", "0", "2")})
	if len(ps) != 1 || ps[0].Change["data.img.cache"] != "on" || ps[0].ExpectedGain < 0.9 {
		t.Fatalf("slow decodes: got %+v, want the cache alone", ps)
	}
	hist := []Outcome{{Change: map[string]string{"data.img.cache": "on"}, Verdict: "rejected"}}
	ps = propose(t, "data", Request{Workload: "img", Loader: decode, Settings: settings("off", "0", "2"), History: hist})
	if len(ps) != 1 || ps[0].Change["data.img.workers"] != "2" {
		t.Fatalf("the cache lost: got %+v, want two workers", ps)
	}
	// Records in memory, 2 µs a sample on 4 workers: no cache, no workers.
	tiny := &Loader{Records: 8192, BatchSize: 32, RecordBytes: 72, InMemory: true, CacheFits: true, ReadSeconds: 1e-7, SampleSeconds: 2e-6, Cores: 2}
	ps = propose(t, "data", Request{Workload: "img", Loader: tiny, Settings: settings("off", "4", "1")})
	if len(ps) != 1 || ps[0].Change["data.img.workers"] != "0" {
		t.Fatalf("tiny in-memory batches: got %+v, want no workers", ps)
	}
	if _, err := wtplugin.RunPolicy("data", Request{Workload: "img", Settings: settings("off", "0", "2")}); err == nil {
		t.Fatal("a request without a loader profile was answered")
	}
}
