// Package strictconfig reads the config.json files of Hugging Face
// libraries (diffusers, transformers) strictly: every key must be one the
// caller knows, read into its config struct or accepted only at the values
// webtensor implements, so a checkpoint that needs a feature webtensor
// lacks fails naming the key instead of loading and computing something
// else. diffuse and multimodal describe their configs as maps of Key.
package strictconfig
