package cuda

// Info describes the GPU and the libraries the backend found, for doctor
// and bug reports.
type Info struct {
	Name              string
	ComputeCapability string // "9.0"
	Multiprocessors   int
	MemoryBytes       uint64
	DriverVersion     string // CUDA version the driver supports, "13.0"
	DriverLibrary     string
	NVRTCVersion      string
	NVRTCLibrary      string
	CublasLibrary     string
	CublasVersion     int
	Arch              string // what kernels are built for: "sm_90"
}
