//go:build js

package webgpu

import "encoding/json"

// diskCache is a no-op in the browser: a page has no cache directory, the
// browser keeps its own shader cache, and the browser build times no
// variants (see defaultMatmul), so there is nothing to carry over.
type diskCache struct {
	diskCounters
	device string
}

func (c *diskCache) status() (dir, off string) { return cacheDir() }

// cacheDir: the browser build has none (TuningCacheDir says so).
func cacheDir() (dir, off string) { return "", "the browser build keeps no disk cache" }

func (c *diskCache) reset()                                     {}
func (c *diskCache) path(kind, name string) string              { return "" }
func (c *diskCache) load(kind, name string, v any) bool         { return false }
func (c *diskCache) store(kind, name string, v any)             {}
func (c *diskCache) scan(string, func(string, json.RawMessage)) {}
