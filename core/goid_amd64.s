#include "textflag.h"

// func getg() unsafe.Pointer
//
// The calling goroutine's runtime g, which amd64 Go keeps in thread-local
// storage (goid.go says why core reads it).
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
