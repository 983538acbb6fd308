//go:build !unix

package diffuse

import (
	"errors"
	"os"
)

// mapFile is unavailable here (no mmap, e.g. in the browser): the
// checkpoint is then read tensor by tensor from the open file.
func mapFile(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.ErrUnsupported
}
