package trace

import (
	"io"

	"github.com/google/pprof/profile"
)

// WritePprof writes the tree in pprof's profile format (gzipped protobuf),
// so `go tool pprof` gives its top, tree, list and web views of a trace:
// one sample per merged stack, valued in self time (nanoseconds) and
// calls, the stack leaf first as pprof expects.
func (f *Frame) WritePprof(w io.Writer) error {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "time", Unit: "nanoseconds"}, {Type: "calls", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "time", Unit: "nanoseconds"},
		Period:     1,
		// pprof shows the last sample type unless told; time is the point.
		DefaultSampleType: "time",
	}
	funcs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := funcs[name]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, l)
		funcs[name] = l
		return l
	}
	var walk func(fr *Frame, stack []*profile.Location)
	walk = func(fr *Frame, stack []*profile.Location) {
		stack = append([]*profile.Location{loc(fr.Name)}, stack...)
		if fr.Self > 0 || fr.Calls > 0 {
			p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{int64(fr.Self), int64(fr.Calls)}})
		}
		for _, c := range fr.Children {
			walk(c, stack)
		}
	}
	walk(f, nil)
	if err := p.CheckValid(); err != nil {
		return err
	}
	return p.Write(w)
}
