// Package types holds the value types webtensor's API is written in: DType
// (with its constants, ParseDType and PromoteTypes), Shape and Attrs, and
// their methods.
//
// It imports nothing of webtensor, so that both core and the packages below
// it (core/oprules, core/numerics) can be typed on the same values. Model code
// never needs to import it: core declares every name here again (type
// aliases, constants and thin functions), and core.Shape is types.Shape.
package types
