"""Derive the polynomial coefficients of rust/src/math/f32.rs.

Method: weighted least squares at 4*deg Chebyshev nodes of the interval
(near-minimax), with function values from mpmath at 50 digits; coefficients
rounded to the nearest binary32 one at a time, lowest order first, refitting
the remaining ones after each rounding; the error bound printed is the maximum of
|weight * (f - p)| for the ROUNDED coefficients, evaluated in exact (mpmath)
arithmetic on 20001 points of the interval (--check=N: N + 1 points). Evaluation rounding is not part of
this bound; the exhaustive accuracy tool (tools/accuracy.rs) measures the whole
function.

Developer tool only: `python3 tools/fit_polys.py` (needs numpy and mpmath;
neither is a dependency of the package).
"""
import sys
import numpy as np
import mpmath as mp

mp.mp.dps = 50
# Points of the error check (--check=N; 20000 by default).
N_CHECK = int(next((a for a in sys.argv if a.startswith("--check=")), "--check=20000")[8:])


def f32(v):
    return float(np.float32(float(v)))


def fit(name, f, lo, hi, deg, weight=lambda v: 1, center=0.0, split0=False):
    """Fit p(v) = sum c_i (v - center)^i to f on [lo, hi]. With split0 the
    constant term is kept as an unevaluated sum of two binary32 (hi + lo)."""
    n = 4 * (deg + 1)
    k = np.arange(n)
    nodes = [(lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (2 * i + 1) / (2 * n)) for i in k]
    A = []
    b = []
    for v in nodes:
        w = float(weight(mp.mpf(v)))
        A.append([w * (v - center) ** i for i in range(deg + 1)])
        b.append(w * float(f(mp.mpf(v))))
    A = np.array(A)
    b = np.array(b)
    # Round the coefficients one at a time, lowest order first, refitting the
    # remaining ones after each rounding (so later terms absorb the rounding).
    cs = []
    for i in range(deg + 1):
        c = np.linalg.lstsq(A[:, i:], b - A[:, :i] @ np.array(cs, dtype=float), rcond=None)[0]
        cs.append(float(c[0]) if (i == 0 and split0) else f32(c[0]))
    if split0:
        c0 = mp.mpf(cs[0])
        if split0 is True:
            c0h = f32(c0)
        else:  # round to `split0` significant bits
            e = int(mp.floor(mp.log(abs(c0), 2))) - (split0 - 1)
            c0h = float(mp.nint(c0 / mp.mpf(2) ** e) * mp.mpf(2) ** e)
        cs = [c0h, f32(c0 - mp.mpf(c0h))] + cs[1:]
    # error of rounded coefficients
    worst = mp.mpf(0)
    where = None
    for i in range(N_CHECK + 1):
        v = mp.mpf(lo) + (mp.mpf(hi) - lo) * i / N_CHECK
        p = mp.mpf(0)
        for cc in reversed(cs[2:] if split0 else cs[1:]):
            p = p * (v - center) + mp.mpf(cc)
        p = p * (v - center) + (mp.mpf(cs[0]) + mp.mpf(cs[1]) if split0 else mp.mpf(cs[0]))
        e = abs(weight(v) * (f(v) - p))
        if e > worst:
            worst, where = e, v
    print(f"// {name}: degree {deg} on [{lo}, {hi}], center {center}: max weighted error "
          f"{mp.nstr(worst, 3)} = 2^{mp.nstr(mp.log(worst, 2), 4)} at {mp.nstr(where, 6)}")
    print("[" + ", ".join(f"{np.float32(x)!r}".replace("np.float32(", "").rstrip(")") + "_f32" for x in cs) + "]")
    return cs


def in_z(at_zero, g):
    """The fitted function of z = x² for an odd or even kernel: g(√z, z) for
    z > 0 and its limit `at_zero` at 0 (where g is 0/0)."""
    return lambda z: at_zero if z == 0 else g(mp.sqrt(z), z)


