//go:build linux && cgo

package cuda

// dryDevice compiles every kernel with NVRTC and runs none: the
// compile-only backend's device. Its memory is addresses with nothing
// behind them, and reads return zeros.
type dryDevice struct {
	fakeMemory
	arch int
	disk diskCache // the real backend's cache: compiling here warms it
}

func (d *dryDevice) upload(devicePtr, []byte) error { return nil }
func (d *dryDevice) download(dst []byte, _ devicePtr) error {
	clear(dst)
	return nil
}
func (d *dryDevice) copy(_, _ devicePtr, _ uint64) error { return nil }
func (d *dryDevice) zero(devicePtr, uint64) error        { return nil }
func (d *dryDevice) gemm(*gemmArgs) error                { return nil }

func (d *dryDevice) build(name, src string) (kernelHandle, error) {
	if _, ok := d.disk.load(src); ok {
		return name, nil
	}
	image, err := nvrtcCompile(name, src, d.arch, true, nil)
	if err == nil {
		d.disk.store(src, image)
	}
	return name, err
}

func (d *dryDevice) run(kernelHandle, [3]uint32, int, int, []byte) error { return nil }
