//! Fixed transcendental functions: the same bits on every platform, built
//! from IEEE + − × ÷, compare/select and exponent bit manipulation only.

pub mod detmath;