if __name__ == "__main__":
    which = [a for a in sys.argv[1:] if not a.startswith("--")] or ["exp", "log", "tanh", "erf", "phi", "z"]
    if "exp" in which:
        q = lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(0.5)
        for d in (4, 5):
            fit("exp Q(r) = (e^r-1-r)/r^2, weight r^2", q, -0.3467, 0.3467, d, weight=lambda r: r * r)
    if "log" in which:
        P = in_z(mp.mpf(2) / 3, lambda s, z: (2 * mp.atanh(s) - 2 * s) / (s * z))
        for d in (2, 3):
            fit("log P(z) = (2atanh(s)-2s)/s^3, z=s^2, weight s^3", P, 0.0, 0.02944, d, weight=lambda z: z * mp.sqrt(z))
    if "tanh" in which:
        P = in_z(mp.mpf(-1) / 3, lambda x, z: (mp.tanh(x) / x - 1) / z)
        for d in (5, 6, 7):
            fit("tanh P(z) = (tanh(x)/x-1)/z, weight z", P, 0.0, 0.625**2, d, weight=lambda z: z)
    if "erf" in which:
        P = in_z(2 / mp.sqrt(mp.pi) - 1, lambda x, z: mp.erf(x) / x - 1)
        for d in (6, 7, 8):
            fit("erf P(z) = erf(x)/x - 1", P, 0.0, 0.875**2, d)
    if "phi" in which:
        P = in_z(1 / mp.sqrt(2 * mp.pi), lambda x, z: (mp.ncdf(x) - mp.mpf(0.5)) / x)
        for d in (7, 8, 9):
            fit("Phi P(z) = (Phi(x)-1/2)/x, weight 1/P, c0 split", P, 0.0, 1.25**2, d, weight=lambda z: 1 / P(z), split0=True)
    if "w" in which:
        W = lambda t: mp.log(t * mp.erfc(t / mp.sqrt(2)) * mp.exp(t * t / 2) / 2)
        for j in range(-2, 4):
            for d in (6, 7, 8):
                fit(f"W(t) = log(t*erfcx(t/sqrt2)/2) on octave {j}, v = t/2^{j}, c0 split",
                    lambda m: W(m * mp.mpf(2) ** j), 1.0, 2.0, d, center=1.5, split0=True)
    if "z" in which:
        # Twelve half-octave pieces covering [0.25, 16): piece 2*(j+2) + h is
        # [2^j * (1 + h/2), 2^j * (1.5 + h/2)), j = -2..3, h = 0, 1; variable
        # v = t/2^j - (1.25 + h/2) in [-0.25, 0.25).
        Z = lambda t: t * mp.erfc(t / mp.sqrt(2)) * mp.exp(t * t / 2) / 2
        deg = int(next((a for a in sys.argv if a.startswith("--zdeg=")), "--zdeg=6")[7:])
        for j in range(-2, 4):
            for h in (0, 1):
                c = 1.25 + h / 2
                fit(f"Z(t) = t*erfcx(t/sqrt2)/2, piece {2*(j+2)+h}: t/2^{j} in [{c-0.25}, {c+0.25}), v = t/2^{j} - {c}, "
                    "weight 1/Z, c0 = 13-bit hi + lo",
                    lambda m: Z(m * mp.mpf(2) ** j), c - 0.25, c + 0.25, deg,
                    weight=lambda m: 1 / Z(m * mp.mpf(2) ** j), center=c, split0=13)

    # -- the math work: trigonometric, inverse trigonometric and expm1 kernels
    if "sin" in which:
        # |r| <= pi/4 plus the slack of a rounded quadrant: 0.7854 -> 0.786.
        S = in_z(mp.mpf(-1) / 6, lambda r, z: (mp.sin(r) / r - 1) / z)
        for d in (3, 4):
            fit("sin S(z) = (sin(r)/r-1)/z, z=r^2, weight z", S, 0.0, 0.786**2, d, weight=lambda z: z)
    if "cos" in which:
        C = in_z(mp.mpf(1) / 24, lambda r, z: (mp.cos(r) - 1 + z / 2) / z**2)
        for d in (3, 4):
            fit("cos C(z) = (cos(r)-1+z/2)/z^2, weight z^2", C, 0.0, 0.786**2, d, weight=lambda z: z * z)
    if "atan" in which:
        # |t| <= tan(pi/8) = 0.41421 (plus slack).
        A = in_z(mp.mpf(-1) / 3, lambda t, z: (mp.atan(t) / t - 1) / z)
        for d in (6, 7, 8):
            fit("atan A(z) = (atan(t)/t-1)/z, weight z", A, 0.0, 0.4143**2, d, weight=lambda z: z)
    if "asin" in which:
        B = in_z(mp.mpf(1) / 6, lambda t, z: (mp.asin(t) / t - 1) / z)
        for d in (6, 7, 8):
            fit("asin B(z) = (asin(t)/t-1)/z, weight z", B, 0.0, 0.25, d, weight=lambda z: z)
    if "expm1" in which:
        def Q(x):
            if x == 0:
                return mp.mpf(1) / 6
            return (mp.expm1(x) - x - x * x / 2) / x**3
        for d in (5, 6):
            fit("expm1 Q(x) = (e^x-1-x-x^2/2)/x^3, weight x^3/expm1(x)", Q, -0.3467, 0.3467, d,
                weight=lambda x: (x**3 / mp.expm1(x)) if x != 0 else mp.mpf(0))
    if "sinh" in which:
        H = in_z(mp.mpf(1) / 6, lambda x, z: (mp.sinh(x) / x - 1) / z)
        for d in (3, 4):
            fit("sinh H(z) = (sinh(x)/x-1)/z, weight z", H, 0.0, 0.25, d, weight=lambda z: z)
    if "erfinv" in which:
        # erfinv(x) = x·G(z), z = x², for |x| < 1/2 (z < 1/4), and
        # x·F(w), w = −ln(1 − x²), on twelve half-octave pieces of [0.25, 16)
        # (piece 2·(j + 2) + h: w/2^j in [1 + h/2, 1.5 + h/2), variable
        # v = w/2^j − (1.25 + h/2)), as the Gaussian tail's Z pieces are laid
        # out; weight 1/F (relative error), c0 = binary32 hi + lo.
        mp.mp.dps = 30
        G = lambda z: mp.erfinv(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else mp.sqrt(mp.pi) / 2
        deg = int(next((a for a in sys.argv if a.startswith("--ideg=")), "--ideg=7")[7:])
        fit("erfinv G(z) = erfinv(sqrt z)/sqrt z, weight 1/G, c0 hi + lo", G, 0.0, 0.25, deg,
            weight=lambda z: 1 / G(z), split0=True)

        def F(w):
            x = mp.sqrt(-mp.expm1(-w))
            return mp.erfinv(x) / x
        for j in range(-2, 4):
            for h in (0, 1):
                c = 1.25 + h / 2
                fit(f"erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece {2*(j+2)+h}: w/2^{j} in [{c-0.25}, {c+0.25}), "
                    f"v = w/2^{j} - {c}, weight 1/F, c0 hi + lo",
                    lambda m: F(m * mp.mpf(2) ** j), c - 0.25, c + 0.25, deg,
                    weight=lambda m: 1 / F(m * mp.mpf(2) ** j), center=c, split0=True)
