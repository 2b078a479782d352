"""The PyTorch peers' one way to turn attnviz's weights JSON into nn.MultiheadAttention."""
import torch


def build_mha(weights, d_model):
    """nn.MultiheadAttention (batch_first) holding W_Q/W_K/W_V and b_Q/b_K/b_V of an attnviz weights
    object. attnviz uses Q = X·W_Q (row vectors, [in, out]); torch's in_proj_weight is [3·out, in]
    with Q = X·Wᵀ, so each matrix is transposed here, explicitly."""
    mha = torch.nn.MultiheadAttention(d_model, weights["num_heads"], bias=True, batch_first=True)
    with torch.no_grad():
        w = [torch.tensor(weights[k], dtype=torch.float32).T for k in ("W_Q", "W_K", "W_V")]
        b = [torch.tensor(weights[k], dtype=torch.float32) for k in ("b_Q", "b_K", "b_V")]
        mha.in_proj_weight.copy_(torch.cat(w, 0))
        mha.in_proj_bias.copy_(torch.cat(b, 0))
    return mha
