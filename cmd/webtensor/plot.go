package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotLoss writes the training loss curve as a PNG (or SVG/PDF, by the
// file's extension).
func plotLoss(path, title string, losses []float64) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "step"
	p.Y.Label.Text = "loss"
	p.Add(plotter.NewGrid())
	pts := make(plotter.XYs, len(losses))
	for i, l := range losses {
		pts[i].X, pts[i].Y = float64(i+1), l
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	line.Width = vg.Points(1.5)
	p.Add(line)
	if err := p.Save(7*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("writing plot %s: %w (use a .png, .svg or .pdf name)", path, err)
	}
	return nil
}
