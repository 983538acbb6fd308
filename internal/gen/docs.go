package main

import (
	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core/config"
)

// markdownHeader is the generated-code line of a Markdown file: an HTML
// comment, which renderers hide.
const markdownHeader = "<!-- " + header + " -->\n"

// opsReference writes docs/ops.md, the op reference by category.
func opsReference(r *registry) ([]file, error) {
	return []file{{"docs/ops.md", []byte(markdownHeader + r.manifest.Markdown())}}, nil
}

// configReference writes docs/config.md, every WEBTENSOR_* variable.
func configReference(*registry) ([]file, error) {
	return []file{{"docs/config.md", []byte(markdownHeader + config.Markdown())}}, nil
}

// callsReference writes docs/calls.md, every wt_call target with its
// arguments as the methods read them.
func callsReference(*registry) ([]file, error) {
	return []file{{"docs/calls.md", []byte(markdownHeader + abi.CallsMarkdown())}}, nil
}

// conformanceIndex writes conformance/vectors/index.json, the ops and
// tolerances every SDK's conformance runner reads. JSON has no comments, so
// it carries no header.
func conformanceIndex(*registry) ([]file, error) {
	return []file{{"conformance/vectors/index.json", conformance.BuildIndex().JSON()}}, nil
}
