package conformance_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

// Only a machine without the device gives an unavailable column; a backend
// that fails to open gives one the report fails.
func TestColumnsOfDevicesThatDoNotOpen(t *testing.T) {
	core.RegisterBackend("conf-absent", -1, func() (core.Backend, error) {
		return nil, fmt.Errorf("conf-absent: no adapter: %w", core.ErrNoDevice)
	})
	core.RegisterBackend("conf-broken", -1, func() (core.Backend, error) {
		return nil, errors.New("conf-broken: the driver refused a device")
	})
	absent := conformance.RunColumn(core.Device{Kind: "conf-absent"})
	assert.True(t, absent.Unavailable(), absent.Detail)
	assert.False(t, absent.Ran())
	broken := conformance.RunColumn(core.Device{Kind: "conf-broken"})
	assert.True(t, broken.OpenFailed(), broken.Detail)
	assert.True(t, strings.HasSuffix(broken.Detail, "the driver refused a device"), broken.Detail)
	assert.False(t, broken.Unavailable() || broken.Ran())
}
