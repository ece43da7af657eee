// Generated from `python3 tools/fit_polys.py erfinv --ideg=7 --check=2000` (do not edit by hand).
// erfinv G(z) = erfinv(sqrt z)/sqrt z, weight 1/G, c0 hi + lo: degree 7 on [0.0, 0.25], center 0.0: max weighted error 5.05e-11 = 2^-34.2 at 0.25
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 0: w/2^-2 in [1.0, 1.5), v = w/2^-2 - 1.25, weight 1/F, c0 hi + lo: degree 7 on [1.0, 1.5], center 1.25: max weighted error 5.6e-11 = 2^-34.06 at 1.1845
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 1: w/2^-2 in [1.5, 2.0), v = w/2^-2 - 1.75, weight 1/F, c0 hi + lo: degree 7 on [1.5, 2.0], center 1.75: max weighted error 3.57e-11 = 2^-34.71 at 1.6845
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 2: w/2^-1 in [1.0, 1.5), v = w/2^-1 - 1.25, weight 1/F, c0 hi + lo: degree 7 on [1.0, 1.5], center 1.25: max weighted error 1.17e-10 = 2^-33.0 at 1.1845
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 3: w/2^-1 in [1.5, 2.0), v = w/2^-1 - 1.75, weight 1/F, c0 hi + lo: degree 7 on [1.5, 2.0], center 1.75: max weighted error 1.15e-10 = 2^-33.01 at 1.6845
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 4: w/2^0 in [1.0, 1.5), v = w/2^0 - 1.25, weight 1/F, c0 hi + lo: degree 7 on [1.0, 1.5], center 1.25: max weighted error 7.31e-11 = 2^-33.67 at 1.18425
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 5: w/2^0 in [1.5, 2.0), v = w/2^0 - 1.75, weight 1/F, c0 hi + lo: degree 7 on [1.5, 2.0], center 1.75: max weighted error 3.2e-10 = 2^-31.54 at 1.68425
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 6: w/2^1 in [1.0, 1.5), v = w/2^1 - 1.25, weight 1/F, c0 hi + lo: degree 7 on [1.0, 1.5], center 1.25: max weighted error 1.76e-10 = 2^-32.4 at 1.1845
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 7: w/2^1 in [1.5, 2.0), v = w/2^1 - 1.75, weight 1/F, c0 hi + lo: degree 7 on [1.5, 2.0], center 1.75: max weighted error 3.43e-10 = 2^-31.44 at 1.68425
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 8: w/2^2 in [1.0, 1.5), v = w/2^2 - 1.25, weight 1/F, c0 hi + lo: degree 7 on [1.0, 1.5], center 1.25: max weighted error 3.51e-10 = 2^-31.41 at 1.17575
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 9: w/2^2 in [1.5, 2.0), v = w/2^2 - 1.75, weight 1/F, c0 hi + lo: degree 7 on [1.5, 2.0], center 1.75: max weighted error 5.07e-10 = 2^-30.88 at 1.68325
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 10: w/2^3 in [1.0, 1.5), v = w/2^3 - 1.25, weight 1/F, c0 hi + lo: degree 7 on [1.0, 1.5], center 1.25: max weighted error 7.43e-10 = 2^-30.33 at 1.33025
// erfinv F(w) = erfinv(x)/x, w = -ln(1-x^2), piece 11: w/2^3 in [1.5, 2.0), v = w/2^3 - 1.75, weight 1/F, c0 hi + lo: degree 7 on [1.5, 2.0], center 1.75: max weighted error 4.68e-10 = 2^-30.99 at 1.684
/// erfinv's G: constant term hi (the rest of the constant first in ERFINV_G).
const ERFINV_G_HI: f32 = 0.88622695;
/// c0_lo, c1, …: G(z) = ERFINV_G_HI + horner(z, ERFINV_G).
const ERFINV_G: [f32; 8] = [-2.6663393e-08, 0.23201369, 0.12755445, 0.08660601, 0.06414316, 0.058335792, 0.014235404, 0.09551958];
/// erfinv's F on the twelve half-octave pieces (entries 12..16 unused): row i is coefficient i.
const ERFINV_F: [[f32; 16]; 9] = [
    [0.9597867, 0.98974407, 1.0351619, 1.0964664, 1.1895616, 1.3146775, 1.5014093, 1.7428299, 2.0798128, 2.479772, 2.995746, 3.5790894, 0.0, 0.0, 0.0, 0.0],
    [6.288899e-09, -2.1249882e-08, -2.7735718e-08, -5.5236093e-08, -2.8314732e-08, -1.6844066e-08, 5.88893e-08, 3.2056666e-09, -4.152217e-09, 3.4413805e-08, 6.2657755e-08, -7.954758e-08, 0.0, 0.0, 0.0, 0.0],
    [0.059633628, 0.06018607, 0.121812575, 0.123329036, 0.24951963, 0.25042155, 0.49328056, 0.4707168, 0.85481, 0.7489476, 1.2702526, 1.0782849, 0.0, 0.0, 0.0, 0.0],
    [0.00058122555, 0.00052357925, 0.0017468217, 0.0012876183, 0.0025116852, -0.00061953184, -0.01670927, -0.026868267, -0.11623526, -0.09340484, -0.2436733, -0.15165569, 0.0, 0.0, 0.0, 0.0],
    [-3.813838e-05, -3.8641883e-05, -0.00030887182, -0.0003028275, -0.002253581, -0.0019027443, -0.010022266, -0.0038489106, 0.008358893, 0.017427886, 0.08781357, 0.041731957, 0.0, 0.0, 0.0, 0.0],
    [-2.0970428e-07, -8.975052e-08, 1.2917927e-06, 4.702644e-06, 0.00014358912, 0.00020173877, 0.0034919537, 0.0025370456, 0.013504844, -0.0008128207, -0.034409184, -0.014065575, 0.0, 0.0, 0.0, 0.0],
    [-3.334258e-06, 2.2688803e-06, 9.016604e-06, 9.242211e-06, 2.5739522e-05, 4.1544496e-05, -0.00014335597, -0.0005427513, -0.010683658, -0.0021513798, 0.009817551, 0.005204088, 0.0, 0.0, 0.0, 0.0],
    [1.3797908e-08, -1.3686994e-08, -2.9405209e-08, -3.0282315e-08, -5.019229e-06, -5.2911373e-06, -0.00021786927, -2.5674424e-05, 0.00390541, 0.0015576694, 0.0037419314, -0.0017970672, 0.0, 0.0, 0.0, 0.0],
    [2.8053115e-05, -1.843636e-05, -6.292917e-05, -6.599278e-05, 4.4611643e-05, -0.00021801902, -7.60783e-05, 0.00034963837, -0.0003809648, -1.9254952e-05, -0.009504029, -0.00037002092, 0.0, 0.0, 0.0, 0.0],
];
