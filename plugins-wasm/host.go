package plugins

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	_ "github.com/webtensor/webtensor/backends/cpu" // a plugin's kernels run on the CPU device
	"github.com/webtensor/webtensor/core"
)

// Defaults of a Config (ABI.md, "Sandbox").
const (
	DefaultMemoryLimit = 256 << 20
	DefaultDeadline    = 10 * time.Second
)

const pageSize = 64 << 10

// Config is the immutable configuration of a Host. Each With method returns
// a changed copy, so one Config can seed several hosts.
type Config struct {
	memoryLimit  uint64
	deadline     time.Duration
	maxInstances int // 0: GOMAXPROCS when the host starts
	noDeadline   bool
	clock        bool
	random       io.Reader
	stdout       io.Writer
	stderr       io.Writer
	diskCache    bool
	cacheDir     string

	compileDeadline   time.Duration
	maxFunctionBlocks int
	envErr            error // a malformed WEBTENSOR_PLUGIN_* variable, reported by NewHost
}

// NewConfig returns the defaults: a 256 MiB memory cap per instance, a 10 s
// deadline per call, up to GOMAXPROCS instances per plugin, WASI with no
// files, environment or arguments, a fake clock, deterministic randomness
// and output discarded, and compile limits (a 30 s compile deadline, at most
// 10,000 control blocks per function) that WEBTENSOR_PLUGIN_COMPILE_DEADLINE
// and WEBTENSOR_PLUGIN_MAX_BLOCKS override (compile.go).
func NewConfig() Config {
	c := Config{memoryLimit: DefaultMemoryLimit, deadline: DefaultDeadline,
		compileDeadline: DefaultCompileDeadline, maxFunctionBlocks: DefaultMaxFunctionBlocks}
	return c.fromEnv()
}

// WithMemoryLimit caps the linear memory of each plugin instance, rounded up
// to whole 64 KiB pages, at most 4 GiB (wasm32).
func (c Config) WithMemoryLimit(bytes uint64) Config { c.memoryLimit = bytes; return c }

// WithDeadline bounds every call into a plugin. A call that runs longer is
// stopped and its instance closed; a fresh one serves later calls.
func (c Config) WithDeadline(d time.Duration) Config { c.deadline = d; return c }

// WithNoDeadline is for plugins you trust: calls have no deadline, so
// modules compile without the termination check wazero otherwise puts in
// every loop (a call out of the module per iteration: tight loops run about
// ten times faster without it). A call that never returns hangs its caller,
// and Close, which waits for the calls in flight.
func (c Config) WithNoDeadline() Config { c.noDeadline = true; return c }

// WithMaxInstances caps the instances of each plugin, and so how many calls
// into one plugin run at once (the default is GOMAXPROCS when the host
// starts). Each instance has its own memory, up to the memory limit; a call
// beyond the cap waits for an instance to come back, and its deadline starts
// when it runs. A plugin with one instance runs its calls one at a time; 0
// restores the default, and NewHost refuses a negative n.
func (c Config) WithMaxInstances(n int) Config { c.maxInstances = n; return c }

// WithClock grants the host's real wall clock, monotonic clock and sleep.
func (c Config) WithClock() Config { c.clock = true; return c }

// WithRandom grants a source of randomness (for example crypto/rand.Reader)
// in place of the deterministic one. It must be safe for concurrent use: the
// instances of a plugin, and several plugins, run at once.
func (c Config) WithRandom(r io.Reader) Config { c.random = r; return c }

// WithStdout sends the plugins' standard output to w, which must be safe
// for concurrent use when plugins run more than one instance.
func (c Config) WithStdout(w io.Writer) Config { c.stdout = w; return c }

// WithStderr sends the plugins' standard error to w, which must be safe
// for concurrent use like WithStdout's.
func (c Config) WithStderr(w io.Writer) Config { c.stderr = w; return c }

// WithDiskCache keeps compiled modules in dir across processes as well as in
// memory; an empty dir means $XDG_CACHE_HOME/webtensor/wasm.
func (c Config) WithDiskCache(dir string) Config { c.diskCache, c.cacheDir = true, dir; return c }

// WithCompileDeadline bounds compiling a module at load (a cache hit costs
// nothing). wazero stops between functions, so a load can overrun it by the
// time of the functions in flight, which WithMaxFunctionBlocks bounds.
func (c Config) WithCompileDeadline(d time.Duration) Config { c.compileDeadline = d; return c }

