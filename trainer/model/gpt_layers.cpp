#include "model/gpt_layers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ddp::train::gpt {

namespace {

constexpr float kLayerNormEps = 1e-5f;
const float kGeluScale = std::sqrt(2.0f / float(M_PI));
constexpr float kGeluCube = 0.044715f;

std::size_t at(int row, int width) { return std::size_t(row) * std::size_t(width); }

// One query's attention: its scores over keys 0..t, softmaxed into `p`, and
// the weighted sum of the values into `out`.
void attend(float* out, float* p, const float* qkv, int T, int C, int t, int h, int hs) {
  const float* q = qkv + at(t, 3 * C) + h * hs;
  const float scale = 1.0f / std::sqrt(float(hs));
  float top = -std::numeric_limits<float>::infinity();
  for (int u = 0; u <= t; ++u) {
    const float* k = qkv + at(u, 3 * C) + C + h * hs;
    float s = 0;
    for (int i = 0; i < hs; ++i) s += q[i] * k[i];
    p[u] = s * scale;
    top = std::max(top, p[u]);
  }
  float sum = 0;
  for (int u = 0; u <= t; ++u) sum += (p[u] = std::exp(p[u] - top));
  for (int u = 0; u <= t; ++u) p[u] /= sum;
  std::fill(p + t + 1, p + T, 0.0f);
  std::fill(out, out + hs, 0.0f);
  for (int u = 0; u <= t; ++u) {
    const float* v = qkv + at(u, 3 * C) + 2 * C + h * hs;
    for (int i = 0; i < hs; ++i) out[i] += p[u] * v[i];
  }
}

// Its backward: through the weighted sum (dp, dv), the softmax (dscores) and
// the scores (dq, dk).
void attend_backward(float* dqkv, const float* dout, const float* qkv, const float* p, float* dscores, int C, int t,
                     int h, int hs) {
  float mean = 0;  // sum over u of p[u] * dp[u]
  for (int u = 0; u <= t; ++u) {
    const float* v = qkv + at(u, 3 * C) + 2 * C + h * hs;
    float* dv = dqkv + at(u, 3 * C) + 2 * C + h * hs;
    float dp = 0;
    for (int i = 0; i < hs; ++i) {
      dp += dout[i] * v[i];
      dv[i] += p[u] * dout[i];
    }
    dscores[u] = dp;
    mean += p[u] * dp;
  }
  const float scale = 1.0f / std::sqrt(float(hs));
  const float* q = qkv + at(t, 3 * C) + h * hs;
  float* dq = dqkv + at(t, 3 * C) + h * hs;
  for (int u = 0; u <= t; ++u) {
    const float ds = p[u] * (dscores[u] - mean) * scale;
    const float* k = qkv + at(u, 3 * C) + C + h * hs;
    float* dk = dqkv + at(u, 3 * C) + C + h * hs;
    for (int i = 0; i < hs; ++i) {
      dq[i] += ds * k[i];
      dk[i] += ds * q[i];
    }
  }
}

}  // namespace

void embed_forward(float* out, const std::uint16_t* tokens, const float* wte, const float* wpe, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* e = wte + at(tokens[b * T + t], C);
      const float* p = wpe + at(t, C);
      float* o = out + at(b * T + t, C);
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    }
}

void embed_backward(float* dwte, float* dwpe, const float* dout, const std::uint16_t* tokens, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* d = dout + at(b * T + t, C);
      float* de = dwte + at(tokens[b * T + t], C);
      float* dp = dwpe + at(t, C);
      for (int c = 0; c < C; ++c) {
        de[c] += d[c];
        dp[c] += d[c];
      }
    }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C) {
  for (int n = 0; n < N; ++n) {
    const float* xr = x + at(n, C);
    float m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += xr[c];
    m /= float(C);
    for (int c = 0; c < C; ++c) v += (xr[c] - m) * (xr[c] - m);
    const float r = 1.0f / std::sqrt(v / float(C) + kLayerNormEps);
    float* o = out + at(n, C);
    for (int c = 0; c < C; ++c) o[c] = (xr[c] - m) * r * w[c] + b[c];
    mean[n] = m;
    rstd[n] = r;
  }
}

void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* xr = x + at(n, C);
    const float* d = dout + at(n, C);
    float dnorm_mean = 0, dnorm_xhat_mean = 0;  // the means of w*dout and of w*dout*xhat over the row
    for (int c = 0; c < C; ++c) {
      const float xhat = (xr[c] - mean[n]) * rstd[n];
      dnorm_mean += w[c] * d[c];
      dnorm_xhat_mean += w[c] * d[c] * xhat;
      db[c] += d[c];
      dw[c] += d[c] * xhat;
    }
    dnorm_mean /= float(C);
    dnorm_xhat_mean /= float(C);
    float* dxr = dx + at(n, C);
    for (int c = 0; c < C; ++c) {
      const float xhat = (xr[c] - mean[n]) * rstd[n];
      dxr[c] += rstd[n] * (w[c] * d[c] - dnorm_mean - xhat * dnorm_xhat_mean);
    }
  }
}

void attention_forward(float* out, float* probs, const float* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t)
        attend(out + at(b * T + t, C) + h * hs, probs + (at(b * NH + h, T) + t) * std::size_t(T),
               qkv + at(b * T, 3 * C), T, C, t, h, hs);
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* probs, float* dscores, int B,
                        int T, int C, int NH) {
  const int hs = C / NH;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T; ++t)
        attend_backward(dqkv + at(b * T, 3 * C), dout + at(b * T + t, C) + h * hs, qkv + at(b * T, 3 * C),
                        probs + (at(b * NH + h, T) + t) * std::size_t(T), dscores, C, t, h, hs);
}

void gelu_forward(float* out, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float u = kGeluScale * (x[i] + kGeluCube * x[i] * x[i] * x[i]);
    out[i] = 0.5f * x[i] * (1.0f + std::tanh(u));
  }
}

void gelu_backward(float* dx, const float* x, const float* dout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float u = kGeluScale * (x[i] + kGeluCube * x[i] * x[i] * x[i]);
    const float th = std::tanh(u);
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCube * x[i] * x[i]);
    dx[i] += dout[i] * (0.5f * (1.0f + th) + 0.5f * x[i] * (1.0f - th * th) * du);
  }
}

float cross_entropy_padded(const float* logits, const std::uint16_t* targets, float* dlogits, int N, int V, int Vp) {
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    const float* l = logits + at(n, Vp);
    float* d = dlogits + at(n, Vp);
    const float top = *std::max_element(l, l + V);
    float sum = 0;
    for (int v = 0; v < V; ++v) sum += (d[v] = std::exp(l[v] - top));
    for (int v = 0; v < V; ++v) d[v] /= sum * float(N);
    std::fill(d + V, d + Vp, 0.0f);
    loss -= double(l[targets[n]] - top - std::log(sum));
    d[targets[n]] -= 1.0f / float(N);
  }
  return float(loss / N);
}

}  // namespace ddp::train::gpt
