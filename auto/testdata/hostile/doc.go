// Command hostile is a policy module for package auto's tests: each of
// its policies misbehaves in one way a real policy might - it loops, traps,
// eats memory, floods proposals, names settings that do not exist, or lies
// about the gain of a change that makes things worse.
package main
