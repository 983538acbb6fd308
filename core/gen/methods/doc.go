// Command methods generates core/methods_gen.go: one typed Go function or
// Tensor method per registry op, so Go users call x.Softmax(...) rather than
// Call("softmax", ...). Run by `go generate ./core`; `-check` fails when the
// checked-in file differs from what the registry gives (CI runs it).
package main
