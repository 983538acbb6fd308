// Package sdk carries the plugin SDKs' sources (the C header and the Go
// package wtplugin) as files, so that `webtensor plugin new` can copy them
// into a new plugin, which then builds without this repository.
package sdk

import "embed"

// Files holds c/wtplugin.h and go/wtplugin/*.go (tests included; the
// scaffold skips them).
//
//go:embed c/wtplugin.h go/wtplugin/*.go
var Files embed.FS
