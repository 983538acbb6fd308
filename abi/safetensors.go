package abi

import (
	"math"

	"github.com/webtensor/webtensor/core/safetensors"
)

// SafetensorsHeader is wt_safetensors_header, the checkpoint validator of
// every SDK: each reads a safetensors file's layout from here instead of
// parsing the header itself, so a file is accepted or refused, with the
// same message, in every language. prefix is the file's first bytes (at
// least the 8-byte length and the header), name labels it in errors.
func SafetensorsHeader(prefix []byte, fileSize uint64, name string) (string, error) {
	if err := CheckSafetensorsPrefix(uint64(len(prefix)), fileSize); err != nil {
		return "", err
	}
	h, err := safetensors.ParseHeader(prefix, int64(fileSize))
	if err != nil {
		if name != "" {
			return "", Invalidf("%s: %v", name, err)
		}
		return "", Invalidf("%v", err)
	}
	return string(h.JSON()), nil
}

// CheckSafetensorsPrefix checks the sizes a caller gives before the
// prefix is read: no more bytes than the file has.
func CheckSafetensorsPrefix(nbytes, fileSize uint64) error {
	if fileSize > math.MaxInt64 || nbytes > fileSize {
		return Invalidf("wt_safetensors_header: %d bytes given of a file of %d", nbytes, fileSize)
	}
	return nil
}
