package abi

import (
	"github.com/webtensor/webtensor/internal/modelfs"
)

// The multimodal models from a zip archive's bytes (sentence_encoder.load,
// clip.load): the browser has no folders, so a page fetches the
// folder zipped and hands the runtime the bytes, as it does a diffusion
// pipeline. The archive goes through the same checks (modelfs.OpenZip) and
// the model through the same loader as a folder, so an archive and its
// folder give the same model and the same errors, less the file system's.

// openModelZip is the folder of the zip archive data that holds marker: its
// root, or its one top-level folder (`zip -r model.zip model` nests the
// files one deep). Every failure is WT_ERR_INVALID for fn naming the entry.
func openModelZip(fn string, data []byte, marker string) (modelfs.Dir, error) {
	z, err := modelfs.OpenZip(data, maxZipBytes())
	if err != nil {
		return modelfs.Dir{}, Invalidf("%s: %v", fn, err)
	}
	root, err := z.Root(marker)
	if err != nil {
		return modelfs.Dir{}, Invalidf("%s: %v", fn, err)
	}
	d, err := modelfs.In(z, root)
	if err != nil {
		return modelfs.Dir{}, Invalidf("%s: %v", fn, err)
	}
	return d, nil
}

// fromArchive reclassifies a loader's WT_ERR_IO as WT_ERR_INVALID: nothing
// is read from disk, so a file the archive lacks or cannot give is a fault
// of the archive, not of the machine.
func fromArchive(h int64, err error) (int64, error) {
	if err != nil && StatusOf(err) == StatusIO {
		return 0, Invalidf("%v", err)
	}
	return h, err
}

// sentenceEncoderLoadZip is sentence_encoder.load: a zip archive of
// a sentence-transformers folder (modules.json at its root or in its one
// top-level folder), read from data during the call only.
func sentenceEncoderLoadZip(data []byte, device string) (int64, error) {
	const fn = "sentence_encoder.load"
	d, err := openModelZip(fn, data, "modules.json")
	if err != nil {
		return 0, err
	}
	return fromArchive(sentenceEncoderLoadDir(fn, d, device))
}

// clipLoadZip is clip.load: a zip archive of a CLIPModel folder with
// its tokenizer.json (config.json at its root or in its one top-level
// folder), read from data during the call only.
func clipLoadZip(data []byte, device string) (int64, error) {
	const fn = "clip.load"
	d, err := openModelZip(fn, data, "config.json")
	if err != nil {
		return 0, err
	}
	return fromArchive(clipLoadDir(fn, d, device))
}
