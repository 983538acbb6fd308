package gcpace

import (
	"runtime"
	"testing"
)

func TestCollectedSeesEveryCollection(t *testing.T) {
	var s Seen
	s.Note()
	if s.Collected() {
		t.Fatal("Collected reported a collection when none ran since Note")
	}
	runtime.GC()
	if !s.Collected() {
		t.Fatal("Collected missed a collection another caller started")
	}
	if s.Collected() {
		t.Fatal("Collected reported the same collection twice")
	}
}

func TestCyclesCounts(t *testing.T) {
	before := Cycles()
	runtime.GC()
	if after := Cycles(); after <= before {
		t.Fatalf("Cycles %d after runtime.GC, %d before", after, before)
	}
}
