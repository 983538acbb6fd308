// Package diffuse is webtensor's diffusion library: diffusers' noise
// schedulers and models, loaded from diffusers' own files. The schedulers
// of diffusers 0.42 keep diffusers' class names and semantics: DDPMScheduler, DDIMScheduler, PNDMScheduler,
// LMSDiscreteScheduler, EulerDiscreteScheduler,
// EulerAncestralDiscreteScheduler and DPMSolverMultistepScheduler
// (DPM-Solver++ 2M and the SDE variant, orders 1 to 3), with the linear,
// scaled_linear and squaredcos_cap_v2 beta schedules, epsilon,
// v_prediction and sample prediction, linspace, leading and trailing
// timestep spacing and Karras sigmas.
//
// A scheduler comes from a diffusers scheduler_config.json (ParseConfig,
// then New) or from Defaults and a few fields. Options webtensor does not
// implement (thresholding, rescale_betas_zero_snr, exponential or beta
// sigmas, ...) load only at their diffusers defaults, so a file
// save_pretrained wrote loads, and one that needs a missing feature fails
// naming the option; an unknown option fails naming the option and the
// scheduler.
//
// Why the coefficients are float32 host arithmetic: diffusers computes them
// with 0-dim float32 tensors on float32 tables (alphas_cumprod, sigmas).
// Computing them in float64 would be "more exact" yet differ from
// diffusers by float32 rounding in every step, and multistep solvers divide
// by differences of nearby lambdas, which magnifies that. So the tables are
// built as torch builds them (cumprod accumulated in float64, rounded per
// element) and each coefficient is the same float32 expression; where
// diffusers uses Python or NumPy float64 (timestep spacing, interpolation,
// Karras ramps, LMS's integrated coefficients), so does this package. The
// tensor work is a handful of elementwise ops with those scalars, in the
// sample's dtype on the sample's device, so a loop runs where its latents
// live (CPU, WebGPU, CUDA) and float32 latents stay float32.
//
// Stochastic steps take their noise from a Noise function: SeededNoise uses
// core's Philox stream (the same numbers on every device), and tests pass
// the exact noise diffusers drew. Multistep schedulers count their steps as
// diffusers does, and Step checks that t is the timestep the count is at,
// rather than silently mixing histories.
//
// The models: UNet2DModel (LoadUNet2D) reads a directory save_pretrained
// wrote, config.json and diffusion_pytorch_model.safetensors, with
// diffusers' parameter names (its StateDict is the file's). The weights
// are built straight from the file's tensors, on the device and in the
// dtype asked for, and must be exactly the ones the config implies: the
// load fails listing every missing, misshaped or unexpected tensor, and a
// config value webtensor does not implement fails naming the key. Forward
// runs on the sample's device; only the sinusoidal timestep embedding is
// computed on the host (large-argument sin and cos are where GPU
// approximations lose digits). A loaded model is in eval mode and records
// nothing for autograd; NewUNet2D builds one with drawn weights (torch's
// default initialisation, seeded) in training mode, whose Forward does
// record, so a DDPM loss trains it (webtensor run --task diffusion), and
// SavePipeline writes it back as a pipeline folder diffusers reads.
//
// Every loader reads an operating-system folder, or, with FromFS, a folder
// inside an fs.FS: a zip archive of a saved pipeline is one (abi's
// diffusion.load from bytes, for the browser, which has no folders). Weight
// streaming maps a file on disk and refuses an fs.FS. WithProgress wraps a
// scheduler to report each step of a run (TextToImage.Progress for Stable
// Diffusion).
//
// UNet2DConditionModel (LoadUNet2DCondition), Stable Diffusion's latent
// UNet, loads the same way and with the same strictness: diffusers'
// CrossAttnDownBlock2D, CrossAttnUpBlock2D, DownBlock2D, UpBlock2D and
// UNetMidBlock2DCrossAttn, whose Transformer2DModels (group norm, 1×1-conv
// or linear projections, BasicTransformerBlocks of self-attention,
// cross-attention and a GEGLU feed-forward) attend to encoder hidden
// states. Its config keys are diffusers'; attention_head_dim is, as in
// diffusers, the number of heads unless num_attention_heads is set, and
// may be a list per block. Forward(sample, t, encoderHiddenStates) runs on
// any device.
//
// LoadUNet2DConditionStreamed loads the same model with its weights left
// in the memory-mapped checkpoint (core/safetensors reads whole files;
// this maps the file, or reads tensor by tensor where nothing maps): each
// stage's tensors (the time embedding and conv_in, every down block, the
// mid block, every up block, the head) are copied in when Forward reaches
// the stage and dropped after it, so a forward holds the largest stage's
// weights, not the model's. Outputs are bit-identical to the loaded
// model's; WeightMemory reports the bytes held now and at the peak.
//
// AutoencoderKL (LoadAutoencoderKL) is diffusers' VAE from a vae/ folder
// save_pretrained wrote, loaded with the same strictness: Encode gives
// the posterior, a DiagonalGaussian (Mean, LogVar clamped to [-30, 20];
// Sample(noise) is Mean + exp(LogVar/2)·noise, Mode the mean), and Decode
// maps latents to images. Neither applies scaling_factor (pipelines do,
// as in diffusers). DecodeTiled is diffusers' enable_tiling decode:
// overlapping latent tiles decoded one by one and blended linearly across
// the overlap, which bounds the activations (and the mid block's
// attention, quadratic in the latent's area) by the tile size.
//
// TiledDenoiser is MultiDiffusion-style tiled sampling for latents larger
// than the UNet should see at once: every step runs the model on
// overlapping windows and blends the predictions with weights that fall
// off linearly toward the windows' inner edges. The cross-attention layers
// cache the text's keys and values while a run holds them
// (CacheCrossAttention, which CondPipeline takes for every run), so they
// are projected once per run rather than once per step, tile and
// guidance half.
//
// Fused kernels: every ResNet block's GroupNorm+SiLU is one group_norm
// with activation "silu" (nn.GroupNorm.ForwardSiLU), a single pass on the
// CPU, WebGPU and CUDA. CompileUNet2DCondition traces the UNet's forward
// into a graph of the IR, once per input shape, optimised and fused for
// its device: elementwise chains run as one kernel, matmuls take their
// epilogues (WebGPU), attention writes its heads in place for the output
// projection (CPU and WebGPU). The result stands in for the model in a
// CondPipeline. The convolution after GroupNorm+SiLU stays its own kernel:
// normalising inside the convolution's input packing would recompute SiLU
// for each of the 9 taps of a 3x3 kernel, more than the memory pass it
// saves on the CPU.
//
// DiTTransformer2DModel (LoadDiT) is DiT's class-conditional transformer:
// a strided-conv patch embedding plus a fixed 2-D sin-cos table (computed
// on the host, recomputed for other input sizes as diffusers does),
// adaLN-Zero blocks (each with its own timestep and class-label
// embedding), the modulated final layer and the unpatchify; with
// out_channels twice in_channels the output carries the learned variance
// after the noise (LearnedSigma). DiTPipeline is diffusers' DiTPipeline:
// class-label guidance against the null class, the scheduler stepping the
// doubled batch as diffusers does, and the VAE decode.
//
// Pipeline is unconditional sampling, diffusers' DDPMPipeline and
// DDIMPipeline loop for any Scheduler and any Denoiser (NewUNet2DPipeline
// sets it up for a UNet2DModel): Generate returns images in [0, 1] as
// (B, C, H, W) tensors on the model's device, the same for a seed.
//
// CondPipeline is text-conditioned sampling with classifier-free
// guidance, StableDiffusionPipeline's denoising loop: given prompt and
// negative-prompt embeddings (Prompts; the text encoder belongs to another
// library), a guidance scale, steps and a Noise, Sample returns the
// latents, batched over prompts and images per prompt, bit-identical for
// a seed on one device.
//
// StableDiffusionPipeline (LoadStableDiffusion) is text to image from a
// folder diffusers' StableDiffusionPipeline.save_pretrained writes (or a
// Stable Diffusion repository's): the CLIP tokenizer (tokenizer.json, or
// vocab.json and merges.txt) and text encoder come from package
// multimodal, the UNet, VAE and scheduler from here. Prompts are
// truncated and padded to model_max_length and encoded without a mask,
// the negative prompts (the empty prompt by default) likewise, and
// CondPipeline runs the guided loop; Latents returns its latents and
// Generate the VAE's images in [0, 1], batched over prompts and images per
// prompt, at the folder's or another scheduler (TextToImage names the
// arguments of diffusers' __call__). The safety checker is not run.
//
// img2img has StableDiffusionImg2ImgPipeline's semantics: strength picks
// the last int(steps·strength) steps of the schedule, the scheduler is
// placed at the first of them (set_begin_index), the starting image or
// latents are noised there by AddNoise and denoised over the rest.
// Pipeline.SampleFrom does it in the model's own (pixel) space,
// CondPipeline.SampleFrom on latents with guidance, and Img2ImgPipeline
// adds the VAE: images in [0, 1] encoded, the posterior sampled and
// scaled, the latents decoded.
//
// ControlNetModel (LoadControlNet) is diffusers' ControlNet, loaded from
// a save_pretrained folder with the same strictness: the UNet's encoder
// half with its own weights, the control image's conditioning embedding
// (convolutions, SiLU, stride-2 levels; "bgr" channel order flipped), and
// a 1×1 "zero" convolution per down-path state and for the mid block.
// Forward returns ControlResiduals times conditioning_scale, which
// UNet2DConditionModel.ForwardControlled adds to its skip connections and
// mid block. CondPipeline.Control wires it into sampling as
// StableDiffusionControlNetPipeline does (guess mode off): the ControlNet
// sees the same scaled, guidance-doubled latents and prompts as the UNet,
// the control image is repeated per prompt and image, and
// control_guidance_start/end open a window of steps outside which the
// UNet runs alone; SampleFrom and Img2ImgPipeline give
// StableDiffusionControlNetImg2ImgPipeline.
//
// LoRA (LoadLoRA) reads low-rank adapters for linear layers and LoCon for
// convolutions from safetensors in diffusers/PEFT naming (lora_A/lora_B,
// alpha from the lora_adapter_metadata header) or kohya's
// (lora_unet_..._lora_down/lora_up/alpha). Apply adds them to a model's
// forward at a scale that can change (SetScale) or be removed; Merge adds
// them into the weights and Unmerge takes them out again. Layers the model
// lacks, or shapes that do not fit, fail naming the layer, so a LoRA for
// another model does not half-apply.
//
// Int8 weights (WithInt8Weights at load, or QuantizeInt8 on a model in
// hand) hold every linear and conv weight as int8, packed four to a u32
// word, with one f32 scale per output channel (max|w|/127, symmetric),
// about a quarter of the f32 bytes on every backend (WeightBytes reports
// them; on WebGPU the device's buffers shrink 3.45x on the tiny UNet,
// TestInt8WeightsTakeAByteOnWebGPU); each layer dequantises its weight
// when it runs and drops the copy, so what stays resident is int8 while
// the activations keep the model's dtype (f32 or f16). The same pipelines
// from the same seeds give images 52 to 55 dB PSNR from the f32 weights'
// on the test models (int8_test.go). LoRA.Apply works on int8 weights;
// Merge and Unmerge, which would requantise them, are refused, as are a
// streamed UNet and a UNet2DModel in training mode. The packing is what
// makes int8 pay on WebGPU, which keeps an i8 tensor's elements in 32-bit
// lanes: core's dequantize_int8x4 reads the packed words directly.
//
// The reference vectors in testdata come from diffusers itself:
// every scheduler's full loop over a spread of configurations
// (testdata/make_scheduler_refs.py), replayed step by step by the tests,
// and tiny seeded UNets saved with save_pretrained beside their outputs
// and the DDPM and DDIM pipelines' images with the noise they drew
// (testdata/make_unet_refs.py), tiny UNet2DConditionModels with their
// outputs and StableDiffusionPipeline's guided latents for DDIM, Euler and
// Euler ancestral (testdata/make_cond_refs.py), tiny seeded
// AutoencoderKLs with their encodings, posterior samples (with the noise
// drawn) and plain and tiled decodes (testdata/make_vae_refs.py), tiny
// seeded DiTs with their outputs and DiTPipeline's images with the noise
// it drew (testdata/make_dit_refs.py), tiny seeded ControlNets (stored in
// float16) with their residuals and the UNet's output with them, and the
// ControlNet txt2img and img2img pipelines' latents and images with their
// control windows (testdata/make_controlnet_refs.py),
// StableDiffusionImg2ImgPipeline over seven scheduler runs and
// pixel-space img2img (testdata/make_img2img_refs.py), a tiny seeded
// Stable Diffusion folder (testdata/sd_tiny, stored in float16, with a
// CLIP text encoder and a BPE tokenizer in both layouts) with the
// tokenizer's ids, the text encoder's states, the noise drawn and the
// latents and images StableDiffusionPipeline gives for two runs (DDIM with
// two images per prompt; Euler ancestral with negative prompts and a
// prompt past 77 tokens) (testdata/make_sd_refs.py), and a seeded PEFT
// LoRA/LoCon with its kohya rewrite and the outputs diffusers gives with
// them (testdata/make_lora_refs.py).
//
// bench_test.go's BenchmarkUNet2DConditionForward and
// BenchmarkSchedulerLoop time a small SD-like UNet (testdata/bench_unet.json)
// and 20-step scheduler loops on the CPU and WebGPU
// (BenchmarkUNet2DConditionInt8Forward the UNet with int8 weights);
// testdata/bench_diffusers.py runs them beside the same work in diffusers,
// in one run on the same threads.
package diffuse
