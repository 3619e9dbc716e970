"""SmolLM2-135M (Llama architecture) from its GGUF file: tokenizer and a
float32 numpy forward pass that records K (after RoPE), V and Q per layer.

The GGUF stores each head's Q and K rows permuted for llama.cpp's
interleaved RoPE: GGUF row 2j+e of a head is Hugging Face row j + 32e.
This module rotates the pairs (2j, 2j+1) as llama.cpp does, then records
Q and K in the Hugging Face channel order (rotate-half pairs j and j+32),
the layout the authors' Python references see. See docs/spec.md §12.
"""
import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize
from tokenizers import Tokenizer, models, pre_tokenizers, decoders


class Model:
    def __init__(self, path):
        r = GGUFReader(path)
        f = r.fields

        def val(k):
            return f[k].contents()

        self.n_layer = int(val("llama.block_count"))
        self.d = int(val("llama.embedding_length"))
        self.n_head = int(val("llama.attention.head_count"))
        self.n_kv = int(val("llama.attention.head_count_kv"))
        self.hd = self.d // self.n_head
        self.theta = float(val("llama.rope.freq_base"))
        self.eps = float(val("llama.attention.layer_norm_rms_epsilon"))
        self.bos = int(val("tokenizer.ggml.bos_token_id"))
        self.eos = int(val("tokenizer.ggml.eos_token_id"))
        assert str(val("tokenizer.ggml.model")) == "gpt2", "a byte-level BPE vocabulary"
        assert str(val("tokenizer.ggml.pre")) == "smollm", "the smollm pre-tokenizer"
        w = {}
        for t in r.tensors:
            a = dequantize(t.data, t.tensor_type).astype(np.float32)
            w[t.name] = a.reshape([int(x) for x in reversed(t.shape)])
        self.w = w
        self.emb = w["token_embd.weight"]  # (vocab, d); the output layer is tied to it
        self.out_norm = w["output_norm.weight"]
        vocab = [str(x) for x in val("tokenizer.ggml.tokens")]
        merges = [tuple(str(m).split(" ", 1)) for m in val("tokenizer.ggml.merges")]
        self.tok = _tokenizer(vocab, merges)
        # RoPE: rotation angle of GGUF pair j of a head at position p is p * inv[j]
        self.inv = self.theta ** (-np.arange(0, self.hd, 2, dtype=np.float64) / self.hd)
        # GGUF head row -> HF head row: GGUF 2j+e holds HF j + hd/2 * e
        g = np.arange(self.hd)
        self.to_hf = np.empty(self.hd, dtype=np.int64)
        self.to_hf[(g % 2) * (self.hd // 2) + g // 2] = g

    def encode(self, text):
        return self.tok.encode(text).ids

    def decode(self, ids):
        return self.tok.decode(ids)

    def _rope(self, x, pos):
        # x: (tokens, heads, hd) in GGUF order; rotate pairs (2j, 2j+1)
        ang = np.outer(pos, self.inv)  # (tokens, hd/2)
        c = np.cos(ang)[:, None, :].astype(np.float32)
        s = np.sin(ang)[:, None, :].astype(np.float32)
        a, b = x[..., 0::2], x[..., 1::2]
        y = np.empty_like(x)
        y[..., 0::2] = a * c - b * s
        y[..., 1::2] = a * s + b * c
        return y

    def _norm(self, x, g):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * g

    def forward(self, ids, cache=None, record=False):
        """Logits (tokens, vocab) for `ids` following `cache` (a list per
        layer of (K, V) in GGUF order, float32, (past, n_kv, hd)), the new
        cache, and with `record` the per-layer (K, V, Q) in HF order."""
        ids = np.asarray(ids)
        past = 0 if cache is None else cache[0][0].shape[0]
        pos = np.arange(past, past + len(ids), dtype=np.float64)
        x = self.emb[ids]
        new_cache, rec = [], []
        T = len(ids)
        grp = self.n_head // self.n_kv
        for l in range(self.n_layer):
            p = f"blk.{l}."
            h = self._norm(x, self.w[p + "attn_norm.weight"])
            q = (h @ self.w[p + "attn_q.weight"].T).reshape(T, self.n_head, self.hd)
            k = (h @ self.w[p + "attn_k.weight"].T).reshape(T, self.n_kv, self.hd)
            v = (h @ self.w[p + "attn_v.weight"].T).reshape(T, self.n_kv, self.hd)
            q = self._rope(q, pos)
            k = self._rope(k, pos)
            if cache is not None:
                k = np.concatenate([cache[l][0], k])
                v = np.concatenate([cache[l][1], v])
            new_cache.append((k, v))
            if record:
                rec.append((k[past:][..., self.to_hf].reshape(T, -1),
                            v[past:].reshape(T, -1),
                            q[..., self.to_hf].reshape(T, -1)))
            S = k.shape[0]
            o = np.empty((T, self.n_head, self.hd), dtype=np.float32)
            mask = np.arange(S)[None, :] > (past + np.arange(T))[:, None]
            for hh in range(self.n_head):
                kv = hh // grp
                s = (q[:, hh] @ k[:, kv].T) / np.sqrt(self.hd)
                s[mask] = -np.inf
                s = np.exp(s - s.max(axis=1, keepdims=True))
                s /= s.sum(axis=1, keepdims=True)
                o[:, hh] = s @ v[:, kv]
            x = x + o.reshape(T, self.d) @ self.w[p + "attn_output.weight"].T
            h = self._norm(x, self.w[p + "ffn_norm.weight"])
            g = h @ self.w[p + "ffn_gate.weight"].T
            u = h @ self.w[p + "ffn_up.weight"].T
            x = x + (g / (1 + np.exp(-g)) * u) @ self.w[p + "ffn_down.weight"].T
        logits = self._norm(x, self.out_norm) @ self.emb.T
        return logits, new_cache, rec

    def cache_from_hf(self, ks, vs):
        """A forward cache from recorded K (HF order) and V, each a list per
        layer of (tokens, n_kv * hd) arrays."""
        back = np.argsort(self.to_hf)
        out = []
        for k, v in zip(ks, vs):
            k = np.asarray(k, dtype=np.float32).reshape(-1, self.n_kv, self.hd)[..., back]
            v = np.asarray(v, dtype=np.float32).reshape(-1, self.n_kv, self.hd)
            out.append((k, v))
        return out


def _tokenizer(vocab, merges):
    bpe = models.BPE(vocab={t: i for i, t in enumerate(vocab)}, merges=merges,
                     fuse_unk=False, byte_fallback=False)
    tok = Tokenizer(bpe)
    # llama.cpp's "smollm" pre-tokenizer: every digit apart, then GPT-2's rule
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    return tok
