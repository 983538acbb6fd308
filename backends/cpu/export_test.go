package cpu

// PoisonCacheForTest makes every cached storage start as NaN bytes and
// every storage of a byte or more come from the cache, until restore runs.
func PoisonCacheForTest() (restore func()) {
	min, old := cacheMinBytes, SetCacheLimit(1<<30)
	poisonCache, cacheMinBytes = true, 1
	return func() {
		poisonCache, cacheMinBytes = false, min
		SetCacheLimit(old)
	}
}

// WithoutSIMDForTest runs the kernels on their Go loops, as on js/wasm
// and arm64, until restore runs.
func WithoutSIMDForTest() (restore func()) {
	saved := simdLevel
	simdLevel = simdNone
	return func() { simdLevel = saved }
}

// SetNumThreadsForTest runs kernels on n threads until restore runs.
func SetNumThreadsForTest(n int) (restore func()) {
	saved := int(threadsSet.Load())
	SetNumThreads(n)
	return func() { SetNumThreads(saved) }
}

// SetWinogradForTest turns the Winograd path of the 3x3 convolutions on or
// off until restore runs.
func SetWinogradForTest(on bool) (restore func()) {
	saved := winogradOn
	winogradOn = on
	return func() { winogradOn = saved }
}

// WinogradScalarForTest runs the Winograd transforms on their Go loops
// until restore runs.
func WinogradScalarForTest() (restore func()) {
	saved := wgVector
	wgVector = false
	return func() { wgVector = saved }
}

// SetAttentionKeySkipForTest turns the f32 attention's skipping of padded
// keys (kernels_attention_keys.go) on or off until restore runs.
func SetAttentionKeySkipForTest(on bool) (restore func()) {
	prev := attentionSkipKeys
	attentionSkipKeys = on
	return func() { attentionSkipKeys = prev }
}

// AttentionKeysSkippedForTest is how many scores (query rows times keys)
// the skipping has left out so far.
func AttentionKeysSkippedForTest() int64 { return attentionKeysSkipped.Load() }
