// Command webtensor is the runtime's command line: `run` trains the demo
// model on the best device found, `ops` prints the op manifest, `doctor`
// reports devices and versions.
package main
