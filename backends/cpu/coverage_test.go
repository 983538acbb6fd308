package cpu_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The ops the core runtime promises (issue "Core runtime"); the registry may
// hold more, never fewer.
var promisedOps = strings.Fields(`
zeros ones full arange linspace eye rand randn randint bernoulli zeros_like ones_like full_like rand_like randn_like
neg abs sign exp expm1 log log1p sqrt rsqrt square reciprocal sin cos tan tanh sigmoid relu leaky_relu elu gelu silu
softplus erf floor ceil round clamp logical_not isnan isinf nan_to_num
add sub mul div floor_divide remainder pow maximum minimum atan2 eq ne lt le gt ge logical_and logical_or logical_xor where
sum mean prod max min argmax argmin var std logsumexp norm cumsum cumprod any all
matmul transpose permute outer einsum
reshape squeeze unsqueeze expand flatten concat stack split chunk slice pad flip roll tile repeat_interleave
gather scatter scatter_add scatter_reduce index_select index_add masked_fill masked_select take_along_axis one_hot
embedding nonzero topk sort argsort unique
softmax log_softmax layer_norm rms_norm group_norm batch_norm dropout conv1d conv2d conv_transpose2d max_pool2d
avg_pool2d adaptive_avg_pool2d interpolate scaled_dot_product_attention cross_entropy nll_loss mse_loss l1_loss
smooth_l1_loss binary_cross_entropy_with_logits
segment_sum segment_mean segment_max spmm sddmm
fft ifft rfft irfft
cast quantize dequantize`)

func TestRegistryHasEveryPromisedOp(t *testing.T) {
	for _, name := range promisedOps {
		def, ok := core.LookupOp(name)
		if !assert.True(t, ok, "op %s is missing from the registry", name) {
			continue
		}
		assert.False(t, def.Internal, "%s must be public", name)
	}
}

// Every op, public or internal, has a doc line, sample cases (so it has
// reference vectors and gradient checks) and a CPU kernel, a view rule or
// a composition of other ops.
func TestEveryOpIsDocumentedTestedAndImplemented(t *testing.T) {
	for _, def := range core.Ops() {
		assert.NotEmpty(t, def.Doc, "%s has no doc line", def.Name)
		assert.NotEmpty(t, def.Category, "%s has no category", def.Name)
		assert.NotEmpty(t, def.Samples, "%s has no sample cases", def.Name)
		assert.True(t, def.View != nil || def.Compose != nil || core.LookupKernel("cpu", def.Name) != nil, "%s has no CPU kernel", def.Name)
	}
}

// The declared outputs are what SDK generators read to decide between a
// tensor and a list: every sample must return exactly that many, except ops
// whose last output name ends in "..." (split, chunk: as many as asked).
func TestOutputCountsMatchDeclarations(t *testing.T) {
	for _, def := range core.Ops() {
		if def.Internal {
			continue
		}
		want := max(1, len(def.Outputs))
		variable := len(def.Outputs) > 0 && strings.HasSuffix(def.Outputs[len(def.Outputs)-1], "...")
		for _, s := range def.Samples {
			outs, err := core.CallDef(def, s.MakeInputs(def.Name, core.CPU), s.ResolvedAttrs(def))
			if !assert.NoError(t, err, "%s/%s", def.Name, s.Name) {
				continue
			}
			if variable {
				assert.GreaterOrEqual(t, len(outs), len(def.Outputs)-1, "%s/%s", def.Name, s.Name)
			} else {
				assert.Len(t, outs, want, "%s/%s returns %d outputs, declares %v", def.Name, s.Name, len(outs), def.Outputs)
			}
		}
	}
}