// WithMaxFunctionBlocks caps the control blocks (block, loop, if) of one
// function of a module; a module with a larger function is refused before
// it compiles, because its compile time grows with their square.
func (c Config) WithMaxFunctionBlocks(n int) Config { c.maxFunctionBlocks = n; return c }

func (c Config) validate() (Config, error) {
	if c.envErr != nil {
		return c, c.envErr
	}
	if c.compileDeadline <= 0 {
		return c, fmt.Errorf("plugins: compile deadline %v is not positive", c.compileDeadline)
	}
	if c.maxFunctionBlocks <= 0 {
		return c, fmt.Errorf("plugins: max function blocks %d is not positive", c.maxFunctionBlocks)
	}
	if c.memoryLimit == 0 || c.memoryLimit > 1<<32 {
		return c, fmt.Errorf("plugins: memory limit of %d bytes is not in (0, 4 GiB]", c.memoryLimit)
	}
	c.memoryLimit = (c.memoryLimit + pageSize - 1) / pageSize * pageSize
	if c.deadline <= 0 && !c.noDeadline {
		return c, fmt.Errorf("plugins: deadline %v is not positive", c.deadline)
	}
	switch {
	case c.maxInstances < 0:
		return c, fmt.Errorf("plugins: max instances %d is negative", c.maxInstances)
	case c.maxInstances == 0:
		c.maxInstances = max(runtime.GOMAXPROCS(0), 1)
	}
	return c, nil
}

var (
	memCacheOnce sync.Once
	memCache     wazero.CompilationCache
	diskCachesMu sync.Mutex
	diskCaches   = map[string]wazero.CompilationCache{}
)

// compilationCache returns the process-wide cache for cfg: one in memory, or
// one per directory, shared by every Host so a module compiles once.
func compilationCache(cfg Config) (wazero.CompilationCache, error) {
	if !cfg.diskCache {
		memCacheOnce.Do(func() { memCache = wazero.NewCompilationCache() })
		return memCache, nil
	}
	dir := cfg.cacheDir
	if dir == "" {
		base, err := os.UserCacheDir() // $XDG_CACHE_HOME, else ~/.cache
		if err != nil {
			return nil, fmt.Errorf("plugins: no cache directory: %v", err)
		}
		dir = filepath.Join(base, "webtensor", "wasm")
	}
	diskCachesMu.Lock()
	defer diskCachesMu.Unlock()
	if c, ok := diskCaches[dir]; ok {
		return c, nil
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plugins: compilation cache in %s: %v", dir, err)
	}
	diskCaches[dir] = c
	return c, nil
}

// Host loads plugins into one wazero runtime. It is safe for concurrent use.
type Host struct {
	cfg          Config
	rt           wazero.Runtime
	wasi         api.Module
	moduleConfig wazero.ModuleConfig

	mu      sync.Mutex
	closed  bool
	plugins []*Plugin
}

// NewHost starts a runtime (the compiler engine where the platform has one)
// with the sandbox cfg describes.
func NewHost(ctx context.Context, cfg Config) (h *Host, err error) {
	defer recoverTo(&err, "plugins: new host")
	if cfg, err = cfg.validate(); err != nil {
		return nil, err
	}
	cache, err := compilationCache(cfg)
	if err != nil {
		return nil, err
	}
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(!cfg.noDeadline).
		WithMemoryLimitPages(uint32(cfg.memoryLimit / pageSize)).
		WithCompilationCache(cache)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("plugins: WASI: %v", err)
	}
	// Reactors initialise in _initialize; _start (a command's main) is
	// refused at load, so it never runs.
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize")
	if cfg.clock {
		mc = mc.WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	}
	if cfg.random != nil {
		mc = mc.WithRandSource(cfg.random)
	}
	if cfg.stdout != nil {
		mc = mc.WithStdout(cfg.stdout)
	}
	if cfg.stderr != nil {
		mc = mc.WithStderr(cfg.stderr)
	}
	return &Host{cfg: cfg, rt: rt, wasi: rt.Module(wasiModule), moduleConfig: mc}, nil
}

