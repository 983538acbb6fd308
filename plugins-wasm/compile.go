package plugins

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/webtensor/webtensor/core/config"
)

// Loading is bounded like calling: a module whose code would take the
// compiler long is refused before it compiles (codecheck.go), and
// compilation runs under a deadline.

// DefaultCompileDeadline bounds compiling one module. The Go example plugin
// (3.4 MB, a Go wasip1 runtime) compiles in 0.6 s on 2 cores and a 6.6 MB Go
// program in 1.1 s, so a loaded machine has a wide margin.
const DefaultCompileDeadline = 30 * time.Second

// The environment variables that override the compile limits, for the C
// ABI and the SDKs, which load plugins with NewConfig.
const (
	envCompileDeadline = "WEBTENSOR_PLUGIN_COMPILE_DEADLINE" // a Go duration: 2m, 90s
	envMaxBlocks       = "WEBTENSOR_PLUGIN_MAX_BLOCKS"       // a positive integer
)

func (c Config) fromEnv() Config {
	if v := config.String(envCompileDeadline); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			c.envErr = fmt.Errorf("plugins: %s=%q is not a positive duration (like 90s or 2m)", envCompileDeadline, v)
		}
		c.compileDeadline = d
	}
	if v := config.String(envMaxBlocks); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			c.envErr = fmt.Errorf("plugins: %s=%q is not a positive integer", envMaxBlocks, v)
		}
		c.maxFunctionBlocks = n
	}
	return c
}

// compileWorkers is how many goroutines compile a module's functions. At
// least two: wazero checks the context between functions only on its
// multi-worker path (wazero 1.12, engine.compileModule), and a single
// worker would ignore the deadline. Two also halve the compile time of the
// Go example plugin on 2 cores; more than 8 would only add memory.
func compileWorkers() int { return min(max(runtime.GOMAXPROCS(0), 2), 8) }

// compile checks wasm against the limits and compiles it under the compile
// deadline. A module compiled before comes from the compilation cache at
// the cost of the linear pre-pass.
func (h *Host) compile(ctx context.Context, wasm []byte) (wazero.CompiledModule, error) {
	_, check := checkCode(wasm, h.cfg.maxFunctionBlocks)
	if check != nil && !errors.Is(check, errCodeMalformed) {
		return nil, check
	}
	// Code the pre-pass cannot decode goes to wazero, whose decoder and
	// validator run over every function before it compiles any, so a
	// malformed module costs no compile time and gets wazero's precise error.
	cctx, cancel := context.WithTimeout(ctx, h.cfg.compileDeadline)
	defer cancel()
	compiled, err := h.rt.CompileModule(experimental.WithCompilationWorkers(cctx, compileWorkers()), wasm)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("stopped: %w", ctx.Err())
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w: compiling took longer than the %v compile deadline; raise it with "+
			"plugins.Config.WithCompileDeadline or %s if the module is trusted", context.DeadlineExceeded,
			h.cfg.compileDeadline, envCompileDeadline)
	case err != nil:
		return nil, err
	case check != nil:
		// wazero took what the pre-pass could not read: the pre-pass lacks an
		// instruction, and the module stays refused rather than uncounted.
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("%v (the host's pre-pass does not know this instruction)", check)
	}
	return compiled, nil
}
