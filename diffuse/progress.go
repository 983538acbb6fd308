package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Progress is told after each denoising step of a run: step counts from 1
// to steps, the loop's length. An error it returns stops the run, which
// fails with that error (a page's cancel button, a deadline).
type Progress func(step, steps int) error

// WithProgress is s calling progress after each Step. Every pipeline
// (Pipeline, CondPipeline, DiTPipeline, img2img) steps its scheduler once
// per timestep, so passing WithProgress(s, f) as a pipeline's Scheduler
// reports each step of its runs; StableDiffusionPipeline takes
// TextToImage.Progress instead, since it builds its own scheduler. A nil
// progress returns s.
func WithProgress(s Scheduler, progress Progress) Scheduler {
	if progress == nil {
		return s
	}
	return &progressScheduler{Scheduler: s, progress: progress}
}

type progressScheduler struct {
	Scheduler
	progress    Progress
	step, steps int
}

func (p *progressScheduler) SetTimesteps(n int) error {
	err := p.Scheduler.SetTimesteps(n)
	p.step, p.steps = 0, len(p.Scheduler.Timesteps())
	return err
}

// setBegin forwards img2img's start index (img2imgSchedule), whose loop
// then runs only the timesteps from there.
func (p *progressScheduler) setBegin(i int) error {
	if b, ok := p.Scheduler.(interface{ setBegin(int) error }); ok {
		if err := b.setBegin(i); err != nil {
			return err
		}
	}
	p.steps = max(len(p.Scheduler.Timesteps())-i, 0)
	return nil
}

func (p *progressScheduler) Step(modelOutput *core.Tensor, t float64, sample *core.Tensor, noise Noise) (*core.Tensor, error) {
	x, err := p.Scheduler.Step(modelOutput, t, sample, noise)
	if err != nil {
		return nil, err
	}
	p.step++
	if err := p.progress(p.step, max(p.steps, p.step)); err != nil {
		return nil, fmt.Errorf("stopped by its progress callback after step %d of %d: %w", p.step, p.steps, err)
	}
	return x, nil
}