// Close closes every plugin of the host and the runtime. Their ops stay in
// the registry (core cannot unregister) and fail with "plugin closed" until a
// plugin with the same manifest is loaded again.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	ps := slices.Clone(h.plugins)
	h.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
	return h.rt.Close(ctx)
}

// LoadFile loads a plugin from a .wasm file.
func (h *Host) LoadFile(ctx context.Context, path string) (*Plugin, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %v", filepath.Base(path), err)
	}
	return h.Load(ctx, filepath.Base(path), wasm)
}

// Load compiles a module (once: the compilation cache keeps it), checks its
// imports, exports, ABI version and manifest, and registers its ops in core
// with their CPU kernels. name labels the module in errors until its
// manifest names the plugin (a file name, a URL). A plugin name can be loaded
// only once at a time; after Close, a module whose manifest declares the
// same ops identically may take them over.
func (h *Host) Load(ctx context.Context, name string, wasm []byte) (p *Plugin, err error) {
	defer recoverTo(&err, "plugin "+name)
	if h.isClosed() {
		return nil, fmt.Errorf("plugin %s: the host is closed", name)
	}
	compiled, err := h.compile(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: cannot compile: %w", name, err)
	}
	inst, spec, err := h.open(ctx, compiled, wasm)
	if err != nil {
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	p = &Plugin{host: h, name: spec.name, version: spec.version, spec: spec, compiled: compiled,
		pool: newInstancePool(h, compiled, inst), wgsl: map[string]string{}}
	for _, op := range spec.ops {
		if op.wgsl != "" {
			p.wgsl[op.name] = op.wgsl
		}
	}
	if err := bindPlugin(p); err != nil {
		p.pool.close()
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("plugin %s: %w", spec.name, err)
	}
	h.mu.Lock()
	if h.closed { // closed while we loaded
		h.mu.Unlock()
		p.Close()
		return nil, fmt.Errorf("plugin %s: the host is closed", spec.name)
	}
	h.plugins = append(h.plugins, p)
	h.mu.Unlock()
	return p, nil
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// open checks a compiled module, instantiates it and reads its manifest.
func (h *Host) open(ctx context.Context, c wazero.CompiledModule, wasm []byte) (*instance, *pluginSpec, error) {
	if err := checkImports(wasm); err != nil {
		return nil, nil, err
	}
	if err := checkWASIImports(c, h.wasi); err != nil {
		return nil, nil, err
	}
	if err := checkExports(c); err != nil {
		return nil, nil, err
	}
	inst, err := h.instantiate(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	spec, err := readManifest(inst)
	if err != nil {
		inst.close()
		return nil, nil, err
	}
	return inst, spec, nil
}

func readManifest(inst *instance) (*pluginSpec, error) {
	v, err := inst.call("wt_plugin_abi", inst.abi)
	if err != nil {
		return nil, err
	}
	if int32(v) != ABIVersion {
		return nil, fmt.Errorf("wt_plugin_abi returned %d, this host implements ABI %d", int32(v), ABIVersion)
	}
	raw, err := inst.packedBytes("wt_manifest", inst.manifest, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	spec, err := parseManifest(raw)
	if err != nil {
		return nil, err
	}
	if inst.decide == nil && len(spec.policies) > 0 {
		return nil, fmt.Errorf("the manifest declares policies (%s) but the module does not export wt_decide", strings.Join(spec.policies, ", "))
	}
	if inst.infer == nil {
		for _, op := range spec.ops {
			if op.needsInfer {
				return nil, fmt.Errorf("op %s has an output with shape rule \"infer\" but the module does not export wt_infer", op.name)
			}
		}
	}
	return spec, nil
}

// Plugin is a loaded module: its ops are in the registry and run on a pool
// of its instances, one call per instance at a time (pool.go).
type Plugin struct {
	host     *Host
	name     string
	version  string
	spec     *pluginSpec
	compiled wazero.CompiledModule
	pool     *instancePool
	wgsl     map[string]string
}

// Name is the plugin's name from its manifest (the prefix of its op names).
func (p *Plugin) Name() string { return p.name }

// Version is the version string from the manifest.
func (p *Plugin) Version() string { return p.version }

// Ops lists the plugin's op names in manifest order.
func (p *Plugin) Ops() []string {
	names := make([]string, len(p.spec.ops))
	for i, op := range p.spec.ops {
		names[i] = op.name
	}
	return names
}

// WGSLSource is the WGSL kernel the manifest carries for op, or "".
func (p *Plugin) WGSLSource(op string) string { return p.wgsl[op] }

// Close closes the plugin's instances: idle ones at once, those in calls as
// the calls end (Close waits for them, each within the deadline), and calls
// waiting for an instance fail, as do all later calls. The ops stay
// registered and fail until the plugin is loaded again; its compiled code
// stays cached for that.
func (p *Plugin) Close() error {
	if !p.pool.close() {
		return nil
	}
	unbindPlugin(p)
	h := p.host
	h.mu.Lock()
	h.plugins = slices.DeleteFunc(h.plugins, func(q *Plugin) bool { return q == p })
	h.mu.Unlock()
	p.pool.drain()
	// The compiled module stays open: closing it would drop its machine code
	// from the process-wide compilation cache, and loading the plugin again
	// would compile it again.
	return nil
}

// The ops of plugins live in the process-wide registry, so which plugin
// serves an op is process-wide too.
var (
	bindMu   sync.Mutex
	loaded   = map[string]*Plugin{}    // plugin name -> open plugin
	bindings = map[string]*opBinding{} // op name -> the op's registration
)

// opBinding is what a registered op's Infer and kernel call through: the
// plugin serving it now, or nil while none is loaded.
type opBinding struct {
	key string
	mu  sync.RWMutex
	cur *boundOp
}

type boundOp struct {
	plugin *Plugin
	op     *opSpec
}

func (b *opBinding) current(name string) (*boundOp, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.cur == nil {
		return nil, fmt.Errorf("the plugin serving %s was closed; load it again", name)
	}
	return b.cur, nil
}

// bindPlugin registers p's ops (or takes over those of a closed plugin with
// the same manifest) and their CPU kernels.
func bindPlugin(p *Plugin) error {
	bindMu.Lock()
	defer bindMu.Unlock()
	if _, dup := loaded[p.name]; dup {
		return fmt.Errorf("a plugin named %q is already loaded", p.name)
	}
	// Check every op before registering any: core cannot unregister.
	for _, op := range p.spec.ops {
		if b, ours := bindings[op.name]; ours {
			if b.key != op.key {
				return fmt.Errorf("op %s was registered by an earlier plugin with another declaration; "+
					"ops cannot be unregistered, so the changed op needs a new name (or a new process)", op.name)
			}
			continue
		}
		if _, taken := core.LookupOp(op.name); taken {
			return fmt.Errorf("op %s is already registered", op.name)
		}
		if core.LookupKernel("cpu", op.name) != nil {
			return fmt.Errorf("op %s already has a CPU kernel", op.name)
		}
	}
	var fresh []*opBinding
	defs := make([]*core.OpDef, len(p.spec.ops))
	for i, op := range p.spec.ops {
		if _, ours := bindings[op.name]; ours {
			continue
		}
		b := &opBinding{key: op.key}
		def, err := opDef(op, b)
		if err != nil {
			return err
		}
		defs[i] = def
		fresh = append(fresh, b)
	}
	for i, op := range p.spec.ops {
		if defs[i] == nil {
			continue
		}
		b := fresh[0]
		fresh = fresh[1:]
		if err := core.Register(defs[i]); err != nil {
			return err
		}
		bindings[op.name] = b // registered: from now on only rebinding is possible
		if err := core.RegisterKernel("cpu", op.name, cpuKernel(op.name, b)); err != nil {
			return err
		}
	}
	for _, op := range p.spec.ops {
		b := bindings[op.name]
		b.mu.Lock()
		b.cur = &boundOp{plugin: p, op: op}
		b.mu.Unlock()
	}
	loaded[p.name] = p
	return nil
}

func unbindPlugin(p *Plugin) {
	bindMu.Lock()
	defer bindMu.Unlock()
	if loaded[p.name] == p {
		delete(loaded, p.name)
	}
	for _, op := range p.spec.ops {
		if b := bindings[op.name]; b != nil {
			b.mu.Lock()
			if b.cur != nil && b.cur.plugin == p {
				b.cur = nil
			}
			b.mu.Unlock()
		}
	}
}

// recoverTo turns a panic into an error so that nothing panics through the
// package's API.
func recoverTo(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: internal error: %v", what, r)
	}
}
