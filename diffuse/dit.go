package diffuse

import (
	"fmt"
	"math"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// DiTTransformer2DModel is diffusers' DiTTransformer2DModel, the
// class-conditional diffusion transformer of DiT: the latent is cut into
// patch_size² patches by a strided conv, a fixed 2-D sin-cos positional
// table is added, and transformer blocks with adaLN-Zero (each block's
// timestep and class embedding modulate its norms and gate its residuals)
// are followed by a modulated final norm and a linear layer that
// unpatchifies back to (B, out_channels, H, W). Its StateDict holds
// diffusers' parameter names.
type DiTTransformer2DModel struct {
	nn.Base
	Config DiTConfig

	dev       core.Device
	dtype     core.DType
	patch     *convLayer // pos_embed.proj
	blocks    []*ditBlock
	projOut1  *linearLayer
	projOut2  *linearLayer
	timeFreqs []float32

	mu  sync.Mutex
	pos map[[2]int]*core.Tensor // positional tables by patch grid
}

// ditTimeChannels is the width of the sinusoidal timestep projection
// CombinedTimestepLabelEmbeddings fixes (Timesteps(256, flip_sin_to_cos,
// downscale_freq_shift=1)).
const ditTimeChannels = 256

// LoadDiT loads a DiTTransformer2DModel saved by diffusers'
// save_pretrained (a DiT pipeline's transformer/ folder): dir holds
// config.json and diffusion_pytorch_model.safetensors, with the same
// strictness as LoadUNet2D.
func LoadDiT(dir string, opts ...LoadOption) (*DiTTransformer2DModel, error) {
	m, o, err := loadWhole("diffuse: LoadDiT", dir, opts, ParseDiTConfig, buildDiT)
	if err != nil {
		return nil, err
	}
	m.dev, m.dtype = o.dev, o.dtype
	return m, nil
}

func buildDiT(cfg DiTConfig, w *weights) *DiTTransformer2DModel {
	d, p := cfg.Width(), cfg.PatchSize
	m := &DiTTransformer2DModel{Config: cfg, pos: map[[2]int]*core.Tensor{}}
	m.patch = w.conv("pos_embed.proj", cfg.InChannels, d, p, p, 0)
	posEmbed := &list{}
	w.register(&posEmbed.Base, nil, nn.NamedModule{Name: "proj", Module: m.patch})
	blocks := make([]nn.Module, cfg.NumLayers)
	for i := range blocks {
		b := w.ditBlock(fmt.Sprintf("transformer_blocks.%d", i), cfg)
		m.blocks, blocks[i] = append(m.blocks, b), b
	}
	m.projOut1 = w.linear("proj_out_1", d, 2*d)
	m.projOut2 = w.linear("proj_out_2", d, p*p*cfg.OutChannels)
	w.register(&m.Base, nil, nn.NamedModule{Name: "pos_embed", Module: posEmbed},
		nn.NamedModule{Name: "transformer_blocks", Module: w.list(blocks...)},
		nn.NamedModule{Name: "proj_out_1", Module: m.projOut1}, nn.NamedModule{Name: "proj_out_2", Module: m.projOut2})
	m.timeFreqs = timestepFreqs(ditTimeChannels, 1)
	return m
}

// ditBlock is BasicTransformerBlock with norm_type ada_norm_zero and no
// cross-attention: norm1 is AdaLayerNormZero, whose own
// CombinedTimestepLabelEmbeddings (timestep MLP plus class table) feeds a
// linear layer giving shift, scale and gate for the attention and for the
// feed-forward; norm3 is a plain layer norm the feed-forward's shift and
// scale modulate.
type ditBlock struct {
	nn.Base
	time1, time2 *linearLayer // norm1.emb.timestep_embedder
	labels       *nn.Embedding
	ada          *linearLayer // norm1.linear
	attn         *crossAttention
	norm3        *nn.LayerNorm
	ffProj       *linearLayer // ff.net.0.proj
	ffOut        *linearLayer // ff.net.2
	gelu         string       // the GELU's approximate attribute
	eps          float64
}

func (w *weights) ditBlock(name string, cfg DiTConfig) *ditBlock {
	d := cfg.Width()
	b := &ditBlock{eps: cfg.NormEps, gelu: "none"}
	if cfg.ActivationFn == "gelu-approximate" {
		b.gelu = "tanh"
	}
	b.time1 = w.linear(name+".norm1.emb.timestep_embedder.linear_1", ditTimeChannels, d)
	b.time2 = w.linear(name+".norm1.emb.timestep_embedder.linear_2", d, d)
	// LabelEmbedding keeps a row for the null class when its dropout
	// probability (0.1, fixed by CombinedTimestepLabelEmbeddings) is > 0.
	rows := cfg.NumEmbedsAdaNorm + 1
	b.labels = &nn.Embedding{Num: rows, Dim: d, Weight: w.param(name+".norm1.emb.class_embedder.embedding_table.weight", normalInit, rows, d)}
	w.register(&b.labels.Base, []nn.NamedParameter{{Name: "weight", Param: b.labels.Weight}})
	b.ada = w.linear(name+".norm1.linear", d, 6*d)
	b.attn = w.crossAttention(name+".attn1", d, d, cfg.NumAttentionHeads, cfg.AttentionHeadDim, cfg.UpcastAttention, cfg.AttentionBias)
	b.norm3 = &nn.LayerNorm{NormalizedShape: core.Shape{d}, Eps: cfg.NormEps}
	if cfg.NormElementwiseAffine {
		b.norm3 = w.layerNorm(name+".norm3", d, cfg.NormEps)
	}
	b.ffProj = w.linear(name+".ff.net.0.proj", d, 4*d)
	b.ffOut = w.linear(name+".ff.net.2", 4*d, d)

	timeEmb, classEmb, emb, norm1 := &list{}, &list{}, &list{}, &list{}
	w.register(&timeEmb.Base, nil, nn.NamedModule{Name: "linear_1", Module: b.time1}, nn.NamedModule{Name: "linear_2", Module: b.time2})
	w.register(&classEmb.Base, nil, nn.NamedModule{Name: "embedding_table", Module: b.labels})
	w.register(&emb.Base, nil, nn.NamedModule{Name: "timestep_embedder", Module: timeEmb}, nn.NamedModule{Name: "class_embedder", Module: classEmb})
	w.register(&norm1.Base, nil, nn.NamedModule{Name: "emb", Module: emb}, nn.NamedModule{Name: "linear", Module: b.ada})
	gelu, net := &list{}, &list{}
	w.register(&gelu.Base, nil, nn.NamedModule{Name: "proj", Module: b.ffProj})
	w.register(&net.Base, nil, nn.NamedModule{Name: "0", Module: gelu}, nn.NamedModule{Name: "2", Module: b.ffOut})
	ff := &list{}
	w.register(&ff.Base, nil, nn.NamedModule{Name: "net", Module: net})
	children := []nn.NamedModule{{Name: "norm1", Module: norm1}, {Name: "attn1", Module: b.attn}}
	if cfg.NormElementwiseAffine {
		children = append(children, nn.NamedModule{Name: "norm3", Module: b.norm3})
	}
	w.register(&b.Base, nil, append(children, nn.NamedModule{Name: "ff", Module: ff})...)
	return b
}

// conditioning is CombinedTimestepLabelEmbeddings: the timestep MLP of the
// sinusoidal projection plus the class rows, (B, width).
func (b *ditBlock) conditioning(tproj, labels *core.Tensor) *core.Tensor {
	return b.time2.Forward(b.time1.Forward(tproj).SiLU()).Add(b.labels.Forward(labels))
}

func (b *ditBlock) forward(h, tproj, labels *core.Tensor) *core.Tensor {
	mod := b.ada.Forward(b.conditioning(tproj, labels).SiLU())
	chunk := chunker(mod, 6)
	shiftMSA, scaleMSA, gateMSA := chunk(0), chunk(1), chunk(2)
	shiftMLP, scaleMLP, gateMLP := chunk(3), chunk(4), chunk(5)
	n := layerNorm(h, 1e-6)
	n = n.Mul(scalarLike(n, 1).Add(scaleMSA)).Add(shiftMSA)
	h = gateMSA.Mul(b.attn.forward(n, nil)).Add(h)
	n = b.norm3.Forward(h)
	n = n.Mul(scalarLike(n, 1).Add(scaleMLP)).Add(shiftMLP)
	ff := b.ffOut.Forward(b.ffProj.Forward(n).GELU(core.Attrs{"approximate": b.gelu}))
	return gateMLP.Mul(ff).Add(h)
}

// chunker splits x (B, k·D) into k (B, 1, D) pieces, torch's chunk(k, 1)
// with the [:, None] the blocks broadcast over the sequence with.
func chunker(x *core.Tensor, k int) func(i int) *core.Tensor {
	b, d := dimOf(x, 0), dimOf(x, 1)/k
	return func(i int) *core.Tensor {
		return x.Slice(core.Attrs{"axis": 1, "start": i * d, "stop": (i + 1) * d}).Reshape(core.Shape{b, 1, d})
	}
}

// layerNorm is a layer norm over the last axis without weights.
func layerNorm(x *core.Tensor, eps float64) *core.Tensor {
	ln := nn.LayerNorm{NormalizedShape: core.Shape{dimOf(x, x.Rank()-1)}, Eps: eps}
	return ln.Forward(x)
}

// Device is where the weights live; Forward takes samples there.
func (m *DiTTransformer2DModel) Device() core.Device { return m.dev }

// DType is the weights' dtype; Forward takes samples of it.
func (m *DiTTransformer2DModel) DType() core.DType { return m.dtype }

// Forward predicts the output for sample (B, in_channels, H, W), square
// with H a multiple of patch_size, at timesteps (one for the batch, or one
// per element) for classLabels (one per element, each in [0,
// num_embeds_ada_norm]; num_embeds_ada_norm itself is the null class of
// classifier-free guidance). With LearnedSigma the first in_channels
// output channels are the noise prediction and the rest the variance.
// Forward records nothing for autograd.
func (m *DiTTransformer2DModel) Forward(sample *core.Tensor, timesteps []float64, classLabels []int) (*core.Tensor, error) {
	const op = "diffuse: DiTTransformer2DModel.Forward"
	if err := sample.Err(); err != nil {
		return nil, fmt.Errorf("%s: sample: %w", op, err)
	}
	c := &m.Config
	s := sample.Shape()
	if len(s) != 4 || s[1] != c.InChannels {
		return nil, fmt.Errorf("%s: sample has shape %v, want (batch, %d, height, width) (in_channels %d)", op, s, c.InChannels, c.InChannels)
	}
	if s[2] != s[3] || s[2] < c.PatchSize || s[2]%c.PatchSize != 0 {
		// diffusers unpatchifies a square grid of patches (side sqrt(N)).
		return nil, fmt.Errorf("%s: sample is %d×%d; it must be square with a side that is a positive multiple of patch_size %d",
			op, s[2], s[3], c.PatchSize)
	}
	if sample.DType() != m.dtype || sample.Device() != m.dev {
		return nil, fmt.Errorf("%s: sample is %s on %s, the model %s on %s", op, sample.DType(), sample.Device(), m.dtype, m.dev)
	}
	b := s[0]
	ts := timesteps
	switch len(ts) {
	case b:
	case 1:
		ts = make([]float64, b)
		for i := range ts {
			ts[i] = timesteps[0]
		}
	default:
		return nil, fmt.Errorf("%s: %d timesteps for a batch of %d (give one, or one per element)", op, len(timesteps), b)
	}
	if len(classLabels) != b {
		return nil, fmt.Errorf("%s: %d class labels for a batch of %d", op, len(classLabels), b)
	}
	labels := make([]float64, b)
	for i, l := range classLabels {
		if l < 0 || l > c.NumEmbedsAdaNorm {
			return nil, fmt.Errorf("%s: class label %d (element %d) is outside [0, %d] (%d classes and the null class %d)",
				op, l, i, c.NumEmbedsAdaNorm, c.NumEmbedsAdaNorm, c.NumEmbedsAdaNorm)
		}
		labels[i] = float64(l)
	}
	defer core.NoGradScope()()
	out := m.forward(sample, ts, core.FromFloat64s(core.I64, core.Shape{b}, labels, m.dev))
	if err := out.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

func (m *DiTTransformer2DModel) forward(x *core.Tensor, ts []float64, labels *core.Tensor) *core.Tensor {
	c := &m.Config
	b, p, d := dimOf(x, 0), c.PatchSize, c.Width()
	g := dimOf(x, 2) / p // patches per side
	// PatchEmbed: (B, D, g, g) -> (B, g·g, D), plus the positional table.
	h := m.patch.Forward(x).Reshape(core.Shape{b, d, g * g}).Transpose()
	h = h.Add(m.posTable(g))
	tproj := timestepEmbedding(m.timeFreqs, ditTimeChannels, true, ts, m.dtype, m.dev)
	for _, blk := range m.blocks {
		h = blk.forward(h, tproj, labels)
	}
	// The final layer takes the first block's conditioning, as diffusers does.
	mod := m.projOut1.Forward(m.blocks[0].conditioning(tproj, labels).SiLU())
	chunk := chunker(mod, 2)
	shift, scale := chunk(0), chunk(1)
	n := layerNorm(h, 1e-6)
	h = m.projOut2.Forward(n.Mul(scalarLike(n, 1).Add(scale)).Add(shift))
	// Unpatchify: (B, g, g, p, p, C) "nhwpqc->nchpwq" (B, C, g·p, g·p).
	h = h.Reshape(core.Shape{b, g, g, p, p, c.OutChannels}).Permute(core.Attrs{"dims": []int{0, 5, 1, 3, 2, 4}})
	return h.Reshape(core.Shape{b, c.OutChannels, g * p, g * p})
}

// posTable is PatchEmbed's (1, g·g, width) table for a g×g patch grid,
// cached per grid size.
func (m *DiTTransformer2DModel) posTable(g int) *core.Tensor {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]int{g, g}
	if t, ok := m.pos[key]; ok {
		return t
	}
	t := sinCosTable2D(m.Config.Width(), g, g, m.Config.SampleSize/m.Config.PatchSize).Cast(m.dtype).To(m.dev)
	m.pos[key] = t
	return t
}

// sinCosTable2D is get_2d_sincos_pos_embed(width, (gh, gw), base_size):
// each position's coordinates are scaled by base/grid in float32, then the
// first half of the row is the 1-D sin-cos embedding of the column
// coordinate and the second of the row coordinate (meshgrid's "xy" order),
// with frequencies 1/10000^(2i/(width/2)) in float64, rounded to float32 at
// the end as diffusers' .float() does. It is a host table: rows reach
// hundreds of radians, where GPU sin and cos lose digits.
func sinCosTable2D(width, gh, gw, base int) *core.Tensor {
	quarter := width / 4
	omega := make([]float64, quarter)
	for i := range omega {
		omega[i] = 1 / math.Pow(10000, float64(i)/float64(quarter))
	}
	coord := func(i, n int) float64 {
		return float64(float32(i) / float32(float64(n)/float64(base)))
	}
	vals := make([]float64, gh*gw*width)
	oneD := func(dst []float64, pos float64) {
		for i, o := range omega {
			dst[i], dst[quarter+i] = math.Sin(pos*o), math.Cos(pos*o)
		}
	}
	for r := range gh {
		for c := range gw {
			row := vals[(r*gw+c)*width : (r*gw+c+1)*width]
			oneD(row[:2*quarter], coord(c, gw))
			oneD(row[2*quarter:], coord(r, gh))
		}
	}
	return core.FromFloat64s(core.F32, core.Shape{1, gh * gw, width}, vals)
}
