package core

import "unsafe"

// getg is in goid_amd64.s.
func getg() unsafe.Pointer
