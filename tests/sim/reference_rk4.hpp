#pragma once
// Classic RK4 for the reference solutions of the model tests, in double: one step of length
// s from `from` into `to` (which may be `from`), for N variables whose derivative
// derivative(x, f) gives.
namespace dnnc::test {

template <int N, class Derivative>
void rk4_step(const double* from, double s, double* to, const Derivative& derivative) {
    double k1[N], k2[N], k3[N], k4[N], t[N];
    derivative(from, k1);
    for (int j = 0; j < N; ++j) t[j] = from[j] + s / 2 * k1[j];
    derivative(t, k2);
    for (int j = 0; j < N; ++j) t[j] = from[j] + s / 2 * k2[j];
    derivative(t, k3);
    for (int j = 0; j < N; ++j) t[j] = from[j] + s * k3[j];
    derivative(t, k4);
    for (int j = 0; j < N; ++j) to[j] = from[j] + s / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
}

}  // namespace dnnc::test
