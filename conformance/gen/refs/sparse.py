"""Reference results for the segment reductions and CSR products
(core/ops_sparse.go).
"""

import torch



def _segment(reduce):
    def ref(ins, attrs):
        data, ids = ins[0], ins[1].long()
        shape = (int(attrs["num_segments"]),) + tuple(data.shape[1:])
        out = torch.zeros(shape, dtype=data.dtype)
        index = ids.reshape((-1,) + (1,) * (data.dim() - 1)).expand_as(data)
        return out.scatter_reduce(0, index, data, reduce=reduce, include_self=False)

    return ref


def _segment_gather(ins, attrs):
    return ins[0][ins[1].long()]


def _segment_max_grad(ins, attrs):
    data, ids, out, grad = ins
    data = data.clone().requires_grad_(True)
    maxes = _segment("amax")([data, ids], {"num_segments": out.shape[0]})
    (g,) = torch.autograd.grad(maxes, data, grad)
    return g


def _csr_dense(indptr, indices, values, cols):
    """The CSR matrix as a dense tensor; repeated entries add up."""
    rows = indptr.numel() - 1
    row_of = torch.repeat_interleave(torch.arange(rows), torch.diff(indptr.long()))
    dense = torch.zeros(rows, cols, dtype=values.dtype)
    return dense.index_put_((row_of, indices.long()), values, accumulate=True)


def _spmm(ins, attrs):
    indptr, indices, values, dense = ins
    return _csr_dense(indptr, indices, values, dense.shape[0]) @ dense


def _spmm_transposed(ins, attrs):
    indptr, indices, values, dense = ins
    return _csr_dense(indptr, indices, values, int(attrs["cols"])).T @ dense


def _sddmm(ins, attrs):
    indptr, indices, a, b = ins
    rows = indptr.numel() - 1
    row_of = torch.repeat_interleave(torch.arange(rows), torch.diff(indptr.long()))
    return (a @ b)[row_of, indices.long()]


REFS = {
    "segment_sum": _segment("sum"),
    "segment_mean": _segment("mean"),
    "segment_max": _segment("amax"),
    "_segment_gather": _segment_gather,
    "_segment_max_grad": _segment_max_grad,
    "spmm": _spmm,
    "_spmm_transposed": _spmm_transposed,
    "sddmm": _sddmm,
}
