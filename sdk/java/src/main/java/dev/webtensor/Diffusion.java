package dev.webtensor;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A diffusion pipeline from a diffusers folder, or a zip archive of one (the Go package diffuse,
 * through wt_call's diffusion.* methods): DDPMPipeline, DDIMPipeline, DiTPipeline
 * or StableDiffusionPipeline (text to image; its safety checker is not run).
 * The noise comes from the runtime's Philox stream, so a seed gives the same
 * images on one device from every SDK.
 *
 * <pre>{@code
 * try (Diffusion pipe = Diffusion.load(Path.of("ddpm-folder"));
 *      Tensor images = pipe.generate(4, 50, 0, null)) { // (4, C, H, W) in [0, 1]
 *     float[] v = images.toFloatArray();
 * }
 * }</pre>
 */
public final class Diffusion extends NativeObject {
    private final String info;

    private Diffusion(long h) {
        super(h, "diffusion", "diffusion pipeline");
        this.info = callJson("diffusion.info", h, null, null); // the result is the info object itself
    }

    /** The folder at path with its weights on device (null: the default). */
    public static Diffusion load(Path path, String device) throws IOException {
        return load(path, device, false);
    }

    /**
     * As load(path, device), with int8Weights holding the models' linear and
     * conv weights as int8 with one f32 scale per output channel
     * (diffusion.quantize_int8), dequantised layer by layer as they run:
     * about a quarter of the weight bytes (info's weight_bytes).
     */
    public static Diffusion load(Path path, String device, boolean int8Weights) throws IOException {
        return quantized(loadPath("diffusion.load", path, args("device", device)), int8Weights);
    }

    /**
     * The pipeline in a zip archive of such a folder (its files at the root, or
     * in one top-level folder as {@code zip -r pipe.zip pipe} nests them), read
     * from the archive's bytes with its weights on device (null: the default).
     * A hostile or broken archive (paths leaving it, a zip bomb, truncation, a
     * file the pipeline needs and it lacks) throws a WebtensorException naming
     * the entry. int8Weights as for load.
     */
    public static Diffusion loadZip(byte[] zip, String device, boolean int8Weights) {
        return quantized(loadData("diffusion.load", zip, args("device", device), "diffusion"), int8Weights);
    }

    public static Diffusion loadZip(byte[] zip) {
        return loadZip(zip, null, false);
    }

    private static Diffusion quantized(long h, boolean int8Weights) {
        if (int8Weights) {
            try {
                call("diffusion.quantize_int8", h);
            } catch (RuntimeException e) {
                call("diffusion.free", h);
                throw e;
            }
        }
        return new Diffusion(h);
    }

    public static Diffusion load(Path path) throws IOException {
        return load(path, null);
    }

    /**
     * The runtime's JSON description: {"pipeline": "DDPMPipeline", "scheduler":
     * "DDPMScheduler", "image_shape": [3, 16, 16], "class_conditional": false,
     * "text_conditional": false, "device": "cpu", "weight_bytes": 709708, "int8_weights": false}.
     */
    public String info() {
        return info;
    }

    /** A seed as the runtime's uint64: a negative long is its two's complement, as the C ABI always took it. */
    private static String seed(long seed) {
        return Long.toUnsignedString(seed);
    }

    /**
     * batch images (batch, C, H, W) in [0, 1] after steps inference steps from
     * the noise stream of seed; scheduler names another diffusers scheduler
     * class to sample with (null: the folder's).
     */
    public Tensor generate(int batch, int steps, long seed, String scheduler) {
        return tensor(call("diffusion.generate", handle(),
                args("batch", batch, "steps", steps, "seed", seed(seed), "scheduler", scheduler), null));
    }

    /** One image per class label (DiT), with classifier-free guidance at guidanceScale. */
    public Tensor generateClasses(long[] labels, int steps, long seed, double guidanceScale, String scheduler) {
        return tensor(call("diffusion.generate_classes", handle(), args("labels", labels, "steps", steps, "seed", seed(seed),
                "guidance_scale", guidanceScale, "scheduler", scheduler), null));
    }

    /**
     * Text to image (StableDiffusionPipeline): imagesPerPrompt images for each
     * prompt, adjacent, (prompts x imagesPerPrompt, C, H, W) in [0, 1].
     * negativePrompts are empty (the empty prompt), one for all, or one per
     * prompt; guidanceScale <= 1 runs without guidance (diffusers' default is
     * 7.5); height and width 0 take the folder's default size; latents (null:
     * drawn from the seed's stream) are the initial latents, as diffusers'
     * latents= argument; scheduler as for generate.
     */
    public Tensor generateText(List<String> prompts, List<String> negativePrompts, int imagesPerPrompt, int steps, long seed,
                               double guidanceScale, int height, int width, String scheduler, Tensor latents) {
        return tensor(call("diffusion.generate_text", handle(), args("prompts", prompts, "negative_prompts", negativePrompts,
                "images_per_prompt", imagesPerPrompt, "steps", steps, "seed", seed(seed), "guidance_scale", guidanceScale,
                "height", height, "width", width, "scheduler", scheduler, "latents", latents), null));
    }

    /** One image per prompt at the folder's size and scheduler, against the empty prompt. */
    public Tensor generateText(List<String> prompts, int steps, long seed, double guidanceScale) {
        return generateText(prompts, List.of(), 1, steps, seed, guidanceScale, 0, 0, null, null);
    }

    /** The text encoder's states (texts, max length, width): what a text-to-image pipeline's UNet attends to. */
    public Tensor encodeText(List<String> texts) {
        return tensor(call("diffusion.encode_text", handle(), args("texts", texts), null));
    }
}
