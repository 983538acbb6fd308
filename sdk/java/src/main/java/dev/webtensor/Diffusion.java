package dev.webtensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.List;

/**
 * A diffusion pipeline from a diffusers folder, or a zip archive of one (the Go package diffuse,
 * through the ABI's wt_diffusion_*): DDPMPipeline, DDIMPipeline, DiTPipeline
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
        super(h, Abi.DIFFUSION_FREE, "diffusion pipeline");
        this.info = Native.readString((buf, cap, needed) -> (int) Abi.DIFFUSION_INFO_JSON.invokeExact(h, buf, cap, needed));
    }

    /** The folder at path with its weights on device (null: the default). */
    public static Diffusion load(Path path, String device) throws IOException {
        return new Diffusion(load(Abi.DIFFUSION_LOAD, path, device));
    }

    /**
     * As load(path, device), with int8Weights holding the models' linear and
     * conv weights as int8 with one f32 scale per output channel
     * (wt_diffusion_quantize_int8), dequantised layer by layer as they run:
     * about a quarter of the weight bytes (info's weight_bytes).
     */
    public static Diffusion load(Path path, String device, boolean int8Weights) throws IOException {
        return quantized(load(Abi.DIFFUSION_LOAD, path, device), int8Weights);
    }

    /**
     * The pipeline in a zip archive of such a folder (its files at the root, or
     * in one top-level folder as {@code zip -r pipe.zip pipe} nests them), read
     * from the archive's bytes (wt_diffusion_load_zip) with its weights on device
     * (null: the default). A hostile or broken archive (paths leaving it, a zip
     * bomb, truncation, a file the pipeline needs and it lacks) throws a
     * WebtensorException naming the entry. int8Weights as for load.
     */
    public static Diffusion loadZip(byte[] zip, String device, boolean int8Weights) {
        return quantized(loadZip(Abi.DIFFUSION_LOAD_ZIP, zip, device, "diffusion"), int8Weights);
    }

    public static Diffusion loadZip(byte[] zip) {
        return loadZip(zip, null, false);
    }

    private static Diffusion quantized(long h, boolean int8Weights) {
        if (int8Weights) {
            try {
                Native.call(Abi.DIFFUSION_QUANTIZE_INT8, h);
            } catch (RuntimeException e) {
                Native.call(Abi.DIFFUSION_FREE, h);
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

    /**
     * batch images (batch, C, H, W) in [0, 1] after steps inference steps from
     * the noise stream of seed; scheduler names another diffusers scheduler
     * class to sample with (null: the folder's).
     */
    public Tensor generate(int batch, int steps, long seed, String scheduler) {
        long h = handle();
        try (Arena arena = Arena.ofConfined()) {
            return newTensor(Abi.DIFFUSION_GENERATE, arena, h, batch, steps, seed, cString(arena, scheduler));
        }
    }

    /** One image per class label (DiT), with classifier-free guidance at guidanceScale. */
    public Tensor generateClasses(long[] labels, int steps, long seed, double guidanceScale, String scheduler) {
        long h = handle();
        try (Arena arena = Arena.ofConfined()) {
            return newTensor(Abi.DIFFUSION_GENERATE_CLASSES, arena, h, longs(arena, labels), labels.length, steps, seed,
                    guidanceScale, cString(arena, scheduler));
        }
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
        long h = handle();
        long init = latents == null ? 0 : latents.handle();
        try (Arena arena = Arena.ofConfined()) {
            return newTensor(Abi.DIFFUSION_GENERATE_TEXT, arena, h, texts(arena, prompts), prompts.size(),
                    texts(arena, negativePrompts), negativePrompts.size(), imagesPerPrompt, steps, seed, guidanceScale,
                    height, width, cString(arena, scheduler), init);
        }
    }

    /** One image per prompt at the folder's size and scheduler, against the empty prompt. */
    public Tensor generateText(List<String> prompts, int steps, long seed, double guidanceScale) {
        return generateText(prompts, List.of(), 1, steps, seed, guidanceScale, 0, 0, null, null);
    }

    /** The text encoder's states (texts, max length, width): what a text-to-image pipeline's UNet attends to. */
    public Tensor encodeText(List<String> texts) {
        long h = handle();
        try (Arena arena = Arena.ofConfined()) {
            return newTensor(Abi.DIFFUSION_ENCODE_TEXT, arena, h, texts(arena, texts), texts.size());
        }
    }
}
