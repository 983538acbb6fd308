package parallel

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
)

// WorkerEnv, set to "1", makes a program that calls ServeIfWorker at its
// start serve the worker protocol on its stdin and stdout and exit.
const WorkerEnv = "WEBTENSOR_PARALLEL_WORKER"

// msg is one request to a worker; reply its answer (gob over pipes).
type msg struct {
	Op     string
	Key    int         // a micro-batch or shard's slot in the worker's state
	Data   [][]float32 // operands, row-major
	Shapes []core.Shape
	Relu   bool
	N      int
}

type reply struct {
	Err     string
	Data    [][]float32
	Seconds float64
}

// ServeIfWorker serves requests when WorkerEnv is set, then exits.
func ServeIfWorker() {
	if config.String(WorkerEnv) != "1" {
		return
	}
	cpu.SetNumThreads(1) // one process, one core: the cluster says how many share a host
	if err := serve(os.Stdin, os.Stdout); !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "parallel worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// saved is what a forward keeps for its backward: the output and the
// leaves whose gradients the backward returns, in order.
type saved struct {
	out    *core.Tensor
	leaves []*core.Tensor
}

// serve answers requests until its input ends (io.EOF) or breaks; it
// returns only with an error.
func serve(r io.Reader, w io.Writer) error {
	dec, enc := gob.NewDecoder(r), gob.NewEncoder(w)
	state := map[int]saved{}
	for {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return err
		}
		start := time.Now()
		out, err := handle(m, state)
		rep := reply{Data: out, Seconds: time.Since(start).Seconds()}
		if err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
}

func tensor(data []float32, shape core.Shape, grad bool) *core.Tensor {
	t := core.FromSlice(data, shape)
	if grad {
		t.SetRequiresGrad(true)
	}
	return t
}

func values(ts ...*core.Tensor) ([][]float32, error) {
	out := make([][]float32, len(ts))
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("parallel: no gradient for operand %d", i)
		}
		v, err := t.Float32s()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// handle runs one request. "echo" returns its operands (links are timed
// on it); "gflops" times an N x N product; "fwd" runs layers x @ W1 (relu)
// @ W2 ... on its operands (x first, then the weights) and keeps what its
// backward needs under Key; "bwd" takes the output's gradient and returns
// the gradients of x and of each weight; "attn" and "selfattn" are a
// transformer block's attention (attnOp).
func handle(m msg, state map[int]saved) ([][]float32, error) {
	switch m.Op {
	case "echo":
		return m.Data, nil
	case "gflops":
		return nil, nil // the reply's Seconds times the request; see workerGFLOPS
	case "matmul":
		a := tensor(m.Data[0], m.Shapes[0], false)
		b := tensor(m.Data[1], m.Shapes[1], false)
		return values(a.Matmul(b))
	case "fwd":
		if len(m.Data) < 2 || len(m.Data) != len(m.Shapes) {
			return nil, fmt.Errorf("parallel: fwd wants x and weights with shapes, got %d operands and %d shapes", len(m.Data), len(m.Shapes))
		}
		x := tensor(m.Data[0], m.Shapes[0], true)
		s := saved{leaves: []*core.Tensor{x}}
		h := x
		for i := 1; i < len(m.Data); i++ {
			w := tensor(m.Data[i], m.Shapes[i], true)
			s.leaves = append(s.leaves, w)
			h = h.Matmul(w)
			if m.Relu && i < len(m.Data)-1 {
				h = h.ReLU()
			}
		}
		if err := h.Err(); err != nil {
			return nil, err
		}
		s.out = h
		state[m.Key] = s
		return values(h)
	case "bwd":
		s, ok := state[m.Key]
		if !ok {
			return nil, fmt.Errorf("parallel: bwd of slot %d without its fwd", m.Key)
		}
		delete(state, m.Key)
		if err := s.out.Backward(tensor(m.Data[0], s.out.Shape(), false)); err != nil {
			return nil, err
		}
		var grads []*core.Tensor
		for _, p := range s.leaves {
			grads = append(grads, p.Grad())
		}
		return values(grads...)
	case "attn", "selfattn":
		return attnOp(m, state)
	}
	return nil, fmt.Errorf("parallel: unknown worker op %q", m.Op)
}

// Worker is a worker process and its pipes.
type Worker struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	enc *gob.Encoder
	dec *gob.Decoder
}

// StartWorkers starts n workers running exe (a program that calls
// ServeIfWorker first, such as a test binary) with args.
func StartWorkers(n int, exe string, args ...string) ([]*Worker, error) {
	var ws []*Worker
	for range n {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), WorkerEnv+"=1")
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return ws, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return ws, err
		}
		if err := cmd.Start(); err != nil {
			StopWorkers(ws)
			return nil, fmt.Errorf("parallel: starting worker %s: %w", exe, err)
		}
		ws = append(ws, &Worker{cmd: cmd, enc: gob.NewEncoder(in), dec: gob.NewDecoder(out)})
	}
	return ws, nil
}

// StopWorkers ends the workers (closing their input ends their loop).
func StopWorkers(ws []*Worker) {
	for _, w := range ws {
		if c, ok := w.cmd.Stdin.(io.Closer); ok {
			c.Close()
		}
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
	}
}

// call sends m and waits for the reply.
func (w *Worker) call(m msg) (reply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.enc.Encode(m); err != nil {
		return reply{}, fmt.Errorf("parallel: sending %s to worker %d: %w", m.Op, w.cmd.Process.Pid, err)
	}
	var r reply
	if err := w.dec.Decode(&r); err != nil {
		return reply{}, fmt.Errorf("parallel: reading worker %d's reply to %s: %w", w.cmd.Process.Pid, m.Op, err)
	}
	if r.Err != "" {
		return r, fmt.Errorf("parallel: worker %d: %s: %s", w.cmd.Process.Pid, m.Op, r.Err)
	}
	return r, nil
}
