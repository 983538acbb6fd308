//go:build !js

package webgpu

/*
#include <stdint.h>
#include <string.h>

// The parts of wgpu-native's webgpu.h and wgpu.h (the version
// github.com/cogentcore/webgpu links) that creating an instance needs;
// TestInstanceServesPrimaryBackendsOnly fails if they stop matching.
typedef struct wtChainedStruct {
	const struct wtChainedStruct *next;
	uint32_t sType;
} wtChainedStruct;

typedef struct wtInstanceExtras {
	wtChainedStruct chain;
	uint32_t backends;
	uint32_t flags;
	uint32_t dx12ShaderCompiler;
	uint32_t gles3MinorVersion;
	const char *dxilPath;
	const char *dxcPath;
} wtInstanceExtras;

typedef struct wtInstanceDescriptor {
	const wtChainedStruct *nextInChain;
} wtInstanceDescriptor;

enum { wtSTypeInstanceExtras = 0x00030006 };

void *wgpuCreateInstance(const wtInstanceDescriptor *descriptor);

// Every field not named is zero: the default flags, DX12 compiler and
// GLES version.
static void *wt_create_instance(uint32_t backends) {
	wtInstanceExtras extras;
	memset(&extras, 0, sizeof extras);
	extras.chain.sType = wtSTypeInstanceExtras;
	extras.backends = backends;
	wtInstanceDescriptor desc = { &extras.chain };
	return wgpuCreateInstance(&desc);
}
*/
import "C"

import (
	"os"
	"strings"
	"unsafe"

	"github.com/cogentcore/webgpu/wgpu"
)

// wgpu.Instance holds only the C handle: these fail to compile if that
// changes, since newInstance fills one in.
var (
	_ [unsafe.Sizeof(wgpu.Instance{}) - unsafe.Sizeof(unsafe.Pointer(nil))]byte
	_ [unsafe.Sizeof(unsafe.Pointer(nil)) - unsafe.Sizeof(wgpu.Instance{})]byte
)

// newInstance creates the wgpu instance on Vulkan, Metal and DX12, the
// backends pickAdapter chooses from, and without the OpenGL one: wgpu's
// EGL setup probes for a Wayland display, and libwayland prints "error:
// XDG_RUNTIME_DIR is invalid or not set in the environment." to stderr
// wherever that variable is unset, for an adapter webtensor never uses.
//
// It calls wgpuCreateInstance itself because the binding's CreateInstance
// cannot pass the backends: it fills its WGPUInstanceExtras from
// uninitialised memory (C.malloc) and sets only some fields, so the flags,
// GLES version and DXC paths are whatever the allocator held; wgpu-native
// panics on a garbage GLES version ("Unknown gles3 minor version") and
// aborts the process. That, not a second instance, is what made passing a
// descriptor abort.
func newInstance() *wgpu.Instance {
	quietVulkanLayers()
	raw := C.wt_create_instance(C.uint32_t(wgpu.InstanceBackendPrimary))
	if raw == nil {
		return nil
	}
	inst := new(wgpu.Instance)
	*(*unsafe.Pointer)(unsafe.Pointer(inst)) = raw
	return inst
}

// quietVulkanLayers turns Mesa's device-select Vulkan layer off, for this
// process, when all it could do is print noise. Without a usable
// XDG_RUNTIME_DIR the layer asks libwayland-client for a display on every
// instance creation and device enumeration, and libwayland prints the same
// XDG_RUNTIME_DIR error each time (four lines for importing the Python SDK
// and listing its devices, eight for `webtensor doctor`). The layer only
// reorders the devices the Vulkan loader reports, to put the display's GPU
// first; pickAdapter ranks the adapters itself, so nothing is lost. The
// loader reads NODEVICE_SELECT when the instance is created, so it is set
// just before; in a cgo process (the CLI, libwebtensor.so inside Python,
// Node or Java) os.Setenv sets the C environment the loader reads.
//
// Left alone: a NODEVICE_SELECT the user set, a usable XDG_RUNTIME_DIR (the
// layer is quiet then), and MESA_VK_DEVICE_SELECT or DRI_PRIME, which ask
// the layer to choose a device.
func quietVulkanLayers() {
	for _, name := range []string{"NODEVICE_SELECT", "MESA_VK_DEVICE_SELECT", "DRI_PRIME"} {
		if _, set := os.LookupEnv(name); set {
			return
		}
	}
	// libwayland's own test: the directory must be an absolute path.
	if strings.HasPrefix(os.Getenv("XDG_RUNTIME_DIR"), "/") {
		return
	}
	os.Setenv("NODEVICE_SELECT", "1")
}
