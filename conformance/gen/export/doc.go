// Command export writes every op's sample inputs and case descriptions into
// conformance/vectors/<op>.safetensors, the first half of `make vectors`;
// conformance/gen/make_vectors.py adds the reference outputs.
package main
