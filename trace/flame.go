package trace

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"time"
)

// A flame graph of where a trace's time went: each device is a tower, an
// op called by user code sits on it, the ops it called inside its own work
// on top of it, each as wide as its total time; an op's own (self) time is
// its width less its children's. Stacks that recur - the same op called
// from the same place - are merged, so a training loop of thousands of
// calls reads as one picture.

// Frame is one node of the merged call tree.
type Frame struct {
	Name     string
	Category string
	Total    time.Duration
	Self     time.Duration
	Calls    int
	Children []*Frame
}

func (f *Frame) child(name, category string) *Frame {
	for _, c := range f.Children {
		if c.Name == name {
			return c
		}
	}
	c := &Frame{Name: name, Category: category}
	f.Children = append(f.Children, c)
	return c
}

// Flame merges t's events into a call tree rooted at "all". A nested
// event (depth d > 0) belongs to the latest enclosing event of depth d-1
// on its device; one with no enclosing event (a recording that began
// inside an op) hangs off its device.
func Flame(t *Trace) *Frame {
	root := &Frame{Name: "all"}
	byDevice := map[string][]Event{}
	for _, e := range t.Events {
		byDevice[e.Device] = append(byDevice[e.Device], e)
	}
	devices := make([]string, 0, len(byDevice))
	for d := range byDevice {
		devices = append(devices, d)
	}
	sort.Strings(devices)
	for _, d := range devices {
		events := byDevice[d]
		sort.SliceStable(events, func(i, j int) bool {
			if events[i].Start != events[j].Start {
				return events[i].Start < events[j].Start
			}
			return events[i].Depth < events[j].Depth
		})
		dev := root.child(d, "device")
		type open struct {
			frame *Frame
			end   time.Duration
			depth int
		}
		var stack []open
		for _, e := range events {
			for len(stack) > 0 && (stack[len(stack)-1].depth >= e.Depth || stack[len(stack)-1].end < e.Start+e.Duration) {
				stack = stack[:len(stack)-1]
			}
			parent := dev
			if len(stack) > 0 {
				parent = stack[len(stack)-1].frame
			}
			f := parent.child(e.Op, e.Category)
			f.Total += e.Duration
			f.Calls++
			stack = append(stack, open{frame: f, end: e.Start + e.Duration, depth: e.Depth})
		}
	}
	var fill func(f *Frame) time.Duration
	fill = func(f *Frame) time.Duration {
		var children time.Duration
		for _, c := range f.Children {
			children += fill(c)
		}
		if f.Total == 0 { // all and the devices: the sum of what they hold
			f.Total = children
		}
		f.Self = max(f.Total-children, 0)
		sort.Slice(f.Children, func(i, j int) bool { return f.Children[i].Name < f.Children[j].Name })
		return f.Total
	}
	fill(root)
	return root
}

// categoryColours gives each op category a hue, so the eye groups the
// products, the elementwise work and the reductions.
var categoryColours = map[string]string{
	"linalg": "#e4572e", "conv": "#f3a712", "attention": "#d1495b", "norm": "#a8c686", "activation": "#76b041",
	"unary": "#4f9d69", "binary": "#2e86ab", "reduce": "#6a4c93", "shape": "#8d99ae", "index": "#b08968",
	"loss": "#c9184a", "pool": "#ffb703", "device": "#adb5bd",
}

// WriteSVG draws the tree as an SVG flame graph width pixels wide; frames
// narrower than half a pixel are left out. Each frame's tooltip gives its
// total and self time and its call count.
func (f *Frame) WriteSVG(w io.Writer, width int) error {
	if width <= 0 {
		width = 1200
	}
	const row, top = 18, 30
	depth := f.depth()
	height := top + depth*row + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="6" y="18" font-size="14">webtensor flame graph: %s over %d op calls</text>`+"\n", f.Total, f.calls())
	scale := float64(width-12) / float64(max(f.Total, 1))
	var draw func(fr *Frame, x float64, level int)
	draw = func(fr *Frame, x float64, level int) {
		wpx := float64(fr.Total) * scale
		if wpx < 0.5 {
			return
		}
		y := height - 10 - (level+1)*row
		colour := categoryColours[fr.Category]
		if colour == "" {
			colour = "#e9c46a"
		}
		tip := fmt.Sprintf("%s: %s total, %s self, %d calls", fr.Name, fr.Total, fr.Self, fr.Calls)
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" stroke="white" stroke-width="0.5"/>`,
			html.EscapeString(tip), x+6, y, wpx, row-1, colour)
		if chars := int(wpx / 7); chars >= 3 {
			label := fr.Name
			if len(label) > chars {
				label = label[:chars-2] + ".."
			}
			fmt.Fprintf(&b, `<text x="%.2f" y="%d">%s</text>`, x+9, y+row-5, html.EscapeString(label))
		}
		b.WriteString("</g>\n")
		cx := x
		for _, c := range fr.Children {
			draw(c, cx, level+1)
			cx += float64(c.Total) * scale
		}
	}
	draw(f, 0, 0)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (f *Frame) depth() int {
	d := 0
	for _, c := range f.Children {
		d = max(d, c.depth())
	}
	return d + 1
}

func (f *Frame) calls() int {
	n := f.Calls
	for _, c := range f.Children {
		n += c.calls()
	}
	return n
}
